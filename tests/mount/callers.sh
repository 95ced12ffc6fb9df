#!/usr/bin/env bash
# `seaccess mount`'s callers (issue 34 items 3, 4, 6): every request is decided on the caller as
# it is then (its uid as the request carries it, the program it runs now), the executable is
# matched by identity (not by a name the caller's mount or user namespace gives it), and one
# user can exhaust neither the server's descriptors nor its lock waits. Attacks run as the
# attacker would (nobody through runuser or setpriv), each with a deadline. Every expected
# context is derived from the policy (seaccess check / compute-create). Called by run.sh; the
# same prerequisites, and skips (exit 0) where FUSE is missing unless SEACCESS_REQUIRE_FUSE=1.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
case $BUILD in /*) BIN=$BUILD/seaccess ;; *) BIN=$PWD/$BUILD/seaccess ;; esac
HERE=$PWD/tests/mount
FC=/etc/selinux/default/contexts/files/file_contexts
POL=/etc/selinux/default/policy/policy.33
U=unconfined_u:unconfined_r:unconfined_t:s0   # the default rule's, and the privileged program's
H=system_u:system_r:httpd_t:s0                 # the web interpreter's exe= rule
NTP=system_u:system_r:ntpd_t:s0                # uid 65534's rule
INITRC=system_u:system_r:initrc_t:s0           # the transition rule's
SUITE="mount callers"
# ok/bad/expect/summary/skip and the label, log and policy helpers; start and avc are this
# suite's own (defined below, after it).
. tests/mount/lib.sh
[ "$(id -u)" = 0 ] || skip "not root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v fusermount3 >/dev/null || skip "no fusermount3"
for f in "$POL" "$FC"; do [ -r "$f" ] || skip "no $f (make deps)"; done
for need in runuser setpriv unshare flock pgrep python3; do command -v $need >/dev/null || skip "no $need"; done
[ -x "$BIN" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli
# A real interpreter every user may run (not a shim under root's home).
PY=
for py in /usr/bin/python3 python3; do
  PY=$("$py" -c 'import os, sys; print(os.path.realpath(sys.executable))' 2>/dev/null) && break
done
[ -x "$PY" ] || skip "no python3"

T=$(mktemp -d)
chmod 755 "$T"
MPS=() PIDS=()
cleanup() {
  pkill -9 -u nobody -x flock 2>/dev/null
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for mp in "${MPS[@]}"; do grep -qs " $mp fuse" /proc/mounts && fusermount3 -uz "$mp" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

start() {
  local name=$1 src=$2 mp=$3; shift 3
  mkdir -p "$mp"; MPS+=("$mp"); MPID=
  timeout 30 "$BIN" mount "$@" "$src" "$mp" > "$T/$name.out" 2> "$T/$name.err"; local rc=$?
  MPID=$(sed -n 's/.*(pid \([0-9][0-9]*\)).*/\1/p' "$T/$name.out" | head -n 1)
  [ -n "$MPID" ] && PIDS+=("$MPID")
  [ $rc -eq 0 ] && [ -n "$MPID" ] && is_mounted "$mp"
}
# avc SCON TCON CLASS: a denial since the mark for exactly these, that seaccess check agrees with.
avc() {
  local line perms
  while IFS= read -r line; do
    [[ $line == "type=AVC "*"avc:  denied  { "*" scontext=$1 tcontext=$2 tclass=$3 permissive=0" ]] || continue
    perms=$(sed -n 's/.*denied  { \(.*\) } for .*/\1/p' <<< "$line")
    "$BIN" check -p "$POL" "$1" "$2" "$3" $perms > /dev/null 2>&1
    [ $? -eq 1 ] && return 0
  done < <(since)
  return 1
}
# fds PID: the descriptors a process holds.
fds() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
# inserver N NAME USER: wait (10 s) until N processes NAME of USER wait for the server's answer
# (in the kernel's request_wait_answer: S until an interrupt was refused once, D after).
inserver() {
  local n=$1 name=$2 user=$3 got
  for _ in $(seq 200); do
    got=0
    for p in $(pgrep -u "$user" -x "$name"); do
      [ "$(cat "/proc/$p/wchan" 2>/dev/null)" = request_wait_answer ] && got=$((got + 1))
    done
    [ "$got" -ge "$n" ] && return 0
    sleep 0.05
  done
  echo "  ($got of $n $name processes of $user wait for the server)"
  return 1
}

