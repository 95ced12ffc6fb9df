#!/usr/bin/env bash
# `seaccess run` sessions with Debian's own programs: one enforcing mode and one set of booleans
# for every process of a session (setenforce/getenforce, setsebool/getsebool, selinuxfs's files,
# another process's status page and cache), each change checked against the caller's context
# (the decision derived with `seaccess check`), sestatus and avcstat on the session's selinuxfs,
# semanage fcontext -a then restorecon then ls -Z on a private policy root, setsebool -P kept
# with --policy-root, and the host's /etc/selinux and /var/lib/selinux byte- and time-identical
# after the whole suite.
#
# Runs as root (the session's mount namespace). Every session runs under `timeout`.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
BIN=$BUILD/seaccess
SUITE=session
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
expect() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
summary() { echo "$SUITE: $pass passed, $fail failed"; exit $((fail > 0)); }

[ "$(id -u)" = 0 ] || { echo "SKIP: the session suite runs as root"; exit 0; }
[ -x "$BIN" ] || { echo "FAIL: no $BIN (cargo build)"; exit 1; }
[ -e target/libselinux/libselinux.so.1 ] || { echo "FAIL: no target/libselinux/libselinux.so.1 (make capi)"; exit 1; }
for p in setenforce getenforce setsebool getsebool sestatus avcstat semanage restorecon selinux_check_access; do
  command -v "$p" > /dev/null || { echo "FAIL: Debian's $p is missing (make deps)"; exit 1; }
done
POL=/etc/selinux/default/policy/policy.33
[ -e "$POL" ] || { echo "FAIL: no $POL (make deps)"; exit 1; }

T=$(mktemp -d /tmp/seaccess-session-test.XXXXXX)
LOG=$T/audit.log
trap 'rm -rf "$T"' EXIT

# The host's policy roots: every file's bytes, every entry's mode, size and mtime.
snapshot() {
  find /etc/selinux /var/lib/selinux -printf '%p %y %m %s %T@\n' 2>/dev/null | sort
  find /etc/selinux /var/lib/selinux -type f -exec sha256sum {} + 2>/dev/null | sort
}
snapshot > "$T/host.before"

# run ARGS... -- COMMAND: a session with the suite's audit log, under a deadline.
run() { timeout 120 "$BIN" run --audit-log "$LOG" "$@"; }

U=unconfined_u:unconfined_r:unconfined_t:s0
USER_T=user_u:user_r:user_t:s0
SECURITY=$(python3 -c 'import setools, sys; p = setools.SELinuxPolicy(sys.argv[1]); print(next(str(s.context) for s in p.initialsids() if str(s) == "security"))' "$POL" 2>/dev/null)
[ -n "$SECURITY" ] || SECURITY=system_u:object_r:security_t:s0
# line N: line N of $out.
line() { echo "$out" | sed -n "${1}p"; }
# allowed SCON TCON CLASS PERM [--bool ...]: `seaccess check` allows it.
allowed() { "$BIN" check -p "$POL" "$@" > /dev/null 2>&1; }

# A copy of setenforce/setsebool that the subjects file runs as user_t (a root process: DAC
# lets it write selinuxfs, so only the policy stands in its way, as on an SELinux host).
mkdir -p "$T/bin"
cp /usr/sbin/setenforce "$T/bin/setenforce-user"
cp /usr/sbin/setsebool "$T/bin/setsebool-user"
cat > "$T/subjects" <<EOF
exe=$T/bin/setenforce-user $USER_T
exe=$T/bin/setsebool-user $USER_T
default $U
EOF

# 1. One enforcing mode for the session. -----------------------------------------------------
out=$(run -- sh -c 'getenforce; setenforce 0; echo "rc=$?"; getenforce; cat /sys/fs/selinux/enforce; echo; setenforce 1; getenforce')
expect "a session starts enforcing; setenforce 0 by one process is seen by getenforce in the next; setenforce 1 back (got: $(echo $out))" \
  '[ "$(echo $out)" = "Enforcing rc=0 Permissive 0 Enforcing" ]'
