//! The permissions each file-side hook asks, compared with a table written from the kernel's
//! hooks.c (torvalds/linux 28254722a459, the function named in each row) and
//! /work/wt/briefs/hooks-verified.md §2-§6. The test policy (objmgr-files.cil) allows
//! `allow_t` everything and auditallows every grant, so each check writes one `granted`
//! record listing exactly the permissions asked; `deny_t` is allowed nothing, so the first
//! check is denied and recorded in the kernel's format (§1).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fs_support;

use fs_support::*;
use seaccess_objmgr::hooks::fs::{
    attr, ioctls, oflags::*, MountOpts, MAY_ACCESS, MAY_APPEND, MAY_EXEC, MAY_OPEN, MAY_READ,
    MAY_WRITE,
};
use seaccess_objmgr::{errno, InodeSec};

struct Fs {
    e: Env,
    root: InodeSec,
    d: InodeSec,
    d2: InodeSec,
    sub: InodeSec,
    f: InodeSec,
    g: InodeSec,
    l: InodeSec,
}

fn fs() -> Fs {
    let e = env();
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let root = e.om.inode_init(&sb, 2, DIR, "/", Some("u:object_r:a_t:s0"));
    let d =
        e.om.inode_init(&sb, 10, DIR, "/d", Some("u:object_r:a_t:s0"));
    let d2 =
        e.om.inode_init(&sb, 11, DIR, "/d2", Some("u:object_r:b_t:s0"));
    let sub =
        e.om.inode_init(&sb, 12, DIR, "/d/sub", Some("u:object_r:b_t:s0"));
    let f =
        e.om.inode_init(&sb, 13, REG, "/d/f", Some("u:object_r:b_t:s0"));
    let g =
        e.om.inode_init(&sb, 14, REG, "/d2/g", Some("u:object_r:a_t:s0"));
    let l =
        e.om.inode_init(&sb, 15, LNK, "/d/l", Some("u:object_r:b_t:s0"));
    Fs {
        e,
        root,
        d,
        d2,
        sub,
        f,
        g,
        l,
    }
}

#[track_caller]
fn asks(e: &Env, what: &str, r: seaccess_objmgr::Result<()>, want: &[&str]) {
    assert!(r.is_ok(), "{what}: {r:?}");
    assert_eq!(e.asked(), want, "{what}");
}

#[test]
fn walk_getattr_links_and_statfs_ask_what_the_kernel_asks() {
    let Fs {
        e,
        root,
        d,
        sub,
        f,
        l,
        ..
    } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    // selinux_inode_permission: file_mask_to_av per class; MAY_OPEN / MAY_ACCESS alone ask nothing.
    asks(
        &e,
        "walk",
        om.path_walk(&t, &[(&root, "/"), (&d, "d"), (&sub, "sub")]),
        &["granted dir {search}"; 3],
    );
    asks(
        &e,
        "dir rwx",
        om.inode_permission(&t, &d, MAY_READ | MAY_WRITE | MAY_EXEC, Some("d")),
        &["granted dir {read write search}"],
    );
    asks(
        &e,
        "dir append",
        om.inode_permission(&t, &d, MAY_APPEND, Some("d")),
        &[],
    );
    asks(
        &e,
        "file rw",
        om.inode_permission(&t, &f, MAY_READ | MAY_WRITE, Some("f")),
        &["granted file {read write}"],
    );
    asks(
        &e,
        "file w+append",
        om.inode_permission(&t, &f, MAY_WRITE | MAY_APPEND, Some("f")),
        &["granted file {append}"],
    );
    asks(
        &e,
        "file exec",
        om.inode_permission(&t, &f, MAY_EXEC, Some("f")),
        &["granted file {execute}"],
    );
    asks(
        &e,
        "open alone",
        om.inode_permission(&t, &f, MAY_OPEN | MAY_ACCESS, Some("f")),
        &[],
    );
    // selinux_inode_getattr -> path_has_perm.
    asks(
        &e,
        "stat",
        om.inode_getattr(&t, &f, "/d/f"),
        &["granted file {getattr}"],
    );
    // selinux_inode_follow_link, selinux_inode_readlink.
    asks(
        &e,
        "follow",
        om.inode_follow_link(&t, &l, "l"),
        &["granted lnk_file {read}"],
    );
    asks(
        &e,
        "readlink",
        om.inode_readlink(&t, &l, "l"),
        &["granted lnk_file {read}"],
    );
    // selinux_sb_statfs -> superblock_has_perm.
    om.sb_statfs(&t, &root).unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { getattr } for  pid=42 comm="svc" name="/" dev="sda1" ino=2 scontext=u:r:allow_t:s0 tcontext=u:object_r:fs_t:s0 tclass=filesystem"#
        ]
    );
}

