#!/usr/bin/env bash
# Builds Debian's reference policy source (package selinux-policy-src) monolithic with checkpolicy,
# as the standard, mcs and mls policy types, into OUTDIR/{standard,mcs,mls}.bin. The differential
# tests compare seaccess with libsepol on them: policies built the classic way (role attributes,
# checkpolicy's symbol numbering) rather than by semodule from modules, as /etc/selinux's are.
#
#   scripts/build-refpolicy.sh OUTDIR
#
# Cached: nothing is rebuilt while OUTDIR/stamp matches the source tarball, checkpolicy and this
# script. Fails (exit non-zero) when the source or a build step is missing.
set -euo pipefail

out=${1:?usage: $0 OUTDIR}
src=""
for f in /usr/src/selinux-policy-src.tar.zst /usr/src/selinux-policy-src.tar.gz /usr/src/selinux-policy-src.tar.xz; do
  [ -e "$f" ] && { src=$f; break; }
done
[ -n "$src" ] || { echo "build-refpolicy: Debian's selinux-policy-src is not installed (run scripts/install-deps.sh)" >&2; exit 1; }
for tool in checkpolicy m4 python3 make; do
  command -v "$tool" >/dev/null || { echo "build-refpolicy: $tool not found (run scripts/install-deps.sh)" >&2; exit 1; }
done

stamp="$(sha256sum "$src" | cut -d' ' -f1) $(checkpolicy -V | head -1) $(sha256sum "$0" | cut -d' ' -f1)"
types=(standard mcs mls)
fresh=1
for t in "${types[@]}"; do [ -s "$out/$t.bin" ] || fresh=0; done
if [ $fresh = 1 ] && [ "$(cat "$out/stamp" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi

mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/refpolicy.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/src"
tar -xf "$src" -C "$work/src"
top=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d | head -1)
[ -f "$top/Makefile" ] || { echo "build-refpolicy: no Makefile at the top of $src" >&2; exit 1; }

rm -f "$out/stamp"
for t in "${types[@]}"; do
  start=$SECONDS
  cp -r "$top" "$work/$t"
  # `make policy` writes policy.conf from every module in modules.conf and compiles it with
  # checkpolicy at the newest version it supports.
  if ! make -s -C "$work/$t" -j"$(nproc)" policy TYPE="$t" MONOLITHIC=y NAME="$t" QUIET=y >"$work/$t.log" 2>&1; then
    tail -30 "$work/$t.log" >&2
    echo "build-refpolicy: building the $t policy failed" >&2
    exit 1
  fi
  bin=$(find "$work/$t" -maxdepth 1 -name 'policy.[0-9]*' | head -1)
  [ -n "$bin" ] || { echo "build-refpolicy: the $t build wrote no policy.NN" >&2; exit 1; }
  cp "$bin" "$out/.$t.bin.tmp" && mv "$out/.$t.bin.tmp" "$out/$t.bin"
  echo "build-refpolicy: $t ($(basename "$bin")) in $((SECONDS - start)) s" >&2
  rm -rf "$work/$t"
done
echo "$stamp" > "$out/stamp"
