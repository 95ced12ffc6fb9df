#!/usr/bin/env bash
# The host's SELinux configuration is never written by the suites (issue 35: nothing under
# `seaccess run` writes /etc/selinux or /var/lib/selinux): `save FILE` before them, `compare
# FILE` after; paths, types, modes, sizes, modification times and sha256 of every file.
set -uo pipefail
snapshot() {
  find /etc/selinux /var/lib/selinux -printf '%p %y %m %s %T@\n' 2>/dev/null | sort
  find /etc/selinux /var/lib/selinux -type f -exec sha256sum {} + 2>/dev/null | sort
}
case "${1:-}" in
  save) mkdir -p "$(dirname "$2")" && snapshot > "$2" ;;
  compare)
    [ -s "$2" ] || { echo "FAIL: no snapshot $2 (host_roots.sh save first)"; exit 1; }
    if diff <(cat "$2") <(snapshot) > "$2.diff"; then
      echo "ok: the host's /etc/selinux and /var/lib/selinux are byte- and time-identical after every suite"
    else
      echo "FAIL: the suites changed the host's /etc/selinux or /var/lib/selinux:"; head -20 "$2.diff"; exit 1
    fi ;;
  *) echo "usage: $0 save|compare FILE" >&2; exit 2 ;;
esac
