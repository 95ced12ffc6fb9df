//! The task, credential and task-attribute hooks ask exactly the permissions the kernel's hooks
//! ask (security/selinux/hooks.c at 28254722a459938d97150d3b0712b81e06d0645e): selinux_task_*,
//! selinux_capget/capset, selinux_userns_create, selinux_vm_enough_memory,
//! selinux_task_to_inode, selinux_lsm_getattr/setattr (getprocattr, setprocattr,
//! getselfattr, setselfattr), selinux_kernel_act_as, selinux_kernel_create_files_as,
//! selinux_dentry_create_files_as, selinux_dentry_init_security, selinux_syslog and the
//! io_uring hooks.
//!
//! Method as in process_hooks.rs: testdata/policies/objmgr-net.cil allows and auditallows
//! everything, so each check writes one `granted` record naming exactly what it asked; variants
//! of it take permissions away.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use seaccess_objmgr::hooks::fs::MountOpts;
use seaccess_objmgr::hooks::process::{
    prlimit_flags, syslog_action, ExecOpts, ProcAttr, SetAttrOpts,
};
use seaccess_objmgr::hooks::socket::{family, sock_type};
use seaccess_objmgr::{errno, Class, Cred, InodeSec, PreparedCred, Task};

mod fs_support;
mod net_support;
use net_support::{env_at, net_variant, rec, Env, NetEnv};

/// The test policy, or a variant of it: `edit` applied to every line.
fn policy(variant: &'static str) -> std::path::PathBuf {
    static PATHS: OnceLock<Mutex<HashMap<&'static str, std::path::PathBuf>>> = OnceLock::new();
    let mut m = PATHS.get_or_init(Default::default).lock().unwrap();
    m.entry(variant)
        .or_insert_with(|| {
            let edit = |f: fn(&str) -> Option<String>| {
                net_variant(&format!("objmgr-net-tasks-{variant}"), f)
            };
            match variant {
                "all" => seaccess_testkit::compile("objmgr-net", 33),
                "deny" => edit(|l| (!l.contains("; grant")).then(|| l.to_string())),
                // app_t bounds set_t (and nothing bounds new_t): a multithreaded setcon may go
                // to set_t only.
                "bounds" => edit(|l| {
                    Some(if l.starts_with("(typetransition app_t exec_t") {
                        format!("{l}\n(typebounds app_t set_t)")
                    } else {
                        l.to_string()
                    })
                }),
                // process allows everything but dyntransition.
                "no-dyntransition" => edit(|l| {
                    Some(l.replace(
                        "(allow everything everything (process (all)))",
                        "(allow everything everything (process (not (dyntransition))))",
                    ))
                }),
                // key allows nothing.
                "no-key" => edit(|l| (!l.contains("(key (all))")).then(|| l.to_string())),
                v => panic!("no variant {v}"),
            }
        })
        .clone()
}

fn env(variant: &'static str) -> Env {
    env_at(&policy(variant))
}

const APP: &str = "u:app_r:app_t:s0";
const PEER: &str = "u:app_r:peer_t:s0";
const NEW: &str = "u:app_r:new_t:s0";
const SET: &str = "u:app_r:set_t:s0";
const EXEC: &str = "u:object_r:exec_t:s0";
const BIN: &str = "u:object_r:bin_t:s0";
/// The kernel's initial SID's context (objmgr-net.cil's sidcontext kernel).
const KERNEL: &str = "u:app_r:kernel_t:s0-s1:c0";

/// An inode labelled `ctx` on a filesystem whose inodes carry labels (rootfs: genfs with
/// per-file labels, so a fscreate SID is used).
fn labelled(e: &Env, ctx: &str, ino: u64, class: Class) -> InodeSec {
    let sb =
        e.om.mount("rootfs", "rootfs", &MountOpts::default())
            .unwrap();
    assert!(sb.sblabel);
    InodeSec::new(sb, ino, class, Some(e.sid(ctx)))
}

