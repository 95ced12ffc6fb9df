#!/usr/bin/env bash
# What every command shares (issue 24, items 6 and 7): --json where the answer is data, help with
# an example and every argument described, unknown names answered with the nearest the policy
# has, and the installed policy when --policy is not given.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=./${SEACCESS_BUILD:-target/release}/seaccess
ORACLE=./target/oracle/sepol-oracle
POL=/etc/selinux/default/policy/policy.33
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source tests/tools/lib.sh
[ -e "$POL" ] || { echo "FAIL: Debian's default policy $POL is missing (make deps)"; exit 1; }
[ -x "$ORACLE" ] || { echo "FAIL: the oracle $ORACLE is missing (make oracle)"; exit 1; }
H=system_u:system_r:httpd_t:s0

# compute-av --json names the permissions the hex vectors hold (names from libsepol's own table).
"$ORACLE" gen "$POL" 5 300 > "$T/q"
"$ORACLE" perms "$POL" > "$T/perms"
$BIN compute-av -p "$POL" < "$T/q" > "$T/hex"
$BIN compute-av -p "$POL" --json < "$T/q" > "$T/json"
expect "compute-av --json: the same allowed, auditallow and dontaudit permissions as the hex answer, by libsepol's names" 'python3 - "$T/q" "$T/hex" "$T/json" "$T/perms" <<PY
import json, sys
q, hexes, js, perms = (open(f).read().splitlines() for f in sys.argv[1:])
names = {}
for l in perms:
    c, b, n = l.split()
    names[(c, int(b))] = n
for i, (query, h, j) in enumerate(zip(q, hexes, js)):
    j = json.loads(j)
    assert j["line"] == i + 1
    c = query.split()[2]
    allowed, _, auditallow, auditdeny = (int(x, 16) for x in h.split()[:4])
    want = lambda v: sorted(names[(c, b)] for b in range(32) if v >> b & 1 and (c, b) in names)
    assert sorted(j["allowed"]) == want(allowed), (query, j)
    assert sorted(j["auditallow"]) == want(auditallow), (query, j)
    assert sorted(j["dontaudit"]) == want(~auditdeny & 0xffffffff), (query, j)
assert len(js) == len(q) == 300
PY'
printf '%s\n' "$H system_u:object_r:var_log_t:s0 file access.log" "onlyonefield" | $BIN compute-create -p "$POL" --json > "$T/cc" 2>/dev/null
expect "compute-create --json: the context, and an error object for a line that cannot be answered" 'python3 -c "
import json, sys
a, b = (json.loads(l) for l in open(sys.argv[1]))
assert a[\"line\"] == 1 and a[\"context\"].count(\":\") >= 3, a
assert b == {\"line\": 2, \"error\": \"expected SCON TCON CLASS\"}, b
" "$T/cc"'

# check --json agrees with check's own text.
$BIN check -p "$POL" $H system_u:object_r:httpd_sys_content_t:s0 file read write > "$T/ct"; rc1=$?
$BIN check -p "$POL" --json $H system_u:object_r:httpd_sys_content_t:s0 file read write > "$T/cj"; rc2=$?
expect "check --json: the same answers and exit status as the text" '[ $rc1 -eq $rc2 ] && python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
text = open(sys.argv[2]).read().splitlines()
assert [p[\"perm\"] for p in j[\"perms\"]] == [\"read\", \"write\"]
for p, t in zip(j[\"perms\"], text):
    assert t.startswith(p[\"perm\"] + (\": allowed\" if p[\"allowed\"] else \": denied\")), (p, t)
    assert p[\"allowed\"] or p[\"reasons\"], p
assert j[\"allowed\"] == all(p[\"allowed\"] for p in j[\"perms\"])
" "$T/cj" "$T/ct"'

# Unknown names: what, and the nearest names the policy has.
$BIN check -p "$POL" $H system_u:object_r:etc_t:s0 file reed 2> "$T/e1"; rc=$?
expect "check: an unknown permission suggests the nearest (exit 2)" '[ $rc -eq 2 ] && grep -q "class file has no permission .reed.; did you mean read?" "$T/e1"'
$BIN check -p "$POL" system_u:system_r:htpd_t:s0 system_u:object_r:etc_t:s0 file read 2> "$T/e2"
expect "check: an unknown type in a context suggests the nearest" 'grep -q "unknown type htpd_t; did you mean httpd_t" "$T/e2"'
$BIN check -p "$POL" $H system_u:object_r:etc_t:s0 fiel read 2> "$T/e3"
expect "check: an unknown class suggests the nearest" 'grep -q "unknown class .fiel.; did you mean file?" "$T/e3"'
$BIN check -p "$POL" --bool httpd_enable_homdirs=1 $H system_u:object_r:etc_t:s0 file read 2> "$T/e4"
expect "--bool: an unknown boolean suggests the nearest" 'grep -q "unknown boolean .httpd_enable_homdirs.; did you mean httpd_enable_homedirs" "$T/e4"'
$BIN check -p "$POL" system_u:sysadm_r:httpd_t:s0 system_u:object_r:etc_t:s0 file read 2> "$T/e5"
expect "check: a context the policy refuses says why" 'grep -q "role sysadm_r may not hold type httpd_t" "$T/e5"'

# The installed policy by default, named on standard error.
$BIN check $H system_u:object_r:etc_t:s0 file read > /dev/null 2> "$T/e6"
expect "check: --policy defaults to the installed policy, named on standard error" 'grep -q "using the installed policy /etc/selinux/default/policy/policy.33" "$T/e6"'

# Help: every command whose answer is data documents --json, every tools command an example.
for c in check compute-av compute-create compute-relabel compute-member explain allow search info test diff; do
  $BIN $c --help > "$T/h" 2>&1
  expect "$c --help: an example and a description of each argument" 'grep -q "^Example" "$T/h" && ! grep -qE "^  <[A-Z]+>(\.\.\.)?\s*$" "$T/h"'
done
for c in check compute-av compute-create compute-relabel compute-member explain search info test diff; do
  expect "$c --help documents --json" '$BIN $c --help | grep -q -- "--json"'
done

summary cli
