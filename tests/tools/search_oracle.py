#!/usr/bin/python3
"""The peer for seaccess search's and info's differential test (tests/tools/t-search.sh).

Runs /usr/bin/sesearch's own code (its argument parser and its query set-up, read from the
script) and setools 4.4's query classes for hundreds of queries in one process: the policy's
rules are read once and kept as light stand-ins (each with its setools statement, its types'
expansions computed once), so that a query costs a pass over a list instead of setools building
every rule again. The matching is setools' own code, unchanged.

Usage: search_oracle.py POLICY QUERIES.json OUT.json
  QUERIES.json: [{"args": [sesearch arguments...], "values": {bool: 0|1}}...]
  OUT.json: for each query, {"args", "values", "lines": [...], "error": str|null}; with
  "values", each conditional rule's line ends " # enabled" or " # disabled" as setools'
  rule.enabled() says under those values (the others at their defaults).

Or: search_oracle.py --generate SEED COUNT POLICY OUT.json: COUNT queries drawn from the
policy's own rules, types, attributes, classes, permissions, booleans and roles with
random.Random(SEED), answered as above.

Or: search_oracle.py --many JOBS.json: for each {"policy", "queries", "out", "seinfo"} in the
list, the queries' answers into "out" and the listings into "seinfo" (one process for several
small policies, as setools' import costs a second).

Or: search_oracle.py --seinfo POLICY OUT.json: seinfo -x's statements for every type,
attribute, role, user, class and boolean, as seinfo prints them.
"""
import io
import json
import random
import sys
import types

import setools
from setools.exception import RuleUseError, RuleNotConditional


class TypeStandIn:
    """A type or attribute with its expansion computed once."""

    __slots__ = ("_real", "_exp", "_str", "_hash")

    def __init__(self, real):
        self._real = real
        self._exp = frozenset(real.expand())
        self._str = str(real)
        self._hash = hash(real)

    def expand(self):
        return self._exp

    def __str__(self):
        return self._str

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return self._real == (other._real if isinstance(other, TypeStandIn) else other)

    def __contains__(self, other):
        return other in self._exp


_UNSET = object()


class RuleStandIn:
    """A rule's attributes as setools' queries read them, raising what the rule raises."""

    __slots__ = ("_real", "ruletype", "source", "target", "tclass", "extended", "_perms", "_default", "_cond", "_xtype", "_str")

    def __init__(self, real, stand_in):
        self._real = real
        self.ruletype = real.ruletype
        self.source = stand_in(real.source)
        self.target = stand_in(real.target)
        self.tclass = getattr(real, "tclass", None)
        self.extended = getattr(real, "extended", False)
        self._perms = self._default = self._cond = self._xtype = None
        self._str = None

    def _get(self, slot, attr, errors):
        v = getattr(self, slot)
        if v is None:
            try:
                v = getattr(self._real, attr)
            except errors as e:
                v = e
            setattr(self, slot, v)
        if isinstance(v, Exception):
            raise v
        return v

    perms = property(lambda s: s._get("_perms", "perms", (RuleUseError, AttributeError)))
    default = property(lambda s: s._get("_default", "default", (RuleUseError, AttributeError)))
    conditional = property(lambda s: s._get("_cond", "conditional", (RuleNotConditional, RuleUseError, AttributeError)))
    xperm_type = property(lambda s: s._get("_xtype", "xperm_type", (RuleUseError, AttributeError)))

    def is_conditional(self):
        try:
            self.conditional
            return True
        except (RuleNotConditional, RuleUseError, AttributeError):
            return False

    def enabled(self, **values):
        return self._real.enabled(**values)

    def __str__(self):
        if self._str is None:
            self._str = str(self._real)
        return self._str

    def __lt__(self, other):
        return str(self) < str(other)


