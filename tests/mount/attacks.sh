#!/usr/bin/env bash
# Issue 34's attacks on `seaccess mount` (items 1 to 6), run as the attacker runs them: nobody
# (setpriv / runuser, the helper tests/mount/attacker.py) against a real mount of a scratch
# tree labeled in the mount's own store (trusted.selinux), root's processes as bystanders.
# Each check fails while its hole is there. Expected decisions are derived from the policy
# (seaccess label / check), never written here. Every call touching a mount has a deadline; a
# mount that stops answering is recovered by aborting its FUSE connection, so a hang fails a
# check instead of the suite. Needs root, /dev/fuse, fusermount3, the fusectl file system,
# Debian's policy and file_contexts (make deps); skips (exit 0) where FUSE is missing unless
# SEACCESS_REQUIRE_FUSE=1. Files written directly on the tree (nobody's, item 5) get their
# labels from file_contexts as if the tree were "/" (--path-prefix /), which is also what
# today's mount gives every file: so each check shows its hole on a mount that reads
# security.selinux, not only on one that reads the store. The checks marked (interface) are
# the store's interface itself.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
case $BUILD in /*) BIN=$BUILD/seaccess ;; *) BIN=$PWD/$BUILD/seaccess ;; esac
FC=/etc/selinux/default/contexts/files/file_contexts
POL=/etc/selinux/default/policy/policy.33
SUITE=attacks
. tests/mount/lib.sh
U=unconfined_u:unconfined_r:unconfined_t:s0   # the default rule's context
H=system_u:system_r:httpd_t:s0                 # webcat's (an exe= rule)
NTP=system_u:system_r:ntpd_t:s0                # nobody's (a uid= rule), as in run.sh
NPY=/usr/bin/python3                           # an interpreter nobody may run
# The server's descriptor limit for item 6: the old design (a pidfd per caller thread)
# exhausts it with a tenth more threads.
NOFILE=${SEACCESS_ATTACK_NOFILE:-1024}
# The whole suite's deadline: past it every mount of the suite is aborted.
DEADLINE=${SEACCESS_ATTACK_DEADLINE:-300}

[ "$(id -u)" = 0 ] || skip "not root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "no fusermount3"
for f in "$POL" "$FC" "$NPY"; do [ -r "$f" ] || skip "no $f (make deps)"; done
for need in getfattr setfattr setpriv runuser prlimit unshare; do command -v $need >/dev/null || skip "no $need (make deps)"; done
NOBODY=$(id -u nobody 2>/dev/null) NOGROUP=$(id -g nobody 2>/dev/null)
[ -n "$NOBODY" ] || skip "no user nobody"
need_fusectl || skip "no fusectl at $FUSECTL (a hung mount could not be aborted)"
[ -x "$BIN" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli

T=$(mktemp -d)
chmod 755 "$T" # nobody walks to the mount points and the helper
: > "$T/conns"
ATT=() WATCHDOG=
cleanup() {
  exec 7>&- 8>&-
  [ -n "$WATCHDOG" ] && kill "$WATCHDOG" 2>/dev/null
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for mp in "${MPS[@]}"; do
    for _ in $(seq 20); do is_mounted "$mp" || break; sleep 0.1; done
    abort_mount "$mp"
  done
  for p in "${ATT[@]}"; do kill -9 -- "-$p" "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  wait 2>/dev/null
  # A mount still there would make rm walk into it: leave the directory then.
  if grep -qs " $T/" /proc/mounts; then echo "attacks: mounts left under $T, not removed" >&2; else rm -rf "$T"; fi
  [ -n "$FUSECTL_MOUNTED" ] && umount "$FUSECTL" 2>/dev/null
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
bash -c 'sleep "$1" & s=$!; trap "kill $s 2>/dev/null; exit 0" TERM; wait $s
  echo "attacks: ${1}s passed: aborting every mount of the suite" >&2
  while read -r c; do [ -w "$3/$c/abort" ] && echo 1 > "$3/$c/abort"; done < "$2"' _ "$DEADLINE" "$T/conns" "$FUSECTL" &
WATCHDOG=$!

NOB=(setpriv --reuid="$NOBODY" --regid="$NOGROUP" --clear-groups --) # as nobody
# The deadline of a helper in the background; timeout also makes it a process group, which
# the script ends as a whole (kill -- -PID) with the processes the helper forked.
DL=(timeout -k 5 120)
cp tests/mount/attacker.py "$T/attacker.py"
ATK="$T/attacker.py"
# helper NAME ARGS...: the attacker helper as nobody in the background, standard input from
# the FIFO $T/NAME.in (fd 7 of this shell writes it), output in $T/NAME.out.
helper() {
  local name=$1; shift
  mkfifo "$T/$name.in"
  "${DL[@]}" "${NOB[@]}" "$NPY" "$ATK" "$@" < "$T/$name.in" > "$T/$name.out" 2>&1 7>&- 8>&- &
  ATT+=($!)
  exec 7> "$T/$name.in"
}
# ends PID SECS: PID (a child of this shell) ends within SECS, else it is killed (status 124).
ends() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }; sleep 0.1; done
  kill -9 -- "-$1" "$1" 2>/dev/null
  return 124
}
line() { grep -m 1 "^$2:" "$1" 2>/dev/null; }

# The tree, labeled as if it were "/", in the mount's store. -----------------------------
S=$T/src
mkdir -p "$S/etc" "$S/var/www/html/pub" "$T/bin"
echo 'root:$6$secret:19000::::::' > "$S/etc/shadow"; chmod 644 "$S/etc/shadow" # DAC lets anyone read
echo '<h1>hello</h1>' > "$S/var/www/html/index.html"
chmod 1777 "$S/var/www/html/pub" # world-writable, sticky, as /tmp
"$BIN" label --apply --xattr trusted.selinux --root "$S" -f "$FC" "$S" > "$T/label.out" 2>&1; rc=$?
L_SHADOW=$(fclabel /etc/shadow) L_PUB=$(fclabel /var/www/html/pub/forged) L_RW=$(fclabel /var/www/nextcloud/data/x)
expect "label --apply --xattr trusted.selinux writes the mount's store (etc/shadow $L_SHADOW), no security.selinux" \
  '[ $rc -eq 0 ] && [ "$(label_of "$S/etc/shadow" trusted.selinux)" = "$L_SHADOW" ] && [ -z "$(label_of "$S/etc/shadow")" ]'
DIRS=() # the labels of the directories down to pub
for d in / /var /var/www /var/www/html /var/www/html/pub; do DIRS+=("$(fclabel $d dir)"); done
walks() { local l; for l in "${DIRS[@]}"; do allowed "$1" "$l" dir search getattr || return 1; done; }
# E: a domain that may read shadow_t but not pub's files (and may walk to them).
E=
for t in accountsd_t memlockd_t radiusd_t yppasswdd_t systemd_userdbd_t chkpwd_t passwd_t; do
  c=system_u:system_r:$t:s0
  allowed "$c" "$L_SHADOW" file getattr open read && denied "$c" "$L_PUB" file read && walks "$c" && { E=$c; break; }
done
"$BIN" check -p "$POL" "$NTP" "$L_SHADOW" file getattr open read > "$T/c" 2>&1; rc=$?
expect "seaccess check: $H walks to and reads $L_PUB, not $L_SHADOW; $NTP may not read $L_SHADOW (audited); $U may; E=$E reads $L_SHADOW, not $L_PUB" \
  'walks "$H" && allowed "$H" "$L_PUB" file getattr open read && denied "$H" "$L_SHADOW" file read && [ $rc -eq 1 ] && ! grep -q dontaudit "$T/c" &&
   allowed "$U" "$L_SHADOW" file getattr open read && [ -n "$E" ] && [ "$L_RW" != "$L_PUB" ]'
cp /bin/cat "$T/bin/webcat"; cp /bin/cat "$T/bin/shcat"; cp /bin/cat "$T/bin/trusted"
chmod 700 "$T/bin/trusted" # the rule's program: nobody cannot run it, only pretend to
MNTARGS=(--policy "$POL" -f "$FC" --path-prefix /) # a file the store does not label: file_contexts as under /

# Mount A: items 1 and 5. ----------------------------------------------------------------
printf 'exe=%s %s\nexe=%s %s\ndefault %s\n' "$T/bin/webcat" "$H" "$T/bin/shcat" "${E:-$NTP}" "$U" > "$T/subjects.a"
MA=$T/ma LOG=$T/audit.a
start a "$S" "$MA" "${MNTARGS[@]}" --subjects "$T/subjects.a" --audit-log "$LOG"; rc=$?
PA=$MPID
expect "mount A (default $U, webcat $H, shcat E) starts" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || { cat "$T/a.out" "$T/a.err"; summary; }
expect "getfattr on mount A shows the store's labels (etc/shadow $L_SHADOW, pub ${DIRS[4]})" \
  '[ "$(mlabel "$MA/etc/shadow")" = "$L_SHADOW" ] && [ "$(mlabel "$MA/var/www/html/pub")" = "${DIRS[4]}" ]'

# 1. The stale path of an unlinked file, its directory swapped for a link out of the tree.
mkdir -p "$T/outside1" "$T/outside2"
for o in "$T/outside1" "$T/outside2"; do
  echo 'outside secret' > "$o/victim"; chmod 600 "$o/victim"; setfattr -n user.secret -v s3cret "$o/victim"
done
before1=$(snapshot "$T/outside1") before2=$(snapshot "$T/outside2")
within 30 "$MA" timeout 20 "${NOB[@]}" "$NPY" "$ATK" escape "$MA/var/www/html/pub" "$T/outside1" > "$T/escape.out" 2>&1
sed 's/^/  nobody: /' "$T/escape.out"
expect "1: nobody keeps a descriptor of pub/d/victim, unlinks it, removes d, links pub/d -> $T/outside1 (all through the mount)" \
  '[[ $(line "$T/escape.out" setup) == "setup: OK"* ]]'
expect "1: after fchmod 0666, ftruncate, fsetxattr and a read-write reopen through /proc/self/fd, the root-owned 0600 file outside the tree is unchanged (mode, owner, bytes, attributes)" \
  '[ "$(snapshot "$T/outside1")" = "$before1" ]'
r=$(line "$T/escape.out" reopen) VIC="reopen: OK 'victim bytes\\n'"
[ "$(line "$T/escape.out" ftruncate)" = "ftruncate: OK" ] && VIC="reopen: OK 'vic'" # the victim's bytes after ftruncate(fd, 3)
expect "1: the reopen of /proc/self/fd/N is refused or gives the unlinked file's own bytes ($r)" \
  '[ -n "$r" ] && { [[ $r != "reopen: OK"* ]] || [ "$r" = "$VIC" ]; }'
expect "1: fgetxattr through the descriptor does not read the outside file's user.secret" \
  '[ -n "$(line "$T/escape.out" fgetxattr)" ] && ! grep -q s3cret "$T/escape.out"'
within 30 "$MA" timeout 20 "${NOB[@]}" "$NPY" "$ATK" peek "$MA/var/www/html/pub" "$T/outside2" > "$T/peek.out" 2>&1
sed 's/^/  nobody: /' "$T/peek.out"
r=$(line "$T/peek.out" stat)
expect "1: without a chmod, stat of /proc/self/fd/N shows the unlinked file (owner nobody), not the outside one ($r)" \
  '[ -n "$r" ] && { [[ $r != "stat: OK"* ]] || [[ $r == *"uid=$NOBODY "* ]]; }'
expect "1: ... and flistxattr does not list the outside file's attributes" \
  '[[ $(line "$T/peek.out" setup) == "setup: OK"* ]] && [ -n "$(line "$T/peek.out" flistxattr)" ] && ! grep -q user.secret "$T/peek.out" && [ "$(snapshot "$T/outside2")" = "$before2" ]'

# 5. Labels that any file owner can write, outside the mount.
P=$S/var/www/html/pub
"${NOB[@]}" sh -c 'echo forged > "$1/forged_sec" && echo forged > "$1/forged_user"' sh "$P"
"${NOB[@]}" setfattr -n security.selinux -v "$L_SHADOW" "$P/forged_sec"; r1=$?
"${NOB[@]}" setfattr -n user.selinux -v "$L_SHADOW" "$P/forged_user"; r2=$?
expect "5: nobody writes security.selinux and user.selinux ($L_SHADOW) on its own backing files, outside the mount (this kernel lets it)" \
  '[ $r1 -eq 0 ] && [ $r2 -eq 0 ] && [ "$(label_of "$P/forged_sec")" = "$L_SHADOW" ] && [ "$(label_of "$P/forged_user" user.selinux)" = "$L_SHADOW" ]'
for f in forged_sec forged_user; do
  expect "5: through the mount, $f keeps the label file_contexts gives it ($L_PUB), not the forged one (got $(mlabel "$MA/var/www/html/pub/$f"))" \
    '[ "$(mlabel "$MA/var/www/html/pub/$f")" = "$L_PUB" ]'
  out=$(within 15 "$MA" timeout 10 "$T/bin/webcat" "$MA/var/www/html/pub/$f" 2>&1)
  expect "5: $H (allowed $L_PUB, not $L_SHADOW) reads $f" '[ "$out" = forged ]'
  mark
  out=$(within 15 "$MA" timeout 10 "$T/bin/shcat" "$MA/var/www/html/pub/$f" 2>&1); rc=$?
  expect "5: ${E#system_u:system_r:} (allowed $L_SHADOW, not $L_PUB) gets EACCES on $f, with its record" \
    '[ $rc -ne 0 ] && [[ $out == *"Permission denied"* ]] && avc "$E" "$L_PUB" file 0 "$f"'
done
echo stored > "$P/stored"; setfattr -n trusted.selinux -v "$L_RW" "$P/stored"
expect "5: (interface) the mount shows a file's trusted.selinux ($L_RW, where file_contexts says $L_PUB) as security.selinux" \
  '[ "$(mlabel "$MA/var/www/html/pub/stored")" = "$L_RW" ]'
timeout 10 setfattr -n trusted.selinux -v "$L_SHADOW" "$MA/var/www/html/pub/stored" 2> "$T/e"; rc=$?
expect "5: root's setfattr -n trusted.selinux through the mount is refused ($(head -c 80 "$T/e")), the store unchanged" \
  '[ $rc -ne 0 ] && [ "$(label_of "$P/stored" trusted.selinux)" = "$L_RW" ] && [ "$(mlabel "$MA/var/www/html/pub/stored")" = "$L_RW" ]'
stop_mount "$MA" "$PA"
mkdir -p "$T/mu"
timeout 30 "$BIN" mount "${MNTARGS[@]}" --xattr user.selinux "$S" "$T/mu" > "$T/mu.out" 2> "$T/mu.err"; rc=$?
if is_mounted "$T/mu"; then MPS+=("$T/mu"); PIDS+=($(sed -n 's/.*(pid \([0-9][0-9]*\)).*/\1/p' "$T/mu.out")); fi
expect "5: (interface) --xattr user.selinux on a tree others can reach is refused without --unsafe-xattr, which the error names; nothing mounted" \
  '[ $rc -ne 0 ] && grep -q -- --unsafe-xattr "$T/mu.err" && ! is_mounted "$T/mu"'