out=$(run -- getenforce)
expect "the mode is the session's: the next session starts enforcing ($out)" '[ "$out" = Enforcing ]'
out=$(run -- sh -c 'echo 0 > /sys/fs/selinux/enforce && getenforce')
expect "a write to the view's enforce is setenforce ($out)" '[ "$out" = Permissive ]'
grep -q "type=MAC_STATUS .*enforcing=0 old_enforcing=1" "$LOG"
expect "the switch is recorded (MAC_STATUS enforcing=0 old_enforcing=1)" '[ $? -eq 0 ]'

# 2. setenforce checked against the caller's context (sel_write_enforce). ----------------------
: > "$LOG"
if allowed "$USER_T" "$SECURITY" security setenforce; then want=0; else want=1; fi
out=$(run --subjects "$T/subjects" -- sh -c "$T/bin/setenforce-user 0 2>/dev/null; echo \"rc=\$?\"; getenforce")
if [ $want = 1 ]; then
  expect "user_t may not setenforce (seaccess check denies it): refused, still Enforcing ($(echo $out))" '[ "$(line 1)" != rc=0 ] && [ "$(line 2)" = Enforcing ]'
  expect "the refusal's AVC record names setenforce, user_t and the security initial SID" \
    'grep -q "avc:  denied  { setenforce } for .*scontext=$USER_T tcontext=$SECURITY tclass=security permissive=0" "$LOG"'
else
  expect "user_t may setenforce (seaccess check allows it): done ($(echo $out))" '[ "$(echo $out)" = "rc=0 Permissive" ]'
fi
# The writer's context is the one its exec gave it (the labels interposer's type transition),
# not the subjects file's: a copy of setenforce labelled auditctl_exec_t, exec'd from an
# unconfined shell, runs in the domain compute-create gives, and is checked as that domain.
EXE_T=system_u:object_r:auditctl_exec_t:s0
cp /usr/sbin/setenforce "$T/bin/setenforce-exec"
setfattr -n security.selinux -v "$EXE_T" "$T/bin/setenforce-exec"
DOM=$(echo "$U $EXE_T process" | "$BIN" compute-create -p "$POL" 2>/dev/null)
if [ -n "$DOM" ] && [ "$DOM" != "$U" ] && allowed "$U" "$EXE_T" file execute && allowed "$U" "$DOM" process transition && allowed "$DOM" "$EXE_T" file entrypoint; then
  : > "$LOG"
  if allowed "$DOM" "$SECURITY" security setenforce; then want_exec="rc=0 Permissive"; else want_exec="refused Enforcing"; fi
  out=$(run -- sh -c "$T/bin/setenforce-exec 0 2>/dev/null && echo rc=0 || echo refused; getenforce")
  expect "setenforce exec'd into $DOM (the exec's transition, not the subjects file's $U) is checked as $DOM: $want_exec ($(echo $out))" \
    '[ "$(echo $out)" = "$want_exec" ] && { [ "$want_exec" = "rc=0 Permissive" ] || grep -q "denied  { setenforce } for .*scontext=$DOM " "$LOG"; }'
else
  bad "the exec-transition setenforce test: no transition from $U on $EXE_T in this policy (compute-create gave ${DOM:-nothing})"
fi
out=$(run --subjects "$T/subjects" -- sh -c "setenforce 0; $T/bin/setenforce-user 1 2>/dev/null; echo \"rc=\$?\"; getenforce")
expect "in a permissive session the same refusal is only logged, as avc_has_perm does ($(echo $out))" \
  '[ $want = 0 ] || { [ "$(echo $out)" = "rc=0 Enforcing" ] && grep -q "denied  { setenforce } .*permissive=1" "$LOG"; }'

