#!/usr/bin/env bash
# Shared memory maps on `seaccess mount` (issue 35 item 7): a program that maps a file
# MAP_SHARED and writes through the map, a shared read-only map, a map that sees a write(2)
# made after it, sqlite in WAL mode (its index is a shared map), and the same on bindfs where
# bindfs is there, as the reference. The denials still hold: a process whose context may not
# read a file cannot map it (its open is refused), one that may read but not write cannot get
# a writable shared map. Expected decisions are derived from the policy (seaccess check),
# never written here. Called by run.sh; the same prerequisites (and a C compiler, sqlite3);
# skips (exit 0) where FUSE is missing unless SEACCESS_REQUIRE_FUSE=1.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
case $BUILD in /*) BIN=$BUILD/seaccess ;; *) BIN=$PWD/$BUILD/seaccess ;; esac
FC=/etc/selinux/default/contexts/files/file_contexts
POL=/etc/selinux/default/policy/policy.33
SUITE="mount mmap"
. tests/mount/lib.sh
U=unconfined_u:unconfined_r:unconfined_t:s0   # the default rule's context
H=system_u:system_r:httpd_t:s0                 # webmap's (an exe= rule)

[ "$(id -u)" = 0 ] || skip "not root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "no fusermount3"
for f in "$POL" "$FC"; do [ -r "$f" ] || skip "no $f (make deps)"; done
for need in cc sqlite3 getfattr; do command -v $need >/dev/null || skip "no $need (make deps)"; done
[ -x "$BIN" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli

T=$(mktemp -d)
chmod 755 "$T"
: > "$T/conns"
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for mp in "${MPS[@]}"; do
    for _ in $(seq 20); do is_mounted "$mp" || break; sleep 0.1; done
    abort_mount "$mp"
  done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  if grep -qs " $T/" /proc/mounts; then echo "mmap: mounts left under $T, not removed" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

mkdir -p "$T/bin"
cc -O2 -o "$T/bin/maprw" tests/mount/maprw.c 2> "$T/cc.err" || { cat "$T/cc.err"; skip "tests/mount/maprw.c does not build"; }
cp "$T/bin/maprw" "$T/bin/webmap"
unc() { timeout 20 "$T/bin/maprw" "$@" 2>/dev/null; }    # as unconfined_t (the default rule)
web() { timeout 20 "$T/bin/webmap" "$@" 2>/dev/null; }   # as httpd_t (exe=)

# A tree labeled from file_contexts as if it were "/" (--path-prefix /).
S=$T/src
mkdir -p "$S/var/www/html" "$S/etc"
# Two pages and a half of known bytes: a store through the map lands on the second page.
python3 -c 'import sys; sys.stdout.write("".join("%07d\n" % i for i in range(1280)))' > "$S/var/www/html/data.txt"
echo '<h1>hello</h1>' > "$S/var/www/html/index.html"
echo 'late page' > "$S/var/www/html/late.html"
echo 'root:$6$secret:19000::::::' > "$S/etc/shadow"; chmod 644 "$S/etc/shadow"
cp -r "$S" "$T/bsrc"   # the reference's tree
printf 'exe=%s %s\ndefault %s\n' "$T/bin/webmap" "$H" "$U" > "$T/subjects"
M=$T/mnt LOG=$T/audit.log
start main "$S" "$M" --policy "$POL" -f "$FC" --path-prefix / --subjects "$T/subjects" --audit-log "$LOG"; rc=$?
expect "seaccess mount starts" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || { cat "$T/main.out" "$T/main.err"; summary; }
L_DATA=$(mlabel "$M/var/www/html/data.txt") L_INDEX=$(mlabel "$M/var/www/html/index.html") L_SHADOW=$(mlabel "$M/etc/shadow")
L_HTML=$(mlabel "$M/var/www/html")
expect "the mount labels the files (data.txt $L_DATA, index.html $L_INDEX, shadow $L_SHADOW)" '[ -n "$L_DATA" ] && [ -n "$L_INDEX" ] && [ -n "$L_SHADOW" ]'

# 1. A program maps a file shared, read-write, stores through the map and msyncs: the kernel
# writes the pages back through the server (a WRITE with no caller), the backing file has them.
allowed "$U" "$L_DATA" file getattr open read write map; rc=$?
expect "seaccess check: unconfined_t may open, read, write and map $L_DATA" '[ $rc -eq 0 ]'
TEXT=STORED-THROUGH-A-SHARED-MAP
want=$({ head -c 4100 "$S/var/www/html/data.txt"; printf %s "$TEXT"; tail -c +$((4101 + ${#TEXT})) "$S/var/www/html/data.txt"; } | sha256sum)
mark
out=$(unc write "$M/var/www/html/data.txt" 4100 "$TEXT")
expect "unconfined_t: mmap(MAP_SHARED, PROT_READ|PROT_WRITE), a store through it, msync, munmap: OK (got: $out), and the backing file has the bytes" \
  '[ "$out" = OK ] && [ "$(sha256sum < "$S/var/www/html/data.txt")" = "$want" ] && no_avc'
expect "... and a read(2) on the mount gives them back" '[ "$(timeout 10 sha256sum < "$M/var/www/html/data.txt")" = "$want" ]'

# 2. A shared read-only map reads the content: its pages are READs of the faulting caller,
# checked as httpd_t's reads.
allowed "$H" "$L_INDEX" file getattr open read map; rc=$?
expect "seaccess check: httpd_t may open, read and map $L_INDEX" '[ $rc -eq 0 ]'
mark
out=$(web read "$M/var/www/html/index.html")
expect "httpd_t: mmap(MAP_SHARED, PROT_READ) of index.html reads its content" '[ "$out" = "$(cat "$S/var/www/html/index.html")" ] && no_avc'
out=$(unc read "$M/var/www/html/data.txt" | sha256sum)
expect "unconfined_t: a shared read-only map of data.txt reads the bytes stored in 1" '[ "$out" = "$want" ]'

# 3. A map sees a write(2) made through a descriptor after its page was faulted in (the direct
# write reaches the server and the kernel drops the stale page), as sqlite's index needs.
out=$(unc seen "$M/var/www/html/index.html" "<h2>")
expect "unconfined_t: a shared map shows a pwrite made after it (got: $out), the backing file has it" \
  '[ "$out" = "<h2>" ] && [ "$(head -c 4 "$S/var/www/html/index.html")" = "<h2>" ]'

# 4. The denials still hold: the open is where the mount checks a map.
denied "$H" "$L_SHADOW" file read; rc=$?
expect "seaccess check: httpd_t may not read $L_SHADOW" '[ $rc -eq 0 ]'
mark
out=$(web read "$M/etc/shadow")
expect "httpd_t cannot map etc/shadow: its open is refused (got: $out), with an AVC record seaccess check agrees with" \
  '[ "$out" = "open EACCES" ] && avc "$H" "$L_SHADOW" file 0 shadow'
denied "$H" "$L_INDEX" file write; rc=$?
expect "seaccess check: httpd_t may not write $L_INDEX" '[ $rc -eq 0 ]'
before=$(sha256sum < "$S/var/www/html/index.html")
mark
out=$(web write "$M/var/www/html/index.html" 0 DEFACED)
expect "httpd_t cannot map index.html to write it: its O_RDWR open is refused (got: $out), with a record; the file is unchanged" \
  '[ "$out" = "open EACCES" ] && avc "$H" "$L_INDEX" file 0 index.html && [ "$(sha256sum < "$S/var/www/html/index.html")" = "$before" ]'
out=$(web wmap-ro "$M/var/www/html/index.html")
expect "... nor through its open for reading: the kernel refuses a writable shared map of it (got: $out)" \
  '[ "$out" = "mmap EACCES" ] && [ "$(sha256sum < "$S/var/www/html/index.html")" = "$before" ]'

# 4b. A map made after a revocation: the mount never sees the mmap (the kernel would check
# { map read } there), but each page the map faults in is a READ of the caller, checked then
# (selinux_file_permission on the relabeled inode): the map faults instead of reading.
allowed "$U" "$L_INDEX" file relabelfrom && allowed "$U" "$L_SHADOW" file relabelto; rc=$?
expect "seaccess check: unconfined_t may relabel $L_INDEX to $L_SHADOW" '[ $rc -eq 0 ]'
# late FILE: webmap opens FILE, then maps and reads it once this shell says so ($1 run between).
late() {
  local l1= l2= in out pid
  # Bash unsets LATE and LATE_PID once the program has ended: taken at once.
  coproc LATE { exec timeout 20 "$T/bin/webmap" late "$1" 2>/dev/null; }
  in=${LATE[0]} out=${LATE[1]} pid=$LATE_PID
  read -r -t 10 -u "$in" l1
  "${@:2}"
  echo go >&"$out"; read -r -t 10 -u "$in" l2
  eval "exec $out>&- $in<&-"; wait "$pid" 2>/dev/null
  LATE_OUT="$l1 $l2"
}
late "$M/var/www/html/late.html" true
expect "httpd_t opens late.html, maps and reads it afterwards (got: $LATE_OUT)" '[ "$LATE_OUT" = "OPEN late page" ]'
mark
late "$M/var/www/html/late.html" timeout 10 setfattr -n security.selinux -v "$L_SHADOW" "$M/var/www/html/late.html"
expect "late.html relabeled $L_SHADOW between httpd_t's open and its mmap: reading the map faults (got: $LATE_OUT), with a { read } record" \
  '[ "$LATE_OUT" = "OPEN SIGBUS" ] && [ "$(mlabel "$M/var/www/html/late.html")" = "$L_SHADOW" ] && avc "$H" "$L_SHADOW" file 0 late.html && since | grep -q "{ read }"'

# 5. sqlite in WAL mode: its index (DB-shm) is a shared map, written through and read by each
# connection; on a mount without shared maps it says "disk I/O error".
allowed "$U" "$L_HTML" dir search write add_name remove_name; rc=$?
expect "seaccess check: unconfined_t may create and remove files in $L_HTML" '[ $rc -eq 0 ]'
# wal_on DIR: sqlite3 in WAL mode creates, fills and reads a table in DIR, a second connection
# reads it while the first has its WAL open, and the database reads back once closed.
wal_on() {
  local d=$1 out1 out2
  out1=$(timeout 30 sqlite3 "$d/wal.db" 'PRAGMA journal_mode=WAL;' 'CREATE TABLE t(a);' 'INSERT INTO t VALUES (1),(2),(3);' 'SELECT sum(a) FROM t;' 2>&1)
  out2=$(timeout 30 sqlite3 "$d/wal.db" 'BEGIN;' 'INSERT INTO t VALUES (4);' '.shell sqlite3 '"$d"'/wal.db "SELECT sum(a) FROM t;"' 'COMMIT;' 'SELECT sum(a) FROM t;' 'PRAGMA journal_mode;' 2>&1)
  WAL="$(echo $out1) | $(echo $out2)"
  [ "$WAL" = "wal 6 | 6 10 wal" ]
}
wal_on "$M/var/www/html"; rc=$?
expect "sqlite3 in WAL mode on the mount: create, insert, select, a second reader during a write (got: $WAL)" '[ $rc -eq 0 ]'
expect "... the backing database has the rows" '[ "$(timeout 10 sqlite3 "$S/var/www/html/wal.db" "SELECT sum(a) FROM t;" 2>&1)" = 10 ]'

# 6. The same on bindfs, the reference.
if command -v bindfs > /dev/null; then
  mkdir -p "$T/bmnt"; MPS+=("$T/bmnt")
  if timeout 30 bindfs "$T/bsrc" "$T/bmnt" 2> "$T/bindfs.err"; then
    echo "$(conn_of "$T/bmnt")" >> "$T/conns"; CONN[$T/bmnt]=$(conn_of "$T/bmnt")
    want=$({ head -c 4100 "$T/bsrc/var/www/html/data.txt"; printf %s "$TEXT"; tail -c +$((4101 + ${#TEXT})) "$T/bsrc/var/www/html/data.txt"; } | sha256sum)
    out=$(unc write "$T/bmnt/var/www/html/data.txt" 4100 "$TEXT")
    expect "bindfs (reference): the same store through a shared map reaches the file (got: $out)" '[ "$out" = OK ] && [ "$(sha256sum < "$T/bsrc/var/www/html/data.txt")" = "$want" ]'
    wal_on "$T/bmnt/var/www/html"; rc=$?
    expect "bindfs (reference): the same sqlite3 WAL session (got: $WAL)" '[ $rc -eq 0 ]'
    timeout 10 fusermount3 -u "$T/bmnt"
  else
    echo "SKIP: bindfs does not mount here ($(head -n 1 "$T/bindfs.err")): no reference"
  fi
else
  echo "SKIP: no bindfs: no reference"
fi

expect "the mount is still up" 'is_mounted "$M"'
summary
