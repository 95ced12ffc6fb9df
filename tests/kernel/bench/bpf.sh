# The seed experiments on the kernel without SELinux (run as /suite/guest.sh by the guest's
# init; booted with the BPF LSM alone under -icount shift=0): first unenforced (no program
# attached), then under `seaccess enforce` with Debian's default policy and file_contexts, the
# daemon labelling the guest's root as setfiles would and /b as setfiles -r does (every inode a
# walk meets labeled, as the SELinux boot's are: an inode outside the trees is decided by its
# file system's default at each check, with no cache), the chain started as kernel_t by
# `seaccess enforce run` (and once unconfined beside it). Prints "none B ...", "unconfined B ..."
# and "enforce B ..." lines (bench.c), and the daemon's AVC records as "A ..." lines.
set -eu
echo "S kernel $(uname -r)"
mount -t bpf bpf /sys/fs/bpf
. /suite/tree.sh
bench_tree
bench_run none
seaccess=/usr/bin/seaccess
timeout 600 $seaccess enforce --policy /etc/selinux/default/policy/policy.33 \
  --file-contexts /etc/selinux/default/contexts/files/file_contexts --root / --root $b \
  --audit-log /run/seaccess-audit.log
# What a task outside confinement pays while the daemon enforces (the hooks attached, its task
# storage empty), then the confined chain.
bench_run unconfined
bench_run enforce $seaccess enforce run --context system_u:system_r:kernel_t:s0 --
sed "s/^/A /" /run/seaccess-audit.log 2>/dev/null || true