/// selinux_task_setpgid, _getpgid, _getsid, _setnice, _setioprio, _getioprio,
/// _setscheduler, _getscheduler, _movememory, selinux_capget: one `process` permission from
/// the caller's subjective SID to the target's objective SID, no audit data. A server acting
/// for a client (override_creds) asks as the client; the target is seen as it is to others.
#[test]
fn task_hooks_ask_the_target_objective_sid() {
    let e = env("all");
    let mut t = e.task_as(10, "sh", APP);
    let p = e.task_as(20, "peer", PEER);
    let target = p.handle().clone();
    type Op = fn(
        &seaccess_objmgr::ObjectManager,
        &Task,
        &seaccess_objmgr::TaskRef,
    ) -> seaccess_objmgr::Result<()>;
    let ops: [(Op, &str); 10] = [
        (|om, t, p| om.task_setpgid(t, p), "setpgid"),
        (|om, t, p| om.task_getpgid(t, p), "getpgid"),
        (|om, t, p| om.task_getsid(t, p), "getsession"),
        (|om, t, p| om.task_setnice(t, p), "setsched"),
        (|om, t, p| om.task_setioprio(t, p), "setsched"),
        (|om, t, p| om.task_getioprio(t, p), "getsched"),
        (|om, t, p| om.task_setscheduler(t, p), "setsched"),
        (|om, t, p| om.task_getscheduler(t, p), "getsched"),
        (|om, t, p| om.task_movememory(t, p), "setsched"),
        (|om, t, p| om.capget(t, p), "getcap"),
    ];
    for (op, perm) in ops {
        op(&e.om, &t, &target).unwrap();
        assert_eq!(
            e.records(),
            vec![rec("process", perm, APP, PEER, "")],
            "{perm}"
        );
    }
    // The peer's objective SID after it commits a new credential.
    let mut p = p;
    p.commit_creds(Cred::new(e.sid(NEW))).unwrap();
    let g = t.override_creds(Cred::new(e.sid(SET)));
    for (op, perm) in ops {
        op(&e.om, &g, &target).unwrap();
        assert_eq!(
            e.records(),
            vec![rec("process", perm, SET, NEW, "")],
            "{perm} overridden"
        );
    }
}

/// selinux_task_alloc (`process {fork}`) and selinux_userns_create (`user_namespace
/// {create}`): the task to itself, with its subjective SID.
#[test]
fn fork_and_user_namespaces_ask_the_task_itself() {
    let e = env("all");
    let mut t = e.task_as(10, "sh", APP);
    e.om.task_alloc(&t).unwrap();
    e.om.userns_create(&t).unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("process", "fork", APP, APP, ""),
            rec("user_namespace", "create", APP, APP, "")
        ]
    );
    let g = t.override_creds(Cred::new(e.sid(SET)));
    e.om.task_alloc(&g).unwrap();
    assert_eq!(e.records(), vec![rec("process", "fork", SET, SET, "")]);
}

/// selinux_task_prlimit: nothing for flags 0; `{setrlimit}` for a write, `{getrlimit}` for a
/// read, both in one check (listed in the policy's bit order); other bits are EINVAL.
/// selinux_task_setrlimit: only a change of the hard limit asks `{setrlimit}`.
/// selinux_capset: `{setcap}` from the old credential's SID to the new one's.
#[test]
fn resource_limits_and_capability_sets() {
    let e = env("all");
    let t = e.task_as(10, "sh", APP);
    let p = e.task_as(20, "peer", PEER);
    e.om.task_prlimit(&t, p.handle(), 0).unwrap();
    assert_eq!(e.records(), vec![]);
    e.om.task_prlimit(&t, p.handle(), prlimit_flags::READ)
        .unwrap();
    e.om.task_prlimit(&t, p.handle(), prlimit_flags::WRITE)
        .unwrap();
    e.om.task_prlimit(&t, p.handle(), prlimit_flags::READ | prlimit_flags::WRITE)
        .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("process", "getrlimit", APP, PEER, ""),
            rec("process", "setrlimit", APP, PEER, ""),
            rec("process", "setrlimit getrlimit", APP, PEER, "")
        ]
    );
    assert_eq!(
        e.om.task_prlimit(&t, p.handle(), 4).unwrap_err().errno(),
        errno::EINVAL
    );
    e.om.task_setrlimit(&t, p.handle(), 1024, 1024).unwrap();
    assert_eq!(e.records(), vec![]);
    e.om.task_setrlimit(&t, p.handle(), 1024, 4096).unwrap();
    e.om.task_setrlimit(&t, t.handle(), u64::MAX, 10).unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("process", "setrlimit", APP, PEER, ""),
            rec("process", "setrlimit", APP, APP, "")
        ]
    );
    let new = t.cred().prepare().build();
    e.om.capset(&t, &new).unwrap();
    assert_eq!(e.records(), vec![rec("process", "setcap", APP, APP, "")]);
}

