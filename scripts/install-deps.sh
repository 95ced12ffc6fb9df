#!/usr/bin/env bash
# Installs what seaccess needs on a fresh Debian machine, and nothing already there.
# Run as root (or with sudo available). Idempotent.
set -euo pipefail

# python3-venv, python3-dev: the Python bindings' venv and build (scripts/python-venv.sh);
# python3-selinux: libselinux's bindings, the Python benchmark's peer.
# libpcre2-dev: crates/label matches file_contexts with the PCRE2 libselinux uses; attr
# (getfattr, setfattr): tests/label/cli.sh reads back the labels `seaccess label --apply` writes;
# selinux-utils (matchpathcon) and policycoreutils (setfiles -c): the labeling tests' peers.
# fuse3 (fusermount3, /etc/fuse.conf): `seaccess mount`; bindfs: the mount benchmark's peer.
# gcc, libc6-dev, make: tools/sepol-oracle. cbindgen, pkg-config: crates/capi (make capi, capi-header).
# selinux-policy-src, m4, python3, zstd: scripts/build-refpolicy.sh. fonts-dejavu-core: the
# lab's PNG plots (seaccess-lab lab). policycoreutils-python-utils (audit2why, audit2allow),
# checkmodule (checkpolicy), semodule_package (semodule-utils: seaccess allow -M) and setools
# (sesearch, seinfo): the policy tools' peers (tests/tools). sqlite3: sqlite in WAL mode on the
# mount (tests/mount/mmap.sh; its index is a shared memory map). qemu-system-x86, busybox-static,
# cpio: the guest suites (tests/kernel boot Debian's kernel, fetched by scripts/fetch-kernel.sh,
# on an initramfs of busybox and the SELinux tools). clang, libbpf-dev (bpf_helpers.h):
# crates/enforce's BPF object; libelf-dev, zlib1g-dev: the libbpf that libbpf-sys builds from its
# vendored source links them. man-db, lintian, bash-completion, zsh, fish: the installed pages, the
# Debian package and the completions, checked by tests/install (make install, make deb). systemd
# (systemd-journald, journalctl, systemd-analyze): the journal a mount's syslog records reach
# (tests/mount/syslog.sh runs its own journald on a private /run), the unit's verification and
# the systemd a guest boots as PID 1 (tests/kernel/systemd).
pkgs=(libsepol-dev libselinux1-dev libpcre2-dev attr fuse3 bindfs selinux-utils policycoreutils checkpolicy secilc selinux-policy-default selinux-policy-mls policycoreutils-python-utils time valgrind cbindgen pkg-config
      gcc libc6-dev make m4 python3 zstd selinux-policy-src python3-venv python3-dev python3-selinux fonts-dejavu-core setools semodule-utils sqlite3
      qemu-system-x86 busybox-static cpio clang libbpf-dev libelf-dev zlib1g-dev
      man-db lintian bash-completion zsh fish dpkg-dev systemd)
missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# A policy package can be installed while its compiled policy is not (a failed postinst).
for f in /etc/selinux/default/policy/policy.33 /etc/selinux/mls/policy/policy.33; do
  [ -e "$f" ] || { missing+=(selinux-policy-default selinux-policy-mls); break; }
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "install-deps: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "install-deps: cargo (Rust) is not installed; install it with rustup (https://rustup.rs) and re-run" >&2
  exit 1
fi
