//! The process hooks ask exactly the permissions the kernel's hooks ask (hooks.c at
//! 28254722a459938d97150d3b0712b81e06d0645e, as /work/wt/briefs/hooks-verified.md §8 gives
//! them): exec's new credential and its commit, signals, ptrace, capabilities.
//!
//! Method as in socket_hooks.rs: testdata/policies/objmgr-net.cil allows and auditallows
//! everything, so each check writes one `granted` record naming exactly what it asked; variants
//! of it take away single permissions.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use seaccess_objmgr::hooks::fs::MountOpts;
use seaccess_objmgr::hooks::process::{ptrace_mode, sig, ExecOpts};
use seaccess_objmgr::{errno, Class, Cred, InodeSec, ObjectManager, Task};
use seaccess_types::{PolicyNames, Sid};

mod fs_support;
mod net_support;
use net_support::{env_at, net_variant, parse, rec, Env, NetEnv, Rec};

/// The test policy, or a variant of it: `edit` applied to every line.
fn policy(variant: &'static str) -> std::path::PathBuf {
    static PATHS: OnceLock<Mutex<HashMap<&'static str, std::path::PathBuf>>> = OnceLock::new();
    let mut m = PATHS.get_or_init(Default::default).lock().unwrap();
    m.entry(variant)
        .or_insert_with(|| {
            let edit = |f: fn(&str) -> Option<String>| net_variant(&format!("objmgr-net-{variant}"), f);
            match variant {
                "all" => seaccess_testkit::compile("objmgr-net", 33),
                "deny" => edit(|l| (!l.contains("; grant")).then(|| l.to_string())),
                // process2 allows nothing.
                "no-process2" => edit(|l| (!l.contains("(process2 ")).then(|| l.to_string())),
                // No nnp_nosuid_transition capability.
                "no-nnp-cap" => edit(|l| (!l.contains("nnp_nosuid_transition")).then(|| l.to_string())),
                // process allows everything but noatsecure, siginh and rlimitinh.
                "no-inherit" => edit(|l| {
                    Some(l.replace("(allow everything everything (process (all)))", "(allow everything everything (process (not (noatsecure siginh rlimitinh))))"))
                }),
                v => panic!("no variant {v}"),
            }
        })
        .clone()
}

fn env(variant: &'static str) -> Env {
    env_at(&policy(variant))
}

/// A file inode labelled `ctx` on an ext4 mount.
fn inode(e: &Env, ctx: &str, ino: u64) -> InodeSec {
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    InodeSec::new(sb, ino, Class::FILE, Some(e.sid(ctx)))
}

const APP: &str = "u:app_r:app_t:s0";
const PEER: &str = "u:app_r:peer_t:s0";
const NEW: &str = "u:app_r:new_t:s0";
const SET: &str = "u:app_r:set_t:s0";
const EXEC: &str = "u:object_r:exec_t:s0";
const BIN: &str = "u:object_r:bin_t:s0";
const PROG: &str = r#"path="/usr/bin/prog" dev="sda1" ino=7"#;

/// selinux_bprm_creds_for_exec with a type transition (app_t runs an exec_t file, the policy
/// says new_t): `process {transition}` old → new and `file {entrypoint}` new → file, both with
/// the file's path; `process {noatsecure}` old → new with no audit data. Then
/// selinux_bprm_committing_creds `process {rlimitinh}` and, after the commit,
/// selinux_bprm_committed_creds `process {siginh}`, both old → new.
#[test]
fn exec_with_a_transition() {
    let e = env("all");
    let mut t = e.task_as(10, "sh", APP);
    let f = inode(&e, EXEC, 7);
    let c =
        e.om.bprm_creds_for_exec(&t, &f, "/usr/bin/prog", &ExecOpts::default())
            .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("process", "transition", APP, NEW, PROG),
            rec("file", "entrypoint", NEW, EXEC, PROG),
            rec("process", "noatsecure", APP, NEW, "")
        ]
    );
    assert!(c.transitions() && !c.secureexec);
    assert_eq!(
        (e.ctx(c.cred.sid()), e.ctx(c.cred.osid())),
        (NEW.to_string(), APP.to_string())
    );
    assert!(e.om.bprm_committing_creds(&t, &c));
    assert_eq!(e.records(), vec![rec("process", "rlimitinh", APP, NEW, "")]);
    let other = t.handle().clone();
    t.commit_creds(c.cred.clone()).unwrap();
    assert!(e.om.bprm_committed_creds(&t));
    assert_eq!(e.records(), vec![rec("process", "siginh", APP, NEW, "")]);
    // The committed credential is what the task acts with (subjective) and what others act on
    // (objective), at the very next operation.
    e.om.task_kill(&t, &other, sig::SIGTERM).unwrap();
    assert_eq!(e.records(), vec![rec("process", "signal", NEW, NEW, "")]);
    let p = e.task_as(20, "peer", PEER);
    e.om.task_kill(&p, &other, sig::SIGKILL).unwrap();
    assert_eq!(e.records(), vec![rec("process", "sigkill", PEER, NEW, "")]);
}

