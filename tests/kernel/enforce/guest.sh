#!/bin/sh
# The enforcement smoke suite, run in the guest booted with the BPF LSM and no SELinux
# (lsm=lockdown,capability,landlock,bpf): crates/enforce's enforce_smoke loads the BPF object,
# installs a generation the engine computed from Debian's default policy, labels files by
# descriptor, confines an initrc_t task that execs an httpd_exec_t program, and checks the
# kernel's answers against the engine's. Its last line is the summary; a failed check fails
# the boot (the suite's status).
set -e
mount -t bpf bpf /sys/fs/bpf
mount -t tmpfs tmpfs /tmp
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null || true
echo "lsm: $(cat /sys/kernel/security/lsm 2>/dev/null || echo '(securityfs not mounted)')"
[ -e /sys/fs/selinux/enforce ] && { echo "SELinux is active: this suite wants the BPF LSM alone"; exit 1; }
timeout 300 /suite/enforce_smoke /etc/selinux/default/policy/policy.33 /tmp/enforce /bin/busybox
