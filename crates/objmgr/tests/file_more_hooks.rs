//! The permissions the further file hooks ask (fcntl, fd passing, SIGIO, 32-bit ioctls,
//! mmap and mprotect, low mappings, ACLs and file attributes, watches, the label as an
//! attribute's text, overlay copy-up), compared with what hooks.c asks (torvalds/linux
//! 28254722a459, the function named at each case). objmgr-files.cil allows `allow_t`
//! everything and auditallows every grant, so each check writes one `granted` record listing
//! exactly the permissions asked; `deny_t` is allowed nothing; `kernel_t` is allowed
//! everything silently (an opener other than the task, for `fd {use}`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fs_support;

use fs_support::*;
use seaccess_objmgr::hooks::fs::{
    fcntl_cmds::*, fsnotify::*, mman::*, oflags::*, MappedFile, MountOpts, Vma, VmaKind,
    WatchObject, MAY_READ,
};
use seaccess_objmgr::{errno, InodeSec, Result};

struct Fs {
    e: Env,
    d: InodeSec,
    f: InodeSec,
    v: InodeSec,
}

fn fs() -> Fs {
    let e = env();
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let d =
        e.om.inode_init(&sb, 10, DIR, "/d", Some("u:object_r:a_t:s0"));
    let f =
        e.om.inode_init(&sb, 13, REG, "/d/f", Some("u:object_r:b_t:s0"));
    let vfat = e.om.mount("sdf1", "vfat", &MountOpts::default()).unwrap();
    let v = e.om.inode_init(&vfat, 5, REG, "/v", None);
    Fs { e, d, f, v }
}

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

#[test]
fn fcntl_asks_what_selinux_file_fcntl_asks() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    let app = om.file_open(&t, &f, "/d/f", O_WRONLY | O_APPEND).unwrap();
    e.take();
    // F_SETFL clearing O_APPEND: file_has_perm(FILE__WRITE); keeping it: fd {use} alone, which
    // the opener is not asked.
    asks(
        &e,
        "F_SETFL clearing O_APPEND",
        om.file_fcntl(&t, &app, &f, F_SETFL, 0, "/d/f"),
        &["granted file {write}"],
    );
    asks(
        &e,
        "F_SETFL keeping O_APPEND",
        om.file_fcntl(&t, &app, &f, F_SETFL, 0o2000, "/d/f"),
        &[],
    );
    let other = om
        .file_open(&e.task("u:r:kernel_t:s0"), &f, "/d/f", O_WRONLY | O_APPEND)
        .unwrap();
    for cmd in [
        F_SETOWN,
        F_SETSIG,
        F_GETFL,
        F_GETOWN,
        F_GETSIG,
        F_GETOWNER_UIDS,
    ] {
        asks(
            &e,
            &format!("fcntl {cmd}"),
            om.file_fcntl(&t, &other, &f, cmd, 0, "/d/f"),
            &["granted fd {use}"],
        );
    }
    asks(
        &e,
        "F_SETFL keeping O_APPEND, another opener",
        om.file_fcntl(&t, &other, &f, F_SETFL, 0o2000, "/d/f"),
        &["granted fd {use}"],
    );
    asks(
        &e,
        "F_SETFL clearing it, another opener",
        om.file_fcntl(&t, &other, &f, F_SETFL, 0, "/d/f"),
        &["granted fd {use}", "granted file {write}"],
    );
    for cmd in [
        F_GETLK,
        F_SETLK,
        F_SETLKW,
        F_OFD_GETLK,
        F_OFD_SETLK,
        F_OFD_SETLKW,
    ] {
        asks(
            &e,
            &format!("fcntl {cmd}"),
            om.file_fcntl(&t, &other, &f, cmd, 0, "/d/f"),
            &["granted fd {use}", "granted file {lock}"],
        );
    }
    // F_DUPFD, F_GETFD, F_SETFD and the 32-bit lock numbers (12-14) are not in the switch.
    for cmd in [F_DUPFD, F_GETFD, F_SETFD, 12, 13, 14, 1030] {
        asks(
            &e,
            &format!("fcntl {cmd}"),
            om.file_fcntl(&t, &other, &f, cmd, 0, "/d/f"),
            &[],
        );
    }
    om.file_fcntl(&t, &app, &f, F_SETFL, 0, "/d/f").unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { write } for  pid=42 comm="svc" path="/d/f" dev="sda1" ino=13 scontext=u:r:allow_t:s0 tcontext=u:object_r:b_t:s0 tclass=file"#
        ]
    );
    let d = e.task("u:r:deny_t:s0");
    let mine = om.file_open(&t, &f, "/d/f", O_WRONLY | O_APPEND).unwrap();
    e.take();
    refused(
        &e,
        "deny_t F_SETFL",
        om.file_fcntl(&d, &mine, &f, F_SETFL, 0, "/d/f"),
        &["denied fd {use}"],
    );
}

