# The seed experiments under the kernel's own SELinux (run as /suite/guest.sh by the guest's
# init; booted with security=selinux enforcing=1 under -icount shift=0): Debian's default policy
# loaded enforcing, the tree labelled by setfiles from Debian's file_contexts (-r /b, as the
# oracle suite labels its tree), the experiments in httpd_t. Prints "selinux B ..." lines.
set -eu
echo "S kernel $(uname -r)"
load_policy -i
echo "S enforce $(cat /sys/fs/selinux/enforce)"
. /suite/tree.sh
bench_tree
fc=/etc/selinux/default/contexts/files/file_contexts
setfiles $fc /dev
setfiles -F -r $b $fc $b
bench_run selinux
