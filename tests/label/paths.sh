#!/usr/bin/env bash
# A query corpus for selabel_query and `seaccess label` drawn from this machine's real tree, so
# the two are compared on the paths and file types a relabel would actually meet, not only on
# hand-picked ones. Output (stdout), sorted bytewise by path so it is the same for the same tree:
#   lookup<TAB>MODE<TAB>PATH     for every path under /usr /etc /var /opt /srv /home /root (those
#                                that exist; one filesystem each, symlinks not followed), MODE
#                                being the path's own (lstat) type;
#   plus, for every 50th of those paths, one such line for each of the eight MODEs, so that
#   every mode meets every kind of spec.
# Paths containing a tab or a newline (and everything below them) are left out.
#   tests/label/paths.sh [ROOT...] > corpus       (ROOTs replace the default list)
set -euo pipefail
export LC_ALL=C
if [ $# -gt 0 ]; then ROOTS=("$@"); else ROOTS=(/usr /etc /var /opt /srv /home /root); fi
TAB=$'\t' NL=$'\n'
for r in "${ROOTS[@]}"; do
  [ -e "$r" ] || [ -L "$r" ] || continue
  # unreadable directories are not an error: their paths are simply missing
  find "$r" -xdev \( -name "*$TAB*" -o -name "*$NL*" \) -prune -o -printf '%p\t%y\n' 2>/dev/null || true
done | sort -t "$TAB" -k1,1 | awk -F '\t' -v OFS='\t' '
  BEGIN {
    t["f"] = "file"; t["d"] = "dir"; t["l"] = "lnk_file"; t["c"] = "chr_file"
    t["b"] = "blk_file"; t["s"] = "sock_file"; t["p"] = "fifo_file"
    n = split("any file dir lnk_file chr_file blk_file sock_file fifo_file", all, " ")
  }
  {
    mode = ($2 in t) ? t[$2] : "any"
    print "lookup", mode, $1
    if (NR % 50 == 0)
      for (i = 1; i <= n; i++) print "lookup", all[i], $1
  }'
