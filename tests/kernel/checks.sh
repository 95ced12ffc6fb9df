# The checks a guest suite counts (sourced as /suite/checks.sh by tests/kernel/enforce/smoke.sh,
# audit.sh and tests/kernel/systemd/guest.sh): one line per check, "ok - WHAT" or "FAIL - WHAT";
# each suite prints its own summary from $checks and $failed.
checks=0
failed=0
check() { # check WHAT CONDITION...: one check, named WHAT, passing when CONDITION succeeds
  what=$1
  shift
  checks=$((checks + 1))
  if "$@"; then echo "ok - $what"; else failed=$((failed + 1)); echo "FAIL - $what"; fi
}
# has TEXT PATTERN: TEXT has a line matching PATTERN.
has() { echo "$1" | grep -q -- "$2"; }
# denied STATUS OUTPUT: a command refused its read of a secret: it failed, said "Permission
# denied", and printed nothing of the secret (whose files hold the word "secret").
denied() { [ "$1" -ne 0 ] && has "$2" 'Permission denied' && ! has "$2" secret; }
