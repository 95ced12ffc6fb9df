//! The System V IPC, key and binder hooks ask exactly the permissions the kernel's hooks ask
//! (hooks.c at 28254722a459938d97150d3b0712b81e06d0645e, each test citing its function), with
//! the kernel's audit data: `ipc_key=` for IPC objects (lsm_audit.c's LSM_AUDIT_DATA_IPC), the
//! file's path for binder's file transfer, none for keys and binder calls.
//!
//! Method as in socket_hooks.rs: testdata/policies/objmgr-net.cil allows and auditallows
//! everything, so each check writes one `granted` record naming exactly what it asked; its
//! variant without the "grant" lines shows the denials.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::OnceLock;

use seaccess_objmgr::hooks::fs::{oflags, MountOpts};
use seaccess_objmgr::hooks::ipc::{ipc_cmd::*, SHM_RDONLY};
use seaccess_objmgr::hooks::key::KeyNeed;
use seaccess_objmgr::{errno, Class, Cred, InodeSec, Task};

mod fs_support;
mod net_support;
use net_support::{env_at, net_variant, rec, Env, NetEnv, Rec};

fn policy(variant: &str) -> std::path::PathBuf {
    static ALL: OnceLock<std::path::PathBuf> = OnceLock::new();
    static DENY: OnceLock<std::path::PathBuf> = OnceLock::new();
    match variant {
        "deny" => DENY
            .get_or_init(|| {
                net_variant("objmgr-net-deny", |l| {
                    (!l.contains("; grant")).then(|| l.to_string())
                })
            })
            .clone(),
        _ => ALL
            .get_or_init(|| seaccess_testkit::compile("objmgr-net", 33))
            .clone(),
    }
}

fn env(variant: &str) -> Env {
    env_at(&policy(variant))
}

const APP: &str = "u:app_r:app_t:s0";
const PEER: &str = "u:app_r:peer_t:s0";
const BIN: &str = "u:object_r:bin_t:s0";
const KERNEL: &str = "u:app_r:kernel_t:s0-s1:c0";

fn ipc_rec(class: &str, perms: &str, s: &str, t: &str, key: i32) -> Rec {
    rec(class, perms, s, t, &format!("ipc_key={key}"))
}

/// selinux_msg_queue_alloc_security: the queue takes the creator's SID, then `msgq {create}`
/// creator → queue; selinux_msg_queue_associate `msgq {associate}`; selinux_msg_queue_msgctl
/// by command; all audited with the queue's key (the kernel's format ends with a space, so
/// records have two before scontext=, as capability= records do).
#[test]
fn message_queues_are_created_associated_and_controlled() {
    let e = env("all");
    let owner = e.task_as(11, "owner", PEER);
    let t = e.task_as(10, "cli", APP);
    let q = e.om.msg_queue_alloc_security(&owner, 1234).unwrap();
    assert_eq!((e.ctx(q.sid()), q.class()), (PEER.to_string(), Class::MSGQ));
    let raw = e.take();
    assert_eq!(raw, vec![format!("avc:  granted  {{ create }} for  pid=11 comm=\"owner\" ipc_key=1234  scontext={PEER} tcontext={PEER} tclass=msgq")]);
    e.om.msg_queue_associate(&t, &q).unwrap();
    assert_eq!(
        e.records(),
        vec![ipc_rec("msgq", "associate", APP, PEER, 1234)]
    );
    for (cmd, perms) in [
        (IPC_STAT, "getattr associate"),
        (MSG_STAT, "getattr associate"),
        (MSG_STAT_ANY, "getattr associate"),
        (IPC_SET, "setattr"),
        (IPC_RMID, "destroy"),
    ] {
        e.om.msg_queue_msgctl(&t, &q, cmd).unwrap();
        assert_eq!(
            e.records(),
            vec![ipc_rec("msgq", perms, APP, PEER, 1234)],
            "msgctl {cmd}"
        );
    }
    // System-wide information: `system {ipc_info}` of the kernel, with no audit data.
    for cmd in [IPC_INFO, MSG_INFO] {
        e.om.msg_queue_msgctl(&t, &q, cmd).unwrap();
        assert_eq!(
            e.records(),
            vec![rec("system", "ipc_info", APP, KERNEL, "")],
            "msgctl {cmd}"
        );
    }
    // A command msgctl(2) does not have: refused, nothing asked.
    assert_eq!(
        e.om.msg_queue_msgctl(&t, &q, 99).unwrap_err().errno(),
        errno::EINVAL
    );
    assert_eq!(e.records(), vec![]);
    assert_eq!(e.om.ipc_getlsmprop(&q), q.sid());
}

