//! Where the object manager differed from the kernel's hooks (issue 25, "the differences"),
//! each now the kernel's answer (hooks.c and avc.c at
//! 28254722a459938d97150d3b0712b81e06d0645e), each test citing the function it follows.
//!
//! Method as in fs_hooks.rs and process_hooks.rs: objmgr-files.cil (allow_t allowed and
//! auditallow'ed everything, deny_t nothing) and objmgr-net.cil (everything allowed and
//! auditallow'ed), and variants of them made here.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fs_support;
mod net_support;

use fs_support::*;
use net_support::{env_at, net_variant, NetEnv};
use seaccess_objmgr::hooks::fs::{oflags::*, MountOpts, MAY_ACCESS, MAY_EXEC, MAY_READ, MAY_WRITE};
use seaccess_objmgr::hooks::process::ExecOpts;
use seaccess_objmgr::{errno, AuditData, Checked, Class, InodeSec};
use seaccess_types::{AccessServer, AccessVector, AvDecision, LabelServer, Sid};

fn files_variant(label: &str, edit: fn(&str) -> String) -> Env {
    env_at(&seaccess_testkit::compile_variant(
        "objmgr-files",
        label,
        33,
        edit,
    ))
}

/// selinux_inode_permission: `avc_audit_required(perms, avd, rc, MAY_ACCESS ?
/// FILE__AUDIT_ACCESS : 0)` audits no denial of an access(2) check when the decision's
/// auditdeny lacks `audit_access` (a `dontaudit ... audit_access` rule), whatever was denied;
/// the same denial without MAY_ACCESS, and an access(2) denial in a class the rule does not
/// cover, are audited.
#[test]
fn an_access_denial_is_silenced_by_dontaudit_audit_access() {
    let e = files_variant("objmgr-files-audit-access", |s| {
        format!("{s}\n(dontaudit deny_t anytype (file (audit_access)))\n")
    });
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let f =
        e.om.inode_init(&sb, 13, REG, "/f", Some("u:object_r:b_t:s0"));
    let d =
        e.om.inode_init(&sb, 12, DIR, "/d", Some("u:object_r:b_t:s0"));
    let t = e.task("u:r:deny_t:s0");
    for on in [true, false] {
        e.om.fast_paths().set_all(on);
        let r =
            e.om.inode_permission(&t, &f, MAY_ACCESS | MAY_READ | MAY_WRITE, Some("f"));
        assert_eq!(r.map_err(|e| e.errno()), Err(errno::EACCES));
        assert!(
            e.take().is_empty(),
            "access(2) denial audited despite dontaudit audit_access (fast paths {on})"
        );
        let r = e.om.inode_permission(&t, &f, MAY_READ, Some("f"));
        assert_eq!(r.map_err(|e| e.errno()), Err(errno::EACCES));
        assert_eq!(e.asked(), ["denied file {read}"]);
        let r =
            e.om.inode_permission(&t, &d, MAY_ACCESS | MAY_EXEC, Some("d"));
        assert_eq!(r.map_err(|e| e.errno()), Err(errno::EACCES));
        assert_eq!(
            e.asked(),
            ["denied dir {search}"],
            "dir's auditdeny keeps audit_access"
        );
    }
    // Without the rule an access(2) denial is audited like any other.
    let e = env();
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let f =
        e.om.inode_init(&sb, 13, REG, "/f", Some("u:object_r:b_t:s0"));
    let r = e.om.inode_permission(
        &e.task("u:r:deny_t:s0"),
        &f,
        MAY_ACCESS | MAY_READ,
        Some("f"),
    );
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EACCES));
    assert_eq!(e.asked(), ["denied file {read}"]);
}