class PolicyStandIn:
    """The policy with its rule lists read once; lookups of types give stand-ins."""

    def __init__(self, path):
        self._p = setools.SELinuxPolicy(path)
        self._tcache = {}
        self._te = [RuleStandIn(r, self._stand_in) for r in self._p.terules()]
        self._rbac = [RuleStandIn(r, self._stand_in) for r in self._p.rbacrules()]
        self._mls = [RuleStandIn(r, self._stand_in) for r in self._p.mlsrules()]
        self._by_key = {}
        for r in self._te:
            self._by_key.setdefault((r.ruletype, str(r.tclass)), []).append(r)
        self._cond = [r for r in self._te if r.is_conditional()]
        self.narrow = None

    def _stand_in(self, t):
        if not isinstance(t, (setools.policyrep.Type, setools.policyrep.TypeAttribute)):
            return t
        k = str(t)
        if k not in self._tcache:
            self._tcache[k] = TypeStandIn(t)
        return self._tcache[k]

    def terules(self):
        """The TE rules, or (when the harness set `narrow`) only those of the query's rule types
        and classes, or only conditional ones: conditions setools checks by plain equality or by
        the rule having a condition at all, so its own checks still decide every rule."""
        if self.narrow is None:
            return iter(self._te)
        ruletypes, classes, conditional_only = self.narrow
        if classes is None:
            keys = [k for k in self._by_key if k[0] in ruletypes]
        else:
            keys = [(rt, c) for rt in ruletypes for c in classes]
        rules = [r for k in keys for r in self._by_key.get(k, [])]
        if conditional_only:
            cond = set(map(id, self._cond))
            rules = [r for r in rules if id(r) in cond]
        return iter(rules)

    def rbacrules(self):
        return iter(self._rbac)

    def mlsrules(self):
        return iter(self._mls)

    def lookup_type_or_attr(self, name):
        return self._stand_in(self._p.lookup_type_or_attr(name))

    def __getattr__(self, name):
        return getattr(self._p, name)

    def __str__(self):
        return str(self._p)


def sesearch_code():
    """sesearch's parser, and its code after parsing, compiled to run once per query."""
    with open("/usr/bin/sesearch") as f:
        src = f.read()
    cut = src.index("args = parser.parse_args()")
    head, tail = src[:cut], src[cut + len("args = parser.parse_args()"):]
    g = {"__name__": "sesearch_peer"}
    exec(compile(head, "/usr/bin/sesearch", "exec"), g)
    return g["parser"], compile(tail, "/usr/bin/sesearch", "exec")


def narrowing(args):
    """What a query's TE rules may be narrowed to before setools looks at them: its rule types,
    its classes (a plain list), whether it wants conditional rules only (-b)."""
    ruletypes = set(args.tertypes or [])
    if args.A:
        ruletypes |= {setools.TERuletype.allow, setools.TERuletype.allowxperm}
    classes = None if not args.tclass or args.tclass_regex else args.tclass.split(",")
    return ruletypes, classes, bool(args.boolean)