/// selinux_msg_msg_alloc_security: a new message is unlabeled. selinux_msg_queue_msgsnd: the
/// first send labels it by transition from the sender on the queue (class msg: the policy
/// says app_t on peer_t gives bin_t), then `msgq {write}` sender → queue, `msg {send}` sender
/// → message, `msgq {enqueue}` message → queue. selinux_msg_queue_msgrcv: `msgq {read}` and
/// `msg {receive}` from the receiver's objective SID, recorded under the caller.
#[test]
fn messages_are_labelled_on_send_and_checked_on_receive() {
    let e = env("all");
    let owner = e.task_as(11, "owner", PEER);
    let t = e.task_as(10, "cli", APP);
    let q = e.om.msg_queue_alloc_security(&owner, 7).unwrap();
    e.records();
    let m = e.om.msg_msg_alloc_security();
    assert_eq!(m.sid(), e.server.snapshot().initial_sid(3).unwrap());
    e.om.msg_queue_msgsnd(&t, &q, &m).unwrap();
    assert_eq!(e.ctx(m.sid()), BIN);
    assert_eq!(
        e.records(),
        vec![
            ipc_rec("msgq", "write", APP, PEER, 7),
            ipc_rec("msg", "send", APP, BIN, 7),
            ipc_rec("msgq", "enqueue", BIN, PEER, 7)
        ]
    );
    // Sent again (as a retried send would): keeps its label.
    e.om.msg_queue_msgsnd(&owner, &q, &m).unwrap();
    assert_eq!(
        e.records(),
        vec![
            ipc_rec("msgq", "write", PEER, PEER, 7),
            ipc_rec("msg", "send", PEER, BIN, 7),
            ipc_rec("msgq", "enqueue", BIN, PEER, 7)
        ]
    );
    // The sender hands the message to a waiting receiver: the receiver's SID, the sender's pid.
    e.om.msg_queue_msgrcv(&t, &q, &m, owner.handle()).unwrap();
    let raw = e.take();
    assert!(
        raw.iter().all(|r| r.contains("pid=10 comm=\"cli\"")),
        "{raw:?}"
    );
    assert_eq!(
        raw.iter()
            .map(|r| net_support::parse(r))
            .collect::<Vec<_>>(),
        vec![
            ipc_rec("msgq", "read", PEER, PEER, 7),
            ipc_rec("msg", "receive", PEER, BIN, 7)
        ]
    );
}

/// selinux_shm_alloc_security `shm {create}`; selinux_shm_associate; selinux_shm_shmctl by
/// command; selinux_shm_shmat `read`, or `read write` without SHM_RDONLY.
#[test]
fn shared_memory_asks_by_command_and_attach_mode() {
    let e = env("all");
    let t = e.task_as(10, "cli", APP);
    let s = e.om.shm_alloc_security(&t, -1).unwrap();
    assert_eq!(e.records(), vec![ipc_rec("shm", "create", APP, APP, -1)]);
    let u = e.task_as(12, "user", PEER);
    e.om.shm_associate(&u, &s).unwrap();
    assert_eq!(
        e.records(),
        vec![ipc_rec("shm", "associate", PEER, APP, -1)]
    );
    let table = [
        (IPC_STAT, "getattr associate"),
        (SHM_STAT, "getattr associate"),
        (SHM_STAT_ANY, "getattr associate"),
        (IPC_SET, "setattr"),
        (SHM_LOCK, "lock"),
        (SHM_UNLOCK, "lock"),
        (IPC_RMID, "destroy"),
    ];
    for (cmd, perms) in table {
        e.om.shm_shmctl(&u, &s, cmd).unwrap();
        assert_eq!(
            e.records(),
            vec![ipc_rec("shm", perms, PEER, APP, -1)],
            "shmctl {cmd}"
        );
    }
    for cmd in [IPC_INFO, SHM_INFO] {
        e.om.shm_shmctl(&u, &s, cmd).unwrap();
        assert_eq!(
            e.records(),
            vec![rec("system", "ipc_info", PEER, KERNEL, "")],
            "shmctl {cmd}"
        );
    }
    assert_eq!(
        e.om.shm_shmctl(&u, &s, 42).unwrap_err().errno(),
        errno::EINVAL
    );
    e.om.shm_shmat(&u, &s, SHM_RDONLY).unwrap();
    assert_eq!(e.records(), vec![ipc_rec("shm", "read", PEER, APP, -1)]);
    e.om.shm_shmat(&u, &s, 0).unwrap();
    assert_eq!(
        e.records(),
        vec![ipc_rec("shm", "read write", PEER, APP, -1)]
    );
}