/// selinux_file_permission: a read or write by the opener, of the inode labelled as at the
/// open, under the open's policy, is not checked and writes nothing, even after an open whose
/// grant was auditallow'ed (with the revalidation skip on or off: the switch changes the
/// cost, not the answer). Another SID's read is checked and audited (`fd {use}` first).
#[test]
fn reads_after_an_audited_open_skip_the_check_silently() {
    for on in [true, false] {
        let e = env();
        e.om.fast_paths().set_revalidate(on);
        let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
        let f =
            e.om.inode_init(&sb, 13, REG, "/f", Some("u:object_r:b_t:s0"));
        let t = e.task("u:r:allow_t:s0");
        let file = e.om.file_open(&t, &f, "/f", O_RDWR).unwrap();
        assert_eq!(e.asked(), ["granted file {read write open}"]);
        for _ in 0..3 {
            e.om.file_permission(&t, &file, &f, MAY_READ, "/f").unwrap();
            e.om.file_permission(&t, &file, &f, MAY_WRITE, "/f")
                .unwrap();
        }
        assert!(
            e.take().is_empty(),
            "reads after an audited open were audited (revalidate {on})"
        );
        // O_APPEND: the open asked append, so a write (an append) is covered too.
        let file = e.om.file_open(&t, &f, "/f", O_WRONLY | O_APPEND).unwrap();
        assert_eq!(e.asked(), ["granted file {append open}"]);
        e.om.file_permission(&t, &file, &f, MAY_WRITE, "/f")
            .unwrap();
        assert!(e.take().is_empty());
        // What the open did not ask is checked.
        e.om.file_permission(&t, &file, &f, MAY_READ, "/f").unwrap();
        assert_eq!(e.asked(), ["granted file {read}"]);
        // Another SID (a passed descriptor): fd use and the read, audited.
        let q = e.task("u:r:quiet_t:s0");
        let file = e.om.file_open(&t, &f, "/f", O_RDONLY).unwrap();
        e.take();
        let r = e.om.file_permission(&q, &file, &f, MAY_READ, "/f");
        assert_eq!(
            r.map_err(|e| e.errno()),
            Err(errno::EACCES),
            "quiet_t may not use allow_t's fd"
        );
    }
}