/// selinux_vm_enough_memory: `capability {sys_admin}` to itself, never audited; a refusal is
/// only an answer (not counted as an administrator), never an error.
#[test]
fn the_memory_reserve_asks_sys_admin_without_audit() {
    let e = env("all");
    let t = e.task_as(10, "sh", APP);
    assert!(e.om.vm_enough_memory(&t));
    assert_eq!(e.take(), Vec::<String>::new());
    let e = env("deny");
    let t = e.task_as(10, "sh", APP);
    assert!(!e.om.vm_enough_memory(&t));
    assert_eq!(e.take(), Vec::<String>::new());
}

/// selinux_task_to_inode: a /proc/PID inode has the class its mode gives and the task's
/// objective SID at the time it is made.
#[test]
fn proc_pid_inodes_carry_the_task_sid() {
    let e = env("all");
    let mut t = e.task_as(10, "sh", APP);
    let sb = e.om.mount("proc", "proc", &MountOpts::default()).unwrap();
    let d = e.om.task_to_inode(t.handle(), &sb, 100, 0o040555);
    let f = e.om.task_to_inode(t.handle(), &sb, 101, 0o100444);
    assert_eq!((d.class(), e.ctx(d.sid())), (Class::DIR, APP.to_string()));
    assert_eq!((f.class(), e.ctx(f.sid())), (Class::FILE, APP.to_string()));
    {
        // An override is not what others see.
        let g = t.override_creds(Cred::new(e.sid(SET)));
        assert_eq!(
            e.ctx(e.om.task_to_inode(g.handle(), &sb, 100, 0o040555).sid()),
            APP
        );
    }
    t.commit_creds(Cred::new(e.sid(NEW))).unwrap();
    assert_eq!(
        e.ctx(e.om.task_to_inode(t.handle(), &sb, 100, 0o040555).sid()),
        NEW
    );
    assert_eq!(e.records(), vec![]);
}

/// selinux_getprocattr / selinux_getselfattr (selinux_lsm_getattr): another task's attribute
/// needs `process {getattr}` to its SID; one's own none. current and prev are the SID and the
/// SID before the last exec; exec, fscreate, keycreate and sockcreate are None until set. An
/// unknown name is EINVAL, an unknown LSM_ATTR_* number EOPNOTSUPP.
#[test]
fn reading_task_attributes() {
    let e = env("all");
    let mut c = PreparedCred::new(e.sid(NEW));
    c.osid = e.sid(APP);
    c.sockcreate_sid = Some(e.sid(PEER));
    let t = Task::new(10, "sh", c.build());
    let p = e.task_as(20, "peer", PEER);
    let me = t.handle().clone();
    assert_eq!(
        e.om.getprocattr(&t, &me, "current").unwrap().as_deref(),
        Some(NEW)
    );
    assert_eq!(
        e.om.getprocattr(&t, &me, "prev").unwrap().as_deref(),
        Some(APP)
    );
    assert_eq!(
        e.om.getprocattr(&t, &me, "sockcreate").unwrap().as_deref(),
        Some(PEER)
    );
    for a in ["exec", "fscreate", "keycreate"] {
        assert_eq!(e.om.getprocattr(&t, &me, a).unwrap(), None, "{a}");
    }
    assert_eq!(e.records(), vec![]);
    assert_eq!(
        e.om.getprocattr(&p, &me, "current").unwrap().as_deref(),
        Some(NEW)
    );
    assert_eq!(e.om.getprocattr(&p, &me, "exec").unwrap(), None);
    assert_eq!(
        e.records(),
        vec![
            rec("process", "getattr", PEER, NEW, ""),
            rec("process", "getattr", PEER, NEW, "")
        ]
    );
    assert_eq!(
        e.om.getprocattr(&t, &me, "context").unwrap_err().errno(),
        errno::EINVAL
    );
    assert_eq!(
        e.om.getselfattr(&t, ProcAttr::Current.lsm_attr())
            .unwrap()
            .as_deref(),
        Some(NEW)
    );
    assert_eq!(e.om.getselfattr(&t, 104).unwrap().as_deref(), Some(APP));
    assert_eq!(
        e.om.getselfattr(&t, 99).unwrap_err().errno(),
        errno::EOPNOTSUPP
    );
    assert_eq!(e.records(), vec![]);
}

