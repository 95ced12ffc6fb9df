#!/usr/bin/env bash
# Fetches the kernel the guest suites boot (tests/kernel): Debian bookworm's stock cloud kernel
# (linux-image-6.12-cloud-amd64, from bookworm-security), unpacked into DIR (default
# target/kernel) without installing it on this machine. Idempotent: a kernel already unpacked
# there is kept. Prints the path of the vmlinuz it leaves.
#
# The cloud flavour is the one the issue measured: SELinux and the BPF LSM built in, virtio
# built in, small. It has no 9p, so results come back over a serial port (tests/kernel/lib.sh).
set -euo pipefail
dir=${1:-target/kernel}
meta=linux-image-6.12-cloud-amd64
mkdir -p "$dir"
if [ -e "$dir/vmlinuz" ] && [ -e "$dir/config" ]; then
  echo "$dir/vmlinuz"
  exit 0
fi
# The versioned package the meta package points at today.
pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '/Depends: linux-image-/ {print $2; exit}')
if [ -z "$pkg" ]; then
  apt-get update -qq
  pkg=$(apt-cache depends "$meta" | awk '/Depends: linux-image-/ {print $2; exit}')
fi
[ -n "$pkg" ] || { echo "fetch-kernel: apt knows no $meta (is bookworm-security in the sources?)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# apt-get download writes into the working directory, as the _apt user where it can.
chmod 777 "$tmp"
(cd "$tmp" && apt-get download -q "$pkg" >/dev/null 2>&1) || {
  echo "fetch-kernel: could not download $pkg" >&2; exit 1; }
deb=$(ls "$tmp"/*.deb)
dpkg-deb -x "$deb" "$tmp/x"
cp "$tmp"/x/boot/vmlinuz-* "$dir/vmlinuz.part"
cp "$tmp"/x/boot/config-* "$dir/config"
echo "$pkg $(dpkg-deb -f "$deb" Version)" > "$dir/VERSION"
mv "$dir/vmlinuz.part" "$dir/vmlinuz"
echo "$dir/vmlinuz"