#[test]
fn a_received_descriptor_asks_the_permissions_of_its_open_mode() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let sender = e.task("u:r:kernel_t:s0");
    let t = e.task("u:r:allow_t:s0");
    // selinux_file_receive: file_has_perm(file_to_av(file)).
    let cases: &[(i32, &str)] = &[
        (O_RDONLY, "granted file {read}"),
        (O_RDWR, "granted file {read write}"),
        (O_WRONLY | O_APPEND, "granted file {append}"),
        (3, "granted file {ioctl}"),
    ];
    for &(flags, want) in cases {
        let file = om.file_open(&sender, &f, "/d/f", flags).unwrap();
        asks(
            &e,
            &format!("receive {flags:#o}"),
            om.file_receive(&t, &file, &f, "/d/f"),
            &["granted fd {use}", want],
        );
    }
    let mine = om.file_open(&t, &f, "/d/f", O_RDONLY).unwrap();
    e.take();
    asks(
        &e,
        "receive own",
        om.file_receive(&t, &mine, &f, "/d/f"),
        &["granted file {read}"],
    );
    let file = om.file_open(&sender, &f, "/d/f", O_RDONLY).unwrap();
    refused(
        &e,
        "deny_t receives",
        om.file_receive(&e.task("u:r:deny_t:s0"), &file, &f, "/d/f"),
        &["denied fd {use}"],
    );
}

#[test]
fn sigio_is_checked_from_the_owner_set_by_set_fowner() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let opener = e.task("u:r:deny_t:s0");
    let mut file = om
        .file_open(&e.task("u:r:kernel_t:s0"), &f, "/d/f", O_RDONLY)
        .unwrap();
    assert_eq!(
        e.ctx(file.fown_sid),
        "u:r:kernel_t:s0",
        "selinux_file_alloc_security: the opener owns it"
    );
    let target = e.task("u:r:deny_t:s0");
    // selinux_file_set_fowner: fown_sid = current_sid().
    let owner = e.task("u:r:allow_t:s0");
    om.file_set_fowner(&owner, &mut file);
    assert_eq!(e.ctx(file.fown_sid), "u:r:allow_t:s0");
    // selinux_file_send_sigiotask: signal_to_av(signum, SIGIO for 0) from fown_sid to the
    // target's objective SID, no audit data.
    for (sig, perm) in [
        (0, "signal"),
        (29, "signal"),
        (9, "sigkill"),
        (19, "sigstop"),
        (17, "sigchld"),
        (10, "signal"),
    ] {
        asks(
            &e,
            &format!("signal {sig}"),
            om.file_send_sigiotask(&opener, &file, target.handle(), sig),
            &[&format!("granted process {{{perm}}}")],
        );
    }
    om.file_send_sigiotask(&opener, &file, target.handle(), 0)
        .unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { signal } for  pid=42 comm="svc" scontext=u:r:allow_t:s0 tcontext=u:r:deny_t:s0 tclass=process"#
        ]
    );
    om.file_set_fowner(&opener, &mut file);
    refused(
        &e,
        "owned by deny_t",
        om.file_send_sigiotask(&owner, &file, owner.handle(), 0),
        &["denied process {signal}"],
    );
}