/// selinux_sem_alloc_security `sem {create}`; selinux_sem_associate; selinux_sem_semctl by
/// command; selinux_sem_semop `read write` when altering, else `read`.
#[test]
fn semaphores_ask_by_command_and_operation() {
    let e = env("all");
    let t = e.task_as(10, "cli", APP);
    let s = e.om.sem_alloc_security(&t, 99).unwrap();
    assert_eq!(e.records(), vec![ipc_rec("sem", "create", APP, APP, 99)]);
    e.om.sem_associate(&t, &s).unwrap();
    assert_eq!(e.records(), vec![ipc_rec("sem", "associate", APP, APP, 99)]);
    let table = [
        (GETPID, "getattr"),
        (GETNCNT, "getattr"),
        (GETZCNT, "getattr"),
        (GETVAL, "read"),
        (GETALL, "read"),
        (SETVAL, "write"),
        (SETALL, "write"),
        (IPC_RMID, "destroy"),
        (IPC_SET, "setattr"),
        (IPC_STAT, "getattr associate"),
        (SEM_STAT, "getattr associate"),
        (SEM_STAT_ANY, "getattr associate"),
    ];
    for (cmd, perms) in table {
        e.om.sem_semctl(&t, &s, cmd).unwrap();
        assert_eq!(
            e.records(),
            vec![ipc_rec("sem", perms, APP, APP, 99)],
            "semctl {cmd}"
        );
    }
    for cmd in [IPC_INFO, SEM_INFO] {
        e.om.sem_semctl(&t, &s, cmd).unwrap();
        assert_eq!(
            e.records(),
            vec![rec("system", "ipc_info", APP, KERNEL, "")],
            "semctl {cmd}"
        );
    }
    assert_eq!(
        e.om.sem_semctl(&t, &s, -1).unwrap_err().errno(),
        errno::EINVAL
    );
    e.om.sem_semop(&t, &s, true).unwrap();
    assert_eq!(
        e.records(),
        vec![ipc_rec("sem", "read write", APP, APP, 99)]
    );
    e.om.sem_semop(&t, &s, false).unwrap();
    assert_eq!(e.records(), vec![ipc_rec("sem", "read", APP, APP, 99)]);
}

/// selinux_ipc_permission: any read bit asks `unix_read`, any write bit `unix_write`, in one
/// check of the object's class; no bit, nothing.
#[test]
fn ipc_permission_asks_unix_read_and_unix_write_by_mode_bits() {
    let e = env("all");
    let t = e.task_as(10, "cli", APP);
    let q = e.om.msg_queue_alloc_security(&t, 5).unwrap();
    let s = e.om.sem_alloc_security(&t, 6).unwrap();
    e.records();
    for (flag, perms) in [
        (0o400, "unix_read"),
        (0o004, "unix_read"),
        (0o200, "unix_write"),
        (0o020, "unix_write"),
        (0o600, "unix_read unix_write"),
    ] {
        e.om.ipc_permission(&t, &q, flag).unwrap();
        assert_eq!(
            e.records(),
            vec![ipc_rec("msgq", perms, APP, APP, 5)],
            "flag {flag:o}"
        );
    }
    e.om.ipc_permission(&t, &s, 0o666).unwrap();
    assert_eq!(
        e.records(),
        vec![ipc_rec("sem", "unix_read unix_write", APP, APP, 6)]
    );
    e.om.ipc_permission(&t, &s, 0o111).unwrap();
    e.om.ipc_permission(&t, &s, 0).unwrap();
    assert_eq!(e.records(), vec![]);
}

