#!/bin/sh
# The systemd suite's guest side (tests/kernel/systemd/run.sh): run by seaccess-guest.service
# under Debian's systemd as PID 1 with its journald, as an administrator sets a mount up: the
# unit template `make install` puts in place (dist/seaccess-mount@.service) and its
# /etc/seaccess/mount-INSTANCE.conf. `systemctl start` returns once the mount says it is ready
# (Type=notify), `systemctl reload` re-reads the policy (SIGHUP, RELOADING=1 then READY=1),
# `stop` unmounts; the denial the mount makes is in the journal (`journalctl -t seaccess`,
# --audit-log syslog) and its own messages under the unit (`journalctl -u`). The contexts come
# from the policy (`seaccess check`, `seaccess label`), never written here. Prints one line
# per check, then `kernel-systemd: N checks, F failed`.
P=/etc/selinux/default/policy/policy.33
FC=/etc/selinux/default/contexts/files/file_contexts
H=system_u:system_r:httpd_t:s0
U=unit
. /suite/checks.sh
prop() { systemctl show -P "$1" seaccess-mount@srv-site.service; }
echo "# $(systemctl --version | head -n 1); PID 1 is $(cat /proc/1/comm)"
check "PID 1 is systemd" [ "$(cat /proc/1/comm)" = systemd ]
check "journald runs and /dev/log is its socket" sh -c 'systemctl is-active -q systemd-journald.service && [ -S /dev/log ]'

# The tree and the mount's configuration, as seaccess-mount(8) and the unit's comment say.
mkdir -p /srv/data/etc /srv/site /etc/seaccess /usr/local/lib/web
echo 'root:secret' > /srv/data/etc/shadow
chmod 644 /srv/data/etc/shadow
C=$(seaccess label -f "$FC" -m file /etc/shadow | cut -f2)
check "the policy refuses $H reading $C (the case below)" sh -c "! seaccess check -p $P $H $C file read > /dev/null"
# The web server's program: busybox (named so, it runs the applet its first argument names).
WEB=/usr/local/lib/web/busybox
cp /bin/busybox $WEB
printf 'exe=/usr/local/lib/web/busybox %s\ndefault unconfined_u:unconfined_r:unconfined_t:s0\n' "$H" > /etc/seaccess/subjects
cat > /etc/seaccess/mount-srv-site.conf <<CONF
SOURCE=/srv/data
OPTIONS=--policy $P -f $FC --path-prefix / --subjects /etc/seaccess/subjects --audit-log syslog
CONF

out=$(timeout 120 systemctl start seaccess-mount@srv-site 2>&1)
rc=$?
check "systemctl start seaccess-mount@srv-site returns 0 ($out)" [ $rc -eq 0 ]
check "once it returns, the tree is mounted at /srv/site" grep -q ' /srv/site fuse' /proc/mounts
check "the unit is active (running), Type=notify ($(prop ActiveState)/$(prop SubState), $(prop Type))" \
  sh -c '[ "$(systemctl show -P ActiveState seaccess-mount@srv-site)" = active ] && [ "$(systemctl show -P SubState seaccess-mount@srv-site)" = running ] && [ "$(systemctl show -P Type seaccess-mount@srv-site)" = notify ]'
main=$(prop MainPID)
check "its main process is the seaccess mount (pid $main: $(cat /proc/$main/comm 2> /dev/null))" \
  sh -c "[ '$main' -gt 0 ] && grep -q seaccess /proc/$main/comm"

got=$(cat /srv/site/etc/shadow 2>&1)
check "an unconfined cat reads through the mount ($got)" [ "$got" = root:secret ]
got=$(timeout 10 $WEB cat /srv/site/etc/shadow 2>&1)
rc=$?
check "$H (the web program) is refused ($rc: $got)" denied $rc "$got"
i=0
while ! journalctl -q -t seaccess -o cat 2> /dev/null | grep -q "scontext=$H tcontext=$C" && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
rec=$(journalctl -q -t seaccess -o cat 2> /dev/null | grep "scontext=$H tcontext=$C" | tail -n 1)
echo "J $rec"
check "journalctl -t seaccess shows the denial" has "$rec" "^type=AVC msg=audit([0-9.]*:[0-9]*): avc:  denied  { .* } for .*scontext=$H tcontext=$C tclass=file permissive=0"
pid=$(journalctl -q -t seaccess -o export 2> /dev/null | sed -n 's/^SYSLOG_PID=//p' | tail -n 1)
check "the journal has it from the mount's pid ($pid, main $main)" [ "$pid" = "$main" ]

out=$(timeout 120 systemctl reload seaccess-mount@srv-site 2>&1)
rc=$?
check "systemctl reload returns 0 ($out)" [ $rc -eq 0 ]
# systemd 252 ends the reload job when ExecReload's kill returns; the mount's RELOADING=1 and
# READY=1 follow (a synchronous reload, Type=notify-reload, came with systemd 253).
i=0
while [ "$(prop ActiveState)" != active ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
check "after the reload the unit is active again, the same process ($(prop ActiveState), $(prop MainPID))" \
  sh -c "[ \"\$(systemctl show -P ActiveState seaccess-mount@srv-site)\" = active ] && [ \"\$(systemctl show -P MainPID seaccess-mount@srv-site)\" = $main ]"
log=$(journalctl -q -u seaccess-mount@srv-site -o cat 2> /dev/null)
echo "$log" | sed 's/^/# unit: /'
check "the mount's own messages are under the unit, the reload among them" has "$log" reloaded
got=$(timeout 10 $WEB cat /srv/site/etc/shadow 2>&1)
rc=$?
check "after the reload $H is still refused ($rc)" denied $rc "$got"

out=$(timeout 120 systemctl stop seaccess-mount@srv-site 2>&1)
rc=$?
check "systemctl stop returns 0 ($out)" [ $rc -eq 0 ]
check "and the tree is unmounted" sh -c "! grep -q ' /srv/site fuse' /proc/mounts"
check "the unit is inactive, not failed ($(prop ActiveState))" [ "$(prop ActiveState)" = inactive ]
echo "kernel-systemd: $checks checks, $failed failed"
[ $failed -eq 0 ]