#[test]
fn open_read_write_and_ioctl_ask_what_the_kernel_asks() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    // selinux_file_open: open_file_to_av, `open` under the open_perms capability.
    let cases: &[(i32, &str)] = &[
        (O_RDONLY, "granted file {read open}"),
        (O_WRONLY, "granted file {write open}"),
        (O_WRONLY | O_APPEND, "granted file {append open}"),
        (O_RDWR | O_TRUNC, "granted file {read write open}"),
        (3, "granted file {ioctl open}"),
    ];
    for &(flags, want) in cases {
        let r = om.file_open(&t, &f, "/d/f", flags).map(|_| ());
        asks(&e, &format!("open {flags:#o}"), r, &[want]);
    }
    // selinux_file_permission: the open's grant, auditallow'ed or not, covers the opener's
    // reads and writes, which are not checked and write nothing; what the open did not ask
    // goes to selinux_revalidate_file_permission -> file_has_perm (O_APPEND: a write is an
    // append).
    let rw = om.file_open(&t, &f, "/d/f", O_RDWR).unwrap();
    e.take();
    asks(
        &e,
        "read",
        om.file_permission(&t, &rw, &f, MAY_READ, "/d/f"),
        &[],
    );
    asks(
        &e,
        "write",
        om.file_permission(&t, &rw, &f, MAY_WRITE, "/d/f"),
        &[],
    );
    let app = om.file_open(&t, &f, "/d/f", O_WRONLY | O_APPEND).unwrap();
    e.take();
    asks(
        &e,
        "write O_APPEND",
        om.file_permission(&t, &app, &f, MAY_WRITE, "/d/f"),
        &[],
    );
    asks(
        &e,
        "read O_WRONLY",
        om.file_permission(&t, &app, &f, MAY_READ, "/d/f"),
        &["granted file {read}"],
    );
    om.fast_paths().set_revalidate(false);
    asks(
        &e,
        "read O_WRONLY (skip off)",
        om.file_permission(&t, &app, &f, MAY_READ | MAY_WRITE, "/d/f"),
        &["granted file {read append}"],
    );
    om.fast_paths().set_revalidate(true);
    // selinux_file_ioctl's special cases, then ioctl_has_perm.
    asks(
        &e,
        "FIONREAD",
        om.file_ioctl(&t, &rw, &f, ioctls::FIONREAD, "/d/f"),
        &["granted file {getattr}"],
    );
    asks(
        &e,
        "FS_IOC_GETFLAGS",
        om.file_ioctl(&t, &rw, &f, ioctls::FS_IOC_GETFLAGS, "/d/f"),
        &["granted file {getattr}"],
    );
    asks(
        &e,
        "FS_IOC_SETFLAGS",
        om.file_ioctl(&t, &rw, &f, ioctls::FS_IOC_SETFLAGS, "/d/f"),
        &["granted file {setattr}"],
    );
    asks(
        &e,
        "FIONBIO",
        om.file_ioctl(&t, &rw, &f, ioctls::FIONBIO, "/d/f"),
        &[],
    );
    asks(
        &e,
        "KDSKBENT",
        om.file_ioctl(&t, &rw, &f, ioctls::KDSKBENT, "/d/f"),
        &["granted capability {sys_tty_config}"],
    );
    asks(
        &e,
        "FIOCLEX (no ioctl_skip_cloexec)",
        om.file_ioctl(&t, &rw, &f, ioctls::FIOCLEX, "/d/f"),
        &["granted file {ioctl}"],
    );
    om.file_ioctl(&t, &rw, &f, 0x8912, "/d/f").unwrap();
    let recs = e.take();
    assert_eq!(recs.len(), 1);
    assert!(
        recs[0].contains(r#" path="/d/f" dev="sda1" ino=13 ioctlcmd=0x8912 scontext="#),
        "{}",
        recs[0]
    );
}

