#!/usr/bin/env bash
# Fetches the audit daemon the enforcement guest runs (tests/kernel/enforce/audit.sh): Debian's
# auditd package (auditd, auditctl, ausearch and its auditd.conf) and libwrap0, which auditd
# links and this machine need not have, unpacked into DIR (default target/kernel/auditd) without
# installing them here: an installed auditd would start on this machine and take its kernel's
# audit records. Idempotent: an unpacked tree is kept. Prints DIR.
set -euo pipefail
dir=${1:-target/kernel/auditd}
if [ -x "$dir/sbin/auditd" ] && [ -x "$dir/sbin/ausearch" ] && [ -e "$dir/etc/audit/auditd.conf" ]; then
  echo "$dir"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt-get download writes into the working directory, as the _apt user where it can.
chmod 777 "$tmp"
for pkg in auditd libwrap0; do
  if ! (cd "$tmp" && apt-get download -q "$pkg" > /dev/null 2>&1); then
    apt-get update -qq
    (cd "$tmp" && apt-get download -q "$pkg" > /dev/null 2>&1) || {
      echo "fetch-auditd: could not download $pkg" >&2; exit 1; }
  fi
done
rm -rf "$dir.part"
mkdir -p "$dir.part"
for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$dir.part"; done
rm -rf "$dir"
mv "$dir.part" "$dir"
echo "$dir"