/// selinux_set_mnt_opts: `context=` without `rootcontext=` makes the context the root's
/// (`rootcontext_sid = context_sid`), so after may_context_mount_sb_relabel (relabelfrom the
/// filesystem's SID, relabelto the context) comes may_context_mount_inode_relabel for the
/// root: `filesystem {relabelfrom}` task → the filesystem's SID (now the context) and
/// `filesystem {associate}` context → the filesystem's SID. No audit data.
#[test]
fn a_context_mount_checks_the_root_as_rootcontext() {
    let e = env();
    let t = e.task("u:r:allow_t:s0");
    let o = MountOpts {
        context: Some("u:object_r:c_t:s0"),
        ..Default::default()
    };
    let sb = e.om.mount_as(&t, "sdc1", "ext4", &o).unwrap();
    let recs = e.take();
    let fields: Vec<(String, String, String)> = recs
        .iter()
        .map(|r| (summary(r), field(r, "scontext="), field(r, "tcontext=")))
        .collect();
    let p = |a: &str, s: &str, t: &str| (a.to_string(), s.to_string(), t.to_string());
    assert_eq!(
        fields,
        [
            p(
                "granted filesystem {relabelfrom}",
                "u:r:allow_t:s0",
                "u:object_r:fs_t:s0"
            ),
            p(
                "granted filesystem {relabelto}",
                "u:r:allow_t:s0",
                "u:object_r:c_t:s0"
            ),
            p(
                "granted filesystem {relabelfrom}",
                "u:r:allow_t:s0",
                "u:object_r:c_t:s0"
            ),
            p(
                "granted filesystem {associate}",
                "u:object_r:c_t:s0",
                "u:object_r:c_t:s0"
            ),
        ]
    );
    assert!(
        recs.iter()
            .all(|r| r.contains(r#"for  pid=42 comm="svc" scontext="#)),
        "no audit data: {recs:?}"
    );
    assert_eq!(
        e.ctx(e.om.inode_init(&sb, 2, DIR, "/", None).sid()),
        "u:object_r:c_t:s0"
    );
    // Denied: deny_t may not even relabel from the filesystem.
    let r = e.om.mount_as(&e.task("u:r:deny_t:s0"), "sdc2", "ext4", &o);
    assert_eq!(r.map(|_| ()).map_err(|e| e.errno()), Err(errno::EACCES));
    e.take();
    // defcontext= on a natively labelling filesystem (SECURITY_FS_USE_NATIVE) is accepted,
    // with may_context_mount_inode_relabel since it differs from the default (the
    // filesystem's SID: nfs has no fs_use, so unlabeled); on a genfs one it is EINVAL.
    let o = MountOpts {
        defcontext: Some("u:object_r:b_t:s0"),
        native_labels: true,
        ..Default::default()
    };
    let sb = e.om.mount_as(&t, "srv:/x", "nfs4", &o).unwrap();
    assert_eq!(
        e.ctx(
            e.om.inode_init(&sb, 5, REG, "/x", Some("u:object_r:a_t:s0"))
                .sid()
        ),
        "u:object_r:a_t:s0"
    );
    assert_eq!(
        e.ctx(e.om.inode_init(&sb, 5, REG, "/x", None).sid()),
        "u:object_r:unlabeled_t:s0"
    );
    assert_eq!(e.ctx(sb.def_sid), "u:object_r:b_t:s0");
    assert_eq!(
        e.asked(),
        [
            "granted filesystem {relabelfrom}",
            "granted filesystem {associate}"
        ]
    );
    let o = MountOpts {
        defcontext: Some("u:object_r:b_t:s0"),
        ..Default::default()
    };
    assert_eq!(
        e.om.mount_as(&t, "srv:/x", "nfs4", &o)
            .map(|_| ())
            .map_err(|e| e.errno()),
        Err(errno::EINVAL)
    );
    // The default itself asks nothing.
    let o = MountOpts {
        defcontext: Some("u:object_r:file_t:s0"),
        ..Default::default()
    };
    e.om.mount_as(&t, "sdf1", "ext4", &o).unwrap();
    assert!(e.take().is_empty());
}

fn field(r: &str, key: &str) -> String {
    r.split(' ')
        .find_map(|f| f.strip_prefix(key))
        .unwrap_or("?")
        .to_string()
}

/// selinux_inode_setxattr: a context the policy does not define, by a task holding
/// CAP_MAC_ADMIN, asks `capability2 {mac_admin}` (has_cap_mac_admin(true): cred_has_capability,
/// audited) and, granted, keeps the context unmapped (security_context_to_sid_force): the
/// relabelto and associate checks are made on a SID decided as the unlabeled SID, whose
/// records name the unlabeled context with the text as `trawcon=` / `srawcon=`
/// (avc_audit_post_callback). selinux_inode_post_setxattr labels the inode with it. A task
/// refused mac_admin gets the denial record, `op=setxattr invalid_context=` and EINVAL.
#[test]
fn an_invalid_context_is_kept_unmapped_with_mac_admin() {
    let e = files_variant("objmgr-files-mac-admin", |s| {
        s.replace("(classorder (file dir lnk_file chr_file blk_file fifo_file sock_file filesystem fd process capability memprotect))", "(class capability2 (mac_override mac_admin))\n(classorder (file dir lnk_file chr_file blk_file fifo_file sock_file filesystem fd process capability memprotect capability2))")
            + "\n(allow allow_t anytype (capability2 (all)))\n(auditallow allow_t anytype (capability2 (all)))\n(allow quiet_t b_t (file (relabelfrom)))\n"
    });
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let f =
        e.om.inode_init(&sb, 13, REG, "/f", Some("u:object_r:b_t:s0"));
    let t = e.task("u:r:allow_t:s0");
    let bad = "u:object_r:nosuch_t:s0";
    e.om.inode_setxattr_caps(&t, &f, "f", "security.selinux", &format!("{bad}\0"), true)
        .unwrap();
    let recs = e.take();
    assert_eq!(
        recs,
        [
            r#"avc:  granted  { relabelfrom } for  pid=42 comm="svc" name="f" dev="sda1" ino=13 scontext=u:r:allow_t:s0 tcontext=u:object_r:b_t:s0 tclass=file"#,
            r#"avc:  granted  { mac_admin } for  pid=42 comm="svc" capability=33  scontext=u:r:allow_t:s0 tcontext=u:r:allow_t:s0 tclass=capability2"#,
            r#"avc:  granted  { relabelto } for  pid=42 comm="svc" name="f" dev="sda1" ino=13 scontext=u:r:allow_t:s0 tcontext=u:object_r:unlabeled_t:s0 tclass=file trawcon="u:object_r:nosuch_t:s0""#,
            r#"avc:  granted  { associate } for  pid=42 comm="svc" name="f" dev="sda1" ino=13 scontext=u:object_r:unlabeled_t:s0 tcontext=u:object_r:fs_t:s0 tclass=filesystem srawcon="u:object_r:nosuch_t:s0""#,
        ]
    );
    e.om.inode_post_setxattr(&f, "security.selinux", &format!("{bad}\0"))
        .unwrap();
    let sid = f.sid();
    assert_ne!(
        sid,
        e.sid("u:object_r:unlabeled_t:s0"),
        "an unmapped SID of its own"
    );
    let names = e.server.names();
    assert_eq!(
        names.sid_to_context(sid).as_deref(),
        Some("u:object_r:unlabeled_t:s0")
    );
    assert_eq!(names.sid_to_context_inval(sid).as_deref(), Some(bad));
    assert_eq!(
        e.server.context_to_sid_force(bad).unwrap(),
        sid,
        "the same text, the same SID"
    );
    // Decided as unlabeled: quiet_t (nothing on unlabeled_t) may not read it.
    let r =
        e.om.inode_permission(&e.task("u:r:quiet_t:s0"), &f, MAY_READ, Some("f"));
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EACCES));
    assert!(e
        .take()
        .iter()
        .any(|r| r.ends_with(r#" tclass=file permissive=0 trawcon="u:object_r:nosuch_t:s0""#)));
    // Without mac_admin in the policy (quiet_t): the capability denial, then the record.
    let g =
        e.om.inode_init(&sb, 14, REG, "/g", Some("u:object_r:b_t:s0"));
    let r = e.om.inode_setxattr_caps(
        &e.task("u:r:quiet_t:s0"),
        &g,
        "g",
        "security.selinux",
        bad,
        true,
    );
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EINVAL));
    assert_eq!(
        e.asked(),
        [
            "denied capability2 {mac_admin}",
            r#"op=setxattr invalid_context="u:object_r:nosuch_t:s0""#
        ]
    );
    // Without CAP_MAC_ADMIN itself (cap_capable fails first): no check, the record, EINVAL.
    let r =
        e.om.inode_setxattr_caps(&t, &g, "g", "security.selinux", bad, false);
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EINVAL));
    assert_eq!(
        e.asked(),
        [
            "granted file {relabelfrom}",
            r#"op=setxattr invalid_context="u:object_r:nosuch_t:s0""#
        ]
    );
}