# Mount B: items 3 and 4. ----------------------------------------------------------------
printf 'exe=%s %s\nexe=%s %s\nuid=%s %s\ndefault %s\n' "$T/bin/trusted" "$U" "$T/bin/webcat" "$H" "$NOBODY" "$NTP" "$U" > "$T/subjects.b"
MB=$T/mb LOG=$T/audit.b
start b "$S" "$MB" "${MNTARGS[@]}" --subjects "$T/subjects.b" --audit-log "$LOG"; rc=$?
PB=$MPID
expect "mount B (trusted $U, webcat $H, uid=$NOBODY $NTP, default $U) starts" '[ $rc -eq 0 ]'
SHADOW=$(cat "$S/etc/shadow")

# 3. A credential kept across setuid and execve.
mark
out=$(within 15 "$MB" timeout 10 runuser -u nobody -- cat "$MB/etc/shadow" 2>&1); rc=$?
expect "3: (the rule) nobody's cat gets EACCES on etc/shadow with $NTP's record" \
  '[ $rc -ne 0 ] && [[ $out == *"Permission denied"* ]] && avc "$NTP" "$L_SHADOW" file 0 shadow'
mark
out=$(within 15 "$MB" timeout 10 sh -c 'cd "$1" && [ -e etc/shadow ] && exec setpriv --reuid="$2" --regid="$3" --clear-groups cat etc/shadow' sh "$MB" "$NOBODY" "$NOGROUP" 2>&1); rc=$?
expect "3: root's shell touches the mount (cd, stat), becomes uid $NOBODY (setpriv) and cats etc/shadow: EACCES, with the uid rule's record ($NTP)" \
  '[ $rc -ne 0 ] && [[ $out == *"Permission denied"* ]] && [[ $out != *root:* ]] && avc "$NTP" "$L_SHADOW" file 0 shadow'
