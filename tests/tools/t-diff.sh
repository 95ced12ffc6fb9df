#!/usr/bin/env bash
# `seaccess diff` against its peers: the rule diff against sediff (setools 4.4) on the test pair
# testdata/policies/diff_old.cil / diff_new.cil, both ways; the smart decision diff against the
# exhaustive one (every triple) and both against libsepol (the sepol oracle) over every triple of
# the pair; on Debian's default policy against a copy changed through policy.conf (a rule's
# permissions, a rule added, a boolean default, an attribute's member): the answer's time, the
# reported triples and a sample of unreported ones against libsepol, a brute-force slice of the
# changed source type against the smart set, --sample, the one-policy --bool mode against a
# policy compiled with that boolean flipped; --replay against libsepol on both pairs; errors.
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=./${SEACCESS_BUILD:-target/release}/seaccess
ORACLE=${SEACCESS_ORACLE:-target/oracle/sepol-oracle}
POL=/etc/selinux/default/policy/policy.33
PY=/usr/bin/python3 # setools is Debian's python3-setools, for the system's Python
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
source tests/tools/lib.sh
for need in sediff secilc checkpolicy "$ORACLE" "$POL"; do
  if ! command -v "$need" >/dev/null && [ ! -e "$need" ]; then
    echo "FAIL: $need is missing (make deps / make oracle)"; exit 1
  fi
done
$PY -c 'import setools' 2>/dev/null || { echo "FAIL: python3-setools is missing (make deps)"; exit 1; }

for n in diff_old diff_new; do
  secilc -c 33 -M true -N -o "$T/$n.33" -f /dev/null "testdata/policies/$n.cil" || { echo "FAIL: secilc $n"; exit 1; }
done
O=$T/diff_old.33 N=$T/diff_new.33

# --- The rule diff against sediff, both ways and a policy against itself.
for pair in "$O $N" "$N $O" "$O $O"; do
  set -- $pair
  sediff "$1" "$2" > "$T/sediff" 2>&1
  $BIN diff "$1" "$2" --rules-only --expand --json > "$T/rules.json"
  same=$([ "$1" = "$2" ] && echo same || echo differ)
  expect "rules: the same added, removed and modified rules as sediff ($(basename "$1") -> $(basename "$2"))" '$PY - "$T/sediff" "$T/rules.json" "$same" <<"PY"
import json, re, sys
sed = open(sys.argv[1]).read().splitlines()
me = json.load(open(sys.argv[2]))
# sediff: the sections of rules, each line + (added), - (removed) or * (modified).
section = None
av, other = set(), set()
kinds = {"Allow Rules": "allow", "Auditallow Rules": "auditallow", "Dontaudit Rules": "dontaudit",
         "Type_transition Rules": "type_transition", "Type_change Rules": "type_change", "Type_member Rules": "type_member",
         "Role allow Rules": "role_allow", "Role_transition Rules": "role_transition", "Range_transition Rules": "range_transition"}
for l in sed:
    m = re.match(r"^(\S.*?) \(\d+ Added", l)
    if m:
        section = kinds.get(m.group(1))
        continue
    m = re.match(r"^      ([-+*]) (.*)$", l)
    if not m or section is None:
        continue
    sign, text = m.groups()
    if section in ("allow", "auditallow", "dontaudit"):
        # sediff writes a modified conditional rule without its branch.
        r = re.match(r"^(\w+) (\S+) (\S+):(\S+) (\{ [^}]* \}|\S+);(?: \[ (.*) \](?::(True|False))?)?$", text)
        assert r, text
        kw, s, t, c, perms, cond, br = r.groups()
        words = perms.strip("{} ").split()
        plain = frozenset(w for w in words if w[0] not in "+-")
        plus = frozenset(w[1:] for w in words if w[0] == "+")
        minus = frozenset(w[1:] for w in words if w[0] == "-")
        if sign == "+": plus, plain = plain, frozenset()
        if sign == "-": minus, plain = plain, frozenset()
        av.add((kw, s, t, c, cond, br == "True" if br else None, plus, minus, plain))
    elif sign == "*":
        # A modified type or range rule: its old default out, its new one in.
        r = re.match(r"^(.*) \+(\S+) -(\S+);$", text)
        assert r, text
        other.add((section, "+", f"{r.group(1)} {r.group(2)};"))
        other.add((section, "-", f"{r.group(1)} {r.group(3)};"))
    else:
        other.add((section, sign, text))
