#!/bin/bash
# `seaccess search` and `seaccess info` against setools 4.4, their peers: a few hundred sesearch
# queries drawn with a fixed seed from Debian's default policy (types, attributes, classes,
# permissions, booleans, roles, ranges taken from its own rules) answered by setools in one
# process (tests/tools/search_oracle.py runs sesearch's own code over setools' rules) and by
# seaccess, compared as sets of rule lines, conditional rules' enabled state against setools'
# rule.enabled(); a dozen of them through the real sesearch, byte for byte; seinfo's listings,
# every entry; test policies with extended permissions, conditionals, aliases and MLS ranges
# against the real sesearch and seinfo; unknown names (exit 2, nearest names), --json.
# The peers are required (as in `make test`) unless SEACCESS_REQUIRE_ORACLE=0.
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD=${SEACCESS_BUILD:-target/release}
BIN=./$BUILD/seaccess
POL=/etc/selinux/default/policy/policy.33
MLS=/etc/selinux/mls/policy/policy.33
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source tests/tools/lib.sh
# How many generated queries (a few hundred: each costs setools a pass over the rules).
COUNT=${SEARCH_QUERIES:-250}

[ -x "$BIN" ] || cargo build --profile "${BUILD##*/}" -q -p seaccess-cli
missing=""
[ -e "$POL" ] || missing="$missing Debian's default policy ($POL);"
[ -e "$MLS" ] || missing="$missing Debian's MLS policy ($MLS);"
command -v sesearch >/dev/null || missing="$missing sesearch (setools);"
command -v seinfo >/dev/null || missing="$missing seinfo (setools);"
command -v secilc >/dev/null || missing="$missing secilc;"
$PY -c 'import setools' 2>/dev/null || missing="$missing python3-setools for $PY;"
require_peers t-search "seaccess search and info against setools" "$missing"

# The generated queries: setools' answers, then seaccess's, a dozen also through sesearch.
if $PY tests/tools/search_oracle.py --generate 24 "$COUNT" "$POL" "$T/answers.json"; then
  if $PY tests/tools/search_compare.py "$BIN" "$POL" "$T/answers.json" --real 6 > "$T/cmp" 2>&1; then
    ok "search: $COUNT generated queries agree with setools and 6 with sesearch itself"
  else
    bad "search: generated queries differ from setools or sesearch"
  fi
  sed 's/^/   /' "$T/cmp" | head -80
else
  bad "search: setools could not answer the generated queries"
fi

# seinfo's listings: every type, attribute, role, user, class and boolean, statement for statement.
$PY tests/tools/search_oracle.py --seinfo "$POL" "$T/seinfo.json"
$BIN info "$POL" -b -c -r -t -a -u --json > "$T/info.json"
$PY - "$T/seinfo.json" "$T/info.json" > "$T/icmp" <<'PY'
import json, sys
want, got = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
keys = {"b": "booleans", "c": "classes", "r": "roles", "t": "types", "a": "attributes", "u": "users"}
bad = 0
for k, key in keys.items():
    w = [(i["name"], i["statement"]) for i in want[k]]
    g = [(i["name"], i["statement"]) for i in got[key]]
    diff = [x for x in w if x not in set(g)] + [x for x in g if x not in set(w)]
    bad += len(diff)
    print("{}: {} in setools, {} in seaccess, {} different{}".format(key, len(w), len(g), len(diff), ": " + repr(diff[:3]) if diff else ""))
sys.exit(1 if bad else 0)
PY
rc=$?
expect "info: every entry's statement is setools' ($(tr '\n' ' ' < "$T/icmp"))" '[ $rc -eq 0 ]'