#[test]
fn compat_ioctls_are_read_as_their_64_bit_forms() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    let file = om.file_open(&t, &f, "/d/f", O_RDONLY).unwrap();
    e.take();
    // selinux_file_ioctl_compat: FS_IOC32_* -> FS_IOC_*, then selinux_file_ioctl.
    asks(
        &e,
        "FS_IOC32_GETFLAGS",
        om.file_ioctl_compat(&t, &file, &f, 0x8004_6601, "/d/f"),
        &["granted file {getattr}"],
    );
    asks(
        &e,
        "FS_IOC32_SETFLAGS",
        om.file_ioctl_compat(&t, &file, &f, 0x4004_6602, "/d/f"),
        &["granted file {setattr}"],
    );
    asks(
        &e,
        "FS_IOC32_GETVERSION",
        om.file_ioctl_compat(&t, &file, &f, 0x8004_7601, "/d/f"),
        &["granted file {getattr}"],
    );
    asks(
        &e,
        "FS_IOC32_SETVERSION",
        om.file_ioctl_compat(&t, &file, &f, 0x4004_7602, "/d/f"),
        &["granted file {setattr}"],
    );
    om.file_ioctl_compat(&t, &file, &f, 0x8912, "/d/f").unwrap();
    let recs = e.take();
    assert_eq!(recs.len(), 1);
    assert!(
        recs[0].contains(" ioctlcmd=0x8912 ") && recs[0].contains("{ ioctl }"),
        "{}",
        recs[0]
    );
}

#[test]
fn a_file_made_without_an_open_is_checked_at_every_read() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    let file = om.file_alloc_security(&t, &f, O_RDONLY);
    assert_eq!(
        (e.ctx(file.sid), e.ctx(file.fown_sid)),
        ("u:r:allow_t:s0".into(), "u:r:allow_t:s0".into())
    );
    assert_eq!(
        e.asked(),
        Vec::<String>::new(),
        "selinux_file_alloc_security asks nothing"
    );
    for _ in 0..2 {
        asks(
            &e,
            "read",
            om.file_permission(&t, &file, &f, MAY_READ, "/d/f"),
            &["granted file {read}"],
        );
    }
}

#[test]
fn mmap_asks_map_then_the_protections() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    let file = om.file_open(&t, &f, "/d/f", O_RDWR).unwrap();
    e.take();
    let m = Some(MappedFile {
        file: &file,
        inode: &f,
        path: "/d/f",
    });
    // selinux_mmap_file: FILE__MAP on the inode, then file_map_prot_check.
    type Case<'a> = (&'a str, Option<MappedFile<'a>>, u32, u32, &'a [&'a str]);
    let cases: &[Case] = &[
        (
            "anonymous rw",
            None,
            PROT_READ | PROT_WRITE,
            MAP_PRIVATE,
            &[],
        ),
        (
            "anonymous exec",
            None,
            PROT_READ | PROT_EXEC,
            MAP_PRIVATE,
            &["granted process {execmem}"],
        ),
        (
            "file r private",
            m,
            PROT_READ,
            MAP_PRIVATE,
            &["granted file {map}", "granted file {read}"],
        ),
        (
            "file rx private",
            m,
            PROT_READ | PROT_EXEC,
            MAP_PRIVATE,
            &["granted file {map}", "granted file {read execute}"],
        ),
        (
            "file rw private",
            m,
            PROT_READ | PROT_WRITE,
            MAP_PRIVATE,
            &["granted file {map}", "granted file {read}"],
        ),
        (
            "file rwx private",
            m,
            PROT_READ | PROT_WRITE | PROT_EXEC,
            MAP_PRIVATE,
            &[
                "granted file {map}",
                "granted process {execmem}",
                "granted file {read execute}",
            ],
        ),
        (
            "file rw shared",
            m,
            PROT_READ | PROT_WRITE,
            MAP_SHARED,
            &["granted file {map}", "granted file {read write}"],
        ),
        (
            "file rwx shared",
            m,
            PROT_READ | PROT_WRITE | PROT_EXEC,
            MAP_SHARED,
            &["granted file {map}", "granted file {read write execute}"],
        ),
        // (flags & MAP_TYPE) == MAP_SHARED is false for MAP_SHARED_VALIDATE.
        (
            "file rw shared_validate",
            m,
            PROT_READ | PROT_WRITE,
            MAP_SHARED_VALIDATE,
            &["granted file {map}", "granted file {read}"],
        ),
        (
            "file none",
            m,
            0,
            MAP_PRIVATE,
            &["granted file {map}", "granted file {read}"],
        ),
    ];
    for (what, file, prot, flags, want) in cases {
        asks(&e, what, om.mmap_file(&t, *file, *prot, *flags), want);
    }
    om.mmap_file(&t, m, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE)
        .unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { map } for  pid=42 comm="svc" path="/d/f" dev="sda1" ino=13 scontext=u:r:allow_t:s0 tcontext=u:object_r:b_t:s0 tclass=file"#,
            r#"avc:  granted  { execmem } for  pid=42 comm="svc" scontext=u:r:allow_t:s0 tcontext=u:r:allow_t:s0 tclass=process"#,
            r#"avc:  granted  { read execute } for  pid=42 comm="svc" path="/d/f" dev="sda1" ino=13 scontext=u:r:allow_t:s0 tcontext=u:object_r:b_t:s0 tclass=file"#,
        ]
    );
    // `map` is an inode check (no fd {use}); the protections go through file_has_perm.
    let other = om
        .file_open(&e.task("u:r:kernel_t:s0"), &f, "/d/f", O_RDONLY)
        .unwrap();
    let o = Some(MappedFile {
        file: &other,
        inode: &f,
        path: "/d/f",
    });
    asks(
        &e,
        "another opener",
        om.mmap_file(&t, o, PROT_READ, MAP_SHARED),
        &[
            "granted file {map}",
            "granted fd {use}",
            "granted file {read}",
        ],
    );
    let d = e.task("u:r:deny_t:s0");
    refused(
        &e,
        "deny_t maps a file",
        om.mmap_file(&d, m, PROT_READ, MAP_PRIVATE),
        &["denied file {map}"],
    );
    refused(
        &e,
        "deny_t maps executable memory",
        om.mmap_file(&d, None, PROT_EXEC, MAP_PRIVATE),
        &["denied process {execmem}"],
    );
}

