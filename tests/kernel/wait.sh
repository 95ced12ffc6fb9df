#!/usr/bin/env bash
# Waits for the guest suites `make test` started in the background beside the host's suites
# (PREFIX.rc appears when they end), prints their output (PREFIX.log) and exits with their
# status. Usage: tests/kernel/wait.sh PREFIX
set -uo pipefail
prefix=$1
deadline=$((SECONDS + 3600))
until [ -e "$prefix.rc" ]; do
  if [ $SECONDS -ge $deadline ]; then
    echo "the guest suites did not end within an hour"; cat "$prefix.log" 2>/dev/null; exit 1
  fi
  sleep 1
done
cat "$prefix.log"
exit "$(cat "$prefix.rc")"
