# The oracle suite's guest side (run as /suite/guest.sh by the guest's init, output to the host):
# Debian's default policy loaded enforcing, then the shared workload (tests/kernel/workload.sh)
# on a tree labelled by setfiles from Debian's file_contexts, run by the probe in a chain of
# domains the policy's own transitions lead to (kernel_t, then init, rc and the daemons'
# domains). Prints the workload's lines (L, T, C, R: see workload.sh) and:
#   S <fact>                        a fact of the guest (kernel, enforcing mode)
#   A <record>                      the kernel's AVC records, in order
set -eu
echo "S kernel $(uname -r)"
# With no audit daemon the kernel prints AVC records through printk, which drops all but a few
# in each 5 seconds unless told otherwise; the comparison needs every one of them.
echo 0 > /proc/sys/kernel/printk_ratelimit
load_policy -i
echo "S enforce $(cat /sys/fs/selinux/enforce)"
echo "S policyvers $(cat /sys/fs/selinux/policyvers)"

wl_label_tree() {
  # /dev as Debian labels it (devtmpfs gives new nodes device_t): /dev/null, which every domain
  # the chain enters is given for standard input, must be null_device_t there too.
  setfiles /etc/selinux/default/contexts/files/file_contexts /dev
  # -F: file_contexts' whole context (user included), not only its type on the label the
  # tree was created with: the label a relabeler with no earlier label writes, as
  # `seaccess enforce` does (tests/kernel/enforce/oracle.sh).
  setfiles -F -r "$1" /etc/selinux/default/contexts/files/file_contexts "$1"
}
wl_context() { cat "/proc/$1/attr/current"; }
# The guest's init, and so this shell, is kernel_t once the policy is loaded.
WL_RUN=
. /suite/workload.sh

dmesg | sed -n 's/.*\(avc: .*\)/A \1/p'
