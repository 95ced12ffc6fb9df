//! The permissions the mount and quota hooks ask, and the mount options' parsing, comparison
//! and display, compared with hooks.c (torvalds/linux 28254722a459, the function named at
//! each case). objmgr-files.cil allows `allow_t` everything and auditallows every grant;
//! `deny_t` is allowed nothing. ext4 is labelled by xattrs (fs_t), vfat by genfscon.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fs_support;

use fs_support::*;
use seaccess_objmgr::hooks::fs::{quota_cmds::*, MntOpts, MountOpts, MS_REMOUNT};
use seaccess_objmgr::{errno, Result};

#[track_caller]
fn asks(e: &Env, what: &str, r: Result<()>, want: &[&str]) {
    assert!(r.is_ok(), "{what}: {r:?}");
    assert_eq!(e.asked(), want, "{what}");
}

#[track_caller]
fn refused(e: &Env, what: &str, r: Result<()>, want: &[&str]) {
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EACCES), "{what}");
    assert_eq!(e.asked(), want, "{what}");
}

const MS_BIND: u64 = 4096;
const MS_MOVE: u64 = 8192;

#[test]
fn mount_umount_and_move_ask_what_the_kernel_asks() {
    let e = env();
    let om = &e.om;
    let sb = om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let root = om.inode_init(&sb, 2, DIR, "/", Some("u:object_r:a_t:s0"));
    let mnt = om.inode_init(&sb, 10, DIR, "/mnt", Some("u:object_r:b_t:s0"));
    let t = e.task("u:r:allow_t:s0");
    // selinux_mount: MS_REMOUNT -> superblock_has_perm(REMOUNT, no audit data); anything else
    // -> path_has_perm(FILE__MOUNTON).
    om.sb_mount(&t, &root, "/", MS_REMOUNT).unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { remount } for  pid=42 comm="svc" scontext=u:r:allow_t:s0 tcontext=u:object_r:fs_t:s0 tclass=filesystem"#
        ]
    );
    om.sb_mount(&t, &mnt, "/mnt", 0).unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { mounton } for  pid=42 comm="svc" path="/mnt" dev="sda1" ino=10 scontext=u:r:allow_t:s0 tcontext=u:object_r:b_t:s0 tclass=dir"#
        ]
    );
    for flags in [MS_BIND, MS_MOVE, MS_BIND | 16384] {
        asks(
            &e,
            &format!("mount flags {flags:#x}"),
            om.sb_mount(&t, &mnt, "/mnt", flags),
            &["granted dir {mounton}"],
        );
    }
    // selinux_move_mount: path_has_perm(to_path, FILE__MOUNTON).
    asks(
        &e,
        "move_mount",
        om.move_mount(&t, &mnt, "/mnt"),
        &["granted dir {mounton}"],
    );
    // selinux_umount: superblock_has_perm(UNMOUNT, no audit data).
    om.sb_umount(&t, &sb).unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { unmount } for  pid=42 comm="svc" scontext=u:r:allow_t:s0 tcontext=u:object_r:fs_t:s0 tclass=filesystem"#
        ]
    );
    // selinux_sb_kern_mount: superblock_has_perm(MOUNT) with the root's DENTRY data, on the
    // SID the options gave.
    om.sb_kern_mount(&t, &root).unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { mount } for  pid=42 comm="svc" name="/" dev="sda1" ino=2 scontext=u:r:allow_t:s0 tcontext=u:object_r:fs_t:s0 tclass=filesystem"#
        ]
    );
    let c = om
        .mount(
            "sdc1",
            "ext4",
            &MountOpts {
                context: Some("u:object_r:c_t:s0"),
                ..Default::default()
            },
        )
        .unwrap();
    let croot = om.inode_init(&c, 2, DIR, "/", None);
    om.sb_kern_mount(&t, &croot).unwrap();
    assert!(e.take()[0].contains("tcontext=u:object_r:c_t:s0 tclass=filesystem"));
    let d = e.task("u:r:deny_t:s0");
    refused(
        &e,
        "deny_t remount",
        om.sb_mount(&d, &root, "/", MS_REMOUNT),
        &["denied filesystem {remount}"],
    );
    refused(
        &e,
        "deny_t bind",
        om.sb_mount(&d, &mnt, "/mnt", MS_BIND),
        &["denied dir {mounton}"],
    );
    refused(
        &e,
        "deny_t move_mount",
        om.move_mount(&d, &mnt, "/mnt"),
        &["denied dir {mounton}"],
    );
    refused(
        &e,
        "deny_t umount",
        om.sb_umount(&d, &sb),
        &["denied filesystem {unmount}"],
    );
    refused(
        &e,
        "deny_t kern_mount",
        om.sb_kern_mount(&d, &root),
        &["denied filesystem {mount}"],
    );
}

