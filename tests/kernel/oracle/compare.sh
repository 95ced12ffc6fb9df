#!/usr/bin/env bash
# The oracle suite's host side: the guest's results (RESULTS) compared operation by operation
# with crates/objmgr's hooks on the same tree, labels and contexts (crates/lab's example
# kernel_oracle). Its differences the project keeps on purpose are listed, one key a line, in
# tests/kernel/oracle/documented.txt, each explained in docs/kernel-oracle.md. Prints the
# differences, then `kernel-oracle: N compared, D differ (E documented)`; fails on an
# undocumented one.
set -euo pipefail
BUILD=${SEACCESS_BUILD:-target/release}
results=$1
exec "$BUILD/examples/kernel_oracle" /etc/selinux/default/policy/policy.33 "$results" \
  tests/kernel/oracle/documented.txt
