# What tests/tools/t-*.sh share, sourced after each has gone to the repository root: the
# pass/fail counts and `expect`, the peers check, and the summary line that ends a script.
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok: $1"; }
bad() { fail=$((fail + 1)); echo "FAIL: $1"; }
# expect WHAT TEST: TEST (a shell expression, evaluated) passes or fails WHAT.
expect() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
# summary NAME: the counts, and the script's status (0 when nothing failed).
summary() { echo "$1: $pass passed, $fail failed"; [ "$fail" -eq 0 ]; }
# require_peers NAME WHAT MISSING: nothing when MISSING (each "what (how);") is empty; else a
# failure when the peers are required (SEACCESS_REQUIRE_ORACLE, 1 unless set otherwise, as in
# `make test`), a SKIP line naming them otherwise; then the summary, and the script ends.
require_peers() {
  [ -z "$3" ] && return 0
  if [ "${SEACCESS_REQUIRE_ORACLE:-1}" = 1 ]; then
    bad "the peers are required but missing:$3"
  else
    echo "SKIP: $2: missing$3"
  fi
  summary "$1"
  exit
}
