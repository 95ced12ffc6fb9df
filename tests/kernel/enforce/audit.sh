#!/bin/sh
# Denials where administrators look, with the kernel's own audit (run by guest.sh in the BPF LSM
# boot, after smoke.sh has stopped its daemon): Debian's auditd runs as the audit daemon, `seaccess
# enforce --audit-log audit` sends its denials as USER_AVC records over the audit netlink, and
# `ausearch -m USER_AVC` finds them in auditd's log. The contexts come from the policy (`seaccess
# compute-create`, `seaccess label`), never written here. Prints one line per check, the records
# as "U <record>" for the host's audit2why and audit2allow (tests/kernel/run.sh), then
# `kernel-enforce-audit: N checks, F failed`.
P=/etc/selinux/default/policy/policy.33
FC=/etc/selinux/default/contexts/files/file_contexts
ERR=/tmp/audit-enforce.err
. /suite/checks.sh
finish() { echo "kernel-enforce-audit: $checks checks, $failed failed"; [ $failed -eq 0 ]; exit $?; }
fclabel() { seaccess label -f "$FC" -m file "${1#/a}" | cut -f2; }
if [ ! -x /sbin/auditd ]; then
  failed=1
  echo "FAIL - no auditd in the guest (scripts/fetch-auditd.sh, make kernel)"
  finish
fi

# What smoke.sh mounted, where this runs alone.
grep -q ' /sys/fs/bpf ' /proc/mounts || mount -t bpf bpf /sys/fs/bpf
grep -q ' /tmp ' /proc/mounts || mount -t tmpfs tmpfs /tmp

# auditd as Debian configures it, but for what an initramfs lacks: group names (no /etc/group:
# the log's group by number) and a mail account to verify; its log on a tmpfs of its own, so
# that the free space it checks for is there. -n: not forked, so that $! is the daemon.
mkdir -p /var/log/audit /var/run
mount -t tmpfs -o size=256m,mode=0700 auditlog /var/log/audit
sed -i 's/^log_group = .*/log_group = 0/; s/^verify_email = .*/verify_email = no/' /etc/audit/auditd.conf
auditd -n > /tmp/auditd.out 2>&1 &
AUDITD=$!
i=0
while ! auditctl -s 2> /dev/null | grep -q "^pid $AUDITD\$" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check "auditd (pid $AUDITD) is the kernel's audit daemon: $(auditctl -s 2>&1 | grep '^pid' || cat /tmp/auditd.out)" \
  sh -c "auditctl -s | grep -q '^pid $AUDITD\$'"

# A tree: a secret and an httpd_exec_t program (busybox, run as the applet its first argument
# names), labelled by the daemon from file_contexts.
mkdir -p /a/etc /a/usr/lib/apache-ssl
echo 'root:secret' > /a/etc/shadow
cp /bin/busybox /a/usr/lib/apache-ssl/busybox
HTTPD_BIN=/a/usr/lib/apache-ssl/busybox
INITRC=system_u:system_r:initrc_t:s0
SHADOW=$(fclabel /a/etc/shadow)
HTTPD=$(echo "$INITRC $(fclabel $HTTPD_BIN) process" | seaccess compute-create -p "$P")
echo "# the policy: $INITRC execs $HTTPD_BIN into $HTTPD; /a/etc/shadow is $SHADOW"

out=$(timeout 300 seaccess enforce --policy "$P" --file-contexts "$FC" --root /a --audit-log audit 2> $ERR)
rc=$?
pid=$(echo "$out" | sed -n 's/.*(pid \([0-9]*\),.*/\1/p')
check "seaccess enforce --audit-log audit started ($rc, pid $pid)" [ "$rc" -eq 0 -a -n "$pid" ]
[ -n "$pid" ] || { cat $ERR; kill $AUDITD; finish; }

got=$(timeout 30 seaccess enforce run --context $INITRC -- $HTTPD_BIN cat /a/etc/shadow 2>&1)
rc=$?
check "confined cat of shadow: EACCES ($rc: $got)" denied $rc "$got"
i=0
while ! ausearch -m USER_AVC --raw 2> /dev/null | grep -q "tcontext=$SHADOW" && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
recs=$(ausearch -m USER_AVC --raw 2> /dev/null | grep "scontext=$HTTPD tcontext=$SHADOW tclass=file")
echo "$recs" | sed -n 's/^./U &/p'
check "ausearch -m USER_AVC finds the denial in auditd's log" has "$recs" "avc:  denied  { .*read.* } for .* scontext=$HTTPD tcontext=$SHADOW tclass=file permissive=0"
check "the record is a USER_AVC from the daemon (pid=$pid), as libaudit's senders write it" \
  has "$recs" "^type=USER_AVC msg=audit([0-9.]*:[0-9]*): pid=$pid uid=0 .*msg='avc:  denied .* exe=\".*seaccess\""
check "ausearch -i interprets it" sh -c "ausearch -m USER_AVC -i 2> /dev/null | grep -q 'tcontext=$SHADOW'"
check "the daemon's standard error says no record failed" sh -c "! grep -q 'could not be written' $ERR"

kill "$pid"
i=0
while kill -0 "$pid" 2> /dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check "no record was lost on the way to auditd (the count said at stop)" sh -c "! grep -q 'records were lost' $ERR"
kill $AUDITD
wait $AUDITD 2> /dev/null
umount /var/log/audit
finish