/// Denials: each hook stops at its first refused check, with EACCES, and writes the kernel's
/// denied record.
#[test]
fn ipc_denials_are_refused_and_audited() {
    let e = env("deny");
    let t = e.task_as(42, "srv", APP);
    assert_eq!(
        e.om.shm_alloc_security(&t, 3).unwrap_err().errno(),
        errno::EACCES
    );
    assert_eq!(e.take(), vec![format!("avc:  denied  {{ create }} for  pid=42 comm=\"srv\" ipc_key=3  scontext={APP} tcontext={APP} tclass=shm permissive=0")]);
    let q = seaccess_objmgr::hooks::ipc::IpcSec::new(e.sid(PEER), Class::MSGQ, 8);
    let m = e.om.msg_msg_alloc_security();
    assert_eq!(
        e.om.msg_queue_msgsnd(&t, &q, &m).unwrap_err().errno(),
        errno::EACCES
    );
    // The label was given before the first check, as the kernel gives it.
    assert_eq!(e.ctx(m.sid()), BIN);
    assert_eq!(e.take(), vec![format!("avc:  denied  {{ write }} for  pid=42 comm=\"srv\" ipc_key=8  scontext={APP} tcontext={PEER} tclass=msgq permissive=0")]);
    assert_eq!(
        e.om.sem_semctl(&t, &q, SEM_INFO).unwrap_err().errno(),
        errno::EACCES
    );
    assert_eq!(e.take(), vec![format!("avc:  denied  {{ ipc_info }} for  pid=42 comm=\"srv\" scontext={APP} tcontext={KERNEL} tclass=system permissive=0")]);
}

/// selinux_key_alloc: the keycreate SID if given, else the credential's; no check.
/// selinux_key_permission: each KEY_NEED_* asks its `key` permission from the given
/// credential's SID, with no audit data; unlink and the overrides ask nothing; an unspecified
/// need is EPERM. selinux_key_getsecurity: the context. selinux_watch_key: `key {view}`.
#[test]
fn keys_are_labelled_and_checked_by_need() {
    let e = env("all");
    let t = e.task_as(10, "cli", APP);
    let k = e.om.key_alloc(t.cred(), None);
    assert_eq!(e.ctx(k.sid), APP);
    let k2 = e.om.key_alloc(t.cred(), Some(e.sid(PEER)));
    assert_eq!(e.ctx(k2.sid), PEER);
    assert_eq!(
        e.om.key_alloc(t.cred(), Some(seaccess_types::Sid::NULL))
            .sid,
        t.sid()
    );
    assert_eq!(e.records(), vec![]);
    let needs = [
        (KeyNeed::View, "view"),
        (KeyNeed::Read, "read"),
        (KeyNeed::Write, "write"),
        (KeyNeed::Search, "search"),
        (KeyNeed::Link, "link"),
        (KeyNeed::Setattr, "setattr"),
    ];
    for (need, perm) in needs {
        e.om.key_permission(&t, t.cred(), &k2, need).unwrap();
        assert_eq!(
            e.records(),
            vec![rec("key", perm, APP, PEER, "")],
            "{need:?}"
        );
    }
    // Another credential (a request_key done for another task): its SID is the source.
    let other = Cred::new(e.sid(PEER));
    e.om.key_permission(&t, &other, &k, KeyNeed::Read).unwrap();
    assert_eq!(e.records(), vec![rec("key", "read", PEER, APP, "")]);
    for need in [
        KeyNeed::Unlink,
        KeyNeed::SysadminOverride,
        KeyNeed::AuthtokenOverride,
        KeyNeed::DeferPermCheck,
    ] {
        e.om.key_permission(&t, t.cred(), &k, need).unwrap();
    }
    assert_eq!(e.records(), vec![]);
    assert_eq!(
        e.om.key_permission(&t, t.cred(), &k, KeyNeed::Unspecified)
            .unwrap_err()
            .errno(),
        errno::EPERM
    );
    assert_eq!(
        (
            KeyNeed::from_raw(0),
            KeyNeed::from_raw(6),
            KeyNeed::from_raw(10),
            KeyNeed::from_raw(11)
        ),
        (
            Some(KeyNeed::Unspecified),
            Some(KeyNeed::Setattr),
            Some(KeyNeed::DeferPermCheck),
            None
        )
    );
    assert_eq!(e.om.key_getsecurity(&k2).unwrap(), PEER);
    e.om.watch_key(&t, &k2).unwrap();
    assert_eq!(e.records(), vec![rec("key", "view", APP, PEER, "")]);
    let d = env("deny");
    let t = d.task_as(42, "srv", APP);
    let k2 = d.om.key_alloc(t.cred(), Some(d.sid(PEER)));
    assert_eq!(
        d.om.key_permission(&t, t.cred(), &k2, KeyNeed::Search)
            .unwrap_err()
            .errno(),
        errno::EACCES
    );
    assert_eq!(d.take(), vec![format!("avc:  denied  {{ search }} for  pid=42 comm=\"srv\" scontext={APP} tcontext={PEER} tclass=key permissive=0")]);
}

