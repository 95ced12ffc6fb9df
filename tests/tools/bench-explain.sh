#!/usr/bin/env bash
# seaccess explain against audit2why on the same log of COUNT (default 10000) AVC denials of
# distinct accesses, drawn from POLICY by the libsepol oracle (`make oracle`): the median of
# RUNS (default 3) end-to-end runs of each, and the ratio. Not a timed test: it prints only.
# Usage: bash tests/tools/bench-explain.sh [POLICY] [COUNT] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
POL=${1:-/etc/selinux/default/policy/policy.33}
COUNT=${2:-10000}
RUNS=${3:-3}
BIN=./${SEACCESS_BUILD:-target/release}/seaccess
ORACLE=./target/oracle/sepol-oracle
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ -x "$ORACLE" ] || { echo "needs the oracle: make oracle" >&2; exit 2; }
command -v audit2why >/dev/null || { echo "needs audit2why: make deps" >&2; exit 2; }

# One record per query, for one of its class's permissions (chosen by the query's number).
"$ORACLE" perms "$POL" > "$T/perms"
"$ORACLE" gen "$POL" 7 "$COUNT" > "$T/q"
awk 'NR == FNR { n[$1]++; p[$1, n[$1]] = $3; next }
     { c = $3; if (!(c in n)) next; k = p[c, (FNR % n[c]) + 1];
       printf "type=AVC msg=audit(1700000000.%03d:%d): avc:  denied  { %s } for  pid=42 comm=\"prog\" scontext=%s tcontext=%s tclass=%s permissive=0\n", FNR % 1000, FNR, k, $1, $2, c }' \
  "$T/perms" "$T/q" > "$T/log"
records=$(wc -l < "$T/log")

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
time_of() { local s e; s=$(date +%s.%N); "$@" > /dev/null 2>&1 || true; e=$(date +%s.%N); awk -v s="$s" -v e="$e" 'BEGIN { print e - s }'; }
: > "$T/ours"; : > "$T/theirs"
for _ in $(seq "$RUNS"); do
  time_of "$BIN" explain -p "$POL" "$T/log" >> "$T/ours"
  time_of audit2why -p "$POL" -i "$T/log" >> "$T/theirs"
done
ours=$(median < "$T/ours"); theirs=$(median < "$T/theirs")
printf 'explain, %d records of %s (median of %d runs, end to end):\n' "$records" "$POL" "$RUNS"
awk -v t="$theirs" -v o="$ours" -v n="$records" 'BEGIN {
  printf "  audit2why         %8.3f s  (%.2f ms a record)\n", t, t * 1000 / n
  printf "  seaccess explain  %8.3f s  (%.3f ms a record)\n", o, o * 1000 / n
  printf "  ratio             %8.1fx\n", t / o }'