# By name (aliases naming their type) and whole listings, through the real seinfo byte for byte.
same=0 n=0
for q in "-t sbin_t -x" "-a cron_job_domain -x" "-c file -x" "-u staff_u -x" "-r xdm_r -x" "-b httpd_enable_cgi -x" "-t -a -r -u -c -b"; do
  n=$((n + 1))
  # shellcheck disable=SC2086
  seinfo "$POL" $q > "$T/a" 2>&1
  # shellcheck disable=SC2086
  $BIN info "$POL" $q > "$T/b" 2>&1
  if cmp -s "$T/a" "$T/b"; then same=$((same + 1)); else echo "   seinfo $q differs:"; diff "$T/a" "$T/b" | head -5 | sed 's/^/   /'; fi
done
expect "info: $same of $n seinfo runs printed byte for byte as seinfo prints them" '[ $same -eq $n ]'

# Test policies (extended permissions, conditionals, aliases and holes, no MLS, MLS ranges):
# every rule kind, and the extended-permission criteria, against sesearch's code in setools (the
# xperms and booleans policies also through the real sesearch, byte for byte); every listing.
ALL='"-A", "--auditallow", "--dontaudit", "--auditallowxperm", "--dontauditxperm", "-T", "--type_change", "--type_member", "--role_allow", "--role_trans", "--range_trans"'
XQ=', {"args": ["-A", "-x", "0x5401"]}, {"args": ["--allowxperm", "-x", "0x8900-0x89ff", "-ex"]}, {"args": ["-A", "-p", "ioctl", "-s", "dom_t"]}, {"args": ["--dontauditxperm", "-x", "0x7700"]}, {"args": ["--allowxperm", "--auditallowxperm", "-s", "dom_t", "-c", "chr_file"]}'
NAMES="xperms xperms_kinds booleans holes nonmls mls permissive transitions"
jobs=""
for name in $NAMES; do
  src=testdata/policies/$name.cil
  mlsopt=true
  grep -q '^; mls: false' "$src" && mlsopt=false
  secilc -c 33 -M $mlsopt -f /dev/null -o "$T/$name.33" "$src" > /dev/null 2>&1 || bad "secilc could not build $src"
  case $name in xperms*) extra=$XQ ;; *) extra='' ;; esac
  jobs="$jobs${jobs:+, }{\"policy\": \"$T/$name.33\", \"out\": \"$T/$name.a\", \"seinfo\": \"$T/$name.si\", \"queries\": [{\"args\": [$ALL]}, {\"args\": [$ALL], \"values\": {}}$extra]}"
done
echo "[$jobs]" > "$T/jobs.json"
$PY tests/tools/search_oracle.py --many "$T/jobs.json" || bad "setools could not answer on the test policies"
for name in $NAMES; do
  $PY tests/tools/search_compare.py "$BIN" "$T/$name.33" "$T/$name.a" > "$T/$name.cmp" 2>&1
  rc=$?
  expect "search on test policy $name agrees with setools ($(grep "rule lines" "$T/$name.cmp" | cut -d: -f2-))" '[ $rc -eq 0 ] || { cat "$T/$name.cmp"; false; }'
  $BIN info "$T/$name.33" -b -c -r -t -a -u --json > "$T/$name.ij"
  $PY - "$T/$name.si" "$T/$name.ij" <<'PY'
import json, sys
want, got = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
keys = {"b": "booleans", "c": "classes", "r": "roles", "t": "types", "a": "attributes", "u": "users"}
sys.exit(any([(i["name"], i["statement"]) for i in want[k]] != [(i["name"], i["statement"]) for i in got[key]] for k, key in keys.items()))
PY
  rc=$?
  expect "info on test policy $name: every entry's statement is setools'" '[ $rc -eq 0 ]'
done
for x in "$T/xperms.33" "$T/booleans.33" "$MLS"; do
  q="-A --dontaudit --allowxperm -T --role_trans --range_trans"
  [ "$x" = "$MLS" ] && q="--range_trans"
  # shellcheck disable=SC2086
  sesearch $q "$x" > "$T/a" 2>&1
  # shellcheck disable=SC2086
  $BIN search $q "$x" > "$T/b" 2>&1
  expect "search $q on ${x##*/} prints what the real sesearch prints, byte for byte ($(wc -l < "$T/a") lines)" 'cmp -s "$T/a" "$T/b"'
