"""Every error reaches Python as an exception that says what went wrong and where."""

import re

import pytest

import seaccess
from conftest import own_policy

DOM = "u:r:dom_t:s0"
ON_TRUE = "u:object_r:on_true:s0"


@pytest.fixture
def policy():
    return seaccess.Policy.load(own_policy("booleans"))


def test_not_a_policy_names_the_file_section_and_offset(tmp_path):
    bad = tmp_path / "policy.bad"
    bad.write_bytes(b"\x00" * 64)
    with pytest.raises(seaccess.PolicyError) as e:
        seaccess.Policy.load(bad)
    assert isinstance(e.value, ValueError)
    assert str(e.value).startswith(f"{bad}: header, byte 0: ")
    assert "magic" in str(e.value)


def test_truncated_policy_names_the_section_and_offset(tmp_path):
    data = own_policy("booleans").read_bytes()
    for cut in (40, len(data) // 2, len(data) - 1):
        with pytest.raises(seaccess.PolicyError) as e:
            seaccess.Policy.from_bytes(data[:cut])
        m = re.match(r"policy image: (.+), byte (\d+): ", str(e.value))
        assert m, str(e.value)
        assert int(m.group(2)) <= cut


def test_missing_file_is_an_os_error_naming_it(tmp_path):
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "none"))):
        seaccess.Policy.load(tmp_path / "none")


def test_a_policy_path_that_is_no_regular_file_is_refused_at_once(tmp_path):
    """A FIFO (whose open would wait for a writer), /dev/zero (endless), a directory and a
    sparse file past the size bound: each a PolicyError naming the path, never a hang."""
    import os
    import signal

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge"
    with open(huge, "wb") as f:
        f.truncate(256 * 1024 * 1024 + 1)
    cases = [(fifo, "not a regular file but a FIFO"), ("/dev/zero", "not a regular file but a character device"),
             (tmp_path, "not a regular file but a directory"), (huge, "larger than a policy may be")]
    signal.alarm(20)  # a reader that blocks fails the test instead of hanging it
    try:
        for path, why in cases:
            with pytest.raises(seaccess.PolicyError) as e:
                seaccess.Policy.load(path)
            assert str(e.value).startswith(f"{path}: ") and why in str(e.value), str(e.value)
            with pytest.raises(seaccess.PolicyError):
                seaccess.Policy.load(own_policy("booleans")).reload(path)
    finally:
        signal.alarm(0)


@pytest.mark.parametrize("ctx", ["bogus", "u:r:no_such_t:s0", "nobody:r:dom_t:s0", "u:r:dom_t:s9"])
def test_bad_context_everywhere(policy, ctx):
    quoted = re.escape(f'invalid context "{ctx}"')
    with pytest.raises(seaccess.ContextError, match=quoted):
        policy.check(ctx, ON_TRUE, "cond", "single")
    with pytest.raises(seaccess.ContextError, match=quoted):
        policy.compute_av(DOM, ctx, "cond")
    with pytest.raises(seaccess.ContextError, match=quoted):
        policy.compute_create(ctx, ON_TRUE, "file")
    with pytest.raises(seaccess.ContextError, match=quoted):
        seaccess.Avc(policy).has_perm(ctx, ON_TRUE, "cond", "single")
    # A batch names the first query it cannot answer.
    qs = [(DOM, ON_TRUE, "cond", "single"), (DOM, ctx, "cond", "single")]
    with pytest.raises(seaccess.ContextError, match="^query 1: " + quoted):
        policy.check_many(qs)
    with pytest.raises(seaccess.ContextError, match="^query 1: " + quoted):
        seaccess.Avc(policy).has_perm_many(qs)
    with pytest.raises(seaccess.ContextError, match="^query 1: " + quoted):
        policy.compute_av_many([q[:3] for q in qs])


def test_unknown_class_and_permission(policy):
    with pytest.raises(seaccess.UnknownNameError, match='unknown class "nope"'):
        policy.check(DOM, ON_TRUE, "nope", "single")
    with pytest.raises(seaccess.UnknownNameError, match='class cond has no permission "nope"'):
        policy.check(DOM, ON_TRUE, "cond", "single nope")
    with pytest.raises(seaccess.UnknownNameError, match='^query 0: class cond has no permission "nope"'):
        policy.check_many([(DOM, ON_TRUE, "cond", "nope")])
    with pytest.raises(seaccess.UnknownNameError, match='^query 0: unknown class "nope"'):
        policy.compute_av_many([(DOM, ON_TRUE, "nope")])


def test_wrong_shapes_are_type_errors(policy):
    with pytest.raises(TypeError, match="permissions must be a str or a sequence of str, not int"):
        policy.check(DOM, ON_TRUE, "cond", 5)
    with pytest.raises(TypeError, match=r"query 0: expected a tuple \(scontext, tcontext, tclass, perms\)"):
        policy.check_many([(DOM, ON_TRUE, "cond")])
    with pytest.raises(TypeError, match="query 1: contexts and class must be str"):
        policy.check_many([(DOM, ON_TRUE, "cond", "single"), (DOM, 3, "cond", "single")])
    with pytest.raises(seaccess.Error, match="no permission named"):
        policy.check(DOM, ON_TRUE, "cond", [])
    with pytest.raises(seaccess.Error, match="capacity"):
        seaccess.Avc(policy, 0)