mine_av = {(x["ruletype"], x["source"], x["target"], x["class"], x.get("conditional"), None if x["status"] == "modified" else x.get("branch"),
            frozenset(x["added"]), frozenset(x["removed"]), frozenset(x["kept"])) for x in me["expanded"]}
mine_other = set()
for r in me["rules"]:
    if r["ruletype"] in ("allow", "auditallow", "dontaudit", "allowxperm", "auditallowxperm", "dontauditxperm"):
        continue
    mine_other |= {(r["ruletype"], "+", l) for l in r["added"]} | {(r["ruletype"], "-", l) for l in r["removed"]}
assert av == mine_av, ("av", sorted(av ^ mine_av, key=str))
assert other == mine_other, ("other", sorted(other ^ mine_other))
assert bool(av and other) == (sys.argv[3] == "differ"), (av, other)
PY'
done

# --- Decisions: smart against every triple, and every triple against libsepol.
$BIN diff "$O" "$N" --json > "$T/smart.json"
$BIN diff "$O" "$N" --all --json > "$T/all.json"
$BIN diff "$N" "$O" --json > "$T/smart_rev.json"
$BIN diff "$N" "$O" --all --json > "$T/all_rev.json"
cat > "$T/oracle.py" <<"PY"
# The documented representative context of each type, from setools (an implementation apart
# from seaccess's), and libsepol's decisions for triples, by permission name.
import setools, subprocess

def contexts(path):
    p = setools.SELinuxPolicy(path)
    roles = sorted(((str(r), {str(t) for t in r.types()}) for r in p.roles() if str(r) != "object_r"), key=lambda r: (r[0] != "system_r", r[0]))
    users = sorted(((str(u), {str(r) for r in u.roles}, str(u.mls_level)) for u in p.users()), key=lambda u: (u[0] != "system_u", u[0]))
    out = {}
    for t in p.types():
        t = str(t)
        # The first role (system_r first) that has the type and a user (system_u first); object_r.
        for role in [r for r, ts in roles if t in ts] + ["object_r"]:
            user = next((u for u in users if role == "object_r" or role in u[1]), None)
            if user:
                out[t] = f"{user[0]}:{role}:{t}:{user[2]}"
                break
    return out

def perms(oracle, path):
    m = {}
    for l in subprocess.run([oracle, "perms", path], capture_output=True, text=True, check=True).stdout.splitlines():
        c, b, n = l.split()
        m.setdefault(c, {})[int(b)] = n
    return m

def allowed(oracle, path, queries):
    """For each (scon, tcon, class): the set of permission names libsepol allows (None: refused)."""
    pm = perms(oracle, path)
    data = "".join(f"{s} {t} {c}\n" for s, t, c in queries)
    lines = subprocess.run([oracle, "av", path], input=data, capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(lines) == len(queries)
    out = []
    for (s, t, c), l in zip(queries, lines):
        if l.startswith("error"):
            out.append(None)
            continue
        v = int(l.split()[0], 16)
        out.append({n for b, n in pm.get(c, {}).items() if v >> b & 1})
    return out

def triple_changes(oracle, old, new, triples):
    """{(s, t, c): (gained, lost)} by libsepol for type triples, each type in its context."""
    co, cn = contexts(old), contexts(new)
    qo = [(co.get(s, "x:x:x:s0"), co.get(t, "x:x:x:s0"), c) for s, t, c in triples]
    qn = [(cn.get(s, "x:x:x:s0"), cn.get(t, "x:x:x:s0"), c) for s, t, c in triples]
    ao, an = allowed(oracle, old, qo), allowed(oracle, new, qn)
    out = {}
    for k, a, b in zip(triples, ao, an):
        a, b = a or set(), b or set()
        if a != b:
            out[k] = (frozenset(b - a), frozenset(a - b))
    return out

def reported(j):
    return {(c["source"], c["target"], c["class"]): (frozenset(p["perm"] for p in c["gained"]), frozenset(p["perm"] for p in c["lost"])) for c in j["decisions"]["changes"]}
PY
expect "decisions: the smart set finds every change the exhaustive diff finds, both ways" '$PY - "$T" <<"PY"
import json, sys
sys.path.insert(0, sys.argv[1]); from oracle import reported
for a, b in (("smart", "all"), ("smart_rev", "all_rev")):
    s, x = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in (a, b))
    assert reported(s) == reported(x), sorted(set(reported(s).items()) ^ set(reported(x).items()))
    assert x["decisions"]["computed"] > s["decisions"]["computed"] and len(reported(s)) >= 15