#[test]
fn a_file_used_by_another_sid_asks_fd_use_first() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let opener = e.task("u:r:kernel_t:s0");
    let file = om.file_open(&opener, &f, "/d/f", O_RDWR).unwrap();
    e.take();
    let t = e.task("u:r:allow_t:s0");
    // __file_has_perm: fd {use} when the SID differs from the opener's.
    asks(
        &e,
        "read",
        om.file_permission(&t, &file, &f, MAY_READ, "/d/f"),
        &["granted fd {use}", "granted file {read}"],
    );
    asks(
        &e,
        "FIONBIO",
        om.file_ioctl(&t, &file, &f, ioctls::FIONBIO, "/d/f"),
        &["granted fd {use}"],
    );
    // selinux_file_lock / selinux_file_fcntl(F_SETLK...): file_has_perm(FILE__LOCK).
    asks(
        &e,
        "flock",
        om.file_lock(&t, &file, &f, "/d/f"),
        &["granted fd {use}", "granted file {lock}"],
    );
    let mine = om.file_open(&t, &f, "/d/f", O_RDWR).unwrap();
    e.take();
    asks(
        &e,
        "flock by the opener",
        om.file_lock(&t, &mine, &f, "/d/f"),
        &["granted file {lock}"],
    );
    om.file_ioctl(&t, &file, &f, 0x8912, "/d/f").unwrap();
    let recs = e.take();
    assert_eq!(
        recs.iter().map(|r| summary(r)).collect::<Vec<_>>(),
        ["granted fd {use}", "granted file {ioctl}"]
    );
    assert!(
        recs.iter().all(|r| r.contains("ioctlcmd=0x8912 ")),
        "{recs:?}"
    );
}

#[test]
fn namespace_operations_ask_what_the_kernel_asks() {
    let Fs {
        e,
        d,
        d2,
        sub,
        f,
        g,
        ..
    } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    // may_create (selinux_inode_create, _mkdir, _mknod, _symlink).
    let sid = om.inode_create(&t, &d, "new", REG).unwrap();
    assert_eq!(
        e.asked(),
        [
            "granted dir {add_name search}",
            "granted file {create}",
            "granted filesystem {associate}"
        ]
    );
    assert_eq!(
        e.ctx(sid),
        "u:object_r:b_t:s0",
        "type_transition allow_t a_t:file b_t"
    );
    let sid = om.inode_create(&t, &d, "special", REG).unwrap();
    assert_eq!(e.ctx(sid), "u:object_r:c_t:s0", "the named type_transition");
    e.take();
    om.inode_create(&t, &d, "newdir", DIR).unwrap();
    assert_eq!(
        e.asked(),
        [
            "granted dir {add_name search}",
            "granted dir {create}",
            "granted filesystem {associate}"
        ]
    );
    om.inode_create(&t, &d, "ln", LNK).unwrap();
    om.inode_create(&t, &d, "fifo", 0o010644).unwrap();
    assert_eq!(
        e.asked()[1..],
        [
            "granted lnk_file {create}",
            "granted filesystem {associate}",
            "granted dir {add_name search}",
            "granted fifo_file {create}",
            "granted filesystem {associate}"
        ]
    );
    // may_link.
    asks(
        &e,
        "link",
        om.inode_link(&t, &f, "f", &d2),
        &["granted dir {add_name search}", "granted file {link}"],
    );
    asks(
        &e,
        "unlink",
        om.inode_unlink(&t, &d, &f, "f"),
        &["granted dir {remove_name search}", "granted file {unlink}"],
    );
    asks(
        &e,
        "rmdir",
        om.inode_rmdir(&t, &d, &sub, "sub"),
        &["granted dir {remove_name search}", "granted dir {rmdir}"],
    );
    // may_rename.
    asks(
        &e,
        "rename in place",
        om.inode_rename(&t, &d, &f, "f", &d, "f2", None),
        &[
            "granted dir {remove_name search}",
            "granted file {rename}",
            "granted dir {add_name search}",
        ],
    );
    asks(
        &e,
        "rename a file over another",
        om.inode_rename(&t, &d, &f, "f", &d2, "g", Some(&g)),
        &[
            "granted dir {remove_name search}",
            "granted file {rename}",
            "granted dir {add_name remove_name search}",
            "granted file {unlink}",
        ],
    );
    asks(
        &e,
        "move a directory over another",
        om.inode_rename(&t, &d, &sub, "sub", &d2, "x", Some(&d)),
        &[
            "granted dir {remove_name search}",
            "granted dir {rename}",
            "granted dir {reparent}",
            "granted dir {add_name remove_name search}",
            "granted dir {rmdir}",
        ],
    );
    asks(
        &e,
        "rename a directory in place",
        om.inode_rename(&t, &d, &sub, "sub", &d, "sub2", None),
        &[
            "granted dir {remove_name search}",
            "granted dir {rename}",
            "granted dir {add_name search}",
        ],
    );
}

