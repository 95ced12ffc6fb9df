#!/bin/sh
# The enforcement smoke suite, run in the guest booted with the BPF LSM and no SELinux
# (lsm=lockdown,capability,landlock,bpf), with the commands as README shows them: `seaccess
# enforce` on Debian's default policy labels a small tree with file_contexts (--root /t),
# `seaccess enforce run` starts an initrc_t task that execs an httpd_exec_t program, and the
# kernel's answers are checked against the policy's (`seaccess check`, `compute-create`,
# `seaccess label` in the guest), never against a hard-coded decision. One line per check,
# then `kernel-enforce-smoke: N checks, F failed`; a failed check fails the boot. Then
# crates/enforce's enforce_smoke (what the commands cannot reach: a miss, a grant revoked by a
# generation) when the initramfs carries it.
mount -t bpf bpf /sys/fs/bpf
mount -t tmpfs tmpfs /tmp
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null || true
echo "lsm: $(cat /sys/kernel/security/lsm 2>/dev/null || echo '(securityfs not mounted)')"
[ -e /sys/fs/selinux/enforce ] && { echo "SELinux is active: this suite wants the BPF LSM alone"; exit 1; }

P=/etc/selinux/default/policy/policy.33
FC=/etc/selinux/default/contexts/files/file_contexts
LOG=/tmp/audit.log
ERR=/tmp/enforce.err
. /suite/checks.sh
# The policy's answers: `allowed S T CLASS PERM...` and `created S T CLASS`.
allowed() { seaccess check -p "$P" "$@" > /dev/null; }
created() { echo "$1 $2 $3" | seaccess compute-create -p "$P"; }
# The label file_contexts gives /t's PATH: the same path under / (setfiles -r /t), of its type.
fclabel() {
  t=file
  [ -d "$1" ] && t=dir
  p=${1#/t}
  seaccess label -f "$FC" -m $t "${p:-/}" | cut -f2
}
# Waits up to 5 s for a pattern in a file (the daemon writes records as it reads them).
wait_for() {
  i=0
  while [ $i -lt 50 ]; do
    grep -q -- "$1" "$2" 2> /dev/null && return 0
    sleep 0.1
    i=$((i + 1))
  done
  return 1
}
generation() { seaccess enforce status | sed -n 's/.*generation \([0-9]*\),.*/\1/p'; }

# The tree: web content, a secret, an httpd_exec_t program (busybox, named so that it runs the
# applet its first argument names) and a tmp directory.
mkdir -p /t/etc /t/var/www/html /t/usr/lib/apache-ssl /t/tmp
echo 'root:secret' > /t/etc/shadow
printf 'hello from httpd_sys_content_t\nsecond line\n' > /t/var/www/html/index.html
cp /bin/busybox /t/usr/lib/apache-ssl/busybox
HTTPD_BIN=/t/usr/lib/apache-ssl/busybox
# More inodes than the daemon may hold descriptors (it is started with at most $NOFILE open):
# a daemon that held one per labeled inode could not label a whole system.
NOFILE=300
mkdir -p /t/var/www/html/many
i=0
while [ $i -lt 600 ]; do : > /t/var/www/html/many/f$i; i=$((i + 1)); done

INITRC=system_u:system_r:initrc_t:s0
WEB=$(fclabel /t/var/www/html/index.html)
SHADOW=$(fclabel /t/etc/shadow)
HEXEC=$(fclabel $HTTPD_BIN)
TMP=$(fclabel /t/tmp)
HTTPD=$(created $INITRC "$HEXEC" process)
echo "# file_contexts: web $WEB, secret $SHADOW, program $HEXEC, tmp $TMP"
echo "# the policy: exec of $HEXEC from $INITRC enters $HTTPD"

# The daemon, as README starts it (in the background; it says its pid).
out=$(ulimit -n $NOFILE && timeout 300 seaccess enforce --policy "$P" --file-contexts "$FC" --root /t --audit-log $LOG 2> $ERR)
rc=$?
echo "# $out"
cat $ERR
pid=$(echo "$out" | sed -n 's/.*(pid \([0-9]*\),.*/\1/p')
check "seaccess enforce started and said its pid ($rc, pid $pid)" [ "$rc" -eq 0 -a -n "$pid" ]
[ -n "$pid" ] || { echo "kernel-enforce-smoke: $checks checks, $((failed + 1)) failed"; exit 1; }
check "the sids file lists the generation's SIDs, the tree's labels among them" \
  grep -q " $SHADOW\$" /run/seaccess/sids
check "seaccess enforce status: running, pid $pid" has "$(seaccess enforce status)" "running (pid $pid), enforcing"
for f in /t/etc/shadow /t/var/www/html/index.html $HTTPD_BIN /t/tmp /t /t/var/www/html/many/f599; do
  want=$(fclabel $f)
  got=$(seaccess enforce label $f)
  check "$f is labeled as file_contexts says under /: $got" [ "$got" = "$want" ]
done

# The exec transition; `enforce run` first makes initrc_t's decisions exist (added in place).
g0=$(generation)
seaccess enforce run --context $INITRC -- $HTTPD_BIN sleep 5 &
runner=$!
echo "# the confined sleep: pid $runner"
i=0
while got=$(seaccess enforce context $runner 2>&1); [ "$got" != "$HTTPD" ] && [ $i -lt 300 ]; do
  sleep 0.1
  i=$((i + 1))
done
check "exec of $HEXEC from $INITRC: the task is now $got" [ "$got" = "$HTTPD" ]
wait $runner
check "the confined sleep ran and exited 0" [ $? -eq 0 ]
g1=$(generation)
# The daemon decided initrc_t (and httpd_t, which its exec reaches) before the task carried
# it, adding the entries to the generation in use: no new generation, so grants remembered on
# open files stay valid.
check "enforce run asked the daemon to decide $INITRC: in the sids list" grep -q " $INITRC\$" /run/seaccess/sids
check "added in place: generation $g0 -> $g1" [ "$g1" -eq "$g0" ]
check "this shell is unconfined" [ "$(seaccess enforce context $$)" = unconfined ]

# The allowed read.
check "the policy lets $HTTPD {read open} $WEB files (the case below)" allowed "$HTTPD" "$WEB" file read open
got=$(timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN cat /t/var/www/html/index.html 2>&1)
check "confined cat of the web page: read back ($got)" has "$got" 'hello from httpd_sys_content_t'

# The denied read, with its record.
if allowed "$HTTPD" "$SHADOW" file read open; then shadow_ok=1; else shadow_ok=0; fi
check "the policy refuses $HTTPD {read open} on $SHADOW (the case below)" [ $shadow_ok -eq 0 ]
got=$(timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN cat /t/etc/shadow 2>&1)
rc=$?
check "confined cat of shadow: EACCES ($rc: $got)" denied $rc "$got"
check "the denial is in the audit log" wait_for "avc:  denied  { .*read.* } for  pid=[0-9]* comm=\"busybox\" name=\"shadow\" .*scontext=$HTTPD tcontext=$SHADOW tclass=file permissive=0" $LOG
grep "tcontext=$SHADOW" $LOG | sed 's/^/# /'
check "the audit log is audit.log's format" sh -c "grep 'tcontext=$SHADOW' $LOG | grep -q '^type=AVC msg=audit([0-9]*\.[0-9]*:[0-9]*): avc:  denied'"

# An unconfined task is not checked.
check "an unconfined cat reads shadow" sh -c "cat /t/etc/shadow | grep -q secret"

# A file outside every labeled tree (a confined task read it unchecked before file systems had
# defaults): decided with its file system's default (tmpfs: fs_use_trans), as the kernel decides
# an inode nobody labeled.
echo 'outside secret' > /tmp/outside
OUT=$(seaccess enforce label /tmp/outside 2> /dev/null)
check "a file outside the trees is decided with tmpfs's default ($OUT)" sh -c "[ -n '$OUT' ] && ! echo '$OUT' | grep -q unchecked"
if allowed "$HTTPD" "$OUT" file read open; then out_ok=1; else out_ok=0; fi
got=$(timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN cat /tmp/outside 2>&1)
rc=$?
if [ $out_ok -eq 1 ]; then
  check "confined cat outside the trees: read, as the policy allows" has "$got" 'outside secret'
else
  check "confined cat outside the trees: EACCES, as the policy refuses $HTTPD $OUT ($rc: $got)" denied $rc "$got"
fi
# Pipes (fs_use_task): one a confined task makes carries its creator's context, as the kernel
# gives it, and is decided; one the unconfined shell made is not checked.
if allowed "$HTTPD" "$HTTPD" fifo_file read write; then pipe_ok=1; else pipe_ok=0; fi
got=$(timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN sh -c 'echo through-a-pipe | cat' 2>&1)
if [ $pipe_ok -eq 1 ]; then
  check "a confined task's own pipe: used, as the policy allows $HTTPD on its own fifo_file" has "$got" through-a-pipe
else
  check "a confined task's own pipe: refused, as the policy refuses ($got)" has "$got" 'Permission denied'
fi
got=$(echo from-the-shell | timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN cat 2>&1)
check "a pipe the unconfined shell made is not checked ($got)" has "$got" from-the-shell

# A confined task's child is confined too (task_alloc).
check "the policy lets $HTTPD fork (the case below)" allowed "$HTTPD" "$HTTPD" process fork
got=$(timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN sh -c 'cat /t/etc/shadow & wait $!' 2>&1)
check "the confined shell's forked cat is refused shadow ($got)" has "$got" 'Permission denied'

# A created file's label: the policy's type transition.
NEW=$(created "$HTTPD" "$TMP" file)
# may_create_in_dir asks inode_permission for `dir {write search}` before may_create.
if allowed "$HTTPD" "$TMP" dir write add_name search && allowed "$HTTPD" "$NEW" file create; then
  timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN touch /t/tmp/new
  got=$(seaccess enforce label /t/tmp/new)
  check "confined touch in $TMP: created, labeled $got, as the policy computes ($NEW)" [ "$got" = "$NEW" ]
else
  timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN touch /t/tmp/new
  check "the policy refuses $HTTPD creating in $TMP: refused" [ ! -e /t/tmp/new ]
fi

# A context the policy does not define: refused, nothing run.
got=$(seaccess enforce run --context system_u:system_r:no_such_t:s0 -- /bin/touch /tmp/ran 2>&1)
rc=$?
refused() { [ "$1" -ne 0 ] && [ ! -e /tmp/ran ] && has "$2" "$3"; }
check "enforce run with an invalid context is refused, nothing run ($rc: $got)" refused $rc "$got" no_such_t

# A reload (SIGHUP): a new generation in one switch, still enforcing, labels kept.
g1=$(generation)
kill -HUP "$pid"
i=0
while [ "$(generation)" = "$g1" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
g2=$(generation)
check "SIGHUP reloads: generation $g1 -> $g2" [ "$g2" -gt "$g1" ]
check "the daemon says it reloaded" wait_for 'reloaded' $ERR
got=$(timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN cat /t/etc/shadow 2>&1)
check "after the reload, shadow is still refused ($got)" has "$got" 'Permission denied'
got=$(timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN cat /t/var/www/html/index.html 2>&1)
check "after the reload, the web page is still read ($got)" has "$got" hello
check "after the reload, shadow keeps its label" [ "$(seaccess enforce label /t/etc/shadow)" = "$SHADOW" ]

# SIGTERM: detached; a task confined before reads shadow once the daemon is gone.
# The confined shell reads shadow once a line comes down its pipe (made by this unconfined
# shell: not checked), sent only when the daemon is gone; it is stopped only once the shell is
# confined. Ordered by the processes themselves, never by a sleep a loaded machine outruns.
gone() {
  i=0
  while kill -0 "$pid" 2> /dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
}
rm -f /tmp/late.go
mkfifo /tmp/late.go
{ read -r _ < /tmp/late.go; gone; echo go; } |
  seaccess enforce run --context $INITRC -- $HTTPD_BIN sh -c 'read x; cat /t/etc/shadow' > /tmp/late 2>&1 &
late=$!
i=0
while [ "$(seaccess enforce context $late 2>&1)" != "$HTTPD" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
kill "$pid"
echo stopped > /tmp/late.go
gone
check "SIGTERM stops the daemon" sh -c "! kill -0 $pid 2> /dev/null"
check "the daemon says the machine runs unconfined again" grep -q 'unconfined again' $ERR
wait $late
check "a task confined before the stop reads shadow after it ($(cat /tmp/late))" grep -q secret /tmp/late
got=$(seaccess enforce run --context $INITRC -- /bin/true 2>&1)
rc=$?
check "enforce run with no daemon is refused ($rc: $got)" refused $rc "$got" 'no seaccess enforce daemon'
sed 's/^/# daemon: /' $ERR

echo "kernel-enforce-smoke: $checks checks, $failed failed"
rc=0
[ "$failed" -eq 0 ] || rc=1
if [ -x /suite/enforce_smoke ]; then
  timeout 300 /suite/enforce_smoke "$P" /tmp/enforce /bin/busybox || rc=1
fi
exit $rc
