"""The peers' answers to a `seaccess test` cases file, compared with what seaccess reported.

Usage: cases_peer.py POLICY ORACLE CASES.toml SEACCESS.json TMPDIR

Every case is answered by peers and compared with seaccess's --json result for it: whether it
passed, and for a failure what went the other way.
  - [[allow]]/[[deny]]: libsepol (sepol-oracle av). Under with_booleans, on a copy of the
    policy whose booleans libsepol itself set (sepol_bool_set re-evaluates the conditionals).
  - [[create]]/[[relabel]]/[[member]]: libsepol (sepol-oracle create/relabel/member); a create
    with object_name: libsepol's context with the type of the filename type_transition setools
    finds (libsepol's services have no filename transitions).
  - [[neverallow]]: setools' allow rules, attributes expanded, conditional rules counted when
    enabled under the booleans.
  - The reason seaccess gives for each permission a failing [[allow]] found denied (without
    with_booleans): audit2why's on the same denial, in one audit2why run.
Prints one ok/FAIL line per case; exits 1 if any case disagrees.
"""
import ctypes
import json
import os
import subprocess
import sys
import tomllib

import setools

policy, oracle, cases_path, result_path, tmp = sys.argv[1:6]
cases = tomllib.load(open(cases_path, 'rb'))
result = json.load(open(result_path))
outcomes = result['files'][0]['cases']
bad = 0


def say(ok, what):
    global bad
    print(('ok: ' if ok else 'FAIL: ') + what)
    bad += 0 if ok else 1


def with_booleans(values):
    """A copy of the policy with libsepol's own boolean change, written by libsepol."""
    from ctypes import byref, c_char_p, c_int, c_size_t, c_void_p
    sepol = ctypes.CDLL('libsepol.so.2')
    libc = ctypes.CDLL('libc.so.6')
    libc.fopen.restype = c_void_p
    libc.fopen.argtypes = [c_char_p, c_char_p]
    libc.fclose.argtypes = [c_void_p]
    sepol.sepol_handle_create.restype = c_void_p
    sepol.sepol_policy_file_set_mem.argtypes = [c_void_p, c_char_p, c_size_t]
    sepol.sepol_policy_file_set_fp.argtypes = [c_void_p, c_void_p]
    sepol.sepol_policydb_read.argtypes = [c_void_p, c_void_p]
    sepol.sepol_policydb_write.argtypes = [c_void_p, c_void_p]
    sepol.sepol_bool_key_create.argtypes = [c_void_p, c_char_p, c_void_p]
    sepol.sepol_bool_create.argtypes = [c_void_p, c_void_p]
    sepol.sepol_bool_set_name.argtypes = [c_void_p, c_void_p, c_char_p]
    sepol.sepol_bool_set_value.argtypes = [c_void_p, c_int]
    sepol.sepol_bool_set.argtypes = [c_void_p, c_void_p, c_void_p, c_void_p]
    data = open(policy, 'rb').read()
    h = sepol.sepol_handle_create()
    pf, pdb, out = c_void_p(), c_void_p(), c_void_p()
    assert sepol.sepol_policy_file_create(byref(pf)) == 0
    sepol.sepol_policy_file_set_mem(pf, data, len(data))
    assert sepol.sepol_policydb_create(byref(pdb)) == 0
    assert sepol.sepol_policydb_read(pdb, pf) == 0
    for name, value in sorted(values.items()):
        key, b = c_void_p(), c_void_p()
        assert sepol.sepol_bool_key_create(h, name.encode(), byref(key)) == 0
        assert sepol.sepol_bool_create(h, byref(b)) == 0
        assert sepol.sepol_bool_set_name(h, b, name.encode()) == 0
        sepol.sepol_bool_set_value(b, 1 if value else 0)
        assert sepol.sepol_bool_set(h, pdb, key, b) == 0, name
    path = os.path.join(tmp, 'bools-' + '-'.join(f'{n}={int(v)}' for n, v in sorted(values.items())) + '.33')
    assert sepol.sepol_policy_file_create(byref(out)) == 0
    fp = libc.fopen(path.encode(), b'wb')
    assert fp
    sepol.sepol_policy_file_set_fp(out, fp)
    assert sepol.sepol_policydb_write(pdb, out) == 0
    libc.fclose(fp)
    return path


policies = {}


def policy_for(case):
    key = tuple(sorted(case.get('with_booleans', {}).items()))
    if key not in policies:
        policies[key] = with_booleans(dict(key)) if key else policy
    return policies[key]


def ask(mode, pol, query):
    out = subprocess.run([oracle, mode, pol], input=query + '\n', capture_output=True, text=True, check=True).stdout
    return out.strip()


bits = {}
for line in subprocess.run([oracle, 'perms', policy], capture_output=True, text=True, check=True).stdout.splitlines():
    c, b, n = line.split()
    bits.setdefault(c, {})[n] = int(b)

se = setools.SELinuxPolicy(policy)
defaults = {str(b): b.state for b in se.bools()}


def enabled(rule, values):
    try:
        cond = rule.conditional
    except setools.exception.RuleNotConditional:
        return True
    state = dict(defaults)
    state.update(values)
    return cond.evaluate(**state) == rule.conditional_block


rules_of = {}


def allow_rules(c):
    """The allow rules of class c with their permissions and expanded types, read once."""
    if c not in rules_of:
        rules_of[c] = [(r, set(r.perms), {str(x) for x in r.source.expand()}, {str(x) for x in r.target.expand()})
                       for r in setools.TERuleQuery(se, ruletype=['allow'], tclass=[c]).results()]
    return rules_of[c]