#[test]
fn mprotect_asks_by_the_kind_of_mapping() {
    let Fs { e, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    let file = om.file_open(&t, &f, "/d/f", O_RDONLY).unwrap();
    e.take();
    let m = Some(MappedFile {
        file: &file,
        inode: &f,
        path: "/d/f",
    });
    let vma = |file, kind, exec, cowed| Vma {
        file,
        shared: false,
        exec,
        kind,
        cowed,
    };
    let rx = PROT_READ | PROT_EXEC;
    // selinux_file_mprotect: execheap / execstack / execmod when it becomes executable, then
    // file_map_prot_check.
    let cases: &[(&str, Vma, u32, &[&str])] = &[
        (
            "heap",
            vma(None, VmaKind::Heap, false, false),
            rx,
            &["granted process {execheap}", "granted process {execmem}"],
        ),
        (
            "stack",
            vma(None, VmaKind::Stack, false, false),
            rx,
            &["granted process {execstack}", "granted process {execmem}"],
        ),
        (
            "anonymous",
            vma(None, VmaKind::Other, false, false),
            rx,
            &["granted process {execmem}"],
        ),
        (
            "anonymous, already executable",
            vma(None, VmaKind::Heap, true, false),
            rx,
            &["granted process {execmem}"],
        ),
        (
            "anonymous, not executable",
            vma(None, VmaKind::Heap, false, false),
            PROT_READ | PROT_WRITE,
            &[],
        ),
        (
            "file, copied on write",
            vma(m, VmaKind::Other, false, true),
            rx,
            &["granted file {execmod}", "granted file {read execute}"],
        ),
        (
            "file, not copied",
            vma(m, VmaKind::Other, false, false),
            rx,
            &["granted file {read execute}"],
        ),
        (
            "file on the stack, copied",
            vma(m, VmaKind::Stack, false, true),
            rx,
            &["granted file {execmod}", "granted file {read execute}"],
        ),
        (
            "file in the heap",
            vma(m, VmaKind::Heap, false, true),
            rx,
            &["granted process {execheap}", "granted file {read execute}"],
        ),
        (
            "file, copied, already executable",
            vma(m, VmaKind::Other, true, true),
            rx,
            &["granted file {read execute}"],
        ),
        (
            "file, copied, writable",
            vma(m, VmaKind::Other, false, true),
            PROT_READ | PROT_WRITE | PROT_EXEC,
            &[
                "granted file {execmod}",
                "granted process {execmem}",
                "granted file {read execute}",
            ],
        ),
    ];
    for (what, v, prot, want) in cases {
        asks(&e, what, om.file_mprotect(&t, v, *prot), want);
    }
    let shared = Vma {
        file: m,
        shared: true,
        exec: false,
        kind: VmaKind::Other,
        cowed: false,
    };
    asks(
        &e,
        "shared writable",
        om.file_mprotect(&t, &shared, PROT_READ | PROT_WRITE),
        &["granted file {read write}"],
    );
    let other = om
        .file_open(&e.task("u:r:kernel_t:s0"), &f, "/d/f", O_RDONLY)
        .unwrap();
    let o = vma(
        Some(MappedFile {
            file: &other,
            inode: &f,
            path: "/d/f",
        }),
        VmaKind::Other,
        false,
        true,
    );
    asks(
        &e,
        "execmod, another opener",
        om.file_mprotect(&t, &o, rx),
        &[
            "granted fd {use}",
            "granted file {execmod}",
            "granted fd {use}",
            "granted file {read execute}",
        ],
    );
    let d = e.task("u:r:deny_t:s0");
    refused(
        &e,
        "deny_t heap",
        om.file_mprotect(&d, &vma(None, VmaKind::Heap, false, false), rx),
        &["denied process {execheap}"],
    );
    refused(
        &e,
        "deny_t stack",
        om.file_mprotect(&d, &vma(None, VmaKind::Stack, false, false), rx),
        &["denied process {execstack}"],
    );
}

#[test]
fn a_mapping_below_mmap_min_addr_asks_mmap_zero() {
    let Fs { e, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    // selinux_mmap_addr: addr < CONFIG_LSM_MMAP_MIN_ADDR (65536).
    om.mmap_addr(&t, 0).unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { mmap_zero } for  pid=42 comm="svc" scontext=u:r:allow_t:s0 tcontext=u:r:allow_t:s0 tclass=memprotect"#
        ]
    );
    asks(
        &e,
        "65535",
        om.mmap_addr(&t, 65535),
        &["granted memprotect {mmap_zero}"],
    );
    asks(&e, "65536", om.mmap_addr(&t, 65536), &[]);
    refused(
        &e,
        "deny_t",
        om.mmap_addr(&e.task("u:r:deny_t:s0"), 4096),
        &["denied memprotect {mmap_zero}"],
    );
}

