#!/bin/bash
# The policy tools against their peers (audit2why, audit2allow, checkmodule, sesearch, seinfo) and
# their own cases: every tests/tools/t-*.sh, each failing the run on its first failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
rc=0
for t in tests/tools/t-*.sh; do
    [ -e "$t" ] || continue
    echo "== $t"
    bash "$t" || { echo "FAILED: $t"; rc=1; }
done
exit $rc