# setcon is seen by the session (selinux_lsm_setattr): a process that changed its context with
# setcon is checked as its new context until it execs. The contexts come from the policy: a
# domain S that may setcurrent, setenforce and dyntransition to a domain D that may not
# setenforce (seaccess search's dyntransition rules, attributes expanded by seaccess info);
# a domain K that may setcurrent, dyntransition to itself and setenforce; a domain G that may
# setcurrent but neither setenforce nor dyntransition to S. Each runs a copy of
# tests/capi/setcon_session.c the subjects file names.
ctx_of() { echo "system_u:system_r:$1:s0"; }
valid_ctx() { "$BIN" check -p "$POL" "$1" "$1" process fork > /dev/null 2>&1; [ $? -ne 2 ]; }
members() { "$BIN" info -p "$POL" -a "$1" -x --flat 2>/dev/null | sed -n '2,$p' | tr -d '\t' | grep . || echo "$1"; }
DYN=$("$BIN" search --policy "$POL" --allow -c process -p dyntransition 2>/dev/null)
SETCUR=$("$BIN" search --policy "$POL" --allow -c process -p setcurrent 2>/dev/null)
S= D= K= G=
while read -r s t; do
  [ -n "$S" ] && break
  valid_ctx "$(ctx_of "$s")" && allowed "$(ctx_of "$s")" "$(ctx_of "$s")" process setcurrent && allowed "$(ctx_of "$s")" "$SECURITY" security setenforce || continue
  for d in $(members "$t"); do
    c=$(ctx_of "$d")
    if valid_ctx "$c" && allowed "$(ctx_of "$s")" "$c" process dyntransition && ! allowed "$c" "$SECURITY" security setenforce; then S=$(ctx_of "$s") D=$c; break; fi
  done
done < <(echo "$DYN" | awk '{ split($3, a, ":"); if ($2 != a[1]) print $2, a[1] }' | sort -u)
for k in $(echo "$DYN" | awk '{ split($3, a, ":"); if ($2 == a[1]) print $2 }' | sort -u); do
  c=$(ctx_of "$k")
  if valid_ctx "$c" && allowed "$c" "$c" process setcurrent dyntransition && allowed "$c" "$SECURITY" security setenforce; then K=$c; break; fi
done
for g in $(echo "$SETCUR" | awk '{ split($3, a, ":"); print $2 }' | sort -u); do
  c=$(ctx_of "$g")
  if [ -n "$S" ] && valid_ctx "$c" && allowed "$c" "$c" process setcurrent && ! allowed "$c" "$SECURITY" security setenforce && ! allowed "$c" "$S" process dyntransition; then G=$c; break; fi
done
if [ -z "$S" ] || [ -z "$K" ] || [ -z "$G" ] || ! command -v gcc > /dev/null; then
  bad "setcon tests: the policy gave no S=${S:-?} D=${D:-?} K=${K:-?} G=${G:-?} (or no gcc)"
else
  gcc -O2 -Wall -o "$T/bin/setcon-s" tests/capi/setcon_session.c -lselinux
  cp "$T/bin/setcon-s" "$T/bin/setcon-k"
  cp "$T/bin/setcon-s" "$T/bin/setcon-g"
  printf 'exe=%s %s\nexe=%s %s\nexe=%s %s\ndefault %s\n' "$T/bin/setcon-s" "$S" "$T/bin/setcon-k" "$K" "$T/bin/setcon-g" "$G" "$U" > "$T/setcon.subjects"
  sc() { run --subjects "$T/setcon.subjects" -- "$@" 2>/dev/null | tr '\n' ' '; }
  : > "$LOG"
  out=$(sc "$T/bin/setcon-s" write)
  expect "a process in $S (the subjects file) may setenforce ($out)" '[ "$out" = "write=ok " ]'
  out=$(sc "$T/bin/setcon-s" setcon "$D" write)
  expect "after setcon to $D it may not: refused as $D, as on a kernel (passed as $S before) ($out)" \
    '[ "$out" = "setcon=ok write=EACCES " ] && grep -q "denied  { setenforce } for .*scontext=$D tcontext=$SECURITY" "$LOG"'
  out=$(sc "$T/bin/setcon-s" setcon "$D" rawexec write)
  expect "nor after an exec around the interposer with the environment it started with: no context changed ($out)" \
    '[ "$out" = "setcon=ok write=EACCES " ]'
  out=$(sc "$T/bin/setcon-s" setcon "$D" fork write)
  expect "nor in a process it forked after the setcon (the kernel's fork copies the context) ($out)" \
    '[ "$out" = "setcon=ok fork=ok write=EACCES " ]'
  out=$(sc "$T/bin/setcon-g" publish "$S" write)
  expect "a publication the policy refuses ($G to $S: no dyntransition) changes nothing ($out)" \
    '[ "$out" = "publish=EACCES write=EACCES " ] && grep -q "denied  { dyntransition } for .*scontext=$G tcontext=$S" "$LOG"'
  rm -f "$T/ready" "$T/published"
  out=$(run --subjects "$T/setcon.subjects" -- sh -c "'$T/bin/setcon-s' setcon '$D' touch '$T/ready' await '$T/published' write & '$T/bin/setcon-k' await '$T/ready' publish '$K' touch '$T/published'; wait" 2>/dev/null | sort | tr '\n' ' ')
  expect "another process's publication ($K, allowed for itself) is its own: the first is still refused as $D ($out)" \
    '[ "$out" = "await=ok await=ok publish=ok setcon=ok touch=ok touch=ok write=EACCES " ]'