def generate(policy, seed, count):
    """Queries of every kind sesearch takes, named from the policy's own rules so that most
    find something; the mix keeps the costly unrestricted -A searches to a small share."""
    rnd = random.Random(seed)
    p = policy._p
    te = policy._te
    by_type = {}
    for r in te:
        by_type.setdefault(r.ruletype.name, []).append(r)
    allows = by_type.get("allow", [])
    conds = [r for r in policy._cond]
    types_ = sorted(str(t) for t in p.types())
    attrs = sorted(str(a) for a in p.typeattributes() if len(list(a.expand())) > 0)
    bools = sorted(str(b) for b in p.bools())
    roles = sorted(str(r) for r in p.roles())

    def member(t):
        """A type for a rule's source or target: an attribute's member now and then."""
        m = sorted(str(x) for x in t.expand())
        return rnd.choice(m) if m and (rnd.random() < 0.5 or isinstance(t._real, setools.policyrep.TypeAttribute)) else str(t)

    def rule(kind):
        pool = by_type.get(kind) or allows
        return rnd.choice(pool)

    def perms(r, n):
        ps = sorted(r.perms)
        return ",".join(rnd.sample(ps, min(n, len(ps))))

    makers = []

    def q(weight):
        def deco(f):
            makers.append((weight, f))
            return f
        return deco

    @q(12)
    def _():
        return {"args": ["-A", "-s", member(rule("allow").source)]}

    @q(6)
    def _():
        return {"args": ["-A", "-t", member(rule("allow").target)]}

    @q(40)
    def _():
        r = rule("allow")
        return {"args": ["-A", "-s", member(r.source), "-c", str(r.tclass)]}

    @q(20)
    def _():
        r = rule("allow")
        return {"args": ["--allow", "-s", member(r.source), "-t", member(r.target), "-c", str(r.tclass)]}

    @q(40)
    def _():
        r = rule("allow")
        opt = rnd.choice([[], [], ["-ep"], ["-Sp"]])
        c = str(r.tclass)
        if rnd.random() < 0.3:
            c += "," + rnd.choice(sorted(str(x) for x in p.classes()))
        return {"args": ["--allow", "-t", member(r.target), "-c", c, "-p", perms(r, rnd.randint(1, 3))] + opt}

    @q(30)
    def _():
        r = rule("allow")
        side = rnd.choice(["s", "t"])
        name = rnd.choice(attrs)
        opt = rnd.choice([[], ["-d" + side]])
        return {"args": ["-A", "-" + side, name, "-c", str(r.tclass)] + opt}

    @q(28)
    def _():
        r = rule("dontaudit")
        return rnd.choice([{"args": ["--dontaudit", "-s", member(r.source)]},
                           {"args": ["--dontaudit", "-t", member(r.target), "-c", str(r.tclass)]},
                           {"args": ["--auditallow", "--dontaudit", "-s", member(r.source), "-p", perms(r, 1)]}])

    @q(41)
    def _():
        r = rule("type_transition")
        return rnd.choice([{"args": ["-T", "-s", member(r.source)]},
                           {"args": ["-T", "-t", member(r.target), "-c", str(r.tclass)]},
                           {"args": ["-T", "-D", str(r.default)]},
                           {"args": ["--type_change", "--type_member", "-s", member(rule("type_change").source)]}])

    @q(20)
    def _():
        r = rnd.choice(conds)
        bs = sorted(str(b) for b in r.conditional.booleans)
        values = {b: rnd.randint(0, 1) for b in rnd.sample(bs, rnd.randint(1, len(bs)))}
        if rnd.random() < 0.2:
            return {"args": ["-A", "--dontaudit", "-T", "-b", ",".join(bs), "-eb"], "values": values}
        if rnd.random() < 0.25:
            return {"args": ["-A", "-b", rnd.choice(bs)]}
        return {"args": ["-A", "-b", rnd.choice(bs)], "values": values}

    @q(20)
    def _():
        rr = rnd.choice(policy._rbac)
        return rnd.choice([{"args": ["--role_allow", "-s", rnd.choice(roles)]},
                           {"args": ["--role_trans", "-s", str(rr.source)]},
                           {"args": ["--role_trans", "-t", member(rr.target) if rr.ruletype.name != "allow" else str(rr.target)]},
                           {"args": ["--role_allow", "--role_trans", "-t", rnd.choice(roles)]},
                           {"args": ["--role_trans", "-D", rnd.choice(roles)]}])

    @q(8)
    def _():
        if not policy._mls:
            return {"args": ["--range_trans"]}
        rr = rnd.choice(policy._mls)
        return rnd.choice([{"args": ["--range_trans", "-s", member(rr.source)]},
                           {"args": ["--range_trans", "-t", str(rr.target), "-c", "process"]},
                           {"args": ["--range_trans", "-D", str(rr.default)]}])

    @q(10)
    def _():
        r = rule("allow")
        word = str(r.source)[: rnd.randint(3, 6)]
        return rnd.choice([{"args": ["-A", "-rs", "-s", "^" + word, "-c", str(r.tclass)]},
                           {"args": ["-T", "-rt", "-t", word]},
                           {"args": ["--dontaudit", "-rc", "-c", "sock", "-s", member(r.source)]},
                           {"args": ["-A", "-rb", "-b", rnd.choice(bools)[:5]]},
                           {"args": ["-T", "-rd", "-D", "_tmp_t$", "-s", member(r.source)]}])

    @q(2)
    def _():
        return {"args": ["--neverallow", "--neverallowxperm", "-s", rnd.choice(types_)]}

    total = sum(w for w, _ in makers)
    out = []
    for _i in range(count):
        x = rnd.uniform(0, total)
        for w, f in makers:
            x -= w
            if x <= 0:
                break
        out.append(f())
    return out


