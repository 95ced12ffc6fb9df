"""The API on the project's test policies, whose expected answers their CIL sources state
(testdata/policies), and on Debian's default policy."""

import threading

import pytest

import seaccess
from conftest import debian_policy, own_policy

DOM = "u:r:dom_t:s0"
ON_TRUE = "u:object_r:on_true:s0"
ON_FALSE = "u:object_r:on_false:s0"


@pytest.fixture
def booleans():
    return seaccess.Policy.load(own_policy("booleans"))


def test_check_lists_each_permission_in_order(booleans):
    # booleans.cil: with the defaults, `single` (t1) and `not_` (not f1) are true, so
    # dom_t -> on_true allows them; `and_tf` (t1 && f1) is false, so only on_false has it.
    d = booleans.check(DOM, ON_TRUE, "cond", "single and_tf not_")
    assert not d and d.allowed is False
    assert [(p.name, p.allowed) for p in d.permissions] == [("single", True), ("and_tf", False), ("not_", True)]
    assert d.denied == ["and_tf"]
    assert (d.scontext, d.tcontext, d.tclass) == (DOM, ON_TRUE, "cond")
    both = booleans.check(DOM, ON_TRUE, "cond", ["single", "not_"])
    assert both and both.allowed and both.denied == [] and both.reasons == {}


def test_check_explains_a_boolean_denial(booleans):
    # `single` on on_false is allowed only by the false branch of `t1`, which is true.
    d = booleans.check(DOM, ON_FALSE, "cond", "single")
    (p,) = d.permissions
    assert not p
    assert [(r.kind, r.booleans) for r in p.reasons] == [("boolean_off", ["t1"])]
    assert "t1" in d.reasons["single"][0]
    assert str(d) == "single: denied: " + p.reasons[0].text


def test_check_explains_no_rule_and_constraints():
    # constraints.cil: TE allows all of `cons`; (constrain (cons (u_eq)) (eq u1 u2)) denies
    # u_eq between users ua and ub, and `unconstrained` has no constraint.
    p = seaccess.Policy.load(own_policy("constraints"))
    d = p.check("ua:ra:ta:s0", "ub:rb:tb:s0", "cons", "u_eq unconstrained")
    assert [x.allowed for x in d.permissions] == [False, True]
    (r,) = d.permissions[0].reasons
    assert r.kind == "constraint" and r.text.startswith("constrain #") and "u1" in r.text and "u2" in r.text
    # booleans.cil has no rule at all from dom_t to audit_t for `cond`.
    b = seaccess.Policy.load(own_policy("booleans"))
    (r,) = b.check(DOM, "u:object_r:audit_t:s0", "cond", "single").permissions[0].reasons
    assert (r.kind, r.text) == ("no_allow_rule", "no allow rule")


def test_compute_av_matches_check(booleans):
    av = booleans.compute_av(DOM, ON_TRUE, "cond")
    d = booleans.check(DOM, ON_TRUE, "cond", "single and_tf")
    assert av == d.av
    assert av.seqno == booleans.seqno == 1
    assert av.astuple() == (av.allowed, av.decided, av.auditallow, av.auditdeny, av.seqno, av.flags)
    assert not av.permissive


def test_permissive_flag():
    # permissive.cil: (typepermissive perm_t); enf_t is enforcing.
    p = seaccess.Policy.load(own_policy("permissive"))
    assert p.compute_av("u:r:perm_t:s0", "u:object_r:data_t:s0", "file").permissive
    assert not p.compute_av("u:r:enf_t:s0", "u:object_r:data_t:s0", "file").permissive


def test_compute_create_relabel_member():
    # Expected answers stated in transitions.cil's comments.
    p = seaccess.Policy.load(own_policy("transitions"))
    s, tmp = "app_u:app_r:app_t:s0-s1:c1", "sys_u:object_r:tmp_t:s1"
    assert p.compute_create(s, tmp, "file", "special") == "app_u:app_obj_r:app_special_t:s0"
    assert p.compute_create(s, tmp, "file", "specia") == "app_u:app_obj_r:app_tmp_t:s0"
    assert p.compute_create(s, tmp, "dir", "cache") == "sys_u:app_obj_r:app_cache_t:s1"
    assert p.compute_create(s, tmp, "file") == "app_u:app_obj_r:app_tmp_t:s0"
    home = "sys_u:object_r:home_t:s0"
    assert p.compute_create(s, home, "file", ".profile") == "app_u:object_r:app_tmp_t:s0"
    assert p.compute_create(s, home, "file", name="x") == "app_u:object_r:home_t:s0"
    # (typechange app_t tty_t chr_file app_tty_t), (typemember app_t home_t dir app_home_inst_t)
    assert p.compute_relabel(s, "sys_u:object_r:tty_t:s0", "chr_file").split(":")[2] == "app_tty_t"
    assert p.compute_member(s, home, "dir").split(":")[2] == "app_home_inst_t"


