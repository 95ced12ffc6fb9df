#!/bin/sh
# The BPF LSM boot (lsm=lockdown,capability,landlock,bpf, no SELinux): one boot for every
# enforcement suite, since the boot is what costs. First the smoke suite (smoke.sh: the
# commands as README shows them, then crates/enforce's enforce_smoke), whose daemon it stops;
# then the audit suite (audit.sh: denials as USER_AVC records in Debian's auditd's log, found
# by ausearch), with a daemon of its own; then the oracle's workload under `seaccess enforce`
# (oracle.sh), whose lines tests/kernel/enforce/compare.py sets beside the SELinux kernel's.
# Any failing fails the boot.
rc=0
sh /suite/smoke.sh || rc=1
sh /suite/audit.sh || rc=1
sh /suite/oracle.sh || rc=1
exit $rc