#[test]
fn quotas_ask_quotamod_quotaget_and_quotaon() {
    let e = env();
    let om = &e.om;
    let sb = om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let q = om.inode_init(&sb, 12, REG, "/aquota.user", Some("u:object_r:b_t:s0"));
    let t = e.task("u:r:allow_t:s0");
    // selinux_quotactl's two lists; any other command and a NULL sb ask nothing.
    for cmd in [
        Q_SYNC,
        Q_QUOTAON,
        Q_QUOTAOFF,
        Q_SETINFO,
        Q_SETQUOTA,
        Q_XQUOTAOFF,
        Q_XQUOTAON,
        Q_XSETQLIM,
    ] {
        asks(
            &e,
            &format!("quotactl {cmd:#x}"),
            om.quotactl(&t, cmd, Some(&sb)),
            &["granted filesystem {quotamod}"],
        );
    }
    for cmd in [
        Q_GETFMT,
        Q_GETINFO,
        Q_GETQUOTA,
        Q_XGETQUOTA,
        Q_XGETQSTAT,
        Q_XGETQSTATV,
        Q_XGETNEXTQUOTA,
    ] {
        asks(
            &e,
            &format!("quotactl {cmd:#x}"),
            om.quotactl(&t, cmd, Some(&sb)),
            &["granted filesystem {quotaget}"],
        );
    }
    for cmd in [Q_GETNEXTQUOTA, Q_XQUOTARM, Q_XQUOTASYNC, 0x7777] {
        asks(
            &e,
            &format!("quotactl {cmd:#x}"),
            om.quotactl(&t, cmd, Some(&sb)),
            &[],
        );
    }
    asks(
        &e,
        "Q_SYNC of every filesystem",
        om.quotactl(&t, Q_SYNC, None),
        &[],
    );
    om.quotactl(&t, Q_GETQUOTA, Some(&sb)).unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { quotaget } for  pid=42 comm="svc" scontext=u:r:allow_t:s0 tcontext=u:object_r:fs_t:s0 tclass=filesystem"#
        ]
    );
    // selinux_quota_on: dentry_has_perm(FILE__QUOTAON).
    om.quota_on(&t, &q, "aquota.user").unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { quotaon } for  pid=42 comm="svc" name="aquota.user" dev="sda1" ino=12 scontext=u:r:allow_t:s0 tcontext=u:object_r:b_t:s0 tclass=file"#
        ]
    );
    let d = e.task("u:r:deny_t:s0");
    refused(
        &e,
        "deny_t quotaon",
        om.quotactl(&d, Q_QUOTAON, Some(&sb)),
        &["denied filesystem {quotamod}"],
    );
    refused(
        &e,
        "deny_t getquota",
        om.quotactl(&d, Q_GETQUOTA, Some(&sb)),
        &["denied filesystem {quotaget}"],
    );
    refused(
        &e,
        "deny_t quota_on",
        om.quota_on(&d, &q, "aquota.user"),
        &["denied file {quotaon}"],
    );
}