PY'
expect "decisions: every triple of the pair as libsepol decides it (changed and unchanged alike), both ways" '$PY - "$T" "$ORACLE" "$O" "$N" <<"PY"
import json, sys, itertools, setools
sys.path.insert(0, sys.argv[1]); from oracle import reported, triple_changes
d, oracle, old, new = sys.argv[1:5]
types = sorted({str(t) for p in (old, new) for t in setools.SELinuxPolicy(p).types()})
classes = sorted({str(c) for p in (old, new) for c in setools.SELinuxPolicy(p).classes()})
triples = list(itertools.product(types, types, classes))
for a, b, name in ((old, new, "all"), (new, old, "all_rev")):
    want = triple_changes(oracle, a, b, triples)
    got = reported(json.load(open(f"{d}/{name}.json")))
    assert got == want, sorted(set(got.items()) ^ set(want.items()))
PY'
expect "decisions: each side names what is responsible (rule lines, the boolean, the constraint, the bound, the role, a missing type)" '$PY - "$T/smart.json" <<"PY"
import json, sys
ch = {(c["source"], c["target"], c["class"]): c for c in json.load(open(sys.argv[1]))["decisions"]["changes"]}
def perm(k, p):
    c = ch[k]
    return next(x for x in c["gained"] + c["lost"] if x["perm"] == p)
w = perm(("httpd_t", "web_t", "file"), "write")
assert w["old"]["kind"] == "boolean_off" and "allow_web_write" in w["old"]["reason"] and w["new"]["rules"] == ["allow httpd_t web_t:file write; [ allow_web_write ]:True"], w
w = perm(("user_t", "tmp_t", "dir"), "write")
assert w["old"]["kind"] == "constraint" and w["new"]["decision"] == "allowed", w
w = perm(("child_t", "web_t", "file"), "open")
assert w["new"]["kind"] == "type_bounds" and "httpd_t" in w["new"]["reason"] and w["old"]["rules"] == ["allow child_t web_t:file { open read };"], w
w = perm(("init_t", "user_t", "process"), "transition")
assert w["new"]["kind"] == "role_allow" and w["old"]["rules"] == ["allow init_t domain:process transition;"], w
w = perm(("gone_t", "etc_t", "file"), "read")
assert w["new"]["kind"] == "missing" and "gone_t" in w["new"]["reason"], w
w = perm(("httpd_t", "shadow_t", "file"), "getattr")
assert w["old"]["kind"] == "no_allow_rule" and w["new"]["rules"] == ["allow domain files:file getattr;"], w
PY'
$BIN diff "$O" "$N" > "$T/text"
expect "decisions: text groups by source and target, each permission with OLD and NEW" 'grep -q "^child_t -> web_t$" "$T/text" && grep -q "^  file: -open$" "$T/text" && grep -q "^    -open: OLD allowed by allow child_t web_t:file { open read };" "$T/text" && grep -q "NEW denied: type bounds: its bound httpd_t is not allowed this" "$T/text"'

# --- Debian's default policy against a changed copy.
checkpolicy -M -b -F -o "$T/deb.conf" "$POL" > /dev/null 2>&1
grep -q '^allow httpd_t bin_t:file { ioctl read getattr lock map execute open execute_no_trans };$' "$T/deb.conf" || { echo "FAIL: Debian's policy.conf lacks the rule the test edits"; exit 1; }
sed -e 's/^allow httpd_t bin_t:file { ioctl read getattr lock map execute open execute_no_trans };$/allow httpd_t bin_t:file { ioctl read getattr lock map execute open };\nallow httpd_t shadow_t:file { read open };/' \
    -e 's/^bool httpd_can_network_connect false;/bool httpd_can_network_connect true;/' \
    -e 's/^\(typeattribute httpd_t .*\) nsswitch_domain,/\1/' "$T/deb.conf" > "$T/deb_new.conf"
