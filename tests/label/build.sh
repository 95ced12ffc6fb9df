#!/usr/bin/env bash
# Builds the libselinux reference for crates/label (tests/label/selabel_query.c) outside cargo,
# so the comparison scripts can call it without rebuilding it each run.
#   tests/label/build.sh [OUTDIR]     (default target/label, relative to the workspace root)
# Prints the binary's path. Rebuilds only when the source is newer than the binary.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SRC=$ROOT/tests/label/selabel_query.c
OUT=${1:-$ROOT/target/label}
case $OUT in /*) ;; *) OUT=$PWD/$OUT ;; esac
BIN=$OUT/selabel_query
mkdir -p "$OUT"
if [ ! -x "$BIN" ] || [ "$SRC" -nt "$BIN" ]; then
  gcc -O2 -Wall -Wextra -Werror -o "$BIN.tmp" "$SRC" -lselinux
  mv -f "$BIN.tmp" "$BIN"
fi
echo "$BIN"