/// selinux_setprocattr (selinux_lsm_setattr) for exec, fscreate, sockcreate and keycreate:
/// `process {setexec | setfscreate | setsockcreate | setkeycreate}` self, keycreate also
/// `key {create}` to the new SID; each committed at once and used by the next exec, file
/// creation, socket creation; an empty value (or a lone newline) clears it.
#[test]
fn setting_creation_attributes_and_their_use() {
    let e = env("all");
    let mut t = e.task_as(10, "sh", APP);
    let none = SetAttrOpts::default();
    let other = t.handle().clone();

    e.om.setprocattr(&mut t, "exec", &format!("{SET}\n"), &none)
        .unwrap();
    assert_eq!(e.records(), vec![rec("process", "setexec", APP, APP, "")]);
    assert_eq!(e.ctx(t.cred().exec_sid().unwrap()), SET);
    assert_eq!(
        other.objective().exec_sid(),
        t.cred().exec_sid(),
        "committed: objective and subjective"
    );
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let prog = InodeSec::new(sb, 7, Class::FILE, Some(e.sid(EXEC)));
    let c =
        e.om.bprm_creds_for_exec(&t, &prog, "/p", &ExecOpts::default())
            .unwrap();
    assert_eq!(
        e.ctx(c.cred.sid()),
        SET,
        "the exec SID wins over the type transition to new_t"
    );
    e.records();

    let dir = labelled(&e, BIN, 2, Class::DIR);
    assert_eq!(
        e.ctx(
            e.om.determine_inode_label(&t, &dir, "f", Class::FILE)
                .unwrap()
        ),
        BIN,
        "the type transition default: the directory's type"
    );
    e.om.setprocattr(&mut t, "fscreate", EXEC, &none).unwrap();
    assert_eq!(
        e.records(),
        vec![rec("process", "setfscreate", APP, APP, "")]
    );
    assert_eq!(
        e.ctx(
            e.om.determine_inode_label(&t, &dir, "f", Class::FILE)
                .unwrap()
        ),
        EXEC
    );

    e.om.setselfattr(&mut t, ProcAttr::SockCreate.lsm_attr(), PEER, &none)
        .unwrap();
    assert_eq!(
        e.records(),
        vec![rec("process", "setsockcreate", APP, APP, "")]
    );
    e.om.socket_create(&t, family::UNIX, sock_type::STREAM, 0, false)
        .unwrap();
    assert_eq!(
        e.records(),
        vec![rec("unix_stream_socket", "create", APP, PEER, "")]
    );

    e.om.setprocattr(&mut t, "keycreate", NEW, &none).unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("process", "setkeycreate", APP, APP, ""),
            rec("key", "create", APP, NEW, "")
        ]
    );
    assert_eq!(e.ctx(t.cred().keycreate_sid().unwrap()), NEW);
    assert_eq!(
        e.om.getprocattr(&t, &other, "keycreate")
            .unwrap()
            .as_deref(),
        Some(NEW)
    );

    // Clearing: no key check, and the attribute reads as unset.
    e.om.setprocattr(&mut t, "keycreate", "", &none).unwrap();
    e.om.setprocattr(&mut t, "fscreate", "\n", &none).unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("process", "setkeycreate", APP, APP, ""),
            rec("process", "setfscreate", APP, APP, "")
        ]
    );
    assert_eq!(
        (t.cred().keycreate_sid(), t.cred().create_sid()),
        (None, None)
    );
    assert_eq!(
        e.ctx(
            e.om.determine_inode_label(&t, &dir, "f", Class::FILE)
                .unwrap()
        ),
        BIN
    );
    assert_eq!(t.cred().sid(), e.sid(APP), "only setcon changes the SID");
}

