#!/usr/bin/env bash
# A set-user-ID program on the libselinux drop-in ignores the SEACCESS_* variables its caller
# sets (the kernel's AT_SECURE, as glibc's secure_getenv): run by nobody with SEACCESS_POLICY and
# SEACCESS_SUBJECTS naming nobody's own files, it decides with the system policy
# (/etc/selinux/config's SELINUXTYPE) and the default subjects, and fails closed where the
# configuration names no installed policy; the same program, not set-user-ID, honours them.
#
#   SEACCESS_BUILD=target/ci bash tests/capi/secure_env.sh
#
# Needs root, gcc and libselinux's header, setpriv, unshare, the drop-in
# (target/libselinux/libselinux.so.1, tests/capi/dropin.sh) and target/policies/secure_env.33
# (make policies). Prints ok:/FAIL: lines and exits non-zero on a failure; SKIP when it cannot run.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
SEA=$PWD/$BUILD/seaccess
DROPIN=${SEACCESS_DROPIN:-$PWD/target/libselinux/libselinux.so.1}
ATTACK=$PWD/target/policies/secure_env.33
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
finish() { echo "secure_env: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; exit $?; }

[ "$(id -u)" = 0 ] || { echo "SKIP: secure_env needs root (a set-user-ID root program run by nobody)"; exit 0; }
for need in "$SEA" "$DROPIN" "$ATTACK"; do [ -e "$need" ] || bad "$need is missing (make capi policies)"; done
for tool in gcc setpriv unshare findmnt; do command -v $tool > /dev/null || bad "$tool is not installed"; done
[ "$fail" -eq 0 ] || finish

T=$(mktemp -d /tmp/seaccess-secure.XXXXXX)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
if findmnt -n -o OPTIONS -T "$T" | tr , '\n' | grep -qx nosuid; then
  echo "SKIP: $T is on a file system mounted nosuid: a set-user-ID program cannot be tried there"; exit 0
fi

# The system policy as libselinux finds it: SELINUXTYPE's root, the highest policy.N installed.
type=$(sed -n 's/^[[:space:]]*SELINUXTYPE=[[:space:]]*//p' /etc/selinux/config 2> /dev/null | tail -n 1)
SYS=$(ls /etc/selinux/"${type:-targeted}"/policy/policy.* 2> /dev/null | sort -t. -k2 -n | tail -n 1)
[ -n "$SYS" ] || { echo "SKIP: /etc/selinux/config names no installed policy"; exit 0; }

# The program, linked against libselinux's header with a run path to a copy of the drop-in (a
# set-user-ID program's loader ignores LD_LIBRARY_PATH, and reads only what nobody can reach).
mkdir -p "$T/lib" "$T/bin" "$T/nobody"
cp "$DROPIN" "$T/lib/" && chmod 755 "$T/lib" "$T/bin" && chmod 644 "$T/lib/libselinux.so.1"
gcc -O2 -Wall -Werror -o "$T/bin/plain" tests/capi/secure_env.c -lselinux -Wl,-rpath,"$T/lib" 2> "$T/cc" || { bad "compile secure_env.c"; cat "$T/cc"; finish; }
cp "$T/bin/plain" "$T/bin/setuid" && chown root:root "$T/bin/setuid" && chmod 4755 "$T/bin/setuid"
# ldd's output whole before grep: `ldd | grep -q` under pipefail fails when grep stops reading first.
grep -qF "$T/lib/libselinux.so.1" <<< "$(ldd "$T/bin/setuid")" || { bad "the program does not load the drop-in"; ldd "$T/bin/setuid"; finish; }

# nobody's own files: the policy (httpd_t may read shadow_t), a subjects file giving nobody's
# uid httpd_t, and a FIFO (which would hang a reader that took it for a policy).
S=system_u:system_r:httpd_t:s0 O=system_u:object_r:shadow_t:s0 U=unconfined_u:unconfined_r:unconfined_t:s0
cp "$ATTACK" "$T/nobody/policy" && printf 'uid=65534 %s\n' "$S" > "$T/nobody/subjects" && mkfifo "$T/nobody/fifo"
chown -R nobody: "$T/nobody"
# What each policy says (the seaccess command on the same files): the attacker's grants, the
# system's denies; otherwise this test shows nothing.
"$SEA" check -p "$ATTACK" "$S" "$O" file read > /dev/null 2>&1; want_attack=$?
"$SEA" check -p "$SYS" "$S" "$O" file read > /dev/null 2>&1; want_sys=$?
[ "$want_attack" = 0 ] && [ "$want_sys" = 1 ] \
  && ok "setup: $S reading $O: granted by nobody's policy, denied by the system's ($SYS)" \
  || { bad "setup: nobody's policy must grant ($want_attack) and $SYS deny ($want_sys) $S reading $O"; finish; }
# The default subject: unconfined where the system policy defines it (exit 2: invalid context).
"$SEA" check -p "$SYS" "$U" "$U" process getattr > /dev/null 2>&1; [ $? != 2 ] || U=

# as_nobody OUT [VAR=VALUE...] PROGRAM: the program run by uid/gid 65534 with only the given
# variables (and PATH), within a deadline.
as_nobody() {
  local out=$1; shift
  timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups -- env -i PATH=/usr/bin:/bin "$@" "$S" "$O" file read > "$out" 2> "$out.err"
}
has() { grep -qxF "$2" "$1"; }
ENVS=(SEACCESS_POLICY="$T/nobody/policy" SEACCESS_SUBJECTS="$T/nobody/subjects")

# Not set-user-ID: the variables are the program's own to honour.
as_nobody "$T/plain" "${ENVS[@]}" "$T/bin/plain"
if has "$T/plain" "at_secure=0" && has "$T/plain" "policy=$T/nobody/policy" && has "$T/plain" "getcon=0 $S" && has "$T/plain" "check=0 0"; then
  ok "not set-user-ID: SEACCESS_POLICY and SEACCESS_SUBJECTS are honoured (nobody's policy grants, getcon is the subjects file's $S)"
else
  bad "not set-user-ID: the variables are not honoured"; cat "$T/plain" "$T/plain.err"
fi
# Set-user-ID root, the same variables: ignored; the system policy and the default subject.
as_nobody "$T/suid" "${ENVS[@]}" "$T/bin/setuid"
if has "$T/suid" "at_secure=1" && has "$T/suid" "enabled=1" && has "$T/suid" "policy=$SYS" && has "$T/suid" "check=-1 13" \
   && { [ -z "$U" ] || has "$T/suid" "getcon=0 $U"; } && ! grep -q "getcon=0 $S" "$T/suid"; then
  ok "set-user-ID: SEACCESS_POLICY and SEACCESS_SUBJECTS ignored: $SYS denies, getcon is the default ${U:-subject}"
else
  bad "set-user-ID: a caller's SEACCESS_* variables reached the program"; cat "$T/suid" "$T/suid.err"
fi
grep -q "ignores SEACCESS_POLICY and SEACCESS_SUBJECTS" "$T/suid.err" \
  && ok "set-user-ID: the program says once, on standard error, that it ignores them" || { bad "set-user-ID: no word that the variables were ignored"; cat "$T/suid.err"; }
# Without the variables: the system policy, not "SELinux disabled" (the plain program is).
as_nobody "$T/suid0" "$T/bin/setuid"
as_nobody "$T/plain0" "$T/bin/plain"
if has "$T/suid0" "enabled=1" && has "$T/suid0" "policy=$SYS" && has "$T/suid0" "check=-1 13" && has "$T/plain0" "enabled=0"; then
  ok "set-user-ID without SEACCESS_POLICY: the system policy, never SELinux disabled (the plain program: disabled)"
else
  bad "set-user-ID without SEACCESS_POLICY"; cat "$T/suid0" "$T/suid0.err" "$T/plain0"
fi
# SEACCESS_AUDIT (where the default logger appends its records, as `seaccess run --audit-log`
# sets it): honoured by the plain program, so that a denial lands in nobody's own log; ignored
# by the set-user-ID one, which would otherwise append, as root, to a file nobody may not write.
: > "$T/rootlog" && chown root:root "$T/rootlog" && chmod 644 "$T/rootlog"
as_nobody "$T/plainaudit" SEACCESS_POLICY="$SYS" SEACCESS_AUDIT="$T/nobody/audit.log" "$T/bin/plain"
grep -q "avc:  denied  { read } .*scontext=$S tcontext=$O tclass=file" "$T/nobody/audit.log" 2> /dev/null \
  && ok "not set-user-ID: SEACCESS_AUDIT is honoured (the system policy's denial in nobody's own log)" \
  || { bad "not set-user-ID: SEACCESS_AUDIT not honoured"; cat "$T/plainaudit" "$T/plainaudit.err"; }
as_nobody "$T/suidaudit" SEACCESS_AUDIT="$T/rootlog" "$T/bin/setuid"
if has "$T/suidaudit" "check=-1 13" && [ ! -s "$T/rootlog" ] && grep -q "avc:  denied  { read }" "$T/suidaudit.err" \
   && grep -q "ignores SEACCESS_AUDIT" "$T/suidaudit.err"; then
  ok "set-user-ID: SEACCESS_AUDIT naming a file of root's is ignored (the file stays empty, the denial on standard error) and said so"
else
  bad "set-user-ID: SEACCESS_AUDIT reached the program ($(wc -c < "$T/rootlog") bytes in root's file)"; cat "$T/suidaudit" "$T/suidaudit.err"
fi
# A FIFO in SEACCESS_POLICY: ignored, no hang.
as_nobody "$T/fifo" SEACCESS_POLICY="$T/nobody/fifo" "$T/bin/setuid"; rc=$?
[ $rc = 0 ] && has "$T/fifo" "policy=$SYS" && has "$T/fifo" "check=-1 13" \
  && ok "set-user-ID: SEACCESS_POLICY naming nobody's FIFO is ignored at once" || { bad "set-user-ID with a FIFO (exit $rc)"; cat "$T/fifo" "$T/fifo.err"; }
# A configuration that names no installed policy (in a mount namespace of its own, the real
# file untouched): closed, every check denied, never disabled.
printf 'SELINUX=enforcing\nSELINUXTYPE=seaccess-none\n' > "$T/config"
timeout 30 unshare -m --propagation private sh -c 'mount --bind "$1" /etc/selinux/config && shift && exec "$@"' sh "$T/config" \
  setpriv --reuid=65534 --regid=65534 --clear-groups -- env -i PATH=/usr/bin:/bin "${ENVS[@]}" "$T/bin/setuid" "$S" "$O" file read > "$T/none" 2> "$T/none.err"
if has "$T/none" "at_secure=1" && has "$T/none" "enabled=1" && has "$T/none" "policy=(null)" && has "$T/none" "check=-1 13" && grep -q "^getcon=-1 " "$T/none" \
   && grep -q "names no installed policy" "$T/none.err"; then
  ok "set-user-ID, the configuration naming no installed policy: closed (checks denied, getcon fails, enabled), nobody's policy still ignored"
else
  bad "set-user-ID with no system policy"; cat "$T/none" "$T/none.err"
fi
finish