def run_queries(policy_path, queries, policy=None):
    parser, tail = sesearch_code()
    policy = policy or PolicyStandIn(policy_path)
    # The tail runs as sesearch runs it, with this policy and its print collected.
    fake_setools = types.SimpleNamespace(**{k: getattr(setools, k) for k in dir(setools) if not k.startswith("__")})
    fake_setools.SELinuxPolicy = lambda _path: policy
    out = []
    for q in queries:
        args = parser.parse_args(q["args"] + [policy_path])
        printed = []
        policy.narrow = narrowing(args)
        values = {k: bool(v) for k, v in q.get("values", {}).items()}
        state = "values" in q

        def collect(*a, **_kw):
            item = a[0] if a else ""
            line = str(item)
            if state and isinstance(item, RuleStandIn) and item.is_conditional():
                line += " # enabled" if item.enabled(**values) else " # disabled"
            printed.append(line)

        g = {"__name__": "sesearch_peer", "args": args, "setools": fake_setools, "print": collect, "sys": sys, "logging": __import__("logging"), "parser": parser}
        error = None
        try:
            exec(tail, g)
        except SystemExit as e:
            error = " ".join(printed) or "exit {}".format(e.code)
        out.append({"args": q["args"], "values": q.get("values"), "lines": printed if error is None else [], "error": error})
    return out


def seinfo_statements(policy_path):
    """seinfo -x's statements per component, as seinfo builds them."""
    p = setools.SELinuxPolicy(policy_path)

    def expand_attr(attr):
        items = "\n\t".join(sorted(str(i) for i in attr.expand()))
        return "{0}\n\t{1}".format(attr.statement(), items if items else "<empty attribute>")

    comps = {
        "b": (setools.BoolQuery(p), lambda x: x.statement()),
        "c": (setools.ObjClassQuery(p), lambda x: x.statement()),
        "r": (setools.RoleQuery(p), lambda x: x.statement()),
        "t": (setools.TypeQuery(p, alias_deref=True), lambda x: x.statement()),
        "a": (setools.TypeAttributeQuery(p), expand_attr),
        "u": (setools.UserQuery(p), lambda x: x.statement()),
    }
    return {k: [{"name": str(i), "statement": f(i)} for i in sorted(q.results())] for k, (q, f) in comps.items()}


def main():
    if sys.argv[1] == "--seinfo":
        json.dump(seinfo_statements(sys.argv[2]), open(sys.argv[3], "w"))
        return
    if sys.argv[1] == "--many":
        for job in json.load(open(sys.argv[2])):
            json.dump(run_queries(job["policy"], job["queries"]), open(job["out"], "w"))
            json.dump(seinfo_statements(job["policy"]), open(job["seinfo"], "w"))
        return
    if sys.argv[1] == "--generate":
        seed, count, path, out = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
        policy = PolicyStandIn(path)
        json.dump(run_queries(path, generate(policy, seed, count), policy), open(out, "w"))
        return
    queries = json.load(open(sys.argv[2]))
    json.dump(run_queries(sys.argv[1], queries), open(sys.argv[3], "w"))


if __name__ == "__main__":
    main()
