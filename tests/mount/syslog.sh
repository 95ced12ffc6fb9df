#!/usr/bin/env bash
# `seaccess mount --audit-log syslog` (issue 40, item 5): a denial the mount makes arrives on
# /dev/log as one syslog datagram, `<PRI>seaccess[PID]: type=AVC msg=audit(...): avc:  denied
# ...`, with the contexts and class of the denial provoked (the policy's, from `seaccess check`
# and file_contexts, never written here); and with no /dev/log the check is still answered and
# the loss is said once, then counted at unmount.
#
# The host's /dev/log is never touched: the script runs in a private mount namespace
# (`unshare --mount`) where a tmpfs covers /dev, holding binds of the device nodes the mount
# needs and, for the first part, a datagram socket of this script's bound over /dev/log (the
# last part: a real journald, on a tmpfs over /run, equally private). Called
# by run.sh; the same prerequisites, and skips (exit 0) where FUSE is missing unless
# SEACCESS_REQUIRE_FUSE=1.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
case $BUILD in /*) BIN=$BUILD/seaccess ;; *) BIN=$PWD/$BUILD/seaccess ;; esac
FC=/etc/selinux/default/contexts/files/file_contexts
POL=/etc/selinux/default/policy/policy.33
U=unconfined_u:unconfined_r:unconfined_t:s0
H=system_u:system_r:httpd_t:s0
SUITE="mount syslog"
source tests/mount/lib.sh
source tests/peer-explain.sh
[ "$(id -u)" = 0 ] || skip "not root"
[ -c /dev/fuse ] || skip "no /dev/fuse"
command -v unshare >/dev/null || skip "no unshare"
for f in "$POL" "$FC"; do [ -r "$f" ] || skip "no $f (make deps)"; done
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"
[ -x "$BIN" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli

# The system log's own check, in the host's namespace: only where a syslog daemon listens.
if [ -z "${SEACCESS_SYSLOG_NS:-}" ]; then
  if [ -S /run/systemd/journal/dev-log ] && [ -S /dev/log ] && command -v journalctl >/dev/null; then
    tag=seaccess-test-$$
    logger -t "$tag" -p auth.notice "type=AVC msg=audit(0.000:0): avc:  denied  { read } for test"
    sleep 1
    journalctl -q -t "$tag" --no-pager -o cat 2>/dev/null | grep -q 'avc:  denied' \
      && echo "ok: logger's records reach journalctl (the daemon the mount's records go to)" \
      || echo "NOTE: journalctl does not show logger's record"
  else
    echo "SKIP: logger compatibility: no syslog daemon listens here (no /run/systemd/journal/dev-log, /dev/log: $(ls -l /dev/log 2>&1))"
  fi
  exec env SEACCESS_SYSLOG_NS=1 unshare --mount --propagation private -- bash "$0" "$@"
fi

T=$(mktemp -d)
chmod 755 "$T"
cleanup() {
  for mp in "${MPS[@]}"; do is_mounted "$mp" && fusermount3 -uz "$mp" 2>/dev/null; done
  for p in "${PIDS[@]}" ${LPID:-}; do kill "$p" 2>/dev/null; done
  for p in "${PIDS[@]}"; do
    for _ in $(seq 20); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null
  done
  rm -rf --one-file-system "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

# A private /dev: a tmpfs holding binds of the host's nodes the mount and the callers use, moved
# over /dev. Nothing under $T is ever a bind of the host's /dev (its cleanup removes $T), and
# the whole of it lives in this namespace only.
mkdir -p "$T/dev"
mount -t tmpfs -o mode=755 seaccess-dev "$T/dev" || skip "cannot mount a tmpfs in a private namespace"
for n in fuse null zero full random urandom tty; do
  [ -e "/dev/$n" ] && touch "$T/dev/$n" && mount --bind "/dev/$n" "$T/dev/$n"
done
ln -s /proc/self/fd "$T/dev/fd"; ln -s /proc/self/fd/0 "$T/dev/stdin"
ln -s /proc/self/fd/1 "$T/dev/stdout"; ln -s /proc/self/fd/2 "$T/dev/stderr"
mount --move "$T/dev" /dev || skip "cannot move a tmpfs over /dev in a private namespace"
[ -e /dev/log ] && skip "/dev/log still there"

# The listener: each datagram one line of $T/dgrams.
mkdir -p "$T/sock"
"$PY" - "$T/sock/log" "$T/dgrams" <<'PYEOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "ab", buffering=0) as out:
    while True:
        out.write(s.recv(65536).replace(b"\n", b"\\n") + b"\n")
PYEOF
LPID=$!
for _ in $(seq 50); do [ -S "$T/sock/log" ] && break; sleep 0.1; done
touch /dev/log && mount --bind "$T/sock/log" /dev/log || skip "cannot bind a socket over /dev/log"

# The tree: a file httpd_t may not read, by the policy.
S=$T/src M=$T/mnt LOG=syslog
mkdir -p "$S/etc" "$T/bin"
echo 'secret' > "$S/etc/shadow"; chmod 644 "$S/etc/shadow"
C=$(fclabel /etc/shadow)
allowed "$U" "$C" file getattr open read; u_reads=$?
denied "$H" "$C" file read; h_denied=$?
expect "the policy: $U reads $C, $H may not" '[ $u_reads -eq 0 ] && [ $h_denied -eq 0 ]'
cp /bin/cat "$T/bin/webcat"; chmod 755 "$T/bin" "$T/bin/webcat"
printf 'exe=%s %s\ndefault %s\n' "$T/bin/webcat" "$H" "$U" > "$T/subjects"
MNT=(--policy "$POL" -f "$FC" --path-prefix / --subjects "$T/subjects")

# 1. The denial on /dev/log. -------------------------------------------------------------------
start main "$S" "$M" "${MNT[@]}" --audit-log syslog; rc=$?
MAIN=$MPID
expect "a mount with --audit-log syslog starts" '[ $rc -eq 0 ]'
[ $rc -eq 0 ] || { cat "$T/main.out" "$T/main.err"; summary; }
out=$(timeout 10 "$T/bin/webcat" "$M/etc/shadow" 2>&1); rc=$?
expect "$H is refused the read through the mount (rc=$rc: $out)" '[ $rc -ne 0 ] && [[ $out == *"Permission denied"* ]]'
line=$(wait_line "$T/dgrams" "scontext=$H tcontext=$C tclass=file" 5)
re='^<([0-9]+)>([^[]+)\[([0-9]+)\]: type=AVC msg=audit\([0-9]+\.[0-9]{3}:[0-9]+\): avc:  denied  \{ ([a-z ]+) \} for .* scontext=([^ ]+) tcontext=([^ ]+) tclass=([a-z_]+) permissive=0$'
if [[ $line =~ $re ]]; then
  pri=${BASH_REMATCH[1]} tag=${BASH_REMATCH[2]} pid=${BASH_REMATCH[3]} perms=${BASH_REMATCH[4]}
  sc=${BASH_REMATCH[5]} tc=${BASH_REMATCH[6]} cls=${BASH_REMATCH[7]}
else
  pri= tag= pid= perms= sc= tc= cls=
fi
expect "the denial arrives on /dev/log as one datagram in syslog's form ($line)" '[ -n "$pri" ]'
expect "PRI is auth.notice, 4*8+5 ($pri)" '[ "$pri" = 37 ]'
expect "the tag is seaccess and the pid the mount's ($tag[$pid], mount $MAIN)" '[ "$tag" = seaccess ] && [ "$pid" = "$MAIN" ]'
expect "the record names the caller, the file's label and the class ($sc $tc $cls)" '[ "$sc" = "$H" ] && [ "$tc" = "$C" ] && [ "$cls" = file ]'
"$BIN" check -p "$POL" "$sc" "$tc" "$cls" $perms > /dev/null 2>&1; rc=$?
expect "seaccess check denies what the record says was denied ({ $perms })" '[ $rc -eq 1 ]'
expect "nothing on the mount's standard error about the log" '! grep -q "could not be written" "$T/main.err"'
stop_mount "$M" "$MAIN"
expect "no record was lost" '! grep -q "audit records were lost" "$T/main.err"'

# 2. No /dev/log: the check is answered, the loss said once and counted. -------------------------
umount /dev/log && rm -f /dev/log
start nolog "$S" "$M" "${MNT[@]}" --audit-log syslog; rc=$?
expect "a mount with --audit-log syslog starts without /dev/log" '[ $rc -eq 0 ]'
NOLOG=$MPID
for i in 1 2 3; do
  out=$(timeout 10 "$T/bin/webcat" "$M/etc/shadow" 2>&1); rc=$?
  expect "without /dev/log the read is still refused, at once ($i: rc=$rc)" '[ $rc -eq 1 ] && [[ $out == *"Permission denied"* ]]'
done
out=$(timeout 10 cat "$M/etc/shadow" 2>&1)
expect "and $U still reads ($out)" '[ "$out" = secret ]'
stop_mount "$M" "$NOLOG"
n=$(grep -c "could not be written to /dev/log" "$T/nolog.err")
expect "the loss is said once on the mount's standard error ($n)" '[ "$n" = 1 ]'
lost=$(sed -n 's/.*: \([0-9]*\) audit records were lost.*/\1/p' "$T/nolog.err")
expect "the lost records are counted at unmount ($lost, at least the 3 refusals)" '[ -n "$lost" ] && [ "$lost" -ge 3 ]'
expect "the mount did not panic" '! grep -qi panick "$T/nolog.err"'