/// Values the kernel refuses: an unknown context is EINVAL after the `set*` check (for
/// fscreate with the kernel's `op=fscreate invalid_context=` record, hex-encoded as an
/// untrusted string; with CAP_MAC_ADMIN `capability2 {mac_admin}` is asked instead); `prev`
/// is EOPNOTSUPP before any check; an unknown name EINVAL; nothing is committed.
#[test]
fn invalid_attribute_values() {
    let e = env("all");
    let mut t = e.task_as(10, "sh", APP);
    let none = SetAttrOpts::default();
    let before = t.cred().clone();
    let err =
        e.om.setprocattr(&mut t, "exec", "u:app_r:nosuch_t:s0", &none)
            .unwrap_err();
    assert_eq!(err.errno(), errno::EINVAL);
    assert_eq!(e.records(), vec![rec("process", "setexec", APP, APP, "")]);
    let err =
        e.om.setprocattr(&mut t, "fscreate", "u:object_r:nosuch_t:s0\n", &none)
            .unwrap_err();
    assert_eq!(err.errno(), errno::EINVAL);
    assert_eq!(e.take(), vec![format!("avc:  granted  {{ setfscreate }} for  pid=10 comm=\"sh\" scontext={APP} tcontext={APP} tclass=process"), "op=fscreate invalid_context=\"u:object_r:nosuch_t:s0\"".to_string()]);
    e.om.setprocattr(&mut t, "fscreate", "bad context", &none)
        .unwrap_err();
    assert_eq!(
        e.take()[1],
        "op=fscreate invalid_context=62616420636F6E74657874"
    );
    assert_eq!(
        e.om.setprocattr(&mut t, "prev", APP, &none)
            .unwrap_err()
            .errno(),
        errno::EOPNOTSUPP
    );
    assert_eq!(
        e.om.setprocattr(&mut t, "context", APP, &none)
            .unwrap_err()
            .errno(),
        errno::EINVAL
    );
    assert_eq!(
        e.om.setselfattr(&mut t, 99, APP, &none)
            .unwrap_err()
            .errno(),
        errno::EOPNOTSUPP
    );
    assert_eq!(e.take(), Vec::<String>::new());
    assert!(
        std::sync::Arc::ptr_eq(t.cred(), &before),
        "nothing committed"
    );
    // With CAP_MAC_ADMIN and `capability2 {mac_admin}` the context is kept unmapped, as
    // security_context_to_sid_force keeps it: the fscreate SID holds the text.
    let mac = SetAttrOpts {
        cap_mac_admin: true,
        ..Default::default()
    };
    e.om.setprocattr(&mut t, "fscreate", "u:object_r:nosuch_t:s0", &mac)
        .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("process", "setfscreate", APP, APP, ""),
            rec("capability2", "mac_admin", APP, APP, "capability=33")
        ]
    );
    let sid = t.cred().create_sid().expect("an fscreate SID");
    assert_eq!(
        e.om.server().names().sid_to_context_inval(sid),
        Some("u:object_r:nosuch_t:s0".to_string())
    );
}

/// setcon (`current`, selinux_lsm_setattr): `process {setcurrent}` self, then `process
/// {dyntransition}` old → new, then for a traced task `process {ptrace}` from the tracer's
/// objective SID to the new SID; the new SID is the task's at once (subjective and
/// objective), its prev unchanged. An empty value is EINVAL.
#[test]
fn setcon() {
    let e = env("all");
    let mut t = e.task_as(10, "sh", APP);
    let tracer = e.task_as(30, "gdb", PEER);
    let me = t.handle().clone();
    let opts = SetAttrOpts {
        tracer: Some(tracer.handle().clone()),
        ..Default::default()
    };
    e.om.setprocattr(&mut t, "current", SET, &opts).unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("process", "setcurrent", APP, APP, ""),
            rec("process", "dyntransition", APP, SET, ""),
            rec("process", "ptrace", PEER, SET, "")
        ]
    );
    assert_eq!(
        (e.ctx(t.sid()), e.ctx(me.sid()), e.ctx(t.cred().osid())),
        (SET.into(), SET.into(), APP.into())
    );
    assert_eq!(
        e.om.setprocattr(&mut t, "current", "", &SetAttrOpts::default())
            .unwrap_err()
            .errno(),
        errno::EINVAL
    );
    assert_eq!(
        e.records(),
        vec![rec("process", "setcurrent", SET, SET, "")]
    );
    // Under an override nothing can be committed: refused before any check.
    let mut g = t.override_creds(Cred::new(e.sid(NEW)));
    assert_eq!(
        e.om.setprocattr(&mut g, "exec", SET, &SetAttrOpts::default())
            .unwrap_err()
            .errno(),
        errno::EINVAL
    );
    assert_eq!(e.records(), vec![]);
}