mark
out=$(within 15 "$MB" timeout 10 sh -c 'cd "$1" && [ -e etc/shadow ] && exec "$2" etc/shadow' sh "$MB" "$T/bin/webcat" 2>&1); rc=$?
expect "3: a shell ($U) touches the mount, then execs webcat (exe= rule): its next request is $H's, EACCES on etc/shadow with that record" \
  '[ $rc -ne 0 ] && [[ $out == *"Permission denied"* ]] && [[ $out != *root:* ]] && avc "$H" "$L_SHADOW" file 0 shadow'

# 4. exe= by the path a caller's own mount namespace shows.
out=$(timeout 10 runuser -u nobody -- unshare -Urm sh -c 'mount --bind /bin/true /bin/false && echo bound' 2>&1)
if [ "$out" != bound ]; then
  echo "SKIP: 4: nobody cannot make a user and mount namespace here (unshare -Urm: $out)"
else
  out=$(within 15 "$MB" timeout 10 "$T/bin/trusted" "$MB/etc/shadow" 2>&1)
  expect "4: (the rule) root running $T/bin/trusted reads etc/shadow ($U)" '[ "$out" = "$SHADOW" ]'
  mark
  out=$(within 15 "$MB" timeout 10 runuser -u nobody -- unshare -Urm sh -c 'mount --bind /bin/cat "$1" && exec "$1" "$2"' sh "$T/bin/trusted" "$MB/etc/shadow" 2>&1); rc=$?
  expect "4: nobody binds /bin/cat over $T/bin/trusted in its own namespace and runs it: EACCES on etc/shadow, with nobody's record ($NTP)" \
    '[ $rc -ne 0 ] && [[ $out == *"Permission denied"* ]] && [[ $out != *root:* ]] && avc "$NTP" "$L_SHADOW" file 0 shadow'
