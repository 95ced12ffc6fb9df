#!/bin/bash
# seaccess search and info against sesearch and seinfo (setools 4.4), end to end: for a handful
# of queries, the median wall time of RUNS runs of each (process start, policy load, query,
# output to /dev/null) and the ratio. Prints only; not a timed test.
# Usage: tests/tools/bench-search.sh [POLICY] [RUNS]   (default: Debian's default policy, 5)
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=./${SEACCESS_BUILD:-target/release}/seaccess
POL=${1:-/etc/selinux/default/policy/policy.33}
RUNS=${2:-5}
[ -x "$BIN" ] || cargo build --release -q -p seaccess-cli

# The median of RUNS wall times of a command, in milliseconds.
median_ms() {
  local i t0 t1
  for ((i = 0; i < RUNS; i++)); do
    t0=$(date +%s%N)
    "$@" > /dev/null 2>&1
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000))
  done | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

printf '%-52s %10s %10s %7s\n' "query ($POL, median of $RUNS)" "setools ms" "seaccess ms" "ratio"
bench() {
  local tool=$1
  shift
  local a b
  # shellcheck disable=SC2086
  a=$(median_ms $tool "$POL" "$@")
  # shellcheck disable=SC2086
  b=$(median_ms "$BIN" "${tool/se/}" "$POL" "$@")
  printf '%-52s %10s %10s %6sx\n' "${tool} $*" "$a" "$b" "$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.1f", a / (b > 0 ? b : 1)}')"
}
bench sesearch -A -s sshd_t
bench sesearch -A
bench sesearch --allow -t shadow_t -c file -p read
bench sesearch -A -s domain -ds
bench sesearch -T -s sshd_t
bench sesearch -A -b httpd_enable_cgi
bench sesearch --dontaudit -s sshd_t
bench sesearch --role_allow --role_trans
bench seinfo -t sshd_t -x
bench seinfo -a -x