#[test]
fn setattr_and_xattrs_ask_what_the_kernel_asks() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    // selinux_inode_setattr.
    asks(
        &e,
        "chmod",
        om.inode_setattr(&t, &f, "f", attr::MODE | attr::CTIME),
        &["granted file {setattr}"],
    );
    asks(
        &e,
        "chown",
        om.inode_setattr(&t, &f, "f", attr::UID | attr::GID),
        &["granted file {setattr}"],
    );
    asks(
        &e,
        "utimes(explicit)",
        om.inode_setattr(
            &t,
            &f,
            "f",
            attr::ATIME | attr::MTIME | attr::ATIME_SET | attr::MTIME_SET,
        ),
        &["granted file {setattr}"],
    );
    asks(
        &e,
        "utimes(NULL)",
        om.inode_setattr(&t, &f, "f", attr::ATIME | attr::MTIME | attr::CTIME),
        &["granted file {write}"],
    );
    asks(
        &e,
        "truncate",
        om.inode_setattr(&t, &f, "f", attr::SIZE | attr::MTIME | attr::CTIME),
        &["granted file {write open}"],
    );
    asks(
        &e,
        "ftruncate",
        om.inode_setattr(
            &t,
            &f,
            "f",
            attr::SIZE | attr::FILE | attr::MTIME | attr::CTIME,
        ),
        &["granted file {write}"],
    );
    asks(
        &e,
        "forced mode",
        om.inode_setattr(&t, &f, "f", attr::FORCE | attr::MODE | attr::KILL_SUID),
        &[],
    );
    asks(
        &e,
        "kill priv",
        om.inode_setattr(&t, &f, "f", attr::KILL_PRIV),
        &["granted file {write}"],
    );
    // selinux_inode_setxattr / getxattr / listxattr / removexattr.
    asks(
        &e,
        "setxattr user",
        om.inode_setxattr(&t, &f, "f", "user.x", "v"),
        &["granted file {setattr}"],
    );
    asks(
        &e,
        "getxattr",
        om.inode_getxattr(&t, &f, "f"),
        &["granted file {getattr}"],
    );
    asks(
        &e,
        "listxattr",
        om.inode_listxattr(&t, &f, "f"),
        &["granted file {getattr}"],
    );
    asks(
        &e,
        "removexattr user",
        om.inode_removexattr(&t, &f, "f", "user.x"),
        &["granted file {setattr}"],
    );
    let r = om.inode_removexattr(&t, &f, "f", "security.selinux");
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EACCES));
    assert_eq!(e.asked(), Vec::<String>::new());
    // The relabel (§6.3): relabelfrom, relabelto, filesystem associate.
    asks(
        &e,
        "relabel",
        om.inode_setxattr(&t, &f, "f", "security.selinux", "u:object_r:c_t:s0\0"),
        &[
            "granted file {relabelfrom}",
            "granted file {relabelto}",
            "granted filesystem {associate}",
        ],
    );
    assert_eq!(
        e.ctx(f.sid()),
        "u:object_r:b_t:s0",
        "the label changes only after the value is stored"
    );
    om.inode_post_setxattr(&f, "security.selinux", "u:object_r:c_t:s0\0")
        .unwrap();
    assert_eq!(e.ctx(f.sid()), "u:object_r:c_t:s0");
}

