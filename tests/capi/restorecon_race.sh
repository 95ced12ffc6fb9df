#!/usr/bin/env bash
# selinux_restorecon under the relabel race (issue 34), on libseaccess as libselinux's drop-in
# (target/libselinux/libselinux.so.1, tests/capi/dropin.sh): nobody owns 20 directories inside
# the tree Debian's `restorecon -RF` walks and swaps each, in turn and as fast as it can, with a
# symbolic link to a root-owned directory outside holding the same names (renameat2
# RENAME_EXCHANGE, tests/label/swap.c). Every label outside must stay as it was, byte for byte. Run as root by
# tests/capi/run.sh with the policy as $1; prints one ok/FAIL/SKIP line and exits 1 on FAIL.
set -uo pipefail
cd "$(dirname "$0")/../.."
POL=${1:?usage: restorecon_race.sh POLICY}
for need in restorecon runuser gcc getfattr setfattr; do
  command -v $need > /dev/null || { echo "SKIP: restorecon race: no $need"; exit 0; }
done
id nobody > /dev/null 2>&1 || { echo "SKIP: restorecon race: no user nobody"; exit 0; }
[ -e target/libselinux/libselinux.so.1 ] || { echo "FAIL: restorecon race: target/libselinux/libselinux.so.1 is missing (tests/capi/dropin.sh)"; exit 1; }
# Under /srv, whose paths file_contexts labels (var_t), unlike /tmp's.
A=$(mktemp -d /srv/seaccess-race.XXXXXX)
trap 'touch "$A/stop"; wait; rm -rf "$A"' EXIT
chmod 755 "$A"
gcc -O2 -Wall -o "$A/swap" tests/label/swap.c || { echo "FAIL: restorecon race: swap.c does not build"; exit 1; }
mkdir -p "$A/root/pub" "$A/out/secret"
pairs=()
for i in $(seq 20); do
  mkdir "$A/root/pub/d$i"; (cd "$A/root/pub/d$i" && seq -f 'f%g' 1 250 | xargs touch)
  ln -s "$A/out" "$A/root/pub/l$i"; pairs+=("$A/root/pub/d$i" "$A/root/pub/l$i")
done
(cd "$A/out" && seq -f 'f%g' 1 250 | xargs touch && touch secret/s)
chown -R nobody:nogroup "$A/root/pub"
(cd "$A/out" && find . -mindepth 1 | sed 's|^\./||') \
  | awk -v o="$A/out" '{print "# file: " o "/" $0; print "security.selinux=\"system_u:object_r:shadow_t:s0\""; print ""}' > "$A/labels"
setfattr -h --restore="$A/labels"
getfattr -R -h -d -m - --absolute-names "$A/out" > "$A/before" 2> /dev/null
runuser -u nobody -- timeout 300 "$A/swap" "$A/stop" "${pairs[@]}" > "$A/swaps" 2>&1 &
sw=$!
timedout=0
for _ in 1 2 3; do
  LD_LIBRARY_PATH=$PWD/target/libselinux SEACCESS_POLICY=$POL timeout 120 restorecon -RF "$A/root" > /dev/null 2>&1
  [ $? = 124 ] && timedout=1
done
touch "$A/stop"; wait $sw
getfattr -R -h -d -m - --absolute-names "$A/out" > "$A/after" 2> /dev/null
changed=$(diff "$A/before" "$A/after" | grep -c '^>')
# The runs did label the tree (a directory swapped at the wrong moment in every run may be
# missed: it is then a link, labelled as one).
inside=$(getfattr -R -h -n security.selinux --absolute-names "$A/root/pub" 2> /dev/null | grep -c '^security.selinux="system_u:object_r:var_t:s0"')
if [ "$timedout" = 0 ] && [ "$changed" = 0 ] && [ "$(cat "$A/swaps")" -gt 1000 ] 2> /dev/null && [ "$inside" -gt 250 ]; then
  echo "ok: restorecon -RF while nobody swapped its directories for links $(cat "$A/swaps") times: nothing outside relabelled ($(grep -c "^# file" "$A/labels") labels compared), $inside objects inside labelled"
else
  echo "FAIL: restorecon -RF under the swap race: $changed labels outside changed (timed out: $timedout; swaps: $(cat "$A/swaps"); inside: $inside)"
  exit 1
fi