/// No transition (bin_t has no type_transition rule): `file {execute_no_trans}` old → file,
/// nothing else, and no rlimitinh/siginh (sid == osid).
#[test]
fn exec_without_a_transition() {
    let e = env("all");
    let mut t = e.task_as(10, "sh", APP);
    let f = inode(&e, BIN, 7);
    let c =
        e.om.bprm_creds_for_exec(&t, &f, "/usr/bin/prog", &ExecOpts::default())
            .unwrap();
    assert_eq!(
        e.records(),
        vec![rec("file", "execute_no_trans", APP, BIN, PROG)]
    );
    assert!(!c.transitions());
    assert!(e.om.bprm_committing_creds(&t, &c));
    t.commit_creds(c.cred).unwrap();
    assert!(e.om.bprm_committed_creds(&t));
    assert_eq!(e.records(), vec![]);
}

/// setexeccon: the exec SID wins over the type transition and is used once (the new
/// credential has none); the new credential has no fscreate or sockcreate SID either.
#[test]
fn exec_with_setexeccon() {
    let e = env("all");
    let mut c = Cred::new(e.sid(APP)).prepare();
    c.exec_sid = Some(e.sid(SET));
    c.sockcreate_sid = Some(e.sid(PEER));
    let t = Task::new(10, "sh", c.build());
    let f = inode(&e, EXEC, 7);
    let c =
        e.om.bprm_creds_for_exec(&t, &f, "/usr/bin/prog", &ExecOpts::default())
            .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("process", "transition", APP, SET, PROG),
            rec("file", "entrypoint", SET, EXEC, PROG),
            rec("process", "noatsecure", APP, SET, "")
        ]
    );
    assert_eq!(
        (
            c.cred.exec_sid(),
            c.cred.sockcreate_sid(),
            c.cred.create_sid()
        ),
        (None, None, None)
    );
}

/// A shared or traced exec also asks `process {share}` old → new and `process {ptrace}`
/// tracer (objective SID) → new, after entrypoint and before noatsecure, no audit data.
#[test]
fn exec_shared_and_traced() {
    let e = env("all");
    let t = e.task_as(10, "sh", APP);
    let tracer = e.task_as(30, "gdb", PEER);
    let f = inode(&e, EXEC, 7);
    let opts = ExecOpts {
        share: true,
        tracer: Some(tracer.handle().clone()),
        ..Default::default()
    };
    e.om.bprm_creds_for_exec(&t, &f, "/usr/bin/prog", &opts)
        .unwrap();
    let perms: Vec<(String, String, String)> = e
        .records()
        .into_iter()
        .map(|r| (r.perms, r.scontext, r.tcontext))
        .collect();
    let p = |a: &str, s: &str, t: &str| (a.to_string(), s.to_string(), t.to_string());
    assert_eq!(
        perms,
        vec![
            p("transition", APP, NEW),
            p("entrypoint", NEW, EXEC),
            p("share", APP, NEW),
            p("ptrace", PEER, NEW),
            p("noatsecure", APP, NEW)
        ]
    );
}