fi
stop_mount "$MB" "$PB"

# Mount C: item 6, the server limited to $NOFILE descriptors. ------------------------------
MC=$T/mc LOG=$T/audit.c
start c "$S" "$MC" "${MNTARGS[@]}" --audit-log "$LOG"; rc=$?
PC=$MPID
prlimit --pid "$PC" --nofile="$NOFILE:$NOFILE"
expect "mount C starts, its descriptors limited to $NOFILE" '[ $rc -eq 0 ] && grep -Eq "^Max open files +$NOFILE +$NOFILE " /proc/$PC/limits'
fds() { ls "/proc/$PC/fd" 2>/dev/null | wc -l; }
tasks() { ls "/proc/$PC/task" 2>/dev/null | wc -l; }
# root_works TAG: root reads, creates and lists on mount C, each within 10 seconds.
root_works() {
  [ "$(within 15 "$MC" timeout 10 cat "$MC/var/www/html/index.html" 2>&1)" = "$(cat "$S/var/www/html/index.html")" ] &&
  within 15 "$MC" timeout 10 sh -c 'echo root > "$1"' sh "$MC/var/www/html/root-$1" &&
  within 15 "$MC" timeout 10 ls "$MC/var/www/html" 2>/dev/null | grep -qx "root-$1"
}
base=$(fds)
expect "root works on mount C ($base descriptors open)" 'root_works 0'

