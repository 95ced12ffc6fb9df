#!/usr/bin/env bash
# Builds the Debian packages (`make deb`): what `make install` installs, under /usr with the C
# library in the multiarch directory, split as Debian splits a library's packages and packed by
# dpkg-deb into target/deb/NAME_VERSION-1_ARCH.deb, one path a line on standard output:
#   seaccess         the commands, the libselinux drop-in (in a private directory, so the
#                    package never stands in for the system's libselinux1), the man pages,
#                    completions, the mount's fstab helper and systemd unit
#   libseaccess0     libseaccess.so.0 (what a program built against libseaccess needs)
#   libseaccess-dev  the header, seaccess.pc, the static library and the libseaccess.so link
# Depends are dpkg-shlibdeps' reading of each package's binaries, plus fuse3 for seaccess
# (fusermount3, which `seaccess mount` runs) and the library of the same version for the -dev.
# Usage: scripts/deb.sh (BUILD: the Cargo output directory, target/release by default).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-target/release}
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
SOVERSION=${VERSION%%.*}
ARCH=$(dpkg --print-architecture)
MULTIARCH=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
LIB=usr/lib/$MULTIARCH
# Whoever builds the packages for others names themselves (DEB_MAINTAINER); the default says no
# one answers at that address (.invalid is reserved for that).
MAINTAINER=${DEB_MAINTAINER:-seaccess developers <seaccess@seaccess.invalid>}
LIBPKG=libseaccess$SOVERSION
OUT=target/deb
STAGE=$OUT/root
rm -rf "$STAGE" "$OUT"/pkg "$OUT"/*.deb
mkdir -p "$STAGE"

BUILD=$BUILD DESTDIR=$PWD/$STAGE PREFIX=/usr LIBDIR=/usr/lib/$MULTIARCH bash scripts/install.sh install >/dev/null
# Debian's policy: manual pages compressed.
find "$STAGE/usr/share/man" -type f -name '*.[18]' -exec gzip -9n {} +

# move PKG PATH...: the staged files (or links) at PATH go to package PKG's tree.
move() {
  local pkg=$1 p
  shift
  for p in "$@"; do
    mkdir -p "$OUT/pkg/$pkg/$(dirname "$p")"
    mv "$STAGE/$p" "$OUT/pkg/$pkg/$p"
  done
}
move "$LIBPKG" "$LIB/libseaccess.so.$VERSION" "$LIB/libseaccess.so.$SOVERSION"
move libseaccess-dev "$LIB/libseaccess.so" "$LIB/libseaccess.a" "$LIB/pkgconfig/seaccess.pc" usr/include/seaccess.h
# What the library packages took leaves directories behind (pkgconfig, include).
find "$STAGE" -depth -type d -empty -delete
mkdir -p "$OUT/pkg"
mv "$STAGE" "$OUT/pkg/seaccess"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
date=$(date -R -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")

# Depends PKG FILE...: dpkg-shlibdeps' reading of FILE's libraries (it reads debian/control: a
# throwaway one serves); -l: where the package's own libraries are (the drop-in's interposer
# needs the drop-in).
shlibdeps() {
  local pkg=$1
  shift
  mkdir -p "$scratch/$pkg/debian"
  printf 'Source: seaccess\n\nPackage: %s\nArchitecture: any\n' "$pkg" > "$scratch/$pkg/debian/control"
  (cd "$scratch/$pkg" && dpkg-shlibdeps -O -l"$PWD/$OUT/pkg/seaccess/$LIB/seaccess" "$@" 2>/dev/null) \
    | sed -n 's/^shlibs:Depends=//p'
}

# pack PKG SECTION DEPENDS SUMMARY DESCRIPTION: the copyright, changelog, control and md5sums of
# PKG's tree, then the package; prints its path.
pack() {
  local pkg=$1 section=$2 depends=$3 summary=$4 description=$5 root=$OUT/pkg/$1 doc size deb
  doc=$root/usr/share/doc/$pkg
  mkdir -p "$doc" "$root/DEBIAN"
  {
    echo 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/'
    echo 'Upstream-Name: seaccess'
    echo
    echo 'Files: *'
    echo 'Copyright: 2026 the seaccess developers'
    echo "License: $(sed -n 's/^license = "\(.*\)"/\1/p' Cargo.toml | head -1)"
  } > "$doc/copyright"
  printf 'seaccess (%s-1) unstable; urgency=medium\n\n  * Built from the seaccess tree by make deb.\n\n -- %s  %s\n' \
    "$VERSION" "$MAINTAINER" "$date" | gzip -9n > "$doc/changelog.Debian.gz"
  chmod 0644 "$doc/copyright" "$doc/changelog.Debian.gz"
  size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
  {
    echo "Package: $pkg"
    echo "Source: seaccess"
    echo "Version: $VERSION-1"
    echo "Architecture: $ARCH"
    echo "Maintainer: $MAINTAINER"
    echo "Installed-Size: $size"
    [ "$section" = libs ] && echo "Multi-Arch: same"
    echo "Depends: $depends"
    [ "$pkg" = seaccess ] && echo "Recommends: selinux-policy-default"
    echo "Section: $section"
    echo "Priority: optional"
    echo "Description: $summary"
    echo "$description" | sed 's/^/ /'
  } > "$root/DEBIAN/control"
  (cd "$root" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
  chmod 0644 "$root"/DEBIAN/*
  deb=$OUT/${pkg}_${VERSION}-1_${ARCH}.deb
  dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
  echo "$deb"
}

about='seaccess reads compiled SELinux policies and answers access decisions as the
kernel'"'"'s security server does, with a lock-free access vector cache.'

# The library: ldconfig runs when it comes and goes, and a program built against it depends on
# this package (the shlibs file dpkg-shlibdeps reads).
root=$OUT/pkg/$LIBPKG
mkdir -p "$root/DEBIAN"
echo 'activate-noawait ldconfig' > "$root/DEBIAN/triggers"
echo "libseaccess $SOVERSION $LIBPKG (>= $VERSION)" > "$root/DEBIAN/shlibs"
deps=$(shlibdeps "$LIBPKG" "$PWD/$root/$LIB/libseaccess.so.$VERSION")
[ -n "$deps" ] || { echo "deb: dpkg-shlibdeps found no dependencies of libseaccess" >&2; exit 1; }
pack "$LIBPKG" libs "$deps" "SELinux access decisions, libselinux's C API (shared library)" \
  "$about
This package holds libseaccess.so.$SOVERSION, the C library: libselinux's API
(avc_has_perm, selinux_check_access, selabel_lookup, ...) answered from a
compiled policy file, on any kernel."

pack libseaccess-dev libdevel "$LIBPKG (= $VERSION-1)" "SELinux access decisions, libselinux's C API (development files)" \
  "$about
This package holds what a program built against libseaccess needs:
seaccess.h, seaccess.pc (pkg-config), the static library and the
libseaccess.so link."

deps=$(shlibdeps seaccess "$PWD/$OUT/pkg/seaccess/usr/bin/seaccess" "$PWD/$OUT/pkg/seaccess/usr/bin/seaccess-lab" \
  "$PWD/$OUT/pkg/seaccess/$LIB/seaccess/libselinux.so.1")
[ -n "$deps" ] || { echo "deb: dpkg-shlibdeps found no dependencies of the commands" >&2; exit 1; }
pack seaccess admin "$deps, fuse3" "SELinux access decisions on any compiled policy, on any kernel" \
  "$about
It labels files from file_contexts, enforces a policy on a directory tree
through FUSE (mountable from /etc/fstab as fuse.seaccess), runs programs
built for libselinux on its own libselinux-compatible library (seaccess
run), and explains denials as audit2why does."