/// check_nnp_nosuid: under no_new_privs (or a nosuid mount) and the nnp_nosuid_transition
/// capability, `process2 {nnp_transition [nosuid_transition]}` old → new comes first.
/// Refused: a type transition silently does not happen (execute_no_trans instead), a
/// setexeccon exec fails with EPERM (nnp) or EACCES (nosuid only). Without the capability
/// only a bounded transition is allowed (the seam answers no bounds question: refused).
#[test]
fn exec_under_no_new_privs_and_nosuid() {
    let e = env("all");
    let t = e.task_as(10, "sh", APP);
    let f = inode(&e, EXEC, 7);
    e.om.bprm_creds_for_exec(
        &t,
        &f,
        "/p",
        &ExecOpts {
            nnp: true,
            nosuid: true,
            ..Default::default()
        },
    )
    .unwrap();
    let r = e.records();
    assert_eq!(
        r[0],
        rec("process2", "nnp_transition nosuid_transition", APP, NEW, "")
    );
    assert_eq!(r[1].perms, "transition");

    let e = env("no-process2");
    let t = e.task_as(10, "sh", APP);
    let c =
        e.om.bprm_creds_for_exec(
            &t,
            &f_for(&e),
            "/p",
            &ExecOpts {
                nnp: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(!c.transitions());
    // Refused process2, the fallback to typebounds refuses too, with security_bounded_transition's
    // record (new_t is not bounded by app_t), and the exec goes on without a transition.
    let raw = e.take();
    assert_eq!(
        raw[1],
        format!("op=security_bounded_transition seresult=denied oldcontext={APP} newcontext={NEW}")
    );
    let r: Vec<Rec> = raw
        .iter()
        .filter(|l| l.starts_with("avc:"))
        .map(|l| parse(l))
        .collect();
    assert_eq!(
        (r[0].verdict.as_str(), r[0].perms.as_str()),
        ("denied", "nnp_transition")
    );
    assert_eq!(
        (r[1].perms.as_str(), r[1].tcontext.as_str()),
        ("execute_no_trans", EXEC)
    );
    let mut c = t.cred().prepare();
    c.exec_sid = Some(e.sid(SET));
    let ts = Task::new(11, "sh", c.build());
    let err =
        e.om.bprm_creds_for_exec(
            &ts,
            &f_for(&e),
            "/p",
            &ExecOpts {
                nnp: true,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.errno(), errno::EPERM);
    let err =
        e.om.bprm_creds_for_exec(
            &ts,
            &f_for(&e),
            "/p",
            &ExecOpts {
                nosuid: true,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.errno(), errno::EACCES);
    e.take();
    // Without the policy capability no process2 check is made at all.
    let e = env("no-nnp-cap");
    let t = e.task_as(10, "sh", APP);
    let c =
        e.om.bprm_creds_for_exec(
            &t,
            &f_for(&e),
            "/p",
            &ExecOpts {
                nnp: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert!(!c.transitions());
    let raw = e.take();
    assert_eq!(
        raw[0],
        format!("op=security_bounded_transition seresult=denied oldcontext={APP} newcontext={NEW}"),
        "straight to typebounds"
    );
    assert_eq!(
        raw[1..].iter().map(|l| parse(l).perms).collect::<Vec<_>>(),
        ["execute_no_trans"]
    );
}

fn f_for(e: &Env) -> InodeSec {
    inode(e, EXEC, 7)
}

/// noatsecure refused: the exec goes on in secure mode; rlimitinh and siginh refused: the
/// caller is told to reset limits and signal state. Each refusal is audited.
#[test]
fn refused_inheritance_is_reported_not_failed() {
    let e = env("no-inherit");
    let mut t = e.task_as(10, "sh", APP);
    let c =
        e.om.bprm_creds_for_exec(&t, &f_for(&e), "/p", &ExecOpts::default())
            .unwrap();
    assert!(c.secureexec);
    assert!(!e.om.bprm_committing_creds(&t, &c));
    t.commit_creds(c.cred).unwrap();
    assert!(!e.om.bprm_committed_creds(&t));
    let denied: Vec<String> = e
        .records()
        .into_iter()
        .filter(|r| r.verdict == "denied")
        .map(|r| r.perms)
        .collect();
    assert_eq!(denied, ["noatsecure", "rlimitinh", "siginh"]);
}

/// selinux_task_kill: signal_to_av (0 → signull, SIGCHLD → sigchld, SIGKILL → sigkill,
/// SIGSTOP → sigstop, any other → signal) to the target's objective SID, no audit data. A
/// server acting for a client (override_creds) signals as the client, and is itself still
/// seen as the server; the override ends with its guard.
#[test]
fn signals_and_credential_overrides() {
    let e = env("all");
    let mut srv = e.task_as(10, "srv", APP);
    let peer = e.task_as(20, "peer", PEER);
    let target = peer.handle().clone();
    for (s, perm) in [
        (0, "signull"),
        (sig::SIGCHLD, "sigchld"),
        (sig::SIGKILL, "sigkill"),
        (sig::SIGSTOP, "sigstop"),
        (sig::SIGTERM, "signal"),
        (sig::SIGCONT, "signal"),
        (34, "signal"),
    ] {
        e.om.task_kill(&srv, &target, s).unwrap();
        assert_eq!(
            e.records(),
            vec![rec("process", perm, APP, PEER, "")],
            "signal {s}"
        );
    }
    let me = srv.handle().clone();
    {
        let g = srv.override_creds(Cred::new(e.sid(NEW)));
        e.om.task_kill(&g, &target, sig::SIGTERM).unwrap();
        e.om.task_kill(&peer, &me, sig::SIGTERM).unwrap();
        assert_eq!(
            e.records(),
            vec![
                rec("process", "signal", NEW, PEER, ""),
                rec("process", "signal", PEER, APP, "")
            ]
        );
    }
    e.om.task_kill(&srv, &target, sig::SIGTERM).unwrap();
    assert_eq!(e.records(), vec![rec("process", "signal", APP, PEER, "")]);
}

/// selinux_ptrace_access_check: a read-mode access asks `file {read}` of the target's SID,
/// an attach `process {ptrace}`; selinux_ptrace_traceme asks `process {ptrace}` from the
/// parent to the task.
#[test]
fn ptrace_access() {
    let e = env("all");
    let t = e.task_as(10, "gdb", APP);
    let child = e.task_as(20, "prog", PEER);
    e.om.ptrace_access_check(&t, child.handle(), ptrace_mode::READ)
        .unwrap();
    e.om.ptrace_access_check(&t, child.handle(), ptrace_mode::ATTACH)
        .unwrap();
    e.om.ptrace_traceme(&child, t.handle()).unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("file", "read", APP, PEER, ""),
            rec("process", "ptrace", APP, PEER, ""),
            rec("process", "ptrace", APP, PEER, "")
        ]
    );
}

/// cred_has_capability: the task to itself in `capability` (0-31) or `capability2` (32-63),
/// `cap_userns`/`cap2_userns` outside the initial namespace, with ` capability=N ` (a
/// trailing space, so two before scontext=); out of range is EINVAL; noaudit writes nothing.
#[test]
fn capabilities() {
    let e = env("all");
    let t = e.task_as(10, "ip", APP);
    e.om.capable(&t, 12).unwrap();
    e.om.capable(&t, 33).unwrap();
    e.om.capable_opts(&t, 0, true, false).unwrap();
    e.om.capable_opts(&t, 38, true, false).unwrap();
    e.om.capable_opts(&t, 21, false, true).unwrap();
    let r = e.take();
    assert_eq!(r[0], format!("avc:  granted  {{ net_admin }} for  pid=10 comm=\"ip\" capability=12  scontext={APP} tcontext={APP} tclass=capability"));
    let r: Vec<Rec> = r.iter().map(|s| parse(s)).collect();
    assert_eq!(
        r[1],
        rec("capability2", "mac_admin", APP, APP, "capability=33")
    );
    assert_eq!(r[2], rec("cap_userns", "chown", APP, APP, "capability=0"));
    assert_eq!(
        r[3],
        rec("cap2_userns", "perfmon", APP, APP, "capability=38")
    );
    assert_eq!(r.len(), 4);
    assert_eq!(e.om.capable(&t, 64).unwrap_err().errno(), errno::EINVAL);
}

/// The denied records in the kernel's format when nothing is allowed.
#[test]
fn denials_in_the_kernel_format() {
    let e = env("deny");
    let t = e.task_as(42, "sh", APP);
    let err =
        e.om.bprm_creds_for_exec(&t, &f_for(&e), "/usr/bin/prog", &ExecOpts::default())
            .unwrap_err();
    assert_eq!(err.errno(), errno::EACCES);
    assert_eq!(
        e.take(),
        vec![format!(
            "avc:  denied  {{ transition }} for  pid=42 comm=\"sh\" path=\"/usr/bin/prog\" dev=\"sda1\" ino=7 scontext={APP} tcontext={NEW} tclass=process permissive=0"
        )]
    );
    assert!(e.om.capable(&t, 1).is_err());
    assert_eq!(e.take(), vec![format!("avc:  denied  {{ dac_override }} for  pid=42 comm=\"sh\" capability=1  scontext={APP} tcontext={APP} tclass=capability permissive=0")]);
    let p = e.task_as(20, "peer", PEER);
    assert!(e.om.task_kill(&t, p.handle(), sig::SIGKILL).is_err());
    assert!(e
        .om
        .ptrace_access_check(&t, p.handle(), ptrace_mode::READ)
        .is_err());
    assert_eq!(
        e.take(),
        vec![
            format!("avc:  denied  {{ sigkill }} for  pid=42 comm=\"sh\" scontext={APP} tcontext={PEER} tclass=process permissive=0"),
            format!("avc:  denied  {{ read }} for  pid=42 comm=\"sh\" scontext={APP} tcontext={PEER} tclass=file permissive=0"),
        ]
    );
    let _ = &e.avc;
}

fn debian() -> Option<Env> {
    let path = seaccess_testkit::debian_policy("default")?;
    let (server, avc) = seaccess_testkit::server_with_avc(&path, 4096);
    let om = ObjectManager::new(server.clone(), &*server, avc.clone());
    let log = seaccess_testkit::audit_recorder(&avc);
    Some(Env {
        server,
        avc,
        om,
        log,
    })
}

fn object(e: &Env, ty: &str) -> Sid {
    e.server
        .context_to_sid(&format!("system_u:object_r:{ty}:s0"))
        .or_else(|_| e.server.context_to_sid(&format!("system_u:object_r:{ty}")))
        .unwrap()
}

/// On Debian's policy: execs of confined domains, signals between domains and ptrace, each
/// answer compared with what the security server says of the same triples, in the kernel's
/// order of checks (hooks.c selinux_bprm_creds_for_exec, selinux_task_kill).
#[test]
fn debian_exec_and_signals_agree_with_the_security_server() {
    let Some(e) = debian() else { return };
    let g = e.server.snapshot();
    let process = g.class_id("process").unwrap();
    let (mut allowed, mut refused, mut transitions) = (0, 0, 0);
    for dom in [
        "user_t",
        "staff_t",
        "unconfined_t",
        "init_t",
        "httpd_t",
        "sshd_t",
    ] {
        let old = seaccess_testkit::subject(&g, dom);
        let t = Task::new(100, "sh", Cred::new(old));
        for exe in [
            "passwd_exec_t",
            "sshd_exec_t",
            "httpd_exec_t",
            "bin_t",
            "shell_exec_t",
            "shadow_t",
        ] {
            let fsid = object(&e, exe);
            let f = InodeSec::new(
                e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap(),
                7,
                Class::FILE,
                Some(fsid),
            );
            let new =
                seaccess_types::LabelServer::transition_sid(&*e.server, old, fsid, process, None)
                    .unwrap();
            let expect = if new == old {
                seaccess_testkit::passes(&e.server, old, fsid, "file", "execute_no_trans")
            } else {
                transitions += 1;
                seaccess_testkit::passes(&e.server, old, new, "process", "transition")
                    && seaccess_testkit::passes(&e.server, new, fsid, "file", "entrypoint")
            };
            let got = e.om.bprm_creds_for_exec(&t, &f, "/x", &ExecOpts::default());
            assert_eq!(got.is_ok(), expect, "{dom} executing {exe}");
            if let Ok(c) = got {
                assert_eq!(c.cred.sid(), new);
                assert_eq!(
                    c.secureexec,
                    new != old
                        && !seaccess_testkit::passes(&e.server, old, new, "process", "noatsecure")
                );
            }
            if expect {
                allowed += 1
            } else {
                refused += 1
            }
        }
        for target in ["user_t", "init_t", "sshd_t", "httpd_t"] {
            let tsid = seaccess_testkit::subject(&g, target);
            let other = Task::new(200, "t", Cred::new(tsid));
            for (s, perm) in [
                (sig::SIGKILL, "sigkill"),
                (sig::SIGTERM, "signal"),
                (0, "signull"),
                (sig::SIGCHLD, "sigchld"),
            ] {
                assert_eq!(
                    e.om.task_kill(&t, other.handle(), s).is_ok(),
                    seaccess_testkit::passes(&e.server, old, tsid, "process", perm),
                    "{dom} {perm} {target}"
                );
            }
            assert_eq!(
                e.om.ptrace_access_check(&t, other.handle(), ptrace_mode::ATTACH)
                    .is_ok(),
                seaccess_testkit::passes(&e.server, old, tsid, "process", "ptrace")
            );
        }
    }
    assert!(
        allowed > 0 && refused > 0 && transitions > 0,
        "{allowed} allowed, {refused} refused, {transitions} transitions"
    );
}
