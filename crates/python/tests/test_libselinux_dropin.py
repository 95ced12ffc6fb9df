"""Python's own `import selinux` (Debian's python3-selinux, unmodified) on libseaccess in place of
libselinux.so.1 (`make capi` writes target/libselinux/libselinux.so.1): its access, compute,
boolean, AVC and context calls answer as these bindings do on the same policy, and its labeling
calls (selabel_lookup, matchpathcon, partial and best match, which need no kernel) as the same
module does on Debian's own libselinux. The module runs in Debian's /usr/bin/python3 with
LD_LIBRARY_PATH and SEACCESS_POLICY set, as `seaccess run` would run it; a missing library,
interpreter or module fails the test."""

import json
import os
import subprocess
from pathlib import Path

import pytest

import seaccess
from conftest import DEBIAN, ROOT, required

DROPIN = ROOT / "target" / "libselinux" / "libselinux.so.1"
PY = Path("/usr/bin/python3")

CONTEXTS = [
    "unconfined_u:unconfined_r:unconfined_t:s0",
    "system_u:system_r:httpd_t:s0",
    "system_u:system_r:sshd_t:s0-s0:c0.c1023",
    "system_u:object_r:etc_t:s0",
    "system_u:object_r:shadow_t:s0",
    "system_u:object_r:httpd_sys_content_t:s0",
    "system_u:object_r:tmp_t:s0",
]
CLASSES = ["file", "dir", "process", "unix_stream_socket"]
BOOLEANS = ["httpd_enable_cgi", "httpd_read_user_content", "ssh_sysadm_login"]

SCRIPT = r"""
import json, sys, selinux
q = json.load(sys.stdin)
out = {"av": [], "sid": [], "check": [], "bool": {}, "ctx": [], "avc": []}
for s, t, c in q["av"]:
    cls = selinux.string_to_security_class(c)
    avd = selinux.av_decision()
    rc = selinux.security_compute_av(s, t, cls, 0, avd)
    out["av"].append([rc, avd.allowed, avd.decided, avd.auditallow, avd.auditdeny])
    row = []
    for f in (selinux.security_compute_create, selinux.security_compute_relabel, selinux.security_compute_member):
        try:
            row.append(f(s, t, cls)[1])
        except OSError as e:
            row.append("errno %d" % e.errno)
    out["sid"].append(row)
for s, t, c, p in q["check"]:
    try:
        out["check"].append(selinux.selinux_check_access(s, t, c, p) == 0)
    except OSError:
        out["check"].append(False)
selinux.avc_open(None, 0)
for s, t, c, p in q["check"]:
    ssid, tsid = selinux.avc_context_to_sid(s)[1], selinux.avc_context_to_sid(t)[1]
    cls = selinux.string_to_security_class(c)
    avd = selinux.av_decision()
    try:
        rc = selinux.avc_has_perm_noaudit(ssid, tsid, cls, selinux.string_to_av_perm(cls, p), None, avd)
    except OSError as e:
        rc = -e.errno
    try:
        audited = selinux.avc_has_perm(ssid, tsid, cls, selinux.string_to_av_perm(cls, p), None)
    except OSError as e:
        audited = -e.errno
    out["avc"].append([rc, audited, avd.allowed])
for b in q["bool"]:
    out["bool"][b] = selinux.security_get_boolean_active(b)
for s in q["ctx"]:
    k = selinux.context_new(s)
    out["ctx"].append([selinux.context_user_get(k), selinux.context_role_get(k), selinux.context_type_get(k), selinux.context_range_get(k), selinux.security_check_context(s)])
print(json.dumps(out))
"""


LABEL_SCRIPT = r"""
import json, sys, selinux
q = json.load(sys.stdin)
h = selinux.selabel_open(selinux.SELABEL_CTX_FILE, None, 0)
out = []
for path, mode in q:
    row = []
    for f in (lambda: selinux.selabel_lookup(h, path, mode)[1], lambda: selinux.matchpathcon(path, mode)[1],
              lambda: selinux.selabel_lookup_best_match(h, path, mode)[1], lambda: selinux.selabel_partial_match(h, path)):
        try:
            row.append(f())
        except OSError as e:
            row.append("errno %d" % e.errno)
    out.append(row)
print(json.dumps(out))
"""
LABEL_PATHS = ["/etc/shadow", "/etc", "/var/www/html/index.html", "/home/u/.ssh/authorized_keys", "/usr/bin/ls", "/usr/sbin/sshd",
               "/tmp/x", "/run/user/1000", "/var/lib/mysql", "/dev/null", "/nonexistent/deep/path", "/srv", "/root/.bashrc", "/var/log/audit/audit.log"]