/// selinux_binder_set_context_mgr `binder {set_context_mgr}` caller → manager;
/// selinux_binder_transaction `{impersonate}` caller → sender when they differ, then `{call}`
/// sender → receiver; selinux_binder_transfer_binder `{transfer}` sender → receiver;
/// selinux_binder_transfer_file `fd {use}` receiver → the file's opener when they differ,
/// then file_to_av of the file receiver → inode, with the file's path.
#[test]
fn binder_calls_and_transfers() {
    let e = env("all");
    let t = e.task_as(10, "sm", APP);
    let (app, peer) = (Cred::new(e.sid(APP)), Cred::new(e.sid(PEER)));
    e.om.binder_set_context_mgr(&t, &app).unwrap();
    assert_eq!(
        e.records(),
        vec![rec("binder", "set_context_mgr", APP, APP, "")]
    );
    e.om.binder_transaction(&t, &app, &peer).unwrap();
    assert_eq!(e.records(), vec![rec("binder", "call", APP, PEER, "")]);
    e.om.binder_transaction(&t, &peer, &app).unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("binder", "impersonate", APP, PEER, ""),
            rec("binder", "call", PEER, APP, "")
        ]
    );
    e.om.binder_transfer_binder(&t, &peer, &app).unwrap();
    assert_eq!(e.records(), vec![rec("binder", "transfer", PEER, APP, "")]);
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let f = InodeSec::new(sb, 7, Class::FILE, Some(e.sid(BIN)));
    let opener = Task::new(11, "svc", peer.clone());
    let file =
        e.om.file_open(&opener, &f, "/data/f", oflags::O_RDWR | oflags::O_APPEND)
            .unwrap();
    e.records();
    let path = r#"path="/data/f" dev="sda1" ino=7"#;
    e.om.binder_transfer_file(&t, &peer, &app, &file, &f, "/data/f")
        .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("fd", "use", APP, PEER, path),
            rec("file", "read append", APP, BIN, path)
        ]
    );
    // To the opener itself: no fd check; a write-only file asks write.
    let wfile =
        e.om.file_open(&opener, &f, "/data/f", oflags::O_WRONLY)
            .unwrap();
    e.records();
    e.om.binder_transfer_file(&t, &app, &peer, &wfile, &f, "/data/f")
        .unwrap();
    assert_eq!(e.records(), vec![rec("file", "write", PEER, BIN, path)]);
    let d = env("deny");
    let t = d.task_as(42, "srv", APP);
    let (app, peer) = (Cred::new(d.sid(APP)), Cred::new(d.sid(PEER)));
    assert_eq!(
        d.om.binder_transaction(&t, &peer, &app)
            .unwrap_err()
            .errno(),
        errno::EACCES
    );
    assert_eq!(d.take(), vec![format!("avc:  denied  {{ impersonate }} for  pid=42 comm=\"srv\" scontext={APP} tcontext={PEER} tclass=binder permissive=0")]);
}