fi

# 3. One set of booleans (pending and active, committed as selinuxfs commits). ----------------
B=httpd_can_network_connect
H=system_u:system_r:httpd_t:s0 PORT=system_u:object_r:unreserved_port_t:s0
out=$(run -- sh -c "getsebool $B; setsebool $B on; echo \"rc=\$?\"; getsebool $B")
expect "setsebool $B on, then getsebool in the next process says on ($(echo $out))" \
  '[ "$(echo $out)" = "$B --> off rc=0 $B --> on" ]'
out=$(run -- sh -c "cd /sys/fs/selinux; cat booleans/$B; echo; echo 1 > booleans/$B; cat booleans/$B; echo; getsebool $B; echo 1 > commit_pending_bools; cat booleans/$B")
expect "a pending value stays pending until commit_pending_bools ($(echo $out))" \
  '[ "$(echo $out)" = "0 0 0 1 $B --> off pending: on 1 1" ]'
: > "$LOG"
if allowed "$USER_T" "$SECURITY" security setbool; then want=0; else want=1; fi
out=$(run --subjects "$T/subjects" -- sh -c "$T/bin/setsebool-user $B on 2>/dev/null; echo \"rc=\$?\"; getsebool $B")
expect "user_t setsebool (seaccess check: $([ $want = 1 ] && echo denied || echo allowed)): $(echo $out)" \
  '{ [ $want = 1 ] && [ "$(line 1)" != rc=0 ] && [ "$(line 2)" = "$B --> off" ] && grep -q "denied  { setbool } for .*scontext=$USER_T" "$LOG"; } || { [ $want = 0 ] && [ "$(echo $out)" = "rc=0 $B --> on" ]; }'

# Another process's status page and cache follow a commit (one process, two looks).
allowed --bool $B=0 $H $PORT tcp_socket name_connect && before=1 || before=0
allowed --bool $B=1 $H $PORT tcp_socket name_connect && after=1 || after=0
cat > "$T/watch.py" <<EOF
import selinux, subprocess, sys
def allowed():
    try:
        return selinux.selinux_check_access("$H", "$PORT", "tcp_socket", "name_connect") == 0
    except PermissionError:
        return False
selinux.selinux_status_open(0)
load0 = selinux.selinux_status_policyload()
a0 = allowed()
subprocess.run(["setsebool", "$B", "on"], check=True)
updated = selinux.selinux_status_updated()
load1 = selinux.selinux_status_policyload()
a1 = allowed()
print(int(a0), int(a1), updated, int(load1 != load0))
EOF
out=$(run -- /usr/bin/python3 "$T/watch.py" 2>"$T/watch.err" || cat "$T/watch.err")
expect "a running process's check follows another's setsebool ($before then $after, from seaccess check --bool), and its status page reports the new policy load (got $out)" \
  '[ "$out" = "$before $after 1 1" ] && [ $before != $after ]'