# 3. seaccess run --audit-log syslog: the session's records and the program's own denials (its
# libselinux, the drop-in, told by SEACCESS_AUDIT) both go to /dev/log. ---------------------------
# The drop-in of this build (make test runs this suite before make capi).
if SEACCESS_BUILD=$BUILD bash tests/capi/dropin.sh 2> "$T/dropin.err"; then
  # Still no /dev/log: the session's own record (setenforce 0) is lost, and said at its end.
  "$BIN" run --policy "$POL" --audit-log syslog -- sh -c 'echo 0 > /sys/fs/selinux/enforce' 2> "$T/runlost.err"
  lost=$(sed -n 's/^seaccess run: \([0-9]*\) audit records were lost.*/\1/p' "$T/runlost.err")
  expect "without /dev/log, seaccess run says at its end the session's records it lost ($lost: $(tr '\n' ' ' < "$T/runlost.err"))" '[ "$lost" = 1 ]'
  touch /dev/log && mount --bind "$T/sock/log" /dev/log
  : > "$T/dgrams"
  out=$("$BIN" run --policy "$POL" --audit-log syslog -- "$PY" -c '
import ctypes, sys
l = ctypes.CDLL("libselinux.so.1")
print(l.selinux_check_access(sys.argv[1].encode(), sys.argv[2].encode(), b"file", b"read", None))
' "$H" "$C" 2> "$T/run.err"); rc=$?
  expect "under seaccess run, selinux_check_access refuses $H reading $C (rc=$rc, returned '$out')" '[ $rc -eq 0 ] && [ "$out" = -1 ]'
  line=$(wait_line "$T/dgrams" "scontext=$H tcontext=$C tclass=file" 5)
  expect "the program's denial arrives on /dev/log as auth.notice ($line)" '[[ $line == "<37>"*"avc:  denied  { read }"*"scontext=$H tcontext=$C tclass=file"* ]]'
  expect "and not on the program's standard error" '! grep -q "avc:  denied" "$T/run.err"'
  [ -s "$T/run.err" ] && sed "s/^/  run stderr: /" "$T/run.err" | head -5
  : > "$T/dgrams"
  "$BIN" run --policy "$POL" --audit-log syslog -- sh -c 'echo 0 > /sys/fs/selinux/enforce' 2>/dev/null
  line=$(wait_line "$T/dgrams" "type=MAC_STATUS" 5)
  expect "the session's own record (setenforce 0) arrives on /dev/log ($line)" '[[ $line == "<37>"*"type=MAC_STATUS"*"enforcing=0 old_enforcing=1"* ]]'
else
  bad "tests/capi/dropin.sh could not build the drop-in for the seaccess run part: $(cat "$T/dropin.err")"
fi

# 4. A real journald (systemd's, run here on a private /run) reads the mount's records, and the
# peer tools an administrator pipes them to explain them: audit2why and audit2allow, asked about
# the policy the mount enforced (their answers are theirs, never written here). ------------------
JD=/lib/systemd/systemd-journald
if [ ! -x "$JD" ] || ! command -v journalctl > /dev/null; then
  echo "SKIP: journald part: no $JD or journalctl (Debian's systemd package)"
elif ! command -v audit2why > /dev/null || ! command -v audit2allow > /dev/null; then
  echo "SKIP: journald part: no audit2why or audit2allow (policycoreutils-python-utils, make deps)"
else
  # The journal lives on this namespace's own /run, never the host's; /dev/log is journald's
  # socket, as systemd links it.
  umount /dev/log 2> /dev/null; rm -f /dev/log
  mount -t tmpfs -o mode=755 seaccess-run /run || skip "cannot mount a tmpfs over /run in a private namespace"
  mkdir -p /run/systemd/journal /run/log
  ln -s /run/systemd/journal/dev-log /dev/log
  "$JD" > "$T/journald.out" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 300); do [ -S /run/systemd/journal/dev-log ] && break; sleep 0.1; done
  expect "journald listens on /run/systemd/journal/dev-log" '[ -S /run/systemd/journal/dev-log ]'
  start journal "$S" "$M" "${MNT[@]}" --audit-log syslog; rc=$?
  JM=$MPID
  expect "a mount with --audit-log syslog starts beside journald" '[ $rc -eq 0 ]'
  out=$(timeout 10 "$T/bin/webcat" "$M/etc/shadow" 2>&1); rc=$?
  expect "$H is refused the read (rc=$rc: $out)" '[ $rc -ne 0 ] && [[ $out == *"Permission denied"* ]]'
  jctl() { journalctl -D "$(ls -d /run/log/journal/*/ | head -n 1)" --no-pager -q "$@" 2> /dev/null; }
  for _ in $(seq 300); do jctl -t seaccess -o cat | grep -q "scontext=$H tcontext=$C" && break; sleep 0.1; done
  rec=$(jctl -t seaccess "SYSLOG_PID=$JM" -o cat | grep "scontext=$H tcontext=$C tclass=file" | tail -n 1)
  expect "journalctl -t seaccess shows the mount's denial ($rec)" '[[ $rec == "type=AVC msg=audit("*"avc:  denied  {"*"permissive=0" ]]'
  fields=$(jctl -t seaccess "SYSLOG_PID=$JM" -o export | grep -aE '^(PRIORITY|SYSLOG_FACILITY|_TRANSPORT|SYSLOG_IDENTIFIER)=' | sort -u | tr '\n' ' ')
  expect "journald files it as syslog's auth.notice from seaccess[$JM] ($fields)" \
    '[[ $fields == *"PRIORITY=5 "* && $fields == *"SYSLOG_FACILITY=4 "* && $fields == *"SYSLOG_IDENTIFIER=seaccess "* && $fields == *"_TRANSPORT=syslog "* ]]'
  jctl -t seaccess -o cat | grep "scontext=$H tcontext=$C" > "$T/journal.recs"
  expect "audit2why, fed journalctl's output, explains it as a missing allow rule" 'peer_explains "$T/journal.recs" "$POL" > /dev/null'
  rules=$(peer_allows "$T/journal.recs" "$POL")
  expect "audit2allow turns it into a rule on the record's types ($rules)" 'peer_allows "$T/journal.recs" "$POL" > /dev/null'
  stop_mount "$M" "$JM"
  expect "no record was lost to journald" '! grep -q "audit records were lost" "$T/journal.err"'
fi
summary