# The tree: labels from file_contexts (--path-prefix /), none written to the backing files.
S=$T/src M=$T/mnt LOG=$T/audit.log
mkdir -p "$S/etc" "$S/pub" "$T/bin"
echo 'root:$6$secret:19000::::::' > "$S/etc/shadow"; chmod 644 "$S/etc/shadow"   # DAC lets anyone read
chmod 1777 "$S/pub"
L_SHADOW=$(fclabel /etc/shadow)
allowed "$U" "$L_SHADOW" file getattr open read; u_reads=$?
allowed "$NTP" "$L_SHADOW" file read; ntp_reads=$?
allowed "$H" "$L_SHADOW" file read; h_reads=$?
expect "the policy: $U reads $L_SHADOW, $NTP and $H may not" '[ $u_reads -eq 0 ] && [ $ntp_reads -eq 1 ] && [ $h_reads -eq 1 ]'
cp /bin/cat "$T/bin/priv"; cp "$PY" "$T/bin/webpy"; cp /bin/cat "$T/bin/webd"
chmod 755 "$T/bin" "$T/bin/"*
cat > "$T/subjects" <<EOF
exe=$T/bin/priv  $U
exe=$T/bin/webpy $H
uid=65534 $NTP
default $U
EOF
start main "$S" "$M" --policy "$POL" -f "$FC" --path-prefix / --subjects "$T/subjects" --audit-log "$LOG"; rc=$?
MAIN=$MPID
expect "a mount with exe=, uid= and default rules" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || { cat "$T/main.out" "$T/main.err"; summary; }
if grep -q "callers are not cached" "$T/main.err"; then
  echo "NOTE: $(grep 'callers are not cached' "$T/main.err")"
fi
want=$(head -n 1 "$S/etc/shadow")

# 1. A credential follows the caller's uid and program at every request (item 3). ----------
mark
out=$(timeout 10 sh -c 'cd "$1" && read -r line < etc/shadow && echo "sh read ${line%%:*}" && exec setpriv --reuid=65534 --regid=65534 --clear-groups cat etc/shadow' sh "$M" 2>&1)
expect "one process: its shell reads shadow as $U, then exec setpriv --reuid=65534 cat is denied (EACCES, record for $NTP)" \
  '[[ $out == "sh read root"* ]] && [[ $out == *"Permission denied"* ]] && [[ $out != *secret* ]] && avc "$NTP" "$L_SHADOW" file'
mark
out=$(timeout 10 setpriv --euid=65534 cat "$M/etc/shadow" 2>&1)
expect "real uid 0, effective (so filesystem) uid 65534: the uid= rule matches the uid the request carries (EACCES, record for $NTP)" \
  '[[ $out == *"Permission denied"* ]] && [[ $out != *secret* ]] && avc "$NTP" "$L_SHADOW" file'
