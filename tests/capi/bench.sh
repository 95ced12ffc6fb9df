#!/usr/bin/env bash
# libseaccess against libselinux 3.4 on the same queries (make capi-bench): selinux_check_access
# on one thread (each query's own strings, and its strings copied into one set of buffers
# before each call), avc_has_perm on one and two threads. tests/capi/bench.c, built against each;
# libselinux answers its misses from libsepol's decisions (see bench.c). Prints each time and
# the ratios (libselinux's time / libseaccess's) of the medians of BENCH_RUNS runs (default 5).
set -euo pipefail
cd "$(dirname "$0")/../.."
POL=${1:-/etc/selinux/default/policy/policy.33}
# libselinux's AVC holds 410 entries (AVC_CACHE_MAXNODES): a working set within that measures
# its hits, as crates/lab/peers/libselinux-avc does, not its misses.
N=${BENCH_TRIPLES:-1000}
# Each avc_has_perm figure is timed from its threads' creation to their join, so a run pays each
# thread's start and first pass (libseaccess's per-thread front is filled then) once, spread
# over its rounds: libseaccess's one-thread figure was 6.0 ns at 200 rounds, 4.0 at 2,000 and
# 3.2 at 5,000 (2026-11-29); libselinux's 29.5, 25.3 and 25.5.
ROUNDS=${BENCH_ROUNDS:-2000}
RUNS=${BENCH_RUNS:-5}
ORACLE=target/oracle/sepol-oracle
OUT=target/capi
mkdir -p "$OUT"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
for need in target/release/libseaccess.so "$ORACLE" "$POL"; do
  [ -e "$need" ] || { echo "bench: $need is missing (make capi oracle deps)" >&2; exit 1; }
done
source tests/capi/bench-prepare.sh
bench_prepare "$POL" "$N" "$OUT" "$T"
echo "bench: $(wc -l < "$T/w") triples x $ROUNDS rounds, $RUNS runs of each library in turn, policy $POL, $(nproc) CPUs"
# The two libraries run in turn, RUNS times each, so that a slow stretch of a shared machine
# falls on both; each figure is the median of its runs.
for i in $(seq "$RUNS"); do
  "$OUT/bench-seaccess" run "$T/classes" "$ROUNDS" < "$T/w" > "$T/s$i"
  "$OUT/bench-libselinux" run "$T/classes" "$ROUNDS" < "$T/w" > "$T/l$i"
  s=$(grep allowed "$T/s$i"); l=$(grep allowed "$T/l$i")
  [ "$s" = "$l" ] || { echo "bench: the two libraries disagree: libseaccess $s, libselinux $l" >&2; exit 1; }
done
median() { # FILE-PREFIX NAME FIELD: the median over the runs of one figure
  for i in $(seq "$RUNS"); do awk -v n="$2" -v f="$3" '$1 == n { print $f }' "$T/$1$i"; done | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
for n in check_access check_access_one_buffer has_perm_1_thread has_perm_2_threads; do
  printf '%s %s %s %s %s\n' "$n" "$(median s "$n" 2)" "$(median s "$n" 3)" "$(median l "$n" 2)" "$(median l "$n" 3)"
done | awk '{ printf "%-23s wall: libseaccess %7.1f ns  libselinux %7.1f ns  %5.1fx   cpu: libseaccess %7.1f ns  libselinux %7.1f ns  %5.1fx\n", $1, $2, $4, $4 / $2, $3, $5, $5 / $3 }'
echo "bench: both allow the same checks in every run ($s); medians of $RUNS runs"

# selabel_lookup through the C API: tests/capi/bench_label.c built once against Debian's
# libselinux and run on it and on libseaccess in its place (target/libselinux, from make capi),
# on the same 4,000 paths (Debian's default file_contexts); both must give the same answers.
[ -e target/libselinux/libselinux.so.1 ] || { echo "bench: target/libselinux/libselinux.so.1 is missing (make capi)" >&2; exit 1; }
gcc -O2 -Wall -Werror -o "$OUT/bench_label" tests/capi/bench_label.c -lselinux
# head closes the pipe early: find then dies of SIGPIPE, which is no failure here.
{ find /etc /usr/bin /usr/lib/systemd /var /usr/share/doc -maxdepth 3 2>/dev/null || true; } | head -n 4000 > "$T/paths" || true
LROUNDS=${BENCH_LABEL_ROUNDS:-3}
for i in $(seq "$RUNS"); do
  LD_LIBRARY_PATH=$PWD/target/libselinux "$OUT/bench_label" "$LROUNDS" < "$T/paths" > "$T/ls$i"
  "$OUT/bench_label" "$LROUNDS" < "$T/paths" > "$T/ll$i"
  a=$(grep answers "$T/ls$i"); b=$(grep answers "$T/ll$i")
  [ "$a" = "$b" ] || { echo "bench: selabel_lookup answers differ: libseaccess $a, libselinux $b" >&2; exit 1; }
done
printf '%s %s\n' "$(median ls selabel_lookup 2)" "$(median ll selabel_lookup 2)" \
  | awk '{ printf "selabel_lookup      wall: libseaccess %7.1f ns  libselinux %9.1f ns  %5.1fx\n", $1, $2, $2 / $1 }'
echo "bench: both label the same $(grep -o 'of [0-9]*' "$T/ls1" | cut -d' ' -f2) paths alike in every run ($a); medians of $RUNS runs"