#[test]
fn acls_and_file_attributes_ask_getattr_or_setattr() {
    let Fs { e, d, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    // selinux_inode_set_acl / _get_acl / _remove_acl, selinux_inode_file_setattr / _getattr:
    // dentry_has_perm.
    asks(
        &e,
        "set_acl",
        om.inode_set_acl(&t, &f, "f"),
        &["granted file {setattr}"],
    );
    asks(
        &e,
        "get_acl",
        om.inode_get_acl(&t, &f, "f"),
        &["granted file {getattr}"],
    );
    asks(
        &e,
        "remove_acl",
        om.inode_remove_acl(&t, &d, "d"),
        &["granted dir {setattr}"],
    );
    asks(
        &e,
        "file_getattr",
        om.inode_file_getattr(&t, &f, "f"),
        &["granted file {getattr}"],
    );
    asks(
        &e,
        "file_setattr",
        om.inode_file_setattr(&t, &f, "f"),
        &["granted file {setattr}"],
    );
    om.inode_set_acl(&t, &f, "f").unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { setattr } for  pid=42 comm="svc" name="f" dev="sda1" ino=13 scontext=u:r:allow_t:s0 tcontext=u:object_r:b_t:s0 tclass=file"#
        ]
    );
    let dt = e.task("u:r:deny_t:s0");
    refused(
        &e,
        "deny_t get_acl",
        om.inode_get_acl(&dt, &f, "f"),
        &["denied file {getattr}"],
    );
    refused(
        &e,
        "deny_t file_setattr",
        om.inode_file_setattr(&dt, &f, "f"),
        &["denied file {setattr}"],
    );
}

