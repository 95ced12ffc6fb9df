#!/bin/bash
# `seaccess test` (policy unit tests from TOML): the example cases for Debian's default policy pass
# and every case agrees with the peers (libsepol through sepol-oracle, libsepol's own boolean
# setting, setools, audit2why: tests/tools/cases_peer.py); the same cases turned around fail
# (exit 1), each failure agreeing with the peers too, with the engine's reason; JUnit XML and
# JSON parse; malformed files and unknown names exit 2 naming file:line and the nearest names.
# The peers are required (as in `make test`) unless SEACCESS_REQUIRE_ORACLE=0.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
BIN=./$BUILD/seaccess
ORACLE=./target/oracle/sepol-oracle
POL=/etc/selinux/default/policy/policy.33
EXAMPLE=examples/debian-default.tests.toml
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source tests/tools/lib.sh

[ -x "$BIN" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli
missing=""
[ -e "$POL" ] || missing="$missing Debian's default policy ($POL);"
[ -x "$ORACLE" ] || missing="$missing $ORACLE (make oracle);"
command -v sesearch >/dev/null || missing="$missing sesearch (setools);"
command -v audit2why >/dev/null || missing="$missing audit2why (policycoreutils-python-utils);"
$PY -c 'import setools, tomllib' 2>/dev/null || missing="$missing python3-setools for $PY;"
require_peers t-cases "seaccess test against its peers" "$missing"

# The example passes, and every case agrees with the peers.
"$BIN" test -p "$POL" "$EXAMPLE" --json --junit "$T/example.xml" > "$T/example.json" 2> "$T/example.err"; rc=$?
expect "the example cases pass (exit 0)" '[ $rc -eq 0 ]'
expect "nothing on standard error for the example" '[ ! -s "$T/example.err" ]'
expect "the example's JSON says every case passed" '$PY -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d[\"failed\"] == 0 and d[\"passed\"] == len(d[\"files\"][0][\"cases\"]) > 20))" "$T/example.json"'
$PY tests/tools/cases_peer.py "$POL" "$ORACLE" "$EXAMPLE" "$T/example.json" "$T" > "$T/peer1.out" 2>&1; rc=$?
sed 's/^/    /' "$T/peer1.out" | tail -3
expect "every example case agrees with libsepol and setools" '[ $rc -eq 0 ] && grep -q "0 disagreeing" "$T/peer1.out"'

# The same cases turned around (allow and deny swapped, each expected context replaced by the
# target's), with neverallows the policy breaks added: each fails, and agrees with the peers.
$PY - "$EXAMPLE" > "$T/flipped.toml" <<'PYEOF'
import json, sys, tomllib
cases = tomllib.load(open(sys.argv[1], 'rb'))
q = json.dumps
def table(kind, c):
    print(f"[[{kind}]]")
    for k, v in c.items():
        if k == 'with_booleans':
            print("with_booleans = { " + ", ".join(f"{n} = {str(b).lower()}" for n, b in v.items()) + " }")
        else:
            print(f"{k} = {q(v)}")
    print()
for kind, other in (('allow', 'deny'), ('deny', 'allow')):
    for c in cases.get(kind, []):
        table(other, c)
for kind in ('create', 'relabel', 'member'):
    for c in cases.get(kind, []):
        table(kind, dict(c, expect=c['tcontext']))
for c in cases.get('neverallow', []):
    table('neverallow', c)
table('neverallow', {'name': 'no domain writes the shadow file', 'source': 'domain', 'target': 'shadow_t', 'classes': ['file'], 'perms': ['write']})
table('neverallow', {'name': 'no confined domain loads modules', 'source': ['domain', '-unconfined_t'], 'target': 'self', 'classes': ['capability'], 'perms': ['sys_module', 'sys_rawio']})
table('neverallow', {'name': 'passwd_t nothing on shadow', 'source': 'passwd_t', 'target': 'shadow_t', 'classes': ['file', 'dir'], 'perms': ['*']})
table('neverallow', {'name': 'httpd connects nowhere', 'source': 'httpd_t', 'target': 'port_type', 'classes': ['tcp_socket'], 'perms': ['name_connect']})
table('neverallow', {'name': 'httpd connects nowhere, network booleans on', 'source': 'httpd_t', 'target': 'port_type', 'classes': ['tcp_socket'], 'perms': ['name_connect'],
                     'with_booleans': {'httpd_can_network_connect': True, 'httpd_can_network_relay': True}})
PYEOF
"$BIN" test -p "$POL" "$T/flipped.toml" --json --junit "$T/flipped.xml" > "$T/flipped.json" 2> "$T/flipped.err"; rc=$?
expect "cases that fail exit 1" '[ $rc -eq 1 ]'
expect "every turned-around case fails" '$PY -c "import json,sys; d=json.load(open(sys.argv[1])); c=d[\"files\"][0][\"cases\"]; sys.exit(not (d[\"passed\"] == 3 and d[\"failed\"] == len(c) - 3 and [x[\"title\"] for x in c if x[\"passed\"]] == [x[\"title\"] for x in c if x[\"kind\"] == \"neverallow\"][:3]))" "$T/flipped.json"'
$PY tests/tools/cases_peer.py "$POL" "$ORACLE" "$T/flipped.toml" "$T/flipped.json" "$T" > "$T/peer2.out" 2>&1; rc=$?
sed 's/^/    /' "$T/peer2.out" | grep -v "^    ok:" | tail -12
expect "every failing case agrees with libsepol, setools and audit2why" '[ $rc -eq 0 ] && grep -q "0 disagreeing" "$T/peer2.out" && grep -q "audit2why" "$T/peer2.out"'

# A few real sesearch runs on what a failing neverallow listed: each pair has an allow rule.
"$BIN" test -p "$POL" "$T/flipped.toml" > "$T/flipped.txt"
grep -o 'allow [a-z_]* shadow_t:file { write };' "$T/flipped.txt" | awk '{print $2}' | sort -u > "$T/writers"
expect "the shadow neverallow lists its writers" '[ $(wc -l < "$T/writers") -ge 5 ]'
for s in $(shuf -n 3 --random-source=<(yes) "$T/writers"); do
  expect "sesearch finds an allow rule for $s writing shadow_t" 'sesearch -A -s "$s" -t shadow_t -c file -p write "$POL" | grep -q "^allow "'
done
expect "sesearch finds none for httpd_t, which the example's neverallow clears" '! sesearch -A -s httpd_t -t shadow_t -c file -p write "$POL" | grep -q "^allow "'

# The text report: each failure with what was expected, what the engine answered and why.
expect "a failing allow reports the engine's reason" 'grep -A2 "FAIL allow      the web server cannot read the shadow file" "$T/flipped.txt" | grep -q "read: denied: no allow rule"'
expect "a failing allow names the booleans" 'grep -q "name_connect: denied: allowed only by a conditional rule whose condition is false (booleans: httpd_can_network_connect, httpd_can_network_relay)" "$T/flipped.txt"'
expect "a failing deny names what is allowed" 'grep -A3 "FAIL deny       sshd reads its host keys" "$T/flipped.txt" | grep -q "expected denied read open getattr; got allowed read open getattr"'
expect "a failing case names its file and line" 'grep -q "FAIL create     sshd.s temporary files ($T/flipped.toml:[0-9]*)" "$T/flipped.txt"'
expect "the text report ends with the counts" 'tail -1 "$T/flipped.txt" | grep -Eq "^3 passed, [0-9]+ failed$"'

# JUnit XML: one testsuite per file, one testcase per case, a failure for each failing case.
expect "JUnit XML parses and counts the cases" '$PY - "$T/example.xml" "$T/flipped.xml" "$T/example.json" "$T/flipped.json" <<"PYEOF"
import json, sys, xml.etree.ElementTree as ET
for x, j in ((sys.argv[1], sys.argv[3]), (sys.argv[2], sys.argv[4])):
    root, d = ET.parse(x).getroot(), json.load(open(j))
    suites = root.findall("testsuite")
    cases = suites[0].findall("testcase")
    failures = [c for c in cases if c.find("failure") is not None]
    assert root.tag == "testsuites" and len(suites) == 1, x
    assert len(cases) == len(d["files"][0]["cases"]) and int(suites[0].get("tests")) == len(cases), x
    assert len(failures) == d["failed"] == int(suites[0].get("failures")), x
    assert [c.get("name") for c in cases] == [o["title"] for o in d["files"][0]["cases"]], x
    assert {c.get("classname") for c in cases} == {"allow", "deny", "create", "relabel", "member", "neverallow"}, x
    for c in failures:
        assert c.find("failure").get("message").startswith("expected "), x
PYEOF'
# Two files: two suites; names with XML's special characters escaped.
printf '[[allow]]\nname = "a <b> & \\"c\\" \\u0001"\nscontext = "system_u:system_r:sshd_t:s0"\ntcontext = "system_u:object_r:shadow_t:s0"\nclass = "file"\nperms = ["read"]\n' > "$T/odd.toml"
"$BIN" test -p "$POL" "$EXAMPLE" "$T/odd.toml" --junit "$T/two.xml" > "$T/two.txt"; rc=$?
expect "two files, one failing: exit 1" '[ $rc -eq 1 ]'
expect "two files give two suites, special characters escaped" '$PY -c "import sys, xml.etree.ElementTree as ET; r=ET.parse(sys.argv[1]).getroot(); s=r.findall(\"testsuite\"); sys.exit(not (len(s) == 2 and s[1].find(\"testcase\").get(\"name\") == \"a <b> & \\\"c\\\" \ufffd\"))" "$T/two.xml"'

# Errors: exit 2, file:line, what, and the nearest names; no results.
err() { "$BIN" test -p "$POL" "$1" > "$T/err.out" 2> "$T/err.txt"; echo $?; }
printf '[[allow]]\nscontext = "system_u:system_r:sshd_t:s0"\ntcontext = "system_u:object_r:sshd_key_t:s0"\nclass = "fille"\nperms = ["read"]\n' > "$T/e1.toml"
expect "an unknown class: exit 2, file:line and a suggestion" '[ $(err "$T/e1.toml") -eq 2 ] && grep -q "e1.toml:4: unknown class \"fille\"; did you mean file?" "$T/err.txt" && [ ! -s "$T/err.out" ]'
printf '[[deny]]\nscontext = "system_u:system_r:sshd_t:s0"\ntcontext = "system_u:object_r:sshd_key_t:s0"\nclass = "file"\nperms = ["read",\n  "wrte"]\n' > "$T/e2.toml"
expect "an unknown permission: exit 2, its own line and a suggestion" '[ $(err "$T/e2.toml") -eq 2 ] && grep -q "e2.toml:6: class file has no permission \"wrte\"; did you mean write?" "$T/err.txt"'
printf '[[allow]]\nscontext = "system_u:system_r:sshd_t:s0"\ntcontext = "system_u:object_r:sshd_key_t:s0"\nclass = "file"\nperms = ["read"\n' > "$T/e3.toml"
expect "malformed TOML: exit 2 with file:line" '[ $(err "$T/e3.toml") -eq 2 ] && grep -Eq "e3.toml:[56]: " "$T/err.txt"'
printf '[[allow]]\nscontext = "system_u:system_r:htpd_t:s0"\ntcontext = "system_u:object_r:sshd_key_t:s0"\nclass = "file"\nperms = ["read"]\nwith_booleans = { httpd_can_network_conect = true }\n\n[[neverallow]]\nsource = "domian"\ntarget = "shadow_t"\nclasses = "file"\nperms = "write"\n' > "$T/e4.toml"
expect "every unknown name reported, each with its line and suggestion" '[ $(err "$T/e4.toml") -eq 2 ] && grep -q "e4.toml:2: invalid context \"system_u:system_r:htpd_t:s0\": unknown type htpd_t; did you mean httpd_t" "$T/err.txt" && grep -q "e4.toml:6: unknown boolean \"httpd_can_network_conect\"; did you mean httpd_can_network_connect" "$T/err.txt" && grep -q "e4.toml:9: unknown type or attribute \"domian\"; did you mean domain?" "$T/err.txt"'
printf '[[allow]]\nscontext = "a"\nperm = ["read"]\n' > "$T/e5.toml"
expect "an unknown field: exit 2 with its line" '[ $(err "$T/e5.toml") -eq 2 ] && grep -q "e5.toml:3: unknown field .perm." "$T/err.txt"'
expect "a missing file: exit 2" '[ $(err "$T/none.toml") -eq 2 ] && grep -q "none.toml" "$T/err.txt"'
expect "--help shows the format and an example" '"$BIN" test --help | grep -q "\[\[neverallow\]\]" && "$BIN" test --help | grep -q "^Example:" && "$BIN" test --help | grep -q -- "--junit <FILE>"'

summary t-cases