#[test]
fn a_relabel_to_an_invalid_or_forbidden_context_is_refused_as_the_kernel_refuses_it() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    let r = om.inode_setxattr(&t, &f, "f", "security.selinux", "u:object_r:nosuch_t:s0");
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EINVAL));
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { relabelfrom } for  pid=42 comm="svc" name="f" dev="sda1" ino=13 scontext=u:r:allow_t:s0 tcontext=u:object_r:b_t:s0 tclass=file"#,
            r#"op=setxattr invalid_context="u:object_r:nosuch_t:s0""#
        ]
    );
    // validatetrans file (neq t2 frozen_t): EPERM in enforcing mode, after relabelto.
    let r = om.inode_setxattr(&t, &f, "f", "security.selinux", "u:object_r:frozen_t:s0");
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EPERM));
    let recs = e.take();
    assert_eq!(recs.len(), 3, "{recs:?}");
    assert_eq!(summary(&recs[1]), "granted file {relabelto}");
    assert_eq!(recs[2], "op=security_validate_transition seresult=denied oldcontext=u:object_r:b_t:s0 newcontext=u:object_r:frozen_t:s0 taskcontext=u:r:allow_t:s0 tclass=file");
    e.avc.set_enforcing(false);
    assert!(
        om.inode_setxattr(&t, &f, "f", "security.selinux", "u:object_r:frozen_t:s0")
            .is_ok(),
        "permissive: security_validate_transition returns 0"
    );
}

#[test]
fn denials_are_refused_and_recorded_in_the_kernels_format() {
    let Fs { e, root, d, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:deny_t:s0");
    let r = om.path_walk(&t, &[(&root, "/"), (&d, "d")]);
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EACCES));
    assert_eq!(
        e.take(),
        [
            r#"avc:  denied  { search } for  pid=42 comm="svc" name="/" dev="sda1" ino=2 scontext=u:r:deny_t:s0 tcontext=u:object_r:a_t:s0 tclass=dir permissive=0"#
        ]
    );
    let err = om.file_open(&t, &f, "/d/f", O_RDWR).unwrap_err();
    // The error names what was denied as the record does, not by bit numbers.
    assert_eq!(
        err.to_string(),
        "permission denied: file { read write open }"
    );
    assert_eq!(
        e.take(),
        [
            r#"avc:  denied  { read write open } for  pid=42 comm="svc" path="/d/f" dev="sda1" ino=13 scontext=u:r:deny_t:s0 tcontext=u:object_r:b_t:s0 tclass=file permissive=0"#
        ]
    );
    assert!(om.inode_create(&t, &d, "new file", REG).is_err());
    assert_eq!(
        e.take(),
        [
            r#"avc:  denied  { add_name search } for  pid=42 comm="svc" name=6E65772066696C65 scontext=u:r:deny_t:s0 tcontext=u:object_r:a_t:s0 tclass=dir permissive=0"#
        ]
    );
    assert!(om.inode_getattr(&t, &f, "/d/f").is_err());
    assert_eq!(e.asked(), ["denied file {getattr}"]);
    e.avc.set_enforcing(false);
    assert!(om.inode_getattr(&t, &f, "/d/f").is_ok());
    assert!(e.take()[0].ends_with("tclass=file permissive=1"));
}

/// A walk kept as an object manager may keep it: the blobs in a list of their own, the names
/// apart.
struct Blobs<'a> {
    dirs: Vec<&'a InodeSec>,
    names: Vec<&'a str>,
}

impl seaccess_objmgr::hooks::fs::WalkDirs for Blobs<'_> {
    fn count(&self) -> usize {
        self.dirs.len()
    }
    fn dir(&self, i: usize) -> Option<&InodeSec> {
        self.dirs.get(i).copied()
    }
    fn name(&self, i: usize) -> &str {
        self.names.get(i).copied().unwrap_or_default()
    }
}