#[test]
fn watches_ask_by_object_and_mask() {
    let Fs { e, d, f, .. } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    // selinux_path_notify.
    let cases: &[(WatchObject, u64, &str)] = &[
        (WatchObject::Inode, FS_MODIFY, "granted file {watch}"),
        (WatchObject::Inode, FS_OPEN, "granted file {watch}"),
        (
            WatchObject::Inode,
            FS_ACCESS,
            "granted file {watch watch_reads}",
        ),
        (
            WatchObject::Inode,
            FS_CLOSE_NOWRITE,
            "granted file {watch watch_reads}",
        ),
        (
            WatchObject::Inode,
            FS_OPEN_PERM,
            "granted file {watch watch_with_perm}",
        ),
        (
            WatchObject::Inode,
            FS_OPEN_EXEC_PERM,
            "granted file {watch watch_with_perm}",
        ),
        (
            WatchObject::Inode,
            FS_ACCESS_PERM,
            "granted file {watch watch_with_perm watch_reads}",
        ),
        (
            WatchObject::Inode,
            FS_PRE_ACCESS,
            "granted file {watch watch_with_perm watch_reads}",
        ),
        (WatchObject::Mount, FS_MODIFY, "granted file {watch_mount}"),
        (
            WatchObject::Mount,
            FS_OPEN_PERM | FS_ACCESS,
            "granted file {watch_mount watch_with_perm watch_reads}",
        ),
    ];
    for &(obj, mask, want) in cases {
        asks(
            &e,
            &format!("{obj:?} {mask:#x}"),
            om.path_notify(&t, &f, "/d/f", mask, obj),
            &[want],
        );
    }
    om.path_notify(&t, &d, "/d", FS_MODIFY, WatchObject::Filesystem)
        .unwrap();
    assert_eq!(
        e.take(),
        [
            r#"avc:  granted  { watch } for  pid=42 comm="svc" path="/d" dev="sda1" ino=10 scontext=u:r:allow_t:s0 tcontext=u:object_r:fs_t:s0 tclass=filesystem"#,
            r#"avc:  granted  { watch_sb } for  pid=42 comm="svc" path="/d" dev="sda1" ino=10 scontext=u:r:allow_t:s0 tcontext=u:object_r:a_t:s0 tclass=dir"#,
        ]
    );
    let r = om.path_notify(&t, &f, "/d/f", FS_MODIFY, WatchObject::MountNamespace);
    assert_eq!(r.map_err(|e| e.errno()), Err(errno::EOPNOTSUPP));
    let dt = e.task("u:r:deny_t:s0");
    refused(
        &e,
        "deny_t sb watch",
        om.path_notify(&dt, &f, "/d/f", FS_MODIFY, WatchObject::Filesystem),
        &["denied filesystem {watch}"],
    );
    refused(
        &e,
        "deny_t inode watch",
        om.path_notify(&dt, &f, "/d/f", FS_ACCESS, WatchObject::Inode),
        &["denied file {watch watch_reads}"],
    );
}