# 4. sestatus and avcstat on the session's selinuxfs. ----------------------------------------
MLS=$("$BIN" info -p "$POL" | awk '$1 == "mls" { print ($2 == "true") ? "enabled" : "disabled" }')
HU=$("$BIN" info -p "$POL" | awk '$1 == "handle_unknown" { print ($2 == "Allow") ? "allowed" : "denied" }')
out=$(run -- sh -c 'sestatus; setenforce 0; sestatus')
field() { echo "$out" | awk -F':  +' -v k="$1" '$1 == k { print $2 }' | sed -n "${2:-1}p"; }
expect "sestatus: enabled, selinuxfs at /sys/fs/selinux" '[ "$(field "SELinux status")" = enabled ] && [ "$(field "SELinuxfs mount")" = /sys/fs/selinux ]'
expect "sestatus: the current mode follows setenforce ($(field "Current mode") then $(field "Current mode" 2))" \
  '[ "$(field "Current mode")" = enforcing ] && [ "$(field "Current mode" 2)" = permissive ]'
expect "sestatus: MLS $MLS and deny_unknown $HU, as the policy says (seaccess info)" \
  '[ "$(field "Policy MLS status")" = "$MLS" ] && [ "$(field "Policy deny_unknown status")" = "$HU" ]'
out=$(run -- sh -c "avcstat -c; selinux_check_access $U $U process fork; selinux_check_access $U $U process fork; avcstat -c")
first=$(echo "$out" | sed -n 2p | awk '{print $1}') second=$(echo "$out" | sed -n 4p | awk '{print $1, $3}')
expect "avcstat reads the session's cache_stats: 0 lookups, then 2 lookups and 2 misses after two one-check processes (got: $first; $second)" \
  '[ "$first" = 0 ] && [ "$second" = "2 2" ]'

# 5. A private policy root: semanage, restorecon, ls -Z; setsebool -P kept with --policy-root. --
W=$T/www
mkdir -p "$W" && echo hi > "$W/index.html"
out=$(run -- sh -c "semanage fcontext -a -t httpd_sys_content_t '$W(/.*)?' && restorecon -R '$W' && ls -Z '$W/index.html'" 2>"$T/semanage.err")
rc=$?
expect "semanage fcontext -a, restorecon, ls -Z in one session: the new type ($out)" \
  '[ $rc -eq 0 ] && [ "$(echo "$out" | cut -d: -f3)" = httpd_sys_content_t ]'
expect "libsemanage's policy reload reached the session (no load_policy error)" '! grep -q "load_policy" "$T/semanage.err"'
KEEP=$T/root
run --policy-root "$KEEP" -- setsebool -P $B on 2>/dev/null
rc=$?
out1=$(run --policy-root "$KEEP" -- getsebool $B) out2=$(run -- getsebool $B)
expect "setsebool -P works on the copy: kept in --policy-root for the next session ($out1), not on the host ($out2)" \
  '[ $rc -eq 0 ] && [ "$out1" = "$B --> on" ] && [ "$out2" = "$B --> off" ]'
expect "--policy-root holds a whole policy root" '[ -e "$KEEP/etc/selinux/config" ] && [ -d "$KEEP/var/lib/selinux" ]'

# 5b. fork in a session, while threads check, audit and reload (tests/capi/fork.c): every child
# makes its calls and exits (the library's fork handlers hold the session's statistics slot, which
# a child exiting takes, and end in the child an apply of the session's state another thread was
# making, which the child would otherwise never redo). ---------------------------------------
FORK=target/capi/fork
if [ -x "$FORK" ]; then
  FA=target/policies/callbacks_a.33 FB=target/policies/callbacks_b.33
  out=$(run -p "$FA" -- env -u SEACCESS_POLICY "$FORK" "$FA" "$FB" 100 2>/dev/null | tail -n 1)
  expect "fork in a session: $out" '[[ "$out" == "fork: 100 children, 0 failed"* ]]'
else
  echo "SKIP: fork in a session: no $FORK (make capi-test builds it)"
fi

# 6. No session left behind, and the host's policy roots untouched. ---------------------------
expect "no session directory is left in /tmp" '! ls -d /tmp/seaccess-run.* > /dev/null 2>&1'
snapshot > "$T/host.after"
expect "the host's /etc/selinux and /var/lib/selinux are byte- and time-identical after the suite" 'diff -q "$T/host.before" "$T/host.after" > /dev/null'
summary