# 6a. Many caller threads, each one request, all alive.
NT=$((NOFILE + NOFILE / 10))
helper threads threads "$MC/var/www/html/index.html" "$NT"; hp=${ATT[-1]}
r=$(wait_line "$T/threads.out" '^ready:' 90)
n=$(fds) k=$(tasks)
root_works a; rw=$?
exec 7>&-
ends "$hp" 20
expect "6a: while $NT threads of nobody live, each after a request ($r), root reads, creates and lists" '[ -n "$r" ] && [ $rw -eq 0 ]'
expect "6a: ... and the server holds fewer than $((NOFILE / 2)) descriptors (had $n, $base before; $k threads)" '[ -n "$r" ] && [ "$n" -lt $((NOFILE / 2)) ]'

# 6c. One uid's many lock waiters.
W=$((NOFILE + NOFILE / 10))
within 15 "$MC" timeout 10 runuser -u nobody -- sh -c ': > "$1"' sh "$MC/var/www/html/pub/nlock"
mkfifo "$T/hold.in"
"${DL[@]}" "${NOB[@]}" "$NPY" "$ATK" hold "$MC/var/www/html/pub/nlock" < "$T/hold.in" > "$T/hold.out" 2>&1 7>&- 8>&- &
ATT+=($!); holder=$!
exec 8> "$T/hold.in"
h=$(wait_line "$T/hold.out" '^held:' 15)
helper lockers lockers "$MC/var/www/html/pub/nlock" "$W"; lp=${ATT[-1]}
r=$(wait_line "$T/lockers.out" '^waiting:' 60)
n=$(fds) k=$(tasks)
within 15 "$MC" timeout 10 "$NPY" -c 'import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600); fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)' "$MC/var/www/html/rootlock" 2>/dev/null; rl=$?
root_works c; rw=$?
exec 8>&-
ends "$holder" 10
echo end >&7
f=$(wait_line "$T/lockers.out" '^final:' 30)
exec 7>&-
ends "$lp" 10
expect "6c: while $W lock waiters of nobody wait ($h, $r; the server at $n descriptors, $k threads), root takes a lock, reads, creates and lists" \
  '[ -n "$r" ] && [ $rl -eq 0 ] && [ $rw -eq 0 ]'
