#!/usr/bin/env bash
# seaccess installed as a system tool: `make install` into a staging directory and into a scratch
# prefix, `make deb` built, inspected, linted, installed on this machine with apt, used and
# removed, and the Python wheel installed into a fresh venv. Every decision the installed
# programs are expected to give is asked of the build tree's `seaccess` first, never written
# here. Needs root (apt, mounts as nobody), Debian's policy, /dev/fuse, and what `make deps`
# installs (lintian, man-db, bash-completion, zsh, fish). A part that cannot run says SKIP.
# Usage: SEACCESS_BUILD=target/ci bash tests/install/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
case $BUILD in /*) ;; *) BUILD=$PWD/$BUILD ;; esac
BIN=$BUILD/seaccess
PROFILE=${BUILD##*/}
POL=/etc/selinux/default/policy/policy.33
H=system_u:system_r:httpd_t:s0
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
expect() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
summary() { echo "install: $pass passed, $fail failed"; exit $((fail > 0)); }
[ "$(id -u)" = 0 ] || { bad "not root (apt and the mounts need it)"; summary; }
for f in "$POL" "$BIN" target/libselinux/libselinux.so.1; do
  [ -e "$f" ] || { bad "$f is missing (make test builds it before this suite)"; summary; }
done

T=$(mktemp -d)
chmod 755 "$T"
DEB_INSTALLED=0 MOUNTS=()
cleanup() {
  for m in "${MOUNTS[@]}"; do grep -qs " $m fuse" /proc/mounts && { umount "$m" 2>/dev/null || fusermount3 -uz "$m"; }; done
  [ "$DEB_INSTALLED" = 1 ] && DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq --purge seaccess libseaccess0 libseaccess-dev >/dev/null 2>&1
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# The decisions the installed programs must give, from the build tree.
want_shadow=$("$BIN" check -p "$POL" "$H" system_u:object_r:shadow_t:s0 file read); want_shadow_rc=$?
"$BIN" check -p "$POL" "$H" system_u:object_r:httpd_sys_content_t:s0 file read getattr open >/dev/null &&
  "$BIN" check -p "$POL" "$H" system_u:object_r:httpd_sys_content_t:s0 dir search getattr >/dev/null; want_web_rc=$?
want_bool=$(LD_LIBRARY_PATH=target/libselinux SEACCESS_POLICY=$POL getsebool httpd_enable_cgi 2>&1)

# 1. make install into a staging directory (DESTDIR), as a packager does. ------------------------
S=$T/stage
make -s install PROFILE="$PROFILE" DESTDIR="$S" PREFIX=/usr > "$T/install.out" 2>&1
expect "make install DESTDIR= PREFIX=/usr succeeds" '[ $? -eq 0 ] || { cat "$T/install.out"; false; }'
for f in usr/bin/seaccess usr/bin/seaccess-lab usr/lib/libseaccess.so.0.1.0 usr/lib/libseaccess.a \
         usr/lib/pkgconfig/seaccess.pc usr/include/seaccess.h usr/lib/seaccess/libselinux.so.1 \
         usr/lib/seaccess/libseaccess-preload.so usr/share/man/man1/seaccess.1 \
         usr/share/man/man1/seaccess-check.1 usr/share/man/man8/seaccess-mount.8 \
         usr/share/man/man8/seaccess-label.8 usr/share/man/man8/mount.fuse.seaccess.8 \
         usr/share/bash-completion/completions/seaccess usr/share/zsh/vendor-completions/_seaccess \
         usr/share/fish/vendor_completions.d/seaccess.fish usr/sbin/mount.fuse.seaccess \
         usr/lib/systemd/system/seaccess-mount@.service usr/share/man/man1/seaccess-lab.1 \
         usr/share/man/man1/seaccess-lab-bench-hit-path.1 usr/share/bash-completion/completions/seaccess-lab \
         usr/share/zsh/vendor-completions/_seaccess-lab usr/share/fish/vendor_completions.d/seaccess-lab.fish; do
  [ -e "$S/$f" ] || bad "installed: $f is missing"
done
ok "every file make install lists is there"
expect "libseaccess.so.0 is the soname, and the links point to the library" \
  '[ "$(readelf -d "$S/usr/lib/libseaccess.so.0.1.0" | sed -n "s/.*SONAME.*\[\(.*\)\]/\1/p")" = libseaccess.so.0 ] && [ "$(readlink "$S/usr/lib/libseaccess.so.0")" = libseaccess.so.0.1.0 ] && [ "$(readlink "$S/usr/lib/libseaccess.so")" = libseaccess.so.0 ]'
expect "the installed library exports exactly the build's C API" \
  '[ "$(nm -D --defined-only "$S/usr/lib/libseaccess.so.0.1.0" | awk "{print \$3}" | sort)" = "$(nm -D --defined-only "$BUILD/libseaccess.so" | awk "{print \$3}" | sort)" ]'
nodebug=1
# (A release build keeps .debug_gdb_scripts through strip: a loaded section naming Rust's
# pretty printers, not debug information.)
for f in usr/bin/seaccess usr/bin/seaccess-lab usr/lib/libseaccess.so.0.1.0 usr/lib/seaccess/libselinux.so.1; do
  readelf -SW "$S/$f" | grep -qE '\.debug_(info|line|abbrev|str|ranges|loc)|\.symtab' && { nodebug=0; echo "  $f carries debug information or a symbol table"; }
done
expect "the installed programs and libraries carry no debug information or symbol table" '[ $nodebug = 1 ]'
got=$("$S/usr/bin/seaccess" check -p "$POL" "$H" system_u:object_r:shadow_t:s0 file read); rc=$?
expect "installed seaccess check answers as the build's (rc $rc, '$got')" '[ $rc = $want_shadow_rc ] && [ "$got" = "$want_shadow" ]'
got=$("$S/usr/bin/seaccess" run --no-session --policy "$POL" -- sh -c 'echo "$LD_LIBRARY_PATH"; getsebool httpd_enable_cgi' 2>&1)
expect "installed seaccess run finds its private drop-in in lib/seaccess and getsebool answers as the build's ('$got')" \
  '[ "$(echo "$got" | head -1 | cut -d: -f1)" = "$S/usr/lib/seaccess" ] && [ "$(echo "$got" | tail -1)" = "$want_bool" ]'
mkdir -p "$T/nolib/bin" && cp "$S/usr/bin/seaccess" "$T/nolib/bin/"
got=$("$T/nolib/bin/seaccess" run --policy "$POL" -- true 2>&1); rc=$?
expect "a seaccess with no drop-in beside it says where it looked (rc $rc)" \
  '[ $rc -ne 0 ] && echo "$got" | grep -q "no libselinux.so.1 drop-in in $T/nolib/lib/seaccess"'

# Man pages: every visible command has one, and each renders without a warning.
pages=$(ls "$S/usr/share/man/man1" "$S/usr/share/man/man8" | grep -c '^seaccess')
cmds=$("$BIN" --help | sed -n '/^Commands:/,/^$/p' | grep -cvE '^Commands:|^ *help |^$')
expect "a man page per command ($pages pages, $cmds commands and seaccess(1) and nested ones)" '[ "$pages" -gt "$cmds" ]'
warn=0
for p in "$S"/usr/share/man/man[18]/*; do
  out=$(MANWIDTH=80 man -l --warnings "$p" 2>&1 >/dev/null)
  [ -n "$out" ] && { warn=1; echo "  $p: $out"; }
done
expect "every page renders with man -l and no warning" '[ $warn = 0 ]'
expect "seaccess-mount(8) has its options and README's example" \
  'MANWIDTH=200 man -l "$S/usr/share/man/man8/seaccess-mount.8" 2>/dev/null | grep -q -- "--subjects" && MANWIDTH=200 man -l "$S/usr/share/man/man8/seaccess-mount.8" 2>/dev/null | grep -q "^EXAMPLES"'

# Completions: bash offers the subcommands; zsh and fish read their files.
got=$(bash -c 'source "$1"; COMP_WORDS=(seaccess mo); COMP_CWORD=1; COMP_LINE="seaccess mo"; COMP_POINT=${#COMP_LINE}; _seaccess seaccess mo seaccess; echo "${COMPREPLY[*]}"' _ "$S/usr/share/bash-completion/completions/seaccess" 2>&1)
expect "bash completes 'seaccess mo' to mount ('$got')" '[ "$got" = mount ]'
got=$(bash -c 'source "$1"; COMP_WORDS=(seaccess check --); COMP_CWORD=2; COMP_LINE="seaccess check --"; COMP_POINT=${#COMP_LINE}; _seaccess seaccess -- check; echo "${COMPREPLY[*]}"' _ "$S/usr/share/bash-completion/completions/seaccess" 2>&1)
expect "bash completes check's options ('$got')" 'echo "$got" | grep -q -- "--policy" && echo "$got" | grep -q -- "--json"'
# (A hyphenated program's subcommands: what clap_complete's own script never completed.)
got=$(bash -c 'source "$1"; COMP_WORDS=(seaccess-lab bench hit-path --); COMP_CWORD=3; COMP_LINE="seaccess-lab bench hit-path --"; COMP_POINT=${#COMP_LINE}; _seaccess__lab seaccess-lab -- hit-path; echo "${COMPREPLY[*]}"' _ "$S/usr/share/bash-completion/completions/seaccess-lab" 2>&1)
expect "bash completes seaccess-lab bench hit-path's options ('$got')" 'echo "$got" | grep -q -- "--policy" && echo "$got" | grep -q -- "--no-capi"'
expect "seaccess-lab(1) lists its commands" \
  'MANWIDTH=200 man -l "$S/usr/share/man/man1/seaccess-lab.1" 2>/dev/null | grep -q "seaccess-lab-bench(1)"'
if command -v zsh >/dev/null; then
  expect "zsh parses _seaccess" 'zsh -n "$S/usr/share/zsh/vendor-completions/_seaccess"'
else echo "SKIP: no zsh (make deps installs it)"; fi
if command -v fish >/dev/null; then
  got=$(fish --no-config -c "source $S/usr/share/fish/vendor_completions.d/seaccess.fish; complete -C 'seaccess mo'" 2>&1)
  expect "fish completes 'seaccess mo' to mount ('${got%%$'\t'*}')" 'echo "$got" | grep -q "^mount"'
else echo "SKIP: no fish (make deps installs it)"; fi

# The C library as a packager ships it: a program built with the installed seaccess.pc records
# libseaccess.so.0 and runs on it.
PC=$S/usr/lib/pkgconfig
flags=$(PKG_CONFIG_PATH=$PC PKG_CONFIG_SYSROOT_DIR=$S pkg-config --cflags --libs seaccess)
gcc -Wall -Werror -o "$T/example" tests/capi/example.c $flags 2> "$T/gcc.err"
expect "tests/capi/example.c builds with the installed seaccess.pc ($flags)" '[ $? -eq 0 ] || { cat "$T/gcc.err"; false; }'
expect "the program needs libseaccess.so.0" 'readelf -d "$T/example" | grep -q "NEEDED.*\[libseaccess.so.0\]"'
expect "and runs on the installed library" 'LD_LIBRARY_PATH=$S/usr/lib SEACCESS_POLICY=$POL "$T/example" >/dev/null 2>&1'

make -s uninstall DESTDIR="$S" PREFIX=/usr > /dev/null 2>&1
left=$(find "$S" -type f -o -type l)
expect "make uninstall leaves no file behind (${left:-none})" '[ -z "$left" ]'

# 2. The mount helper and readiness, installed into a real prefix. -------------------------------
P=$T/prefix
make -s install PROFILE="$PROFILE" PREFIX="$P" > "$T/install2.out" 2>&1
expect "make install PREFIX=DIR succeeds" '[ $? -eq 0 ] || { cat "$T/install2.out"; false; }'
SRC=$T/src MNT=$T/mnt
mkdir -p "$SRC" "$MNT"; chmod 755 "$SRC"
echo secret > "$SRC/shadow"; echo page > "$SRC/index.html"; chmod 644 "$SRC/shadow" "$SRC/index.html"
# The tree's root is web content too, so that httpd_t may search it (asked of check below).
setfattr -n trusted.selinux -v system_u:object_r:httpd_sys_content_t:s0 "$SRC"
setfattr -n trusted.selinux -v system_u:object_r:shadow_t:s0 "$SRC/shadow"
setfattr -n trusted.selinux -v system_u:object_r:httpd_sys_content_t:s0 "$SRC/index.html"
printf 'uid=65534   %s\ndefault     unconfined_u:unconfined_r:unconfined_t:s0\n' "$H" > "$T/subjects"
H8=$P/sbin/mount.fuse.seaccess
expect "the helper refuses an option seaccess mount does not have" \
  '! "$H8" "$SRC" "$MNT" -o policy=$POL,ro 2> "$T/h.err" && grep -q "option ro is not one seaccess mount has" "$T/h.err"'
expect "the helper refuses a valueless policy" '! "$H8" "$SRC" "$MNT" -o policy 2>/dev/null'
expect "the helper does nothing under -f (fake)" '"$H8" "$SRC" "$MNT" -f -o policy=$POL && ! grep -qs " $MNT fuse" /proc/mounts'
MOUNTS+=("$MNT")
"$H8" "$SRC" "$MNT" -o "policy=$POL,subjects=$T/subjects,audit_log=$T/audit.log,nofail,x-systemd.automount,defaults" > "$T/h.out" 2>&1
expect "the helper mounts with fstab-style options" '[ $? -eq 0 ] && grep -qs " $MNT fuse" /proc/mounts'
runuser -u nobody -- cat "$MNT/shadow" >/dev/null 2>&1; rc=$?
expect "nobody (httpd_t) is refused shadow_t through it, as check says (rc $rc)" '[ $want_shadow_rc -ne 0 ] && [ $rc -ne 0 ]'
expect "and reads httpd_sys_content_t, as check says" '[ $want_web_rc -eq 0 ] && [ "$(runuser -u nobody -- cat "$MNT/index.html")" = page ]'
expect "the denial is in the audit log the option named" 'grep -q "avc:  denied  {.*scontext=$H tcontext=system_u:object_r:shadow_t:s0 tclass=file" "$T/audit.log"'
umount "$MNT"
expect "umount unmounts it" '! grep -qs " $MNT fuse" /proc/mounts'

# Readiness: under a service manager (NOTIFY_SOCKET) the mount says READY=1 once mounted, and
# RELOADING=1 then READY=1 around a SIGHUP.
"$PWD/tests/install/notify-listener.py" "$T/notify.sock" > "$T/notify.log" 2>&1 &
LPID=$!
for _ in $(seq 50); do [ -S "$T/notify.sock" ] && break; sleep 0.1; done
NOTIFY_SOCKET=$T/notify.sock "$P/bin/seaccess" mount --foreground --policy "$POL" "$SRC" "$MNT" > "$T/fg.out" 2>&1 &
FPID=$!
for _ in $(seq 100); do grep -q READY=1 "$T/notify.log" && break; sleep 0.1; done
expect "READY=1 comes once the mount is there, with MAINPID" 'grep -qs " $MNT fuse" /proc/mounts && grep -q "^READY=1" "$T/notify.log" && grep -q "^MAINPID=$FPID$" "$T/notify.log"'
kill -HUP "$FPID"
for _ in $(seq 100); do [ "$(grep -c '^READY=1' "$T/notify.log")" -ge 2 ] && break; sleep 0.1; done
expect "a SIGHUP is RELOADING=1 with MONOTONIC_USEC, then READY=1" 'grep -q "^RELOADING=1" "$T/notify.log" && grep -q "^MONOTONIC_USEC=[0-9]" "$T/notify.log" && [ "$(grep -c "^READY=1" "$T/notify.log")" -ge 2 ]'
kill "$FPID"; wait "$FPID" 2>/dev/null
kill "$LPID" 2>/dev/null; wait "$LPID" 2>/dev/null
expect "SIGTERM is STOPPING=1 and unmounts" 'grep -q "^STOPPING=1" "$T/notify.log" && ! grep -qs " $MNT fuse" /proc/mounts'
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$T/units"
  cp "$P/lib/systemd/system/seaccess-mount@.service" "$T/units/seaccess-mount@srv-site.service"
  out=$(SYSTEMD_UNIT_PATH=$T/units: systemd-analyze verify --man=no "$T/units/seaccess-mount@srv-site.service" 2>&1)
  expect "systemd-analyze verify accepts the unit ('$out')" '[ -z "$(echo "$out" | grep -v "ConditionPathExists\|Failed to open /etc/seaccess\|bpf\|cgroup" )" ]'
else echo "SKIP: no systemd-analyze to verify the unit"; fi
make -s uninstall PREFIX="$P" > /dev/null 2>&1
left=$(find "$P" -type f -o -type l)
expect "make uninstall PREFIX=DIR leaves no file behind (${left:-none})" '[ -z "$left" ]'

# 3. The Debian packages: built, linted, installed with apt, used, removed. ---------------------
PKGS=(seaccess libseaccess0 libseaccess-dev)
for p in "${PKGS[@]}"; do
  if dpkg -s "$p" >/dev/null 2>&1; then
    bad "a $p package is already installed on this machine; not touching it"
    summary
  fi
done
mapfile -t debs < <(make -s deb PROFILE="$PROFILE" 2> "$T/deb.err" | grep '\.deb$')
deb=$(printf '%s\n' "${debs[@]}" | grep '/seaccess_' | head -1)
expect "make deb builds one package each for ${PKGS[*]} (${debs[*]})" \
  '[ ${#debs[@]} -eq 3 ] && [ -f "$deb" ] && ( for p in "${PKGS[@]}"; do ls target/deb/${p}_*.deb > /dev/null || exit 1; done ) || { cat "$T/deb.err"; false; }'
: > "$T/deb.list"
for d in "${debs[@]}"; do
  dpkg-deb -c "$d" | awk '{print $6}' | sed 's|^\./|/|' > "$T/$(basename "$d").list"
  cat "$T/$(basename "$d").list" >> "$T/deb.list"
done
L=/usr/lib/x86_64-linux-gnu
want() { # want PKG FILE...: the package of PKG lists every FILE
  local p=$1 f
  shift
  for f in "$@"; do grep -qx "$f" "$T/$(basename target/deb/${p}_*.deb).list" || { echo "  $p lacks $f"; return 1; }; done
}
expect "seaccess holds the commands, pages, drop-in, copyright and completions" \
  'want seaccess /usr/bin/seaccess /usr/sbin/mount.fuse.seaccess /usr/share/man/man8/seaccess-mount.8.gz /usr/share/man/man1/seaccess.1.gz $L/seaccess/libselinux.so.1 /usr/share/doc/seaccess/copyright /usr/share/bash-completion/completions/seaccess'
expect "libseaccess0 holds libseaccess.so.0 and nothing of the development files" \
  'want libseaccess0 $L/libseaccess.so.0.1.0 $L/libseaccess.so.0 && ! grep -qE "\.h$|\.pc$|\.a$|libseaccess\.so$" "$T/$(basename target/deb/libseaccess0_*.deb).list"'
expect "libseaccess-dev holds the header, seaccess.pc, the static library and the .so link" \
  'want libseaccess-dev /usr/include/seaccess.h $L/pkgconfig/seaccess.pc $L/libseaccess.a $L/libseaccess.so'
expect "no two packages hold the same file" '[ -z "$(grep -v "/$" "$T/deb.list" | sort | uniq -d)" ]'
expect "the packages put nothing on the loader's path named libselinux" '! grep -E "^/usr/lib/(x86_64-linux-gnu/)?libselinux" "$T/deb.list"'
if command -v lintian >/dev/null; then
  lintian "${debs[@]}" > "$T/lintian" 2>&1
  expect "lintian finds no error ($(grep -c '^W:' "$T/lintian") warnings: $(grep '^W:' "$T/lintian" | awk '{print $3}' | sort -u | tr '\n' ' '))" '! grep "^E:" "$T/lintian"'
else bad "no lintian (make deps installs it)"; fi
DEB_INSTALLED=1
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${debs[@]/#/$PWD/}" > "$T/apt.out" 2>&1
expect "apt install ./target/deb/*.deb" '[ $? -eq 0 ] || { tail -5 "$T/apt.out"; false; }'
# The C library from the packages: a program built with /usr's seaccess.pc (libseaccess-dev)
# records libseaccess.so.0 and runs on libseaccess0's copy, from the loader's cache.
flags=$(pkg-config --cflags --libs seaccess)
gcc -Wall -Werror -o "$T/example-deb" tests/capi/example.c $flags 2> "$T/gcc.err"
expect "tests/capi/example.c builds with the package's seaccess.pc ($flags)" '[ $? -eq 0 ] || { cat "$T/gcc.err"; false; }'
# (Paths compared as the files they are: with a merged /usr, ldconfig names /lib's.)
cached=$(ldconfig -p | sed -n 's/^[[:space:]]*libseaccess\.so\.0 (.*) => //p' | head -n 1)
loaded=$(ldd "$T/example-deb" | sed -n 's/.*libseaccess\.so\.0 => \([^ ]*\).*/\1/p')
expect "and runs on libseaccess.so.0 from ldconfig's cache (${cached:-none}; ldd: ${loaded:-none})" \
  '[ -n "$cached" ] && [ "$(readlink -f "$cached")" = "$(readlink -f $L/libseaccess.so.0)" ] && [ "$(readlink -f "$loaded")" = "$(readlink -f $L/libseaccess.so.0)" ] && SEACCESS_POLICY=$POL "$T/example-deb" >/dev/null 2>&1'
got=$(/usr/bin/seaccess check -p "$POL" "$H" system_u:object_r:shadow_t:s0 file read); rc=$?
expect "/usr/bin/seaccess check answers as the build's" '[ $rc = $want_shadow_rc ] && [ "$got" = "$want_shadow" ]'
expect "man finds seaccess-mount(8)" '[ "$(man -w seaccess-mount)" = /usr/share/man/man8/seaccess-mount.8.gz ]'
got=$(cd / && /usr/bin/seaccess run -p "$POL" -- getsebool httpd_enable_cgi 2>&1)
expect "seaccess run -p POLICY -- getsebool answers as the build's ('$got')" '[ "$got" = "$want_bool" ]'
got=$(cd / && /usr/bin/seaccess run -p "$POL" -- getsebool -a 2>&1 | wc -l)
expect "seaccess run -- getsebool -a lists the policy's booleans ($got)" '[ "$got" -eq "$("$BIN" info -p "$POL" | sed -n "s/^booleans //p")" ]'
printf '%s %s fuse.seaccess policy=%s,subjects=%s,nofail 0 0\n' "$SRC" "$MNT" "$POL" "$T/subjects" > "$T/fstab"
mount -T "$T/fstab" "$MNT" > "$T/mount.out" 2>&1
expect "mount -T FSTAB MOUNTPOINT mounts a fuse.seaccess line" '[ $? -eq 0 ] && grep -qs " $MNT fuse" /proc/mounts || { cat "$T/mount.out"; false; }'
expect "nobody (httpd_t) is refused shadow_t on the fstab mount" '! runuser -u nobody -- cat "$MNT/shadow" >/dev/null 2>&1'
umount "$MNT"
# README's commands, run as written with the package's /usr/bin/seaccess (tests/readme.sh).
SEACCESS_BUILD=/usr/bin SEACCESS_README_INSTALLED=1 SEACCESS_README_REQUIRE=1 bash tests/readme.sh > "$T/readme.out" 2>&1; rc=$?
expect "README's commands run as written from /usr/bin/seaccess ($(tail -1 "$T/readme.out"); $(grep -c '^SKIP' "$T/readme.out") left out)" \
  '[ $rc -eq 0 ] || { grep "^FAIL" -A5 "$T/readme.out"; false; }'
DEBIAN_FRONTEND=noninteractive apt-get remove -y -qq --purge "${PKGS[@]}" > "$T/apt.out" 2>&1
expect "apt remove --purge ${PKGS[*]}" '[ $? -eq 0 ]'
DEB_INSTALLED=0
left=$(while read -r f; do [ -n "$f" ] && [ ! -d "$f" ] && { [ -e "$f" ] || [ -L "$f" ]; } && echo "$f"; done < "$T/deb.list")
expect "nothing of the packages is left (${left:-none})" '[ -z "$left" ] && ( for p in "${PKGS[@]}"; do ! dpkg -s "$p" > /dev/null 2>&1 || exit 1; done )'

# 4. The Python wheel in a fresh venv. -----------------------------------------------------------
if [ -x target/venv/bin/maturin ]; then
  rm -rf target/wheels
  make -s wheel PROFILE="$PROFILE" > "$T/wheel.out" 2>&1
  whl=$(ls target/wheels/*.whl 2>/dev/null | head -1)
  expect "make wheel builds ${whl:-nothing}" '[ -n "$whl" ] || { tail -5 "$T/wheel.out"; false; }'
  python3 -m venv "$T/venv" && "$T/venv/bin/pip" install -q --disable-pip-version-check "$whl" > "$T/pip.out" 2>&1
  expect "pip installs the wheel into a fresh venv" '[ $? -eq 0 ] || { tail -5 "$T/pip.out"; false; }'
  got=$(cd "$T" && "$T/venv/bin/python" -c 'import seaccess, sys; print(seaccess.__file__.startswith(sys.prefix))' 2>&1)
  expect "and import seaccess finds it there ('$got')" '[ "$got" = True ]'
else
  bad "no target/venv/bin/maturin (make python builds it; make test runs this after python-test)"
fi
summary