def types_of(names):
    plus, minus = set(), set()
    for n in names:
        if n == 'self':
            continue
        into = minus if n.startswith('-') else plus
        t = se.lookup_type_or_attr(n.lstrip('-'))
        into |= {str(x) for x in t.expand()} if isinstance(t, setools.policyrep.TypeAttribute) else {str(t)}
    return plus - minus


def listed(v):
    return [v] if isinstance(v, str) else v


def check(kind, i, case, o):
    what = f"[[{kind}]] #{i + 1} {case.get('name', '')!r}"
    if kind in ('allow', 'deny'):
        perms = listed(case['perms'])
        hexa = ask('av', policy_for(case), f"{case['scontext']} {case['tcontext']} {case['class']}").split()[0]
        allowed = {p for p in perms if int(hexa, 16) >> bits[case['class']][p] & 1}
        wrong = set(perms) - allowed if kind == 'allow' else allowed
        named = {d.split(':')[0] for d in o['details']}
        if kind == 'allow' and not case.get('with_booleans'):
            for d in o['details']:
                denials.append((what, case, d))
        say(o['passed'] == (not wrong) and named == wrong, f"{what}: libsepol allows {sorted(allowed)} of {perms}; seaccess passed={o['passed']} details={o['details']}")
    elif kind in ('create', 'relabel', 'member'):
        q = f"{case['scontext']} {case['tcontext']} {case['class']}"
        got = ask(kind, policy_for(case), q)
        peer = 'libsepol'
        if 'object_name' in case:
            s, t = case['scontext'].split(':')[2], case['tcontext'].split(':')[2]
            rules = [r for r in setools.TERuleQuery(se, ruletype=['type_transition'], source=s, target=t, tclass=[case['class']]).results()
                     if getattr(r, 'filename', None) == case['object_name'] and enabled(r, case.get('with_booleans', {}))]
            if rules:
                f = got.split(':')
                f[2] = str(rules[0].default)
                got = ':'.join(f)
                peer = 'libsepol with setools\' filename transition'
        say(o['passed'] == (got == case['expect']) and (o['passed'] or o['got'] == got), f"{what}: {peer} gives {got}; seaccess passed={o['passed']} got={o['got']}")
    else:
        values = case.get('with_booleans', {})
        src, tgt = types_of(listed(case['source'])), types_of(listed(case['target']))
        to_self = 'self' in listed(case['target'])
        found = {}
        for c in listed(case['classes']):
            forbidden = set(bits[c]) if '*' in listed(case['perms']) else set(listed(case['perms']))
            for r, perms, sources, targets in allow_rules(c):
                hit = perms & forbidden
                if not hit or not enabled(r, values):
                    continue
                rs = sources & src
                if not rs:
                    continue
                rt = targets
                pairs = {(s, t) for s in rs for t in rt & tgt}
                if to_self:
                    pairs |= {(s, s) for s in rs if s in rt}
                for s, t in pairs:
                    found.setdefault((s, t, c), set()).update(hit)
        mine = {(v['source'], v['target'], v['class']): set(v['perms']) for v in o.get('violations', [])}
        say(o['passed'] == (not found) and mine == found, f"{what}: setools finds {len(found)} (source, target, class) allowed; seaccess passed={o['passed']} with {len(mine)}")


def audit2why():
    """audit2why's cause for each denial seaccess explained, against seaccess's reason."""
    if not denials:
        return
    log = ''.join(
        f"type=AVC msg=audit(1700000000.1:{n}): avc:  denied  {{ {d.split(':')[0]} }} for  pid=1 comm=\"t\" "
        f"scontext={c['scontext']} tcontext={c['tcontext']} tclass={c['class']} permissive=0\n"
        for n, (_, c, d) in enumerate(denials))
    out = subprocess.run(['audit2why', '-p', policy], input=log, capture_output=True, text=True, check=True).stdout
    blocks = out.split('type=AVC msg=audit(')[1:]
    say(len(blocks) == len(denials), f"audit2why answered {len(blocks)} of {len(denials)} denials")
    for (what, _, d), b in zip(denials, blocks):
        reason = d.split(': ', 2)[2]
        if 'Missing type enforcement' in b:
            ok = reason == 'no allow rule'
        elif 'booleans was set incorrectly' in b or 'boolean was set incorrectly' in b:
            theirs = sorted(l.split()[3] for l in b.splitlines() if 'setsebool -P' in l)
            ok = reason.startswith('allowed only by a conditional rule') and sorted(reason.split('booleans: ')[1].rstrip(')').split(', ')) == theirs
        elif 'Constraint DENIED' in b:
            ok = reason.startswith('constrain #') or reason.startswith('mlsconstrain #')
        else:
            ok = False
        cause = ' '.join(l.strip() for l in b.split('Was caused by:')[-1].splitlines() if l.strip())[:90]
        say(ok, f"{what}: seaccess says {d!r}; audit2why: {cause}")


denials = []
order = {}
for o in outcomes:
    order.setdefault(o['kind'], []).append(o)
for kind in ('allow', 'deny', 'create', 'relabel', 'member', 'neverallow'):
    mine = order.get(kind, [])
    theirs = cases.get(kind, [])
    if len(mine) != len(theirs):
        say(False, f"[[{kind}]]: {len(theirs)} cases in the file, {len(mine)} in seaccess's report")
        continue
    for i, (case, o) in enumerate(zip(theirs, mine)):
        check(kind, i, case, o)
audit2why()
print(f"{len(outcomes)} cases compared with the peers, {bad} disagreeing")
sys.exit(1 if bad else 0)