#[test]
fn the_option_string_loses_the_selinux_options() {
    let e = env();
    let om = &e.om;
    let (b, c) = (e.sid("u:object_r:b_t:s0"), e.sid("u:object_r:c_t:s0"));
    // selinux_sb_eat_lsm_opts: SELinux's options out (quotes dropped), the rest kept in order.
    let (rest, o) = om.sb_eat_lsm_opts(r#"ro,context="u:object_r:c_t:s0",noexec,seclabel,x="a,b",rootcontext=u:object_r:b_t:s0"#).unwrap();
    assert_eq!(rest, r#"ro,noexec,x="a,b""#);
    assert_eq!(
        o,
        MntOpts {
            context: Some(c),
            rootcontext: Some(b),
            ..Default::default()
        }
    );
    let (rest, o) = om
        .sb_eat_lsm_opts("fscontext=u:object_r:b_t:s0,,defcontext=u:object_r:c_t:s0,rw")
        .unwrap();
    assert_eq!(
        (rest.as_str(), o),
        (
            ",rw",
            MntOpts {
                fscontext: Some(b),
                defcontext: Some(c),
                ..Default::default()
            }
        )
    );
    // Names that are only prefixes, or lack their '=', are the filesystem's.
    let (rest, o) = om
        .sb_eat_lsm_opts("contexts=x,context,seclabel=1,")
        .unwrap();
    assert_eq!(
        (rest.as_str(), o.is_empty()),
        ("contexts=x,context,seclabel=1,", true)
    );
    assert_eq!(
        om.sb_eat_lsm_opts("").map(|(r, o)| (r, o.is_empty())),
        Ok((String::new(), true))
    );
    // selinux_add_opt: context= with defcontext=, a repeat, an invalid context: EINVAL.
    for bad in [
        "context=u:object_r:b_t:s0,defcontext=u:object_r:b_t:s0",
        "defcontext=u:object_r:b_t:s0,context=u:object_r:b_t:s0",
        "fscontext=u:object_r:b_t:s0,fscontext=u:object_r:b_t:s0",
        "rootcontext=u:object_r:nosuch_t:s0",
        "context=",
    ] {
        assert_eq!(
            om.sb_eat_lsm_opts(bad).map_err(|e| e.errno()).err(),
            Some(errno::EINVAL),
            "{bad}"
        );
    }
    // selinux_fs_context_parse_param: fs_parse with selinux_fs_parameters, then selinux_add_opt.
    let mut o = MntOpts::default();
    assert_eq!(
        om.fs_context_parse_param(&mut o, "context", Some("u:object_r:c_t:s0")),
        Ok(true)
    );
    assert_eq!(
        om.fs_context_parse_param(&mut o, "seclabel", None),
        Ok(true)
    );
    assert_eq!(
        om.fs_context_parse_param(&mut o, "size", Some("10m")),
        Ok(false)
    );
    assert_eq!(
        o,
        MntOpts {
            context: Some(c),
            ..Default::default()
        }
    );
    for (key, value) in [
        ("context", Some("u:object_r:c_t:s0")),
        ("defcontext", Some("u:object_r:c_t:s0")),
        ("rootcontext", None),
        ("seclabel", Some("1")),
    ] {
        assert_eq!(
            om.fs_context_parse_param(&mut o, key, value)
                .map_err(|e| e.errno()),
            Err(errno::EINVAL),
            "{key}"
        );
    }
    // selinux_fs_context_dup.
    assert_eq!(om.fs_context_dup(&o), o);
}

#[test]
fn parsed_options_label_a_filesystem_as_mount_as_does() {
    let e = env();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    // selinux_set_mnt_opts: fscontext= -> may_context_mount_sb_relabel.
    let (_, o) = om.sb_eat_lsm_opts("fscontext=u:object_r:b_t:s0").unwrap();
    let sb = om.sb_set_mnt_opts(&t, "sdz1", "ext4", &o).unwrap();
    assert_eq!(e.ctx(sb.sid), "u:object_r:b_t:s0");
    assert_eq!(
        e.asked(),
        [
            "granted filesystem {relabelfrom}",
            "granted filesystem {relabelto}"
        ]
    );
    let d = e.task("u:r:deny_t:s0");
    assert_eq!(
        om.sb_set_mnt_opts(&d, "sdz2", "ext4", &o)
            .map(|_| ())
            .map_err(|e| e.errno()),
        Err(errno::EACCES)
    );
    assert_eq!(e.asked(), ["denied filesystem {relabelfrom}"]);
}

#[test]
fn remounts_and_reused_superblocks_keep_their_options() {
    let e = env();
    let om = &e.om;
    let (_, mounted) = om.sb_eat_lsm_opts("context=u:object_r:c_t:s0").unwrap();
    let m = MountOpts {
        context: Some("u:object_r:c_t:s0"),
        ..Default::default()
    };
    let sb = om.mount("sdc1", "ext4", &m).unwrap();
    let root = om.inode_init(&sb, 2, DIR, "/", None);
    let opts = |s: &str| om.sb_eat_lsm_opts(s).unwrap().1;
    // selinux_sb_remount: bad_option for each option given; none given is fine.
    assert_eq!(
        om.sb_remount(&sb, &root, &mounted, &MntOpts::default()),
        Ok(())
    );
    assert_eq!(
        om.sb_remount(&sb, &root, &mounted, &opts("context=u:object_r:c_t:s0")),
        Ok(())
    );
    for bad in [
        "context=u:object_r:b_t:s0",
        "fscontext=u:object_r:c_t:s0",
        "rootcontext=u:object_r:c_t:s0",
    ] {
        assert_eq!(
            om.sb_remount(&sb, &root, &mounted, &opts(bad))
                .map_err(|e| e.errno()),
            Err(errno::EINVAL),
            "{bad}"
        );
    }
    // selinux_sb_mnt_opts_compat: no options match only a superblock mounted with none.
    assert!(om.sb_mnt_opts_compat(&sb, &root, &mounted, &opts("context=u:object_r:c_t:s0")));
    assert!(!om.sb_mnt_opts_compat(&sb, &root, &mounted, &MntOpts::default()));
    assert!(!om.sb_mnt_opts_compat(&sb, &root, &mounted, &opts("context=u:object_r:b_t:s0")));
    let plain = om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let proot = om.inode_init(&plain, 2, DIR, "/", Some("u:object_r:a_t:s0"));
    assert!(om.sb_mnt_opts_compat(&plain, &proot, &MntOpts::default(), &MntOpts::default()));
    assert!(!om.sb_mnt_opts_compat(
        &plain,
        &proot,
        &MntOpts::default(),
        &opts("defcontext=u:object_r:file_t:s0")
    ));
    // rootcontext= compares with the root inode's SID now.
    let (_, rmounted) = om.sb_eat_lsm_opts("rootcontext=u:object_r:b_t:s0").unwrap();
    let rsb = om
        .mount(
            "sdr1",
            "ext4",
            &MountOpts {
                rootcontext: Some("u:object_r:b_t:s0"),
                ..Default::default()
            },
        )
        .unwrap();
    let rroot = om.inode_init(&rsb, 2, DIR, "/", Some("u:object_r:a_t:s0"));
    assert_eq!(
        om.sb_remount(
            &rsb,
            &rroot,
            &rmounted,
            &opts("rootcontext=u:object_r:b_t:s0")
        ),
        Ok(())
    );
    rroot.set_sid(e.sid("u:object_r:a_t:s0"));
    assert_eq!(
        om.sb_remount(
            &rsb,
            &rroot,
            &rmounted,
            &opts("rootcontext=u:object_r:b_t:s0")
        )
        .map_err(|e| e.errno()),
        Err(errno::EINVAL)
    );
    assert_eq!(
        e.asked(),
        Vec::<String>::new(),
        "option comparisons ask nothing"
    );
}

#[test]
fn shown_options_and_submounts_follow_the_superblock() {
    let e = env();
    let om = &e.om;
    let parse = |s: &str| om.sb_eat_lsm_opts(s).unwrap().1;
    // selinux_sb_show_options: fscontext, context, defcontext, rootcontext, then seclabel for
    // SBLABEL_MNT.
    let m = MountOpts {
        defcontext: Some("u:object_r:b_t:s0"),
        rootcontext: Some("u:object_r:c_t:s0"),
        ..Default::default()
    };
    let sb = om.mount("sdb1", "ext4", &m).unwrap();
    let root = om.inode_init(&sb, 2, DIR, "/", None);
    let mounted = parse("rootcontext=u:object_r:c_t:s0,defcontext=u:object_r:b_t:s0");
    assert_eq!(
        om.sb_show_options(&sb, &root, &mounted),
        Ok(",defcontext=u:object_r:b_t:s0,rootcontext=u:object_r:c_t:s0,seclabel".into())
    );
    let m = MountOpts {
        context: Some("u:object_r:c_t:s0"),
        fscontext: Some("u:object_r:b_t:s0"),
        ..Default::default()
    };
    let csb = om.mount("sdc1", "ext4", &m).unwrap();
    let croot = om.inode_init(&csb, 2, DIR, "/", None);
    let cmounted = parse("context=u:object_r:c_t:s0,fscontext=u:object_r:b_t:s0");
    assert_eq!(
        om.sb_show_options(&csb, &croot, &cmounted),
        Ok(",fscontext=u:object_r:b_t:s0,context=u:object_r:c_t:s0".into())
    );
    let plain = om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let proot = om.inode_init(&plain, 2, DIR, "/", None);
    assert_eq!(
        om.sb_show_options(&plain, &proot, &MntOpts::default()),
        Ok(",seclabel".into())
    );
    let vfat = om.mount("sdf1", "vfat", &MountOpts::default()).unwrap();
    assert_eq!(
        om.sb_show_options(
            &vfat,
            &om.inode_init(&vfat, 1, DIR, "/", None),
            &MntOpts::default()
        ),
        Ok(String::new())
    );
    // selinux_fs_context_submount: fscontext, context and defcontext with the reference's
    // SIDs; never rootcontext.
    assert_eq!(
        om.fs_context_submount(&csb, &cmounted),
        MntOpts {
            fscontext: Some(csb.sid),
            context: Some(csb.mntpoint_sid),
            ..Default::default()
        }
    );
    assert_eq!(
        om.fs_context_submount(&sb, &mounted),
        MntOpts {
            defcontext: Some(sb.def_sid),
            ..Default::default()
        }
    );
    assert!(om
        .fs_context_submount(&sb, &parse("rootcontext=u:object_r:c_t:s0"))
        .is_empty());
}