/// A multithreaded setcon: security_bounded_transition first (before dyntransition): to a
/// type the current one bounds (app_t bounds set_t) it goes on; to another (new_t) EPERM with
/// the kernel's `op=security_bounded_transition seresult=denied` record. A single-threaded
/// one asks no bounds.
#[test]
fn multithreaded_setcon_needs_a_bounded_type() {
    let e = env("bounds");
    let mt = SetAttrOpts {
        multithreaded: true,
        ..Default::default()
    };
    let mut t = e.task_as(10, "sh", APP);
    e.om.setprocattr(&mut t, "current", SET, &mt).unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("process", "setcurrent", APP, APP, ""),
            rec("process", "dyntransition", APP, SET, "")
        ]
    );
    let mut t = e.task_as(11, "sh", APP);
    let err = e.om.setprocattr(&mut t, "current", NEW, &mt).unwrap_err();
    assert_eq!(err.errno(), errno::EPERM);
    assert_eq!(
        e.take(),
        vec![
            format!("avc:  granted  {{ setcurrent }} for  pid=11 comm=\"sh\" scontext={APP} tcontext={APP} tclass=process"),
            format!("op=security_bounded_transition seresult=denied oldcontext={APP} newcontext={NEW}"),
        ]
    );
    assert_eq!(e.ctx(t.sid()), APP);
    e.om.setprocattr(&mut t, "current", NEW, &SetAttrOpts::default())
        .unwrap();
    assert_eq!(e.ctx(t.sid()), NEW);
}

/// selinux_kernel_act_as: `kernel_service {use_as_override}` from the task to the SID; the
/// credential acts as it with no fscreate, keycreate or sockcreate SID.
/// selinux_kernel_create_files_as: `kernel_service {create_files_as}` to the inode's SID,
/// which becomes the fscreate SID.
#[test]
fn acting_as_another_sid() {
    let e = env("all");
    let mut t = e.task_as(10, "nfsd", APP);
    let mut base = Cred::new(e.sid(APP)).prepare();
    base.create_sid = Some(e.sid(BIN));
    base.keycreate_sid = Some(e.sid(BIN));
    base.sockcreate_sid = Some(e.sid(PEER));
    let c = e.om.kernel_act_as(&t, base, e.sid(SET)).unwrap();
    assert_eq!(
        e.records(),
        vec![rec("kernel_service", "use_as_override", APP, SET, "")]
    );
    assert_eq!(
        (
            e.ctx(c.sid()),
            c.create_sid(),
            c.keycreate_sid(),
            c.sockcreate_sid()
        ),
        (SET.to_string(), None, None, None)
    );
    let dir = labelled(&e, BIN, 2, Class::DIR);
    let inode = labelled(&e, EXEC, 3, Class::FILE);
    let c =
        e.om.kernel_create_files_as(&t, c.prepare(), &inode)
            .unwrap();
    assert_eq!(
        e.records(),
        vec![rec("kernel_service", "create_files_as", APP, EXEC, "")]
    );
    assert_eq!(
        (e.ctx(c.sid()), c.create_sid()),
        (SET.to_string(), Some(e.sid(EXEC)))
    );
    let g = t.override_creds(c);
    assert_eq!(
        e.ctx(
            e.om.determine_inode_label(&g, &dir, "f", Class::FILE)
                .unwrap()
        ),
        EXEC
    );
}

