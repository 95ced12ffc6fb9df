#!/usr/bin/env bash
# Instructions per call on a cache hit through the C library, libseaccess against libselinux 3.4
# on the same queries (tests/capi/bench.c's `one` mode under callgrind, one thread): prints
# "WHAT LIBRARY INSTRUCTIONS" for WHAT in loop (the harness's loop alone), has_perm, noaudit,
# check_access and check_access_one_buffer (each query's strings copied into one set of buffers
# first, the copies counted), per call, the loop not subtracted (seaccess-lab bench hit-path
# subtracts it).
# Each figure is the difference of two runs (R1 and R2 rounds over the queries), so start-up,
# policy load and warming cancel.
set -euo pipefail
cd "$(dirname "$0")/../.."
POL=${1:-/etc/selinux/default/policy/policy.33}
N=${BENCH_TRIPLES:-1000}
R1=20 R2=120
OUT=target/capi
mkdir -p "$OUT"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for need in target/release/libseaccess.so target/oracle/sepol-oracle "$POL"; do
  [ -e "$need" ] || { echo "bench-instructions: $need is missing (make capi oracle)" >&2; exit 1; }
done
command -v valgrind > /dev/null || { echo "bench-instructions: valgrind is missing (make deps)" >&2; exit 1; }
source tests/capi/bench-prepare.sh
bench_prepare "$POL" "$N" "$OUT" "$T"
nq=$(wc -l < "$T/w")
[ "$nq" -gt 0 ] || { echo "bench-instructions: no query allows anything on $POL" >&2; exit 1; }
total() { # LIB WHAT ROUNDS: callgrind's instruction total, with the allowed count checked
  local out
  out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$OUT/bench-$1" one "$2" "$T/classes" "$3" < "$T/w" 2>&1) ||
    { echo "bench-instructions: bench-$1 one $2: $(tail -n1 <<< "$out")" >&2; exit 1; }
  local allowed
  allowed=$(sed -n 's/^allowed //p' <<< "$out")
  [ "$allowed" = "$(( $3 * nq ))" ] || { echo "bench-instructions: bench-$1 one $2: $allowed of $(( $3 * nq )) checks allowed" >&2; exit 1; }
  sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' <<< "$out"
}
for lib in seaccess libselinux; do
  for what in loop has_perm noaudit check_access check_access_one_buffer; do
    a=$(total "$lib" "$what" "$R1"); b=$(total "$lib" "$what" "$R2")
    name=$lib; [ "$lib" = seaccess ] && name=libseaccess
    awk -v a="$a" -v b="$b" -v n="$(( (R2 - R1) * nq ))" -v w="$what" -v l="$name" 'BEGIN { printf "%s %s %.1f\n", w, l, (b - a) / n }'
  done
done