sed -e 's/^bool httpd_can_network_connect false;/bool httpd_can_network_connect true;/' "$T/deb.conf" > "$T/deb_bool.conf"
checkpolicy -M -c 33 -o "$T/deb_old.33" "$T/deb.conf" > /dev/null 2>&1 &
checkpolicy -M -c 33 -o "$T/deb_new.33" "$T/deb_new.conf" > /dev/null 2>&1
wait
checkpolicy -M -c 33 -o "$T/deb_bool.33" "$T/deb_bool.conf" > /dev/null 2>&1
DO=$T/deb_old.33 DN=$T/deb_new.33
start=$(date +%s.%N)
$BIN diff "$DO" "$DN" --json > "$T/deb.json"; rc=$?
secs=$(echo "$(date +%s.%N) - $start" | bc)
echo "   Debian's default policy against a changed copy: $secs s (decisions: $($PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["decisions"]; print(len(d["changes"]), "changed of", d["computed"], "computed in", round(d["seconds"], 2), "s")' "$T/deb.json"))"
expect "debian: answers in seconds (exit 0, under 60 s on a loaded 2-core machine)" '[ $rc -eq 0 ] && [ "$(echo "$secs < 60" | bc)" = 1 ]'
$BIN diff "$DO" "$DN" --sample 300000 --seed 11 --json > "$T/deb_sample.json"
expect "debian: the reported triples and 3,000 unreported ones as libsepol decides them" '$PY - "$T" "$ORACLE" "$DO" "$DN" <<"PY"
import json, random, sys
sys.path.insert(0, sys.argv[1]); from oracle import reported, triple_changes
d, oracle, old, new = sys.argv[1:5]
got = reported(json.load(open(f"{d}/deb.json")))
assert len(got) > 100 and any(k[0] == "httpd_t" and "execute_no_trans" in v[1] for k, v in got.items()) and any(k[1] == "shadow_t" and "read" in v[0] for k, v in got.items())
import setools
p = setools.SELinuxPolicy(old)
types, classes = sorted(str(t) for t in p.types()), sorted(str(c) for c in p.classes())
rng = random.Random(3)
quiet = [(rng.choice(types), rng.choice(types), rng.choice(classes)) for _ in range(2000)]
quiet += [("httpd_t", rng.choice(types), rng.choice(classes)) for _ in range(1000)]
quiet = [k for k in quiet if k not in got]
want = triple_changes(oracle, old, new, list(got) + quiet)
assert want == got, sorted(set(want.items()) ^ set(got.items()))[:10]
PY'
expect "debian: --sample finds no change the smart set misses" '$PY - "$T" <<"PY"
import json, sys
sys.path.insert(0, sys.argv[1]); from oracle import reported
s, x = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("deb", "deb_sample"))
assert x["decisions"]["computed"] > 290000
missed = {k: v for k, v in reported(x).items() if reported(s).get(k) != v}
assert not missed, missed
PY'
expect "debian: every triple with source httpd_t (the changed domain), brute force by compute-av, against the smart set" '$PY - "$T" "$BIN" "$DO" "$DN" <<"PY"
import json, subprocess, sys
sys.path.insert(0, sys.argv[1]); from oracle import contexts, perms, reported
d, binary, old, new = sys.argv[1:5]
import setools
p = setools.SELinuxPolicy(old)
types, classes = sorted(str(t) for t in p.types()), sorted(str(c) for c in p.classes())
ctx = contexts(old)
assert ctx == contexts(new)
q = [(ctx["httpd_t"], ctx[t], c, t) for t in types for c in classes]
data = "".join(f"{s} {t} {c}\n" for s, t, c, _ in q)
def run(path):
    out = subprocess.run([binary, "compute-av", "-p", path], input=data, capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(q)
    return out
ao, an = run(old), run(new)
po, pn = perms("target/oracle/sepol-oracle", old), perms("target/oracle/sepol-oracle", new)
names = lambda pm, c, v: {n for b, n in pm.get(c, {}).items() if v >> b & 1}
brute = {}
for (s, t, c, tt), a, b in zip(q, ao, an):
    x, y = names(po, c, int(a.split()[0], 16)), names(pn, c, int(b.split()[0], 16))
    if x != y:
        brute[("httpd_t", tt, c)] = (frozenset(y - x), frozenset(x - y))
smart = {k: v for k, v in reported(json.load(open(f"{d}/deb.json"))).items() if k[0] == "httpd_t"}
assert brute == smart and len(brute) > 10, sorted(set(brute.items()) ^ set(smart.items()))[:10]
PY'
$BIN diff "$DO" --bool httpd_can_network_connect=1 --json > "$T/bool1.json"
$BIN diff "$DO" "$T/deb_bool.33" --json > "$T/bool2.json"
expect "debian: one policy with --bool decides as that policy compiled with the boolean flipped" '$PY - "$T" <<"PY"
import json, sys
sys.path.insert(0, sys.argv[1]); from oracle import reported
a, b = (json.load(open(f"{sys.argv[1]}/{n}.json")) for n in ("bool1", "bool2"))
assert reported(a) == reported(b) and len(reported(a)) > 10
assert all(x["old"]["kind"] == "boolean_off" and "httpd_can_network_connect" in x["old"]["reason"] for c in a["decisions"]["changes"] for x in c["gained"])
assert a["symbols"]["booleans"] == [{"name": "httpd_can_network_connect", "old": False, "new": True}] and a["rules"] == []
PY'

# --- Replay: the accesses of a log judged by both policies, against libsepol.
rec() { echo "type=AVC msg=audit(1700000000.$1:$1): avc:  $2  { $3 } for  pid=1 comm=\"x\" scontext=$4 tcontext=$5 tclass=$6 permissive=0"; }
{
  rec 101 granted "read open" system_u:system_r:httpd_t:s0 system_u:object_r:etc_t:s0 file
  rec 102 granted "read open" system_u:system_r:httpd_t:s0 system_u:object_r:etc_t:s0 file
  rec 103 denied write user_u:user_r:user_t:s0 system_u:object_r:tmp_t:s0 dir
  rec 104 granted read system_u:system_r:gone_t:s0 system_u:object_r:etc_t:s0 file
  rec 105 denied getattr system_u:system_r:httpd_t:s0 system_u:object_r:shadow_t:s0 file
  rec 106 granted "read getattr" system_u:system_r:httpd_t:s0 system_u:object_r:web_t:s0 file
  rec 107 denied transition system_u:system_r:init_t:s0 user_u:user_r:user_t:s0 process
  rec 108 denied read user_u:user_r:user_t:s0 system_u:object_r:shadow_t:s1 file
  rec 109 granted write system_u:system_r:httpd_t:s0 system_u:object_r:etc_t:s0 file
  echo "type=AVC msg=audit(1700000000.110:110): avc:  denied  { read scontext=x tclass=file"
  rec 111 denied read system_u:system_r:httpd_t:s0 system_u:object_r:etc_t:s0 fiel
} > "$T/log"
$BIN diff "$O" "$N" --replay "$T/log" --json > "$T/replay.json" 2> "$T/replay.err"; rc=$?
expect "replay: exit 1 (NEW denies what OLD allowed; a record unread)" '[ $rc -eq 1 ]'
expect "replay: each changed access as libsepol decides it under both policies, each distinct access once" '$PY - "$T" "$ORACLE" "$O" "$N" "$T/log" <<"PY"
import json, re, sys
sys.path.insert(0, sys.argv[1]); from oracle import allowed
d, oracle, old, new, log = sys.argv[1:6]
recs = []
for l in open(log):
    m = re.search(r"\{ ([^}]*) \} for .* scontext=(\S+) tcontext=(\S+) tclass=(\S+)", l)
    if m and m.group(4) != "fiel":
        recs.append((m.group(2), m.group(3), m.group(4), tuple(m.group(1).split())))
distinct = list(dict.fromkeys(recs))
q = [(s, t, c) for s, t, c, _ in distinct]
ao, an = allowed(oracle, old, q), allowed(oracle, new, q)
want = {}
for (s, t, c, ps), a, b in zip(distinct, ao, an):
    a, b = a or set(), b or set()
    ch = {p: p in b for p in ps if (p in a) != (p in b)}
    if ch:
        want[(s, t, c)] = ch
j = json.load(open(f"{d}/replay.json"))
got = {(x["scontext"], x["tcontext"], x["tclass"]): {p["perm"]: p["new"]["decision"] == "allowed" for p in x["changes"]} for x in j["changed"]}
assert got == want and len(want) >= 5, (got, want)
assert j["records"] == 10 and j["accesses"] == 8, j
first = next(x for x in j["changed"] if x["tcontext"].endswith(":etc_t:s0") and x["perms"] == ["read", "open"])
assert first["count"] == 2 and first["line"] == 1 and first["logged"] == "granted"
PY'
expect "replay: the malformed record and the unknown class are reported with their lines" 'grep -q "log: line 10: " "$T/replay.err" && grep -q "log: line 11: unknown class .fiel.; did you mean file?" "$T/replay.err"'
$BIN diff "$O" "$N" --replay - < "$T/log" > "$T/replay.txt" 2>/dev/null
expect "replay: text from standard input, each access with OLD and NEW" 'grep -q "^Replay: 10 records, 8 distinct accesses" "$T/replay.txt" && grep -q "^line 1 (2 records): system_u:system_r:httpd_t:s0 system_u:object_r:etc_t:s0 file { read open } (granted in the log)" "$T/replay.txt" && grep -q "^  -open: OLD allowed by allow httpd_t etc_t:file { open read };" "$T/replay.txt"'
# Debian: records from reported changes and from unchanged triples, judged as libsepol judges them.
expect "replay: on Debian's pair, every changed access and no other, as libsepol decides" '$PY - "$T" "$ORACLE" "$DO" "$DN" "$BIN" <<"PY"
import json, random, subprocess, sys
sys.path.insert(0, sys.argv[1]); from oracle import allowed, contexts, perms
d, oracle, old, new, binary = sys.argv[1:6]
ch = json.load(open(f"{d}/deb.json"))["decisions"]["changes"]
ctx = contexts(old)
pm = perms(oracle, old)
rng = random.Random(5)
picked = rng.sample(ch, 40)
lines, i = [], 0
for c in picked:
    for p in (c["gained"] + c["lost"])[:2]:
        i += 1
        perm, sc, tc, cl = p["perm"], ctx[c["source"]], ctx[c["target"]], c["class"]
        lines.append(f"type=AVC msg=audit(1.{i}:{i}): avc:  denied  {{ {perm} }} for pid=1 scontext={sc} tcontext={tc} tclass={cl}")
types = sorted(ctx)
for _ in range(60):
    i += 1
    c = rng.choice(sorted(pm))
    lines.append(f"type=AVC msg=audit(1.{i}:{i}): avc:  granted  {{ {rng.choice(sorted(pm[c].values()))} }} for pid=1 scontext={ctx[rng.choice(types)]} tcontext={ctx[rng.choice(types)]} tclass={c}")
out = subprocess.run([binary, "diff", old, new, "--replay", "-", "--json"], input="\n".join(lines) + "\n", capture_output=True, text=True)
j = json.loads(out.stdout)
got = {(x["scontext"], x["tcontext"], x["tclass"], tuple(x["perms"])) for x in j["changed"]}
recs = []
for l in lines:
    f = dict(w.split("=", 1) for w in l.split() if w.startswith(("scontext=", "tcontext=", "tclass=")))
    recs.append((f["scontext"], f["tcontext"], f["tclass"], (l.split("{ ")[1].split(" }")[0],)))
q = [(s, t, c) for s, t, c, _ in recs]
ao, an = allowed(oracle, old, q), allowed(oracle, new, q)
want = {r for r, a, b in zip(recs, ao, an) if (r[3][0] in (a or set())) != (r[3][0] in (b or set()))}
assert got == want and len(want) >= 40, (len(got), len(want), sorted(got ^ want)[:5])
PY'

# --- Errors and help.
$BIN diff "$O" --bool allow_web_writ=1 > /dev/null 2> "$T/e1"; rc=$?
expect "errors: an unknown boolean is refused with the nearest name (exit 2)" '[ $rc -eq 2 ] && grep -q "unknown boolean allow_web_writ (in NEW); did you mean allow_web_write?" "$T/e1"'
$BIN diff "$O" --bool allow_web_write=maybe > /dev/null 2> "$T/e2"; rc=$?
expect "errors: a boolean value that is not one says so (exit 2)" '[ $rc -eq 2 ] && grep -q "value must be 1/0" "$T/e2"'
$BIN diff "$O" "$T/nonexistent.33" > /dev/null 2> "$T/e3"; rc=$?
expect "errors: a missing policy file is named (exit 2)" '[ $rc -eq 2 ] && grep -q "nonexistent.33" "$T/e3"'
$BIN diff "$DO" "$DN" --all > /dev/null 2> "$T/e4"; rc=$?
expect "errors: --all on the Debian policy is refused, pointing to the default or a sample" '[ $rc -eq 2 ] && grep -q "over the limit" "$T/e4"'
$BIN diff "$O" "$N" --replay "$T/none.log" > /dev/null 2> "$T/e5"; rc=$?
expect "errors: a missing log is named (exit 2)" '[ $rc -eq 2 ] && grep -q "none.log" "$T/e5"'
$BIN diff --help > "$T/help"
expect "diff --help shows examples, --replay, --json and the contexts decisions are judged in" 'grep -q "Examples:" "$T/help" && grep -q -- "--replay" "$T/help" && grep -q -- "--json: one object" "$T/help" && grep -q "system_u" "$T/help"'

summary diff