/// selinux_dentry_create_files_as: the new credential's fscreate SID is the label the file
/// would get from the original task's credential; selinux_dentry_init_security: that label
/// and its context, before the file exists. Neither checks anything.
#[test]
fn labels_computed_before_the_file_exists() {
    let e = env("all");
    let t = e.task_as(10, "sh", APP);
    let dir = labelled(&e, BIN, 2, Class::DIR);
    let mounter = Cred::new(e.sid(PEER)).prepare();
    let c =
        e.om.dentry_create_files_as(&t, &dir, "f", 0o100644, mounter)
            .unwrap();
    assert_eq!(
        (e.ctx(c.sid()), c.create_sid().map(|s| e.ctx(s))),
        (PEER.to_string(), Some(BIN.to_string()))
    );
    let (sid, ctx) = e.om.dentry_init_security(&t, &dir, "f", 0o100644).unwrap();
    assert_eq!((e.ctx(sid), ctx.as_str()), (BIN.to_string(), BIN));
    let mut fc = t.cred().prepare();
    fc.create_sid = Some(e.sid(EXEC));
    let t = Task::new(11, "sh", fc.build());
    assert_eq!(
        e.om.dentry_init_security(&t, &dir, "f", 0o040755)
            .unwrap()
            .1,
        EXEC
    );
    assert_eq!(e.take(), Vec::<String>::new());
}

/// With nothing allowed: each family's denial, its record and its errno (EACCES).
#[test]
fn denials() {
    let e = env("deny");
    let mut t = e.task_as(42, "sh", APP);
    let p = e.task_as(20, "peer", PEER);
    let none = SetAttrOpts::default();
    assert_eq!(
        e.om.task_setpgid(&t, p.handle()).unwrap_err().errno(),
        errno::EACCES
    );
    assert_eq!(
        e.om.task_prlimit(&t, p.handle(), prlimit_flags::READ | prlimit_flags::WRITE)
            .unwrap_err()
            .errno(),
        errno::EACCES
    );
    assert_eq!(e.om.task_alloc(&t).unwrap_err().errno(), errno::EACCES);
    assert_eq!(e.om.userns_create(&t).unwrap_err().errno(), errno::EACCES);
    assert_eq!(
        e.om.getprocattr(&t, p.handle(), "current")
            .unwrap_err()
            .errno(),
        errno::EACCES
    );
    assert_eq!(
        e.om.setprocattr(&mut t, "exec", SET, &none)
            .unwrap_err()
            .errno(),
        errno::EACCES
    );
    assert_eq!(
        e.om.kernel_act_as(&t, t.cred().prepare(), e.sid(SET))
            .unwrap_err()
            .errno(),
        errno::EACCES
    );
    assert_eq!(
        e.take(),
        vec![
            format!("avc:  denied  {{ setpgid }} for  pid=42 comm=\"sh\" scontext={APP} tcontext={PEER} tclass=process permissive=0"),
            format!("avc:  denied  {{ setrlimit getrlimit }} for  pid=42 comm=\"sh\" scontext={APP} tcontext={PEER} tclass=process permissive=0"),
            format!("avc:  denied  {{ fork }} for  pid=42 comm=\"sh\" scontext={APP} tcontext={APP} tclass=process permissive=0"),
            format!("avc:  denied  {{ create }} for  pid=42 comm=\"sh\" scontext={APP} tcontext={APP} tclass=user_namespace permissive=0"),
            format!("avc:  denied  {{ getattr }} for  pid=42 comm=\"sh\" scontext={APP} tcontext={PEER} tclass=process permissive=0"),
            format!("avc:  denied  {{ setexec }} for  pid=42 comm=\"sh\" scontext={APP} tcontext={APP} tclass=process permissive=0"),
            format!("avc:  denied  {{ use_as_override }} for  pid=42 comm=\"sh\" scontext={APP} tcontext={SET} tclass=kernel_service permissive=0"),
        ]
    );
    assert_eq!(t.cred().exec_sid(), None);
}

