# The oracle workload under `seaccess enforce` (run by tests/kernel/enforce/guest.sh, booted with
# the BPF LSM and no SELinux): Debian's default policy enforced by `seaccess enforce`, then the
# shared workload (tests/kernel/workload.sh) on the same tree, labelled by the daemon from the
# same file_contexts as the oracle's setfiles, in the same chains of domains, started by
# `seaccess enforce run` as kernel_t. Prints the workload's lines (L, T, C, R: see workload.sh)
# and:
#   S <fact>                        a fact of the guest (kernel, LSMs)
#   A <record>                      the daemon's AVC records, in order
# tests/kernel/enforce/compare.py sets its R, T and L lines beside the oracle suite's.
set -eu
echo "S kernel $(uname -r)"
mount -t bpf bpf /sys/fs/bpf
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null || true
echo "S lsm $(cat /sys/kernel/security/lsm 2>/dev/null || echo '(securityfs not mounted)')"
if [ -e /sys/fs/selinux/enforce ]; then
  echo "SELinux is active: this suite wants the BPF LSM alone" >&2
  exit 1
fi
seaccess=/usr/bin/seaccess
policy=/etc/selinux/default/policy/policy.33
fc=/etc/selinux/default/contexts/files/file_contexts

wl_label_tree() {
  # The daemon labels the tree as setfiles -r would (returns once it enforces); /dev stays
  # unlabelled, and so unchecked, as everything nobody labelled is.
  timeout 300 $seaccess enforce --policy $policy --file-contexts $fc --root "$1" \
    --audit-log /run/seaccess-audit.log
}
wl_context() { $seaccess enforce context "$1"; }
WL_RUN="$seaccess enforce run --context system_u:system_r:kernel_t:s0 --"
. /suite/workload.sh

sed 's/^/A /' /run/seaccess-audit.log 2>/dev/null || true
