#!/usr/bin/env bash
# Installs seaccess from a build tree (what `make install` runs after building), or removes what
# it installed (`make uninstall`, the same list). The layout is the usual one:
#   BINDIR      seaccess, seaccess-lab (stripped: the build's debug information stays behind)
#   LIBDIR      libseaccess.so.0.V (soname libseaccess.so.0) with its two links, libseaccess.a,
#               pkgconfig/seaccess.pc
#   LIBDIR/seaccess  the libselinux.so.1 drop-in and its preload interposer, private: only
#               `seaccess run` puts them in front of a program (never on the loader's path)
#   INCLUDEDIR  seaccess.h
#   MANDIR      man1/seaccess*.1, man8/seaccess-*.8 (seaccess-lab's pages among them), generated
#               from the commands' definitions
#   bash, zsh and fish completions of both commands where each shell looks; the mount helper and
#   systemd unit.
# Usage: scripts/install.sh install|uninstall, with BUILD (target/release), DESTDIR, PREFIX
# (/usr/local) and the directories above in the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
action=${1:?usage: install.sh install|uninstall}
BUILD=${BUILD:-target/release}
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BINDIR=${BINDIR:-$PREFIX/bin}
SBINDIR=${SBINDIR:-$PREFIX/sbin}
LIBDIR=${LIBDIR:-$PREFIX/lib}
INCLUDEDIR=${INCLUDEDIR:-$PREFIX/include}
DATADIR=${DATADIR:-$PREFIX/share}
MANDIR=${MANDIR:-$DATADIR/man}
# zsh: Debian's zsh reads vendor-completions under /usr, site-functions under /usr/local.
if [ "$PREFIX" = /usr ]; then ZSHDIR=${ZSHDIR:-$DATADIR/zsh/vendor-completions}
else ZSHDIR=${ZSHDIR:-$DATADIR/zsh/site-functions}; fi
BASHDIR=${BASHDIR:-$DATADIR/bash-completion/completions}
FISHDIR=${FISHDIR:-$DATADIR/fish/vendor_completions.d}
# systemd's unit directory for a package under /usr, /usr/local's own otherwise.
if [ "$PREFIX" = /usr ]; then UNITDIR=${UNITDIR:-/usr/lib/systemd/system}
else UNITDIR=${UNITDIR:-$PREFIX/lib/systemd/system}; fi
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
SONAME=libseaccess.so.${VERSION%%.*}
REAL=libseaccess.so.$VERSION
D=$DESTDIR

# The files a man page or completion run writes are listed by name, so that uninstall removes
# exactly those (a later version's extra page is removed by that version's uninstall).
man_pages() {
  local d
  for d in "$D$MANDIR"/man1 "$D$MANDIR"/man8; do
    [ -d "$d" ] && find "$d" -maxdepth 1 \( -name 'seaccess.*' -o -name 'seaccess-*' \) -print
  done
  return 0
}

uninstall() {
  rm -f "$D$BINDIR/seaccess" "$D$BINDIR/seaccess-lab" \
    "$D$LIBDIR/$REAL" "$D$LIBDIR/$SONAME" "$D$LIBDIR/libseaccess.so" "$D$LIBDIR/libseaccess.a" \
    "$D$LIBDIR/pkgconfig/seaccess.pc" "$D$INCLUDEDIR/seaccess.h" \
    "$D$LIBDIR/seaccess/libselinux.so.1" "$D$LIBDIR/seaccess/libseaccess-preload.so" \
    "$D$BASHDIR/seaccess" "$D$ZSHDIR/_seaccess" "$D$FISHDIR/seaccess.fish" \
    "$D$BASHDIR/seaccess-lab" "$D$ZSHDIR/_seaccess-lab" "$D$FISHDIR/seaccess-lab.fish" \
    "$D$SBINDIR/mount.fuse.seaccess" "$D$MANDIR/man8/mount.fuse.seaccess.8" \
    "$D$MANDIR/man8/mount.fuse.seaccess.8.gz" "$D$UNITDIR/seaccess-mount@.service"
  man_pages | xargs -r rm -f
  # The directories only seaccess uses; the shared ones (bin, man1, ...) stay.
  rmdir "$D$LIBDIR/seaccess" 2>/dev/null || true
}

if [ "$action" = uninstall ]; then
  uninstall
  echo "uninstall: seaccess removed from $D$PREFIX"
  exit 0
fi
[ "$action" = install ] || { echo "install.sh: unknown action $action" >&2; exit 2; }