/// setcon refused by the policy: `dyntransition` denied (EACCES), the SID unchanged; and
/// keycreate's `key {create}` refused leaves the attribute unset.
#[test]
fn setcon_denied() {
    let e = env("no-dyntransition");
    let mut t = e.task_as(10, "sh", APP);
    let err =
        e.om.setprocattr(&mut t, "current", SET, &SetAttrOpts::default())
            .unwrap_err();
    assert_eq!(err.errno(), errno::EACCES);
    let r = e.records();
    assert_eq!(
        (
            r[1].verdict.as_str(),
            r[1].perms.as_str(),
            r[1].tcontext.as_str()
        ),
        ("denied", "dyntransition", SET)
    );
    assert_eq!(e.ctx(t.sid()), APP);
    let e = env("no-key");
    let mut t = e.task_as(10, "sh", APP);
    let err =
        e.om.setprocattr(&mut t, "keycreate", NEW, &SetAttrOpts::default())
            .unwrap_err();
    assert_eq!(err.errno(), errno::EACCES);
    let r = e.records();
    assert_eq!(
        (
            r[1].verdict.as_str(),
            r[1].class.as_str(),
            r[1].perms.as_str(),
            r[1].tcontext.as_str()
        ),
        ("denied", "key", "create", NEW)
    );
    assert_eq!(t.cred().keycreate_sid(), None);
}

/// selinux_syslog: `system {syslog_read}` for READ_ALL and SIZE_BUFFER, `{syslog_console}` for
/// CONSOLE_OFF, CONSOLE_ON and CONSOLE_LEVEL, `{syslog_mod}` for every other action (an
/// unknown one too), from the task to the kernel's initial SID, no audit data.
#[test]
fn syslog_actions() {
    let e = env("all");
    let t = e.task_as(10, "dmesg", APP);
    use syslog_action as a;
    let table = [
        (a::CLOSE, "syslog_mod"),
        (a::OPEN, "syslog_mod"),
        (a::READ, "syslog_mod"),
        (a::READ_ALL, "syslog_read"),
        (a::READ_CLEAR, "syslog_mod"),
        (a::CLEAR, "syslog_mod"),
        (a::CONSOLE_OFF, "syslog_console"),
        (a::CONSOLE_ON, "syslog_console"),
        (a::CONSOLE_LEVEL, "syslog_console"),
        (a::SIZE_UNREAD, "syslog_mod"),
        (a::SIZE_BUFFER, "syslog_read"),
        (77, "syslog_mod"),
    ];
    for (action, perm) in table {
        e.om.syslog(&t, action).unwrap();
        assert_eq!(
            e.records(),
            vec![rec("system", perm, APP, KERNEL, "")],
            "action {action}"
        );
    }
    let e = env("deny");
    let t = e.task_as(10, "dmesg", APP);
    assert_eq!(
        e.om.syslog(&t, a::READ_ALL).unwrap_err().errno(),
        errno::EACCES
    );
    assert_eq!(e.take(), vec![format!("avc:  denied  {{ syslog_read }} for  pid=10 comm=\"dmesg\" scontext={APP} tcontext={KERNEL} tclass=system permissive=0")]);
}

/// selinux_uring_allowed and _sqpoll: `io_uring {allowed}` / `{sqpoll}` self;
/// _override_creds: `io_uring {override_creds}` from the task to the personality's SID;
/// _cmd: `io_uring {cmd}` to the file's inode SID with its `path= dev= ino=`.
#[test]
fn io_uring() {
    let e = env("all");
    let t = e.task_as(10, "ring", APP);
    e.om.uring_allowed(&t).unwrap();
    e.om.uring_sqpoll(&t).unwrap();
    e.om.uring_override_creds(&t, &Cred::new(e.sid(PEER)))
        .unwrap();
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let dev = InodeSec::new(sb, 9, Class::CHR_FILE, Some(e.sid(BIN)));
    e.om.uring_cmd(&t, &dev, "/dev/nvme0n1").unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("io_uring", "allowed", APP, APP, ""),
            rec("io_uring", "sqpoll", APP, APP, ""),
            rec("io_uring", "override_creds", APP, PEER, ""),
            rec(
                "io_uring",
                "cmd",
                APP,
                BIN,
                r#"path="/dev/nvme0n1" dev="sda1" ino=9"#
            ),
        ]
    );
    let e = env("deny");
    let t = e.task_as(10, "ring", APP);
    assert_eq!(
        e.om.uring_override_creds(&t, &Cred::new(e.sid(PEER)))
            .unwrap_err()
            .errno(),
        errno::EACCES
    );
    assert_eq!(e.take(), vec![format!("avc:  denied  {{ override_creds }} for  pid=10 comm=\"ring\" scontext={APP} tcontext={PEER} tclass=io_uring permissive=0")]);
}