def test_labeling_answers_as_on_libselinux():
    required(DROPIN, "run `make capi`")
    required(PY, "Debian's python3 (make deps)")
    pol = required(DEBIAN["default"], "install selinux-policy-default (make deps)")
    q = [(p, m) for p in LABEL_PATHS for m in (0, 0o100000, 0o40000)]
    runs = []
    for env in (dict(os.environ), dict(os.environ, LD_LIBRARY_PATH=str(DROPIN.parent), SEACCESS_POLICY=str(pol))):
        r = subprocess.run([str(PY), "-c", LABEL_SCRIPT], input=json.dumps(q), capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr[-2000:]
        runs.append(json.loads(r.stdout))
    ours_lib = subprocess.run([str(PY), "-c", "import selinux, os; print(open('/proc/self/maps').read())"], capture_output=True, text=True,
                              env=dict(os.environ, LD_LIBRARY_PATH=str(DROPIN.parent), SEACCESS_POLICY=str(pol))).stdout
    assert str(DROPIN) in ours_lib, "the second run must load libseaccess"
    assert runs[0] == runs[1]
    assert any(row[0] == "system_u:object_r:shadow_t:s0" for row in runs[1])


@pytest.fixture(scope="module")
def answers():
    required(DROPIN, "run `make capi`")
    required(PY, "Debian's python3 (make deps)")
    pol = required(DEBIAN["default"], "install selinux-policy-default (make deps)")
    av = [(s, t, c) for s in CONTEXTS for t in CONTEXTS for c in CLASSES]
    check = [(s, t, c, p) for s, t, c in av for p in ("read", "getattr") if c != "process"]
    q = {"av": av, "check": check, "bool": BOOLEANS, "ctx": CONTEXTS}
    env = dict(os.environ, LD_LIBRARY_PATH=str(DROPIN.parent), SEACCESS_POLICY=str(pol))
    r = subprocess.run([str(PY), "-c", SCRIPT], input=json.dumps(q), capture_output=True, text=True, env=env, timeout=120)
    if r.returncode != 0:
        pytest.fail(f"import selinux on libseaccess failed: {r.stderr[-2000:]}", pytrace=False)
    return q, json.loads(r.stdout), seaccess.Policy.load(pol)


def test_compute_av_answers_as_the_bindings(answers):
    q, got, pol = answers
    for (s, t, c), (rc, allowed, decided, auditallow, auditdeny) in zip(q["av"], got["av"]):
        want = pol.compute_av(s, t, c)
        assert rc == 0
        assert (allowed, decided, auditallow, auditdeny) == (want.allowed, want.decided, want.auditallow, want.auditdeny), (s, t, c)


def test_compute_create_relabel_member_answer_as_the_bindings(answers):
    q, got, pol = answers
    for (s, t, c), row in zip(q["av"], got["sid"]):
        want = []
        for f in (pol.compute_create, pol.compute_relabel, pol.compute_member):
            try:
                want.append(f(s, t, c))
            except seaccess.Error:
                want.append(None)
        for g, w in zip(row, want):
            if w is not None:
                assert g == w, (s, t, c)


def test_check_access_and_booleans_answer_as_the_bindings(answers):
    q, got, pol = answers
    assert got["check"] == [bool(pol.check(s, t, c, [p])) for s, t, c, p in q["check"]]
    assert any(got["check"]) and not all(got["check"])
    booleans = pol.booleans
    assert got["bool"] == {b: int(booleans[b][0]) for b in q["bool"]}


def test_context_helpers_split_as_libselinux(answers):
    q, got, _ = answers
    for s, (user, role, ty, rng, valid) in zip(q["ctx"], got["ctx"]):
        parts = s.split(":", 3)
        assert [user, role, ty, rng] == parts + [None] * (4 - len(parts))
        assert valid == 0


def test_avc_answers_as_the_bindings(answers):
    q, got, pol = answers
    avc = seaccess.Avc(pol)
    for (s, t, c, p), (rc, audited, allowed) in zip(q["check"], got["avc"]):
        want = avc.has_perm(s, t, c, [p])
        assert (rc == 0) == want and (audited == 0) == want, (s, t, c, p, rc, audited)
        assert rc in (0, -13) and audited in (0, -13), (s, t, c, p, rc, audited)
        assert allowed == pol.compute_av(s, t, c).allowed, (s, t, c)
    assert any(rc == 0 for rc, _, _ in got["avc"]) and any(rc != 0 for rc, _, _ in got["avc"])
