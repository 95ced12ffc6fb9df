#!/usr/bin/env bash
# The seed experiments in the kernel (`make kernel-bench`; a benchmark, never a timed test):
# the tree walk, the 1-byte read/write loop and the path walk (bench.c), in httpd_t, on
# Debian's stock kernel under QEMU with -icount shift=0, so that each count is of guest
# instructions and repeats from run to run. Two boots: the kernel's own SELinux enforcing
# Debian's default policy (selinux.sh); the BPF LSM alone, first unenforced, then under
# `seaccess enforce` on the same policy and file_contexts (bpf.sh). Prints the table README
# carries (table.py), also kept in OUT/table.md.
set -euo pipefail
cd "$(dirname "$0")/../../.."
source tests/kernel/lib.sh
BUILD=${SEACCESS_BUILD:-target/release}
out=${SEACCESS_GUEST_OUT:-target/kernel/bench}
if ! why=$(guest_ready); then
  echo "SKIP: kernel-bench: $why"
  exit 0
fi
bin=$PWD/$BUILD/seaccess
[ -x "$bin" ] || { echo "kernel-bench: no $bin (cargo build -p seaccess-cli)" >&2; exit 1; }
mkdir -p "$out"
gcc -static -O2 -Wall -Werror -o "$out/bench" tests/kernel/bench/bench.c
# One instruction, one virtual nanosecond; an idle guest skips ahead rather than waits.
export GUEST_QEMU_ARGS="-icount shift=0,sleep=off"
# Under -icount the guest runs slower than plain TCG: the walk's labelling takes a while.
GUEST_DEADLINE=${SEACCESS_GUEST_DEADLINE:-1800}

guest_initramfs "$out/selinux.initrd.gz" tests/kernel/bench/selinux.sh tests/kernel/bench/tree.sh "$out/bench"
guest_boot "$out/selinux.initrd.gz" "$out/selinux" "security=selinux selinux=1 enforcing=1"
GUEST_SEACCESS=$bin guest_initramfs "$out/bpf.initrd.gz" tests/kernel/bench/bpf.sh tests/kernel/bench/tree.sh "$out/bench"
guest_boot "$out/bpf.initrd.gz" "$out/bpf" "lsm=lockdown,capability,landlock,bpf"
python3 tests/kernel/bench/table.py "$out/bpf/results.log" "$out/selinux/results.log" | tee "$out/table.md"
