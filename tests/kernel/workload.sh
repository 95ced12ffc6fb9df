# The guest workload both kernel suites run (sourced as /suite/workload.sh by the oracle's guest
# script, with SELinux in the kernel, and by tests/kernel/enforce/oracle.sh, under `seaccess enforce` with
# the BPF LSM alone): the same tree, the same operations in the same chains of domains, so that
# tests/kernel/enforce/compare.py can set one kernel's answers beside the other's.
#
# What differs between the two comes in from the sourcing script:
#   wl_label_tree DIR   label DIR as Debian's file_contexts says (setfiles -r, or the daemon)
#   wl_context PID      print a task's context (/proc/PID/attr/current, or the daemon's)
#   WL_RUN              the words that start a chain as kernel_t (empty where the shell already
#                       is kernel_t; `seaccess enforce run --context ... --` under enforce)
# and the probe (tests/kernel/probe.c) reads its own context and the files' labels from
# SELinux where the kernel has it, else from the daemon's pinned task and inode storage.
#
# Prints (besides the sourcing script's S and A lines):
#   L <path> <kind> <context>       a file's label after labelling; after the workload, the
#                                   labels it left, read back
#   T <pid> <context>               a target of signals and ptrace, in its domain
#   C <context> / R <context> ...   the probe's lines
#
# The tree: programs are copies of the probe at the paths Debian's file_contexts names for
# init, the rc script and a few daemons, so that exec'ing them enters those programs' domains;
# data files at paths that give them a variety of types.
t=/t
mkdir -p $t
mount -t tmpfs -o mode=755 tmpfs $t
programs="sbin/init etc/init.d/rc usr/sbin/apache2 usr/sbin/sshd usr/sbin/cron usr/sbin/rsyslogd usr/sbin/chronyd sbin/dhclient usr/bin/probe-cmd"
data="etc/passwd etc/shadow etc/hosts etc/resolv.conf etc/ssh/sshd_config etc/apache2/apache2.conf
  etc/selinux/config etc/crontab var/www/html/index.html var/log/messages var/log/apache2/access.log
  var/spool/cron/crontabs/root root/.profile home/alice/notes.txt boot/vmlinuz usr/share/doc/README
  tmp/scratch var/lib/dhcp/dhclient.leases"
for p in $programs; do mkdir -p "$t/${p%/*}"; cp /suite/probe "$t/$p"; done
for f in $data; do mkdir -p "$t/${f%/*}"; echo "data of $f" > "$t/$f"; done
chmod 640 $t/etc/shadow
wl_label_tree $t
for f in / $(find $t); do /suite/probe "label:$f"; done

# Signals and ptrace: targets left sleeping in known domains (each the end of a chain of execs
# from kernel_t), their pids and contexts printed as "T <pid> <context>" once they are there.
# Yama would refuse ptrace between unrelated processes before SELinux is asked.
if [ -w /proc/sys/kernel/yama/ptrace_scope ]; then echo 0 > /proc/sys/kernel/yama/ptrace_scope; fi
echo "S yama $(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo none)"
# target PROGRAM TYPE: starts a probe that execs its way into PROGRAM's domain (TYPE) and sleeps;
# sets $pid. WL_RUN must exec the probe in its own process, so that $! is the probe's pid.
target() {
  # shellcheck disable=SC2086
  $WL_RUN /suite/probe exec:$t/sbin/init exec:$t/etc/init.d/rc exec:$t/$1 sleep:600 > /dev/null 2>&1 &
  pid=$!
  n=0
  until wl_context $pid 2>/dev/null | grep -q ":$2:"; do
    n=$((n + 1))
    [ $n -lt 100 ] || { echo "target $1 never reached $2" >&2; return 1; }
    sleep 0.1
  done
  echo "T $pid $(wl_context $pid)"
}
target usr/sbin/apache2 httpd_t
web=$pid
target usr/sbin/rsyslogd syslogd_t
log=$pid

# The same operations in each domain: kernel_t, init's, rc's, then each daemon's, every chain
# from the start (a domain can only be left by exec).
ops=ctx
for f in $data; do ops="$ops stat:$t/$f read:$t/$f write:$t/$f"; done
for p in $web $log; do
  ops="$ops kill:$p,0 kill:$p,USR1 kill:$p,CHLD kill:$p,STOP kill:$p,CONT ptrace:$p"
done
# Sockets (bound on the loopback, brought up here) and SysV IPC objects.
ip link set lo up
ops="$ops socket:tcp socket:udp socket:unix bind:tcp,80 bind:tcp,8080 bind:tcp,22 bind:tcp,3306
  bind:udp,123 bind:udp,514 bind:udp,5140 bind:tcp,40000 connect:tcp,80 connect:tcp,25
  connect:tcp,3306 connect:tcp,5432 shm:private sem:private msg:private"
# Directories and names, in directories of several types, on names of each domain's own
# ("%t": the probe's type; cron.log: a name the policy's filename transitions give syslogd a
# type for in var_log_t): what survives (a symbolic link, a directory holding a file moved
# into it) is labelled as its creator's type transition says, read back at the end.
for d in tmp var/www/html var/log var/lib/dhcp etc; do
  D=$t/$d
  ops="$ops create:$D/f-%t mkdir:$D/d-%t mkdir:$D/e-%t symlink:f-%t,$D/s-%t
    link:$D/f-%t,$D/h-%t rename:$D/f-%t,$D/r-%t rename:$D/r-%t,$D/d-%t/r
    rename:$D/e-%t,$D/d-%t/e rmdir:$D/d-%t/e unlink:$D/h-%t create:$D/d-%t/cron.log"
done
# Each daemon ends with execs: of a command (bin_t: no transition, execute_no_trans), then of
# programs whose domains the daemon may not enter or whose files it may not execute (refused
# ones leave it where it was, and it goes on with the next).
execs="exec:$t/usr/bin/probe-cmd ctx exec:$t/sbin/init exec:$t/usr/sbin/sshd exec:$t/usr/sbin/apache2
  exec:$t/usr/sbin/cron"
# Before them, each daemon sends SIGKILL to a victim of its own (crond_t), reaped after.
for d in usr/sbin/apache2 usr/sbin/sshd usr/sbin/cron usr/sbin/rsyslogd usr/sbin/chronyd sbin/dhclient; do
  target usr/sbin/cron crond_t
  victim=$pid
  # shellcheck disable=SC2086
  $WL_RUN /suite/probe $ops exec:$t/sbin/init relay $ops exec:$t/etc/init.d/rc $ops exec:$t/$d $ops \
    kill:$victim,KILL $execs
  kill -9 $victim 2>/dev/null || true
  wait $victim 2>/dev/null || true
done
kill -9 $web $log
wait $web $log 2>/dev/null || true

# The relay's child writes until the last writer exits.
sleep 1
# The labels the workload left, read back as kernel_t.
for f in $(find $t); do /suite/probe "label:$f"; done