// A walk given in any form asks search of each directory in turn and names each in its
// record, as the slice of (blob, name) pairs does (permissive, so the walk goes on past a
// denial; `d` shares `/`'s type, so only `/` and `sub` are recorded).
#[test]
fn a_walk_kept_apart_from_its_names_asks_and_records_the_same() {
    let walk = |apart: bool| {
        let Fs {
            e, root, d, sub, ..
        } = fs();
        let t = e.task("u:r:deny_t:s0");
        e.avc.set_enforcing(false);
        let r = if apart {
            e.om.path_walk(
                &t,
                &Blobs {
                    dirs: vec![&root, &d, &sub],
                    names: vec!["/", "d", "sub"],
                },
            )
        } else {
            e.om.path_walk(&t, &[(&root, "/"), (&d, "d"), (&sub, "sub")])
        };
        assert!(r.is_ok());
        e.take()
    };
    let (pairs, apart) = (walk(false), walk(true));
    assert_eq!(apart, pairs);
    assert_eq!(apart.len(), 2, "{apart:?}");
    assert!(
        apart[0].contains(r#"name="/" dev="sda1" ino=2 "#) && apart[1].contains(r#"name="sub" "#),
        "{apart:?}"
    );
}

#[test]
fn mounts_label_inodes_as_the_kernel_does() {
    let e = env();
    let om = &e.om;
    let ctx = |i: &InodeSec| e.ctx(i.sid());
    // fs_use_xattr: the attribute; none: the `file` initial SID; invalid: unlabeled.
    let sb = om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    assert_eq!(e.ctx(sb.sid), "u:object_r:fs_t:s0");
    assert_eq!(
        ctx(&om.inode_init(&sb, 5, REG, "/x", Some("u:object_r:a_t:s0"))),
        "u:object_r:a_t:s0"
    );
    assert_eq!(
        ctx(&om.inode_init(&sb, 5, REG, "/x", None)),
        "u:object_r:file_t:s0"
    );
    assert_eq!(
        ctx(&om.inode_init(&sb, 5, REG, "/x", Some("u:object_r:nosuch_t:s0"))),
        "u:object_r:unlabeled_t:s0"
    );
    // defcontext= replaces the default; rootcontext= labels the root.
    let o = MountOpts {
        defcontext: Some("u:object_r:b_t:s0"),
        rootcontext: Some("u:object_r:c_t:s0"),
        ..Default::default()
    };
    let sb = om.mount("sdb1", "ext4", &o).unwrap();
    assert_eq!(
        ctx(&om.inode_init(&sb, 5, REG, "/x", None)),
        "u:object_r:b_t:s0"
    );
    assert_eq!(
        ctx(&om.inode_init(&sb, 2, DIR, "/", Some("u:object_r:a_t:s0"))),
        "u:object_r:c_t:s0"
    );
    // context=: every inode, and the filesystem too; no per-file labels.
    let o = MountOpts {
        context: Some("u:object_r:c_t:s0"),
        ..Default::default()
    };
    let sb = om.mount("sdc1", "ext4", &o).unwrap();
    assert_eq!(e.ctx(sb.sid), "u:object_r:c_t:s0");
    let i = om.inode_init(&sb, 5, REG, "/x", Some("u:object_r:a_t:s0"));
    assert_eq!(ctx(&i), "u:object_r:c_t:s0");
    let t = e.task("u:r:allow_t:s0");
    assert_eq!(
        om.inode_create(&t, &i, "y", REG).map(|s| e.ctx(s)),
        Ok("u:object_r:c_t:s0".into()),
        "mntpoint_sid"
    );
    let r = om.inode_setxattr(&t, &i, "x", "security.selinux", "u:object_r:a_t:s0");
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EOPNOTSUPP));
    // fscontext= with context=: the filesystem takes fscontext.
    let o = MountOpts {
        context: Some("u:object_r:c_t:s0"),
        fscontext: Some("u:object_r:b_t:s0"),
        ..Default::default()
    };
    assert_eq!(
        e.ctx(om.mount("sdd1", "ext4", &o).unwrap().sid),
        "u:object_r:b_t:s0"
    );
    // context= and defcontext= exclude each other; defcontext= needs xattrs; bad contexts.
    let o = MountOpts {
        context: Some("u:object_r:c_t:s0"),
        defcontext: Some("u:object_r:b_t:s0"),
        ..Default::default()
    };
    assert_eq!(
        om.mount("sde1", "ext4", &o).map_err(|e| e.errno()).err(),
        Some(errno::EINVAL)
    );
    let o = MountOpts {
        defcontext: Some("u:object_r:b_t:s0"),
        ..Default::default()
    };
    assert_eq!(
        om.mount("tmpfs", "tmpfs", &o).map_err(|e| e.errno()).err(),
        Some(errno::EINVAL)
    );
    let o = MountOpts {
        fscontext: Some("u:object_r:nosuch_t:s0"),
        ..Default::default()
    };
    assert_eq!(
        om.mount("sde1", "ext4", &o).map_err(|e| e.errno()).err(),
        Some(errno::EINVAL)
    );
    // fs_use_trans: transition from the allocating task to the filesystem (no rule: the
    // filesystem's type); fs_use_task: the task's SID.
    let sb = om.mount("tmpfs", "tmpfs", &MountOpts::default()).unwrap();
    assert_eq!(
        ctx(&om.inode_init_as(&t, &sb, 5, REG, "/x", None)),
        "u:object_r:tmpfs_t:s0"
    );
    let sb = om.mount("pipefs", "pipefs", &MountOpts::default()).unwrap();
    assert_eq!(
        ctx(&om.inode_init_as(&t, &sb, 5, 0o010600, "/", None)),
        "u:r:allow_t:s0"
    );
    // genfscon by path on proc (the /<pid> digits overwritten with '/' as
    // selinux_genfs_get_sid does, so /1/net is looked up as //net, which
    // __security_genfs_sid reads as /net); one SID on vfat.
    let sb = om.mount("proc", "proc", &MountOpts::default()).unwrap();
    assert_eq!(e.ctx(sb.sid), "u:object_r:proc_t:s0");
    assert_eq!(
        ctx(&om.inode_init(&sb, 5, REG, "/net/dev", None)),
        "u:object_r:proc_net_t:s0"
    );
    assert_eq!(
        ctx(&om.inode_init(&sb, 5, REG, "/cpuinfo", None)),
        "u:object_r:proc_t:s0"
    );
    assert_eq!(
        ctx(&om.inode_init(&sb, 5, REG, "/1/net", None)),
        "u:object_r:proc_net_t:s0"
    );
    assert_eq!(
        ctx(&om.inode_init(&sb, 5, REG, "/12x/net", None)),
        "u:object_r:proc_t:s0"
    );
    let sb = om.mount("sdf1", "vfat", &MountOpts::default()).unwrap();
    assert!(!sb.sblabel);
    assert_eq!(
        ctx(&om.inode_init(&sb, 5, REG, "/net/x", None)),
        "u:object_r:vfat_t:s0"
    );
}