#[test]
fn the_label_as_an_attributes_text() {
    let Fs { e, d, f, v } = fs();
    let om = &e.om;
    let t = e.task("u:r:allow_t:s0");
    // selinux_inode_getsecurity / _getsecctx: the context; other names are not SELinux's.
    assert_eq!(
        om.inode_getsecurity(&t, &f, "selinux", false),
        Ok("u:object_r:b_t:s0".into())
    );
    assert_eq!(
        om.inode_getsecurity(&t, &f, "selinux", true),
        Ok("u:object_r:b_t:s0".into())
    );
    assert_eq!(
        om.inode_getsecctx(&t, &f, false),
        Ok("u:object_r:b_t:s0".into())
    );
    assert_eq!(
        om.inode_getsecurity(&t, &f, "ima", false)
            .map_err(|e| e.errno()),
        Err(errno::EOPNOTSUPP)
    );
    assert_eq!(
        e.asked(),
        Vec::<String>::new(),
        "has_cap_mac_admin(false) audits nothing"
    );
    // selinux_inode_listsecurity, selinux_inode_xattr_skipcap, selinux_inode_copy_up_xattr.
    assert_eq!(om.inode_listsecurity(), "security.selinux");
    assert!(
        om.ismaclabel("selinux") && !om.ismaclabel("security.selinux") && !om.ismaclabel("smack")
    );
    assert!(
        om.inode_xattr_skipcap("security.selinux")
            && !om.inode_xattr_skipcap("security.capability")
    );
    assert!(om.inode_copy_up_xattr("security.selinux") && !om.inode_copy_up_xattr("user.x"));
    // selinux_inode_setsecurity: no permission asked; SBLABEL_MNT, non-empty, valid.
    om.inode_setsecurity(&f, "selinux", b"u:object_r:c_t:s0\0")
        .unwrap();
    assert_eq!(e.ctx(f.sid()), "u:object_r:c_t:s0");
    assert_eq!(e.asked(), Vec::<String>::new());
    assert_eq!(
        om.inode_setsecurity(&f, "selinux", b"")
            .map_err(|e| e.errno()),
        Err(errno::EACCES)
    );
    assert_eq!(
        om.inode_setsecurity(&f, "selinux", b"u:object_r:nosuch_t:s0")
            .map_err(|e| e.errno()),
        Err(errno::EINVAL)
    );
    assert_eq!(
        om.inode_setsecurity(&f, "other", b"u:object_r:a_t:s0")
            .map_err(|e| e.errno()),
        Err(errno::EOPNOTSUPP)
    );
    assert_eq!(
        om.inode_setsecurity(&v, "selinux", b"u:object_r:a_t:s0")
            .map_err(|e| e.errno()),
        Err(errno::EOPNOTSUPP)
    );
    // selinux_inode_notifysecctx: EOPNOTSUPP (no per-file labels) is not an error.
    assert_eq!(om.inode_notifysecctx(&v, b"u:object_r:a_t:s0"), Ok(()));
    assert_eq!(e.ctx(v.sid()), "u:object_r:vfat_t:s0");
    om.inode_notifysecctx(&f, b"u:object_r:a_t:s0").unwrap();
    assert_eq!(
        (e.ctx(f.sid()), e.ctx(om.inode_getlsmprop(&f))),
        ("u:object_r:a_t:s0".into(), "u:object_r:a_t:s0".into())
    );
    // selinux_inode_setsecctx: __vfs_setxattr_locked, so the relabel checks of setxattr.
    asks(
        &e,
        "setsecctx",
        om.inode_setsecctx(&t, &f, "f", "u:object_r:b_t:s0"),
        &[
            "granted file {relabelfrom}",
            "granted file {relabelto}",
            "granted filesystem {associate}",
        ],
    );
    assert_eq!(e.ctx(f.sid()), "u:object_r:b_t:s0");
    let dt = e.task("u:r:deny_t:s0");
    refused(
        &e,
        "deny_t setsecctx",
        om.inode_setsecctx(&dt, &f, "f", "u:object_r:c_t:s0"),
        &["denied file {relabelfrom}"],
    );
    // selinux_inode_copy_up: create_sid = the lower inode's SID, so the copy keeps it.
    let up = om.inode_copy_up(&t, &f, None);
    assert_eq!(
        (up.sid, up.create_sid.map(|s| e.ctx(s))),
        (t.sid(), Some("u:object_r:b_t:s0".into()))
    );
    let copier = seaccess_objmgr::Task::new(42, "svc", up.build());
    assert_eq!(
        om.inode_create(&copier, &d, "special", REG)
            .map(|s| e.ctx(s)),
        Ok("u:object_r:b_t:s0".into()),
        "not the named transition's c_t"
    );
    e.take();
    // selinux_dentry_init_security / _create_files_as: selinux_determine_inode_label, with
    // the name, and nothing asked.
    assert_eq!(
        om.dentry_init_security(&t, &d, "special", REG)
            .map(|(_, c)| c),
        Ok("u:object_r:c_t:s0".into())
    );
    assert_eq!(
        om.dentry_init_security(&t, &d, "other", REG)
            .map(|(_, c)| c),
        Ok("u:object_r:b_t:s0".into())
    );
    let server = e.task("u:r:kernel_t:s0");
    let new = om
        .dentry_create_files_as(&t, &d, "special", REG, server.cred().prepare())
        .unwrap();
    assert_eq!(
        (new.sid(), new.create_sid().map(|s| e.ctx(s))),
        (server.sid(), Some("u:object_r:c_t:s0".into()))
    );
    assert_eq!(e.asked(), Vec::<String>::new());
}