done
xr=$($BIN search --allowxperm "$T/xperms.33" | wc -l)
expect "the extended-permission policy has allowxperm rules to compare ($xr)" '[ "$xr" -gt 0 ]'

# --state and --enabled: the rules in effect are the unconditional ones and those marked enabled.
$BIN search -A -b httpd_enable_cgi=1 -t httpd_sys_script_exec_t --state "$POL" > "$T/state"
$BIN search -A -b httpd_enable_cgi=1 -t httpd_sys_script_exec_t --enabled "$POL" > "$T/enabled"
grep -v ' # disabled$' "$T/state" | sed 's/ # enabled$//' > "$T/state_on"
expect "--enabled lists the unconditional rules and those --state marks enabled ($(wc -l < "$T/enabled") of $(wc -l < "$T/state"))" \
  'cmp -s "$T/state_on" "$T/enabled" && grep -q " # disabled$" "$T/state" && grep -q " # enabled$" "$T/state"'
$BIN search -A -t httpd_sys_script_exec_t "$POL" > "$T/plain"
sed 's/ # \(en\|dis\)abled$//' "$T/state" > "$T/state_lines"
expect "--state leaves sesearch's line as it was" 'cmp -s "$T/state_lines" "$T/plain"'

# --json: the same rules, as objects.
$BIN search -A -s sshd_t -c file "$POL" > "$T/text"
$BIN search -A -s sshd_t -c file --json "$POL" > "$T/json"
expect "search --json holds the same rules, each with its parts" \
  "$PY -c 'import json,sys; r=json.load(open(sys.argv[1]))[\"rules\"]; t=open(sys.argv[2]).read().splitlines(); sys.exit(not (r and [x[\"line\"] for x in r]==t and all(x[\"source\"] and x[\"class\"]==\"file\" and x[\"perms\"] for x in r)))' '$T/json' '$T/text'"
$BIN info "$POL" -t sshd_t --json > "$T/ij"
expect "info --json gives a type's attributes" "$PY -c 'import json,sys; t=json.load(open(sys.argv[1]))[\"types\"]; sys.exit(not (t[0][\"name\"]==\"sshd_t\" and \"domain\" in t[0][\"attributes\"]))' '$T/ij'"

# Unknown names: exit 2 with the nearest names; no rule type: exit 2.
err() { "$BIN" "$@" > /dev/null 2> "$T/err"; echo "$? $(cat "$T/err")"; }
for c in "search -A -s shd_t $POL|2 unknown type or attribute shd_t; did you mean rshd_t or sshd_t?" \
         "search -A -c fille $POL|2 unknown class fille; did you mean file" \
         "search -A -c file -p reed $POL|2 unknown permission reed in the selected classes; did you mean read" \
         "search -A -b httpd_enable_cgl $POL|2 unknown boolean httpd_enable_cgl; did you mean httpd_enable_cgi" \
         "search -A -b httpd_enable_cgl=1 $POL|2 unknown boolean httpd_enable_cgl; did you mean httpd_enable_cgi" \
         "search --role_allow -s sysadm $POL|2 unknown role, type or attribute sysadm; did you mean sysadm_r" \
         "search -s sshd_t $POL|2 at least one rule type" \
         "info $POL -u staf_u|2 unknown user staf_u; did you mean staff_u" \
         "info $POL -r sysadm|2 unknown role sysadm; did you mean sysadm_r" \
         "info $POL -t domain|2 domain is an attribute, not a type" \
         "info $POL -c fille|2 unknown class fille; did you mean file"; do
  args=${c%%|*} want=${c#*|}
  # shellcheck disable=SC2086
  got=$(err $args)
  expect "seaccess $args: exit and message '$want'" '[[ "$got" == "${want%% *} "*"${want#* }"* ]]'
done

summary t-search