#[test]
fn new_inodes_take_the_creators_fscreate_context_where_files_carry_labels() {
    let e = env();
    let om = &e.om;
    let sb = om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let d = om.inode_init(&sb, 10, DIR, "/d", Some("u:object_r:a_t:s0"));
    let mut c = e.task("u:r:allow_t:s0").cred().prepare();
    c.create_sid = Some(e.sid("u:object_r:frozen_t:s0"));
    let t = seaccess_objmgr::Task::new(42, "svc", c.build());
    let sid = om.inode_create(&t, &d, "x", REG).unwrap();
    assert_eq!(e.ctx(sid), "u:object_r:frozen_t:s0");
    let i = om.inode_post_create(&t, &d, 20, REG, "/d/x", sid);
    assert_eq!(i.sid(), sid);
    // Not where files carry no labels of their own (vfat: genfs without SBLABEL_MNT): the
    // transition, and the inode then has the filesystem's genfs SID.
    let sb = om.mount("sdf1", "vfat", &MountOpts::default()).unwrap();
    let d = om.inode_init(&sb, 10, DIR, "/d", None);
    let sid = om.inode_create(&t, &d, "x", REG).unwrap();
    assert_eq!(e.ctx(sid), "u:object_r:vfat_t:s0");
    assert_eq!(
        e.ctx(om.inode_post_create(&t, &d, 20, REG, "/d/x", sid).sid()),
        "u:object_r:vfat_t:s0"
    );
}

#[test]
fn ioctls_are_decided_with_the_policys_extended_permissions() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:quiet_t:s0");
    let file = om.file_open(&t, &f, "/d/f", O_RDONLY).unwrap();
    // ioctl_has_perm -> avc_has_extended_perms: allowx quiet_t b_t file 0x8900-0x890f.
    assert!(om.file_ioctl(&t, &file, &f, 0x8905, "/d/f").is_ok());
    // Once allowx rules cover the triple, a driver none of them names is denied
    // (avc_has_extended_perms: the driver is not in the decision's drivers).
    assert!(om.file_ioctl(&t, &file, &f, 0x5401, "/d/f").is_err());
    assert_eq!(e.asked(), ["denied file {ioctl}"]);
    let r = om.file_ioctl(&t, &file, &f, 0x8912, "/d/f");
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EACCES));
    assert_eq!(
        e.take(),
        [
            r#"avc:  denied  { ioctl } for  pid=42 comm="svc" path="/d/f" dev="sda1" ino=13 ioctlcmd=0x8912 scontext=u:r:quiet_t:s0 tcontext=u:object_r:b_t:s0 tclass=file permissive=0"#
        ]
    );
}