expect "6c: ... and once the holder lets go no waiter is left ($f)" '[[ $f == *" alive=0" ]]'

# 6b. Lock waiters SIGKILLed.
within 15 "$MC" timeout 10 sh -c 'echo k > "$1" && chmod 644 "$1"' sh "$MC/var/www/html/klock"
mkfifo "$T/khold.in"
"${DL[@]}" "$NPY" "$ATK" hold "$MC/var/www/html/klock" < "$T/khold.in" > "$T/khold.out" 2>&1 7>&- 8>&- &
ATT+=($!); holder=$!
exec 8> "$T/khold.in"
h=$(wait_line "$T/khold.out" '^held:' 15)
helper waiters waiters "$MC/var/www/html/klock" 100; wp=${ATT[-1]}
w=$(wait_line "$T/waiters.out" '^waiting:' 30)
echo kill >&7
r=$(wait_line "$T/waiters.out" '^reaped:' 15)
exec 8>&-
ends "$holder" 10
echo go >&7
f=$(wait_line "$T/waiters.out" '^final:' 25)
exec 7>&-
ends "$wp" 10
expect "6b: 100 lock waiters of nobody ($h, $w) SIGKILLed: all gone within 5 s ($r)" '[[ $w == "waiting: OK "* ]] && [[ $r == "reaped: OK 100 in "* ]]'
[ "$f" = "final: OK 100" ] || { echo "  (waiters still stuck after the holder let go: $f; aborting mount C)"; abort_mount "$MC"; }
stop_mount "$MC" "$PC"

# Mount H: item 2, two request threads. --------------------------------------------------
MH=$T/mh LOG=$T/audit.h
start h "$S" "$MH" "${MNTARGS[@]}" --threads 2 --audit-log "$LOG"; rc=$?
PH=$MPID
expect "mount H (2 request threads) starts" '[ $rc -eq 0 ]'
HUNG=0
"${DL[@]}" "${NOB[@]}" "$NPY" "$ATK" hang "$MH/var/www/html/pub" "$MH/var/www/html" 4 3 > "$T/hang.out" 2>&1 &
ATT+=($!); ap=$!
s=$(wait_line "$T/hang.out" '^setup:' 10)
sleep 1
( timeout 10 stat -c %s "$MH/var/www/html/index.html" && timeout 10 cat "$MH/var/www/html/index.html" ) > "$T/probe.out" 2>&1 & pp=$!
t0=$SECONDS
for _ in $(seq 120); do kill -0 "$ap" 2>/dev/null || kill -0 "$pp" 2>/dev/null || break; sleep 0.1; done
kill -0 "$ap" 2>/dev/null && aa=1 || aa=0
kill -0 "$pp" 2>/dev/null && pa=1 || pa=0
if [ $aa = 1 ] || [ $pa = 1 ] || ! grep -q '^done:' "$T/hang.out"; then
  echo "  (mount H hung: aborting its connection)"; HUNG=1; abort_mount "$MH"
fi
ends "$ap" 10; ends "$pp" 10
want="$(stat -c %s "$S/var/www/html/index.html")
$(cat "$S/var/www/html/index.html")"
expect "2: nobody's 4 threads re-resolving stale paths that lead back into the mount ($s) return within 12 s ($([ $aa = 1 ] && echo "still running then; after the abort: ")$(line "$T/hang.out" done))" \
  '[ $aa = 0 ] && [ $HUNG = 0 ] && grep -q "^done: OK" "$T/hang.out"'
expect "2: ... and root's stat and cat of index.html meanwhile complete in time" '[ $pa = 0 ] && [ "$(cat "$T/probe.out")" = "$want" ]'
stop_mount "$MH" "$PH"

for mp in "${MPS[@]}"; do for _ in $(seq 30); do is_mounted "$mp" || break; sleep 0.1; done; done
expect "no mount is left behind" '! grep -qs " $T/" /proc/mounts'
left=
for p in "${ATT[@]}"; do kill -0 "$p" 2>/dev/null && left+=" $p"; done
expect "no attacker process is left behind${left:+ (left:$left)}" '[ -z "$left" ]'
summary