# BUILD's copies of the C library, brought up to date with Cargo's by tests/capi/dropin.sh,
# which `make install` runs first.
SO=$BUILD/libseaccess.so
ARCHIVE=$BUILD/libseaccess.a
for f in "$BUILD/seaccess" "$BUILD/seaccess-lab" "$SO" "$ARCHIVE" \
         target/libselinux/libselinux.so.1 target/libselinux/libseaccess-preload.so; do
  [ -e "$f" ] || { echo "install: $f is missing (make install builds it; run it from the top)" >&2; exit 1; }
done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

# libseaccess.so.0: the static archive linked again with a soname, exporting exactly what
# Cargo's cdylib exports (the C API), so that programs record libseaccess.so.0 and the package
# can carry the library under its versioned name.
{
  echo '{ global:'
  nm -D --defined-only "$SO" | awk '$2 ~ /^[TDBRVWi]$/ { print "  " $3 ";" }'
  echo 'local: *; };'
} > "$stage/exports.map"
gcc -shared -o "$stage/$REAL" -Wl,-soname,"$SONAME" -Wl,--version-script="$stage/exports.map" \
  -Wl,--whole-archive "$ARCHIVE" -Wl,--no-whole-archive \
  -lpcre2-8 -lpthread -ldl -lm -lgcc_s

for bin in seaccess seaccess-lab; do
  "$BUILD/$bin" generate man --out "$stage/man"
  for sh in bash zsh fish; do "$BUILD/$bin" generate "$sh" --out "$stage/completions"; done
done

install -d "$D$BINDIR" "$D$SBINDIR" "$D$LIBDIR/pkgconfig" "$D$LIBDIR/seaccess" "$D$INCLUDEDIR" \
  "$D$MANDIR/man1" "$D$MANDIR/man8" "$D$BASHDIR" "$D$ZSHDIR" "$D$FISHDIR" "$D$UNITDIR"
install -m 0755 -s "$BUILD/seaccess" "$BUILD/seaccess-lab" "$D$BINDIR/"
install -m 0644 "$stage/$REAL" "$D$LIBDIR/$REAL"
strip --strip-unneeded "$D$LIBDIR/$REAL"
ln -sf "$REAL" "$D$LIBDIR/$SONAME"
ln -sf "$SONAME" "$D$LIBDIR/libseaccess.so"
install -m 0644 "$ARCHIVE" "$D$LIBDIR/libseaccess.a"
strip --strip-debug "$D$LIBDIR/libseaccess.a"
install -m 0644 crates/capi/include/seaccess.h "$D$INCLUDEDIR/"
sed -e "s|@PREFIX@|$PREFIX|" -e "s|@LIBDIR@|$LIBDIR|" -e "s|@INCLUDEDIR@|$INCLUDEDIR|" \
  -e "s|@VERSION@|$VERSION|" crates/capi/seaccess-installed.pc.in > "$D$LIBDIR/pkgconfig/seaccess.pc"
chmod 0644 "$D$LIBDIR/pkgconfig/seaccess.pc"
install -m 0644 target/libselinux/libselinux.so.1 target/libselinux/libseaccess-preload.so "$D$LIBDIR/seaccess/"
strip --strip-unneeded "$D$LIBDIR/seaccess/libselinux.so.1" "$D$LIBDIR/seaccess/libseaccess-preload.so"
install -m 0644 "$stage"/man/*.1 "$D$MANDIR/man1/"
install -m 0644 "$stage"/man/*.8 "$D$MANDIR/man8/"
for bin in seaccess seaccess-lab; do
  install -m 0644 "$stage/completions/$bin" "$D$BASHDIR/$bin"
  install -m 0644 "$stage/completions/_$bin" "$D$ZSHDIR/_$bin"
  install -m 0644 "$stage/completions/$bin.fish" "$D$FISHDIR/$bin.fish"
done
sed -e "s|@BINDIR@|$BINDIR|" dist/mount.fuse.seaccess > "$stage/mount.fuse.seaccess"
install -m 0755 "$stage/mount.fuse.seaccess" "$D$SBINDIR/mount.fuse.seaccess"
install -m 0644 dist/mount.fuse.seaccess.8 "$D$MANDIR/man8/"
sed -e "s|@BINDIR@|$BINDIR|" dist/seaccess-mount@.service > "$stage/unit"
install -m 0644 "$stage/unit" "$D$UNITDIR/seaccess-mount@.service"
echo "install: seaccess $VERSION in $D$PREFIX (run: $BINDIR/seaccess; drop-in: $LIBDIR/seaccess)"