mark
out=$(timeout 10 "$PY" -c '
import os, sys
def rd():
    try:
        return open(sys.argv[1]).readline().split(":")[0]
    except OSError as e:
        return "E%d" % e.errno
a = rd(); os.setresgid(65534, 65534, 65534); os.setresuid(65534, 65534, 65534); b = rd()
print(a, b)' "$M/etc/shadow" 2>&1)
expect "one process, no exec: reads shadow as root, setresuid(65534), its next read is denied ($out)" '[ "$out" = "root E13" ] && avc "$NTP" "$L_SHADOW" file'
mark
out=$(timeout 10 bash -c 'cd "$1" && read -r line < etc/shadow && echo "sh ${line%%:*}" && exec "$2" -c "
import errno, os
try:
    open(\"etc/shadow\").read(); print(\"web read\")
except OSError as e:
    print(\"web\", errno.errorcode[e.errno])
os.execv(\"/bin/cat\", [\"cat\", \"etc/shadow\"])"' sh "$M" "$T/bin/webpy" 2>&1)
expect "one process: unconfined shell, exec of the exe= program gets $H at its next request (EACCES), exec of cat loses it (reads)" \
  '[ "$out" = "$(printf "sh root\nweb EACCES\n%s" "$want")" ] && avc "$H" "$L_SHADOW" file'

# 2. The executable by identity (item 4). -------------------------------------------------
out=$(timeout 10 runuser -u nobody -- "$T/bin/priv" "$M/etc/shadow" 2>&1)
expect "nobody running the exe= program itself gets $U (reads shadow): the rule is what the attacks below aim at" '[ "$out" = "$want" ]'
mark
out=$(timeout 10 runuser -u nobody -- unshare -Urm sh -c 'mount --bind /bin/cat "$1" && exec "$1" "$2"' sh "$T/bin/priv" "$M/etc/shadow" 2>&1)
expect "nobody in its own user and mount namespace, /bin/cat bound over the exe= program's path: denied as $NTP" \
  '[[ $out == *"Permission denied"* ]] && [[ $out != *secret* ]] && avc "$NTP" "$L_SHADOW" file'
mark
out=$(timeout 10 unshare -m sh -c 'mount --bind /bin/cat "$1" && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$1" "$2"' sh "$T/bin/priv" "$M/etc/shadow" 2>&1)
expect "the same bind in a mount namespace of the server's user namespace, run as uid 65534: denied as $NTP (the inode is cat's)" \
  '[[ $out == *"Permission denied"* ]] && [[ $out != *secret* ]] && avc "$NTP" "$L_SHADOW" file'
if command -v cc > /dev/null && cc -O2 -shared -fPIC -Wl,-z,now -DFORGE_LIB -o "$T/bin/libforge.so" "$HERE/forge_exe.c" 2> "$T/cc.err" &&
   cc -O2 -Wl,-z,now -o "$T/bin/forge" "$HERE/forge_exe.c" -L"$T/bin" -lforge -Wl,-rpath,"$T/bin" 2>> "$T/cc.err"; then
  chmod 755 "$T/bin/forge" "$T/bin/libforge.so"
  mark
  out=$(timeout 10 runuser -u nobody -- "$T/bin/forge" "$T/bin/priv" "$M/etc/shadow" 0 2>&1)
  expect "nobody renames its executable to the exe= program from its own user namespace (prctl PR_SET_MM_MAP): denied as $NTP ($out)" \
    '[ "$out" = EACCES ] && avc "$NTP" "$L_SHADOW" file'
  # Known and documented (docs/mount.md): a child in a new user namespace sharing the process's memory
  # renames it while the process stays in the server's user namespace. Only a program the
  # attacker cannot read (mode 0711) is out of its reach.
  out=$(timeout 10 runuser -u nobody -- "$T/bin/forge" "$T/bin/priv" "$M/etc/shadow" 1 2>&1)
  [ "$out" = "$want" ] && echo "KNOWN: a CLONE_VM child in a new user namespace renamed nobody's executable to the readable exe= program and read shadow (docs/mount.md: exe= rules)"
  cp /bin/cat "$T/bin/priv711"; chmod 711 "$T/bin/priv711"
  out=$(timeout 10 runuser -u nobody -- "$T/bin/forge" "$T/bin/priv711" "$M/etc/shadow" 1 2>&1)
  expect "... but not to a program it cannot read (mode 0711): the rename fails ($out)" '[ "$out" = "forge:EACCES" ]'
else
  echo "SKIP: no C compiler for the executable-renaming attack ($(head -n 1 "$T/cc.err" 2>/dev/null))"
fi

# A transition rule labels the executable's path only where the path reaches the same file.
mkdir -p "$T/fc"; cp "$FC" "$T/fc/file_contexts"
for x in homedirs subs_dist subs local; do [ -e "$FC.$x" ] && cp "$FC.$x" "$T/fc/file_contexts.$x"; done
EXEC=$(fclabel /usr/sbin/apache2)
printf '%s\t--\t%s\n' "$(sed 's/[.]/\\./g' <<< "$T/bin/webd")" "$EXEC" >> "$T/fc/file_contexts"
DOM=$(echo "$INITRC $EXEC process" | "$BIN" compute-create -p "$POL")
printf 'transition %s\n' "$INITRC" > "$T/subjects2"
M2=$T/mnt2
LOG=$T/audit2.log
start trans "$S" "$M2" --policy "$POL" -f "$T/fc/file_contexts" --path-prefix / --subjects "$T/subjects2" --audit-log "$LOG"; rc=$?
mark
out=$(timeout 10 "$T/bin/webd" "$M2/etc/shadow" 2>&1)
expect "transition: webd (file_contexts $EXEC) runs as $DOM, denied shadow with its record" '[ $rc -eq 0 ] && [[ $out == *"Permission denied"* ]] && avc "$DOM" "$L_SHADOW" file'
mark
out=$(timeout 10 unshare -m sh -c 'mount --bind /bin/cat "$1" && exec "$1" "$2"' sh "$T/bin/webd" "$M2/etc/shadow" 2>&1)
expect "transition: /bin/cat bound over webd's path in another mount namespace is refused (EACCES, no record, logged why)" \
  '[[ $out == *"Permission denied"* ]] && no_avc && grep -q "is not the file .*webd names here" "$T/trans.err"'
kill -TERM "$MPID"
kill -TERM "$MAIN"

# 3. Thousands of threads of one user hold no descriptor of the server (item 6). -----------
# A mount without a subjects file: every caller is unconfined, so nothing but the mount's own
# limits stands in the way.
M=$T/mnt3 LOG=$T/audit3.log
start plain "$S" "$M" --policy "$POL" -f "$FC" --path-prefix / --audit-log "$LOG"; rc=$?
MAIN=$MPID
expect "a mount without subjects" '[ $rc -eq 0 ]'
N=3000
before=$(fds "$MAIN")
coproc THREADS { exec timeout 120 runuser -u nobody -- "$PY" -c '
import os, sys, threading
threading.stack_size(128 * 1024)
n, path = int(sys.argv[1]), sys.argv[2]
ready, go = threading.Barrier(n + 1), threading.Event()
def run():
    try:
        os.stat(path)
    except OSError:
        pass  # a refusal is decided on a caller too: what counts is that a request was made
    ready.wait()
    go.wait()
ts = [threading.Thread(target=run) for _ in range(n)]
for t in ts:
    t.start()
ready.wait()
print("ready", flush=True)
sys.stdin.readline()
go.set()
for t in ts:
    t.join()
print("done", flush=True)' "$N" "$M/pub" 2>&1; }
r= ; read -r -t 100 -u "${THREADS[0]}" r
during=$(fds "$MAIN")
rd=$(timeout 10 cat "$M/etc/shadow" | head -n 1)
created=0
for i in 1 2 3 4 5; do timeout 10 sh -c 'echo x > "$1"' sh "$M/pub/root$i" && created=$((created + 1)); done
d=
if [ -n "${THREADS_PID:-}" ] && kill -0 "$THREADS_PID" 2>/dev/null; then
  echo go >&"${THREADS[1]}"
  read -r -t 60 -u "${THREADS[0]}" d
fi
[ -n "${THREADS_PID:-}" ] && wait "$THREADS_PID" 2>/dev/null
echo "  (threads said: $r / $d; root read: $rd, created $created)"
expect "$N threads of nobody each made a request; the server's descriptors went from $before to $during" '[ "$r" = ready ] && [ "$during" -le $((before + 8)) ]'
expect "... and root read and created meanwhile" '[ "$rd" = "$want" ] && [ $created -eq 5 ] && [ "$d" = done ]'

# One user's open files hold at most a quarter of the pool: the server's descriptor limit less
# the nodes' budget (half of it at most) and a reserve of 256; EMFILE beyond (crates/fs/src/budget.rs).
# The soft limit only: the hard one could not be raised back without CAP_SYS_RESOURCE.
ORIG_NOFILE=$(prlimit --pid "$MAIN" --nofile --output SOFT --noheadings | tr -d ' ')
prlimit --pid "$MAIN" --nofile=1024:
sleep 1.1 # the server reads its limit again at most once a second
coproc OPENS { exec timeout 60 runuser -u nobody -- "$PY" -c '
import errno, os, resource, sys
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
fds, errs = [], {}
for _ in range(1100):
    try:
        fds.append(os.open(sys.argv[1], os.O_RDONLY))
    except OSError as e:
        errs[errno.errorcode[e.errno]] = errs.get(errno.errorcode[e.errno], 0) + 1
print(len(fds), " ".join(f"{k}={v}" for k, v in sorted(errs.items())), flush=True)
sys.stdin.readline()' "$M/etc/shadow" 2>&1; }
o= ; read -r -t 50 -u "${OPENS[0]}" o
held=$(fds "$MAIN")
rd=$(timeout 10 cat "$M/etc/shadow" | head -n 1)
timeout 10 sh -c 'echo x > "$1"' sh "$M/pub/root-open"; cr=$?
[ -n "${OPENS_PID:-}" ] && kill -0 "$OPENS_PID" 2>/dev/null && echo done >&"${OPENS[1]}"
[ -n "${OPENS_PID:-}" ] && wait "$OPENS_PID" 2>/dev/null
expect "the server limited to 1024 descriptors: nobody's 1100 opens get a quarter of (1024 - 512 - 256) = 64, then EMFILE ($o; the server holds $held)" '[ "$o" = "64 EMFILE=1036" ] && [ "$held" -lt 1024 ]'
expect "... while root reads and creates" '[ "$rd" = "$want" ] && [ $cr -eq 0 ]'
prlimit --pid "$MAIN" --nofile="$ORIG_NOFILE":
sleep 1.1

# 4. Lock waiters: bounded per uid, answered as soon as they are killed (item 6). ------------
F=$M/pub/lockfile
timeout 10 sh -c ': > "$1" && chmod 666 "$1"' sh "$F"
(exec timeout 120 flock "$F" sleep 110) & HOLDER=$!
for _ in $(seq 100); do timeout 5 flock -n "$F" true 2> /dev/null || break; sleep 0.05; done
held=$(timeout 5 flock -n "$F" true 2>&1; echo $?)
expect "root holds the lock ($held)" '[[ $held == *1 ]]'
timeout 60 runuser -u nobody -- sh -c 'for i in $(seq 100); do flock "$1" true & done; wait' sh "$F" > /dev/null 2>&1 &
inserver 100 flock nobody; rc=$?
expect "100 lock waiters of nobody sit in the server" '[ $rc -eq 0 ]'
t0=$(date +%s.%N)
pkill -9 -u nobody -x flock
left=1
for _ in $(seq 100); do left=$(pgrep -u nobody -x flock | wc -l); [ "$left" -eq 0 ] && break; sleep 0.05; done
t1=$(date +%s.%N)
expect "all 100 SIGKILLed waiters are gone within 5 s ($(printf '%.2f' "$(echo "$t1 - $t0" | bc)") s, $left left)" '[ "$left" -eq 0 ]'
# One uid's waits are bounded; another uid's are not affected.
timeout 60 runuser -u nobody -- sh -c 'for i in $(seq 128); do flock "$1" true & done; wait' sh "$F" > /dev/null 2>&1 &
inserver 128 flock nobody; rc=$?
out=$(timeout 10 runuser -u nobody -- flock "$F" true 2>&1); orc=$?
expect "nobody's 129th waiting lock gets ENOLCK at once ($out)" '[ $rc -eq 0 ] && [ $orc -ne 0 ] && [[ $out == *"No locks available"* ]]'
expect "... while root takes a free lock" 'timeout 10 flock -n "$M/pub/root1" true'
(exec timeout 30 flock "$F" true) & ROOTW=$!
sleep 0.5
waiting=$(kill -0 $ROOTW 2>/dev/null && echo yes)
kill $HOLDER 2>/dev/null; wait $HOLDER 2>/dev/null
wait $ROOTW; rc=$?
expect "... and root's waiting lock is accepted and taken when the holder lets go (waited: ${waiting:-no})" '[ "$waiting" = yes ] && [ $rc -eq 0 ]'
pkill -9 -u nobody -x flock
for _ in $(seq 100); do [ "$(pgrep -u nobody -x flock | wc -l)" -eq 0 ] && break; sleep 0.05; done
expect "no waiter is left behind" '[ "$(pgrep -u nobody -x flock | wc -l)" -eq 0 ]'

kill -TERM "$MAIN"
for _ in $(seq 100); do kill -0 "$MAIN" 2>/dev/null || break; sleep 0.1; done
expect "the mount exits on SIGTERM" '! kill -0 "$MAIN" 2>/dev/null && ! is_mounted "$M"'
summary