/// check_nnp_nosuid: when `process2 {nnp_transition}` is refused, a transition to a type the
/// old one bounds (security_bounded_transition) is still allowed; refused both ways, a type
/// transition silently does not happen and a setexeccon exec fails (EPERM under nnp, EACCES
/// for nosuid alone).
#[test]
fn an_nnp_exec_falls_back_to_a_bounded_transition() {
    let bounded = net_variant("objmgr-net-bounded-no-process2", |l| {
        (!l.contains("(process2 ")).then(|| {
            l.replace(
                "(typetransition app_t exec_t process new_t)",
                "(typetransition app_t exec_t process new_t)\n(typebounds app_t new_t)",
            )
        })
    });
    let e = env_at(&bounded);
    let t = e.task_as(10, "sh", "u:app_r:app_t:s0");
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let f = InodeSec::new(
        sb.clone(),
        7,
        Class::FILE,
        Some(e.sid("u:object_r:exec_t:s0")),
    );
    let c =
        e.om.bprm_creds_for_exec(
            &t,
            &f,
            "/p",
            &ExecOpts {
                nnp: true,
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        e.ctx(c.cred.sid()),
        "u:app_r:new_t:s0",
        "bounded: the transition happens"
    );
    let recs = e.records();
    assert_eq!(
        (
            recs[0].verdict.as_str(),
            recs[0].class.as_str(),
            recs[0].perms.as_str()
        ),
        ("denied", "process2", "nnp_transition")
    );
    assert_eq!(
        recs.iter()
            .skip(1)
            .map(|r| r.perms.as_str())
            .collect::<Vec<_>>(),
        ["transition", "entrypoint", "noatsecure"]
    );
    // set_t is not bounded by app_t: setexeccon fails, EPERM under nnp, EACCES for nosuid.
    let mut p = seaccess_objmgr::Cred::new(e.sid("u:app_r:app_t:s0")).prepare();
    p.exec_sid = Some(e.sid("u:app_r:set_t:s0"));
    let ts = seaccess_objmgr::Task::new(10, "sh", p.build());
    let err =
        e.om.bprm_creds_for_exec(
            &ts,
            &f,
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
            &f,
            "/p",
            &ExecOpts {
                nosuid: true,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(err.errno(), errno::EACCES);
}

/// avc_audit_post_callback: a SID security_sid_to_context cannot name is written ` ssid=N` /
/// ` tsid=N`, not as a context; in a record of the cache's (a class the policy defines) and in
/// one of the object manager's own (a class the policy lacks).
#[test]
fn a_sid_without_a_context_is_written_as_a_number() {
    let e = env();
    let t = e.task("u:r:allow_t:s0");
    let (ghost_s, ghost_t) = (Sid(90_001), Sid(90_002));
    let seqno = e.avc.seqno();
    let v = Checked {
        decision: AvDecision::deny_all(seqno),
        denied: AccessVector(2),
        unknown: 0,
        enforced: true,
        audited: AccessVector(2),
        audited_unknown: 0,
        unknown_class: false,
    };
    e.om.audit(&t, ghost_s, ghost_t, Class::FILE, &v, &AuditData::None);
    let v = Checked {
        unknown_class: true,
        unknown: 1,
        denied: AccessVector::NONE,
        audited: AccessVector::NONE,
        audited_unknown: 1,
        ..v
    };
    e.om.audit(
        &t,
        ghost_s,
        e.sid("u:r:allow_t:s0"),
        Class::MSGQ,
        &v,
        &AuditData::None,
    );
    let recs = e.take();
    assert_eq!(recs.len(), 2, "{recs:?}");
    assert!(
        recs[0].ends_with(" ssid=90001 tsid=90002 tclass=file permissive=0"),
        "{}",
        recs[0]
    );
    assert!(
        recs[1].contains(" ssid=90001 tcontext=u:r:allow_t:s0 tclass=msgq "),
        "{}",
        recs[1]
    );
    assert!(recs.iter().all(|r| !r.contains("context=sid=")));
}

/// selinux_bprm_committing_creds's flush_unauthorized_files: with a transition, the
/// controlling tty needs `{read write}` from the new SID (file_path_has_perm, PATH data), else
/// it is dropped; each open file needs file_has_perm with file_to_av (`fd {use}` when another
/// SID opened it, then what its open flags say), else it is replaced with the null device.
/// Nothing is asked without a transition.
#[test]
fn an_exec_flushes_the_files_the_new_sid_may_not_use() {
    use seaccess_objmgr::hooks::process::exec::{ExecCreds, Flush, OpenFile};
    let e = env();
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let f =
        e.om.inode_init(&sb, 13, REG, "/f", Some("u:object_r:b_t:s0"));
    let tty =
        e.om.inode_init(&sb, 20, 0o020620, "/dev/pts/0", Some("u:object_r:c_t:s0"));
    let quiet = e.task("u:r:quiet_t:s0");
    let rw = e.om.file_open(&quiet, &f, "/f", O_RDWR).unwrap();
    let ap =
        e.om.file_open(&quiet, &f, "/f", O_WRONLY | O_APPEND)
            .unwrap();
    let tf =
        e.om.file_open(&e.task("u:r:allow_t:s0"), &tty, "/dev/pts/0", O_RDWR)
            .unwrap();
    e.take();
    let creds = |old: &str, new: &str| {
        let mut p = seaccess_objmgr::Cred::new(e.sid(new)).prepare();
        p.osid = e.sid(old);
        ExecCreds {
            cred: p.build(),
            secureexec: false,
        }
    };
    let files = [
        OpenFile {
            fd: 3,
            file: &rw,
            inode: &f,
            path: "/f",
        },
        OpenFile {
            fd: 4,
            file: &ap,
            inode: &f,
            path: "/f",
        },
    ];
    let tty_file = OpenFile {
        fd: 0,
        file: &tf,
        inode: &tty,
        path: "/dev/pts/0",
    };
    // quiet_t → allow_t: everything allowed (and auditallow'ed).
    let out = e.om.flush_unauthorized_files(
        &quiet,
        &creds("u:r:quiet_t:s0", "u:r:allow_t:s0"),
        Some(tty_file),
        &files,
    );
    assert_eq!(
        out,
        Flush {
            replace: vec![],
            drop_tty: false
        }
    );
    let recs = e.take();
    assert_eq!(
        recs.iter()
            .map(|r| (summary(r), field(r, "tcontext=")))
            .collect::<Vec<_>>(),
        [
            (
                "granted chr_file {read write}".to_string(),
                "u:object_r:c_t:s0".to_string()
            ),
            ("granted fd {use}".into(), "u:r:quiet_t:s0".into()),
            (
                "granted file {read write}".into(),
                "u:object_r:b_t:s0".into()
            ),
            ("granted fd {use}".into(), "u:r:quiet_t:s0".into()),
            ("granted file {append}".into(), "u:object_r:b_t:s0".into()),
        ]
    );
    assert!(
        recs[0].contains(r#" path="/dev/pts/0" dev="sda1" ino=20 "#)
            && recs[2].contains(r#" path="/f" dev="sda1" ino=13 "#),
        "{recs:?}"
    );
    // quiet_t → deny_t: the tty is dropped, both files replaced; each refused at its first check.
    let out = e.om.flush_unauthorized_files(
        &quiet,
        &creds("u:r:quiet_t:s0", "u:r:deny_t:s0"),
        Some(tty_file),
        &files,
    );
    assert_eq!(
        out,
        Flush {
            replace: vec![3, 4],
            drop_tty: true
        }
    );
    assert_eq!(
        e.asked(),
        [
            "denied chr_file {read write}",
            "denied fd {use}",
            "denied fd {use}"
        ]
    );
    // No transition: nothing asked.
    let out = e.om.flush_unauthorized_files(
        &quiet,
        &creds("u:r:deny_t:s0", "u:r:deny_t:s0"),
        Some(tty_file),
        &files,
    );
    assert_eq!(out, Flush::default());
    assert!(e.take().is_empty());
}