def test_booleans_round_trip(booleans):
    assert booleans.booleans["t1"] == (True, True)
    assert booleans.booleans["f1"] == (False, False)
    booleans.set_boolean("t1", False)
    assert booleans.booleans["t1"] == (True, False)
    assert booleans.check(DOM, ON_TRUE, "cond", "single")  # not committed yet
    assert booleans.commit_booleans() == 2 == booleans.seqno
    assert booleans.booleans["t1"] == (False, False)
    assert not booleans.check(DOM, ON_TRUE, "cond", "single")
    assert booleans.check(DOM, ON_FALSE, "cond", "single")
    with pytest.raises(seaccess.UnknownNameError, match='unknown boolean "nope"'):
        booleans.set_boolean("nope", True)


def test_avc_has_perm_stats_and_commit(booleans):
    avc = seaccess.Avc(booleans, 16)
    assert avc.capacity >= 16 and avc.enforcing
    assert avc.has_perm(DOM, ON_TRUE, "cond", "single")
    assert avc.has_perm(DOM, ON_TRUE, "cond", ["single", "not_"])
    assert not avc.has_perm(DOM, ON_TRUE, "cond", "and_tf")
    s = avc.stats()
    assert (s["lookups"], s["misses"], s["hits"], s["allocations"]) == (3, 1, 2, 1)
    # The cache follows a boolean commit: t1 off moves `single` to on_false.
    booleans.set_boolean("t1", False)
    booleans.commit_booleans()
    assert not avc.has_perm(DOM, ON_TRUE, "cond", "single")
    avc.enforcing = False
    assert avc.has_perm(DOM, ON_TRUE, "cond", "and_tf")  # permissive mode grants
    assert not avc.enforcing


def test_batches_agree_with_single_calls(booleans):
    qs = [(DOM, t, "cond", p) for t in (ON_TRUE, ON_FALSE) for p in ("single", "and_tf", "xor_tt", "single not_")]
    expect = [bool(booleans.check(*q)) for q in qs]
    assert True in expect and False in expect
    assert booleans.check_many(qs) == expect
    assert booleans.check_many([(s, t, c, p.split()) for s, t, c, p in qs]) == expect
    assert seaccess.Avc(booleans).has_perm_many(qs) == expect
    avs = booleans.compute_av_many([(s, t, c) for s, t, c, _ in qs])
    assert avs == [booleans.compute_av(s, t, c) for s, t, c, _ in qs]
    assert booleans.check_many([]) == []


def test_batches_run_on_threads(booleans):
    qs = [(DOM, ON_TRUE, "cond", "single"), (DOM, ON_FALSE, "cond", "single")] * 20000
    want = booleans.check_many(qs)
    got = []

    def run():
        got.append(booleans.check_many(qs))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [want] * 4


def test_debian_default_policy(oracle):
    path = debian_policy("default")
    p = seaccess.Policy.load(path)
    assert len(p.booleans) > 100
    init, user, shadow = "system_u:system_r:init_t:s0", "user_u:user_r:user_t:s0", "system_u:object_r:shadow_t:s0"
    # libsepol's answers: init_t reads shadow_t, user_t may not write it.
    (init_av, user_av) = oracle.answer("av", path, [(init, shadow, "file"), (user, shadow, "file")])
    bits = {name: bit for bit, name in oracle.perms(path)["file"]}
    d = p.check(init, shadow, "file", "read getattr")
    assert d.av.allowed == int(init_av.split()[0], 16)
    assert [x.allowed for x in d.permissions] == [bool(d.av.allowed >> bits[n] & 1) for n in ("read", "getattr")] == [True, True]
    u = p.check(user, shadow, "file", "write")
    assert int(user_av.split()[0], 16) >> bits["write"] & 1 == 0
    assert not u and u.permissions[0].reasons
    q = ("unconfined_u:unconfined_r:unconfined_t:s0", "system_u:object_r:tmp_t:s0", "file")
    assert p.compute_create(*q) == oracle.answer("create", path, [q])[0]


def test_stubs_and_marker_are_installed():
    from pathlib import Path

    pkg = Path(seaccess.__file__).parent
    assert (pkg / "py.typed").is_file()
    stub = (pkg / "__init__.pyi").read_text()
    for name in ("class Policy", "def check_many", "class Avc", "def has_perm_many", "class PolicyError(Error)"):
        assert name in stub
    assert issubclass(seaccess.PolicyError, ValueError) and issubclass(seaccess.ContextError, ValueError)
