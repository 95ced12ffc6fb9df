//! Nothing the server does leaves the backing tree (issue 34, items 1 and 2): a node acts on
//! the inode it holds, whatever has become of the path where it was seen, and the resolver
//! crosses neither a symbolic link nor a mount.

use std::ffi::OsStr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

use super::{ctx, errno, req, snapshot, Scratch, TMP};
use crate::core::attrs::{SetAttr, SetTime};
use crate::core::Core;
use crate::nodes::Node;

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// The attack of item 1, up to the swap: `pub/d/victim` made through the core, its node kept
/// (and `pub/d` kept open as a directory), the file unlinked and `d` removed, then, directly
/// on the backing tree, `pub/d` made a symbolic link to `outside/`, which holds a root-owned
/// 0600 `victim` with an attribute. Under the old path-based server every later operation on
/// the victim's node resolved `pub/d/victim` again and landed on `outside/victim`.
pub(super) struct Attack {
    pub s: Scratch,
    pub core: Core,
    pub victim: Arc<Node>,
    /// `pub/d`, opened before it was removed.
    pub dir_fh: u64,
    /// `outside/` before the attack.
    pub before: String,
}

pub(super) fn attack(name: &str) -> Option<Attack> {
    let pol = super::ready(name)?;
    let s = Scratch::new(name);
    let (src, out) = (s.src(), s.outside());
    std::fs::create_dir(src.join("pub")).unwrap();
    std::fs::write(out.join("victim"), "outside").unwrap();
    std::fs::set_permissions(out.join("victim"), std::fs::Permissions::from_mode(0o600)).unwrap();
    rustix::fs::lsetxattr(
        out.join("victim"),
        "user.o",
        b"outside",
        rustix::fs::XattrFlags::empty(),
    )
    .unwrap();
    let before = snapshot(&out);
    let core = s.core(&pol);
    let r = req();
    let (p, _) = core.lookup(r, 1, os("pub")).unwrap();
    let (d, _) = core.mkdir(r, p.id, os("d"), 0o755).unwrap();
    let (victim, _, fh) = core
        .create(r, d.id, os("victim"), 0o600, libc::O_RDWR)
        .unwrap();
    core.release(fh);
    let dir_fh = core
        .open(r, d.id, libc::O_RDONLY | libc::O_DIRECTORY)
        .unwrap();
    core.unlink(r, d.id, os("victim")).unwrap();
    core.rmdir(r, p.id, os("d")).unwrap();
    std::os::unix::fs::symlink(&out, src.join("pub/d")).unwrap();
    assert_eq!(
        std::fs::read(src.join("pub/d/victim")).unwrap(),
        b"outside",
        "the swap is in place"
    );
    Some(Attack {
        s,
        core,
        victim,
        dir_fh,
        before,
    })
}

// chmod, chown, utimens, truncate and an open for writing on the unlinked victim's node act
// on the victim's own inode, and `outside/victim` is untouched, byte for byte.
#[test]
fn an_unlinked_node_acts_on_its_own_inode_never_outside() {
    let Some(a) = attack("attrs") else { return };
    let (core, v, r) = (&a.core, &a.victim, req());
    let st = core
        .setattr(
            r,
            v.id,
            &SetAttr {
                mode: Some(0o666),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        u32::from(st.stx_mode) & 0o7777,
        0o666,
        "chmod reached the victim itself"
    );
    core.setattr(
        r,
        v.id,
        &SetAttr {
            uid: Some(4321),
            gid: Some(4321),
            ..Default::default()
        },
    )
    .unwrap();
    let fh = core.open(r, v.id, libc::O_WRONLY).unwrap();
    assert_eq!(core.write(r, fh, 0, b"pwned!!!!").unwrap(), 9);
    core.release(fh);
    core.setattr(
        r,
        v.id,
        &SetAttr {
            size: Some(5),
            ..Default::default()
        },
    )
    .unwrap();
    let st = core
        .setattr(
            r,
            v.id,
            &SetAttr {
                mtime: Some(SetTime::At(UNIX_EPOCH + Duration::from_secs(1000))),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(
        (st.stx_size, st.stx_uid, st.stx_mtime.tv_sec),
        (5, 4321, 1000),
        "truncate, chown and utimens reached the victim"
    );
    let fh = core.open(r, v.id, libc::O_RDONLY).unwrap();
    assert_eq!(
        core.read(r, fh, 0, 100).unwrap(),
        b"pwned",
        "the victim's own bytes"
    );
    let outside = std::fs::symlink_metadata(a.s.outside().join("victim")).unwrap();
    assert_ne!(
        core.getattr(r, v.id, None).unwrap().stx_ino,
        outside.ino(),
        "getattr answers for the victim"
    );
    assert_eq!(snapshot(&a.s.outside()), a.before, "outside/victim changed");
}

// The same shape for extended attributes: set, get, list, remove and a relabel on the
// victim's node never read or write `outside/victim`'s.
#[test]
fn an_unlinked_node_keeps_its_attributes_to_itself() {
    let Some(a) = attack("xattrs") else { return };
    let (core, v, r) = (&a.core, &a.victim, req());
    core.setxattr(r, v.id, "user.x", b"1", 0).unwrap();
    assert_eq!(core.getxattr(r, v.id, "user.x").unwrap(), b"1");
    assert_eq!(
        errno(core.getxattr(r, v.id, "user.o")),
        libc::ENODATA,
        "outside's attribute read through the victim"
    );
    let list = core.listxattr(r, v.id).unwrap();
    assert!(
        !list.split(|b| *b == 0).any(|n| n == b"user.o"),
        "outside's attribute listed: {list:?}"
    );
    assert_eq!(errno(core.removexattr(r, v.id, "user.o")), libc::ENODATA);
    core.setxattr(r, v.id, "security.selinux", &ctx(TMP), 0)
        .unwrap();
    assert_eq!(
        core.getxattr(r, v.id, "security.selinux").unwrap(),
        ctx(TMP)
    );
    assert_eq!(snapshot(&a.s.outside()), a.before, "outside/victim changed");
}

// The same shape for readdir: the removed directory, read through the descriptor opened
// before, is read as the kernel reads a removed directory (ENOENT, or nothing on a file
// system that lists one); never `outside/`'s entries.
#[test]
fn a_removed_directory_lists_nothing_of_what_replaced_it() {
    let Some(a) = attack("readdir") else { return };
    match a.core.readdir(req(), a.dir_fh, 0) {
        Err(e) => assert_eq!(e.errno(), libc::ENOENT, "{e}"),
        Ok(v) => {
            let names: Vec<_> = v.into_iter().map(|(_, e)| e.name).collect();
            assert_eq!(names, [".", ".."], "a removed directory listed entries");
        }
    }
}

// A mount point inside the tree is not crossed (RESOLVE_NO_XDEV): looking it up, removing or
// renaming it answers EXDEV, so the server never reaches another file system, nor its own
// mount; the entry itself is still listed.
#[test]
fn a_mount_point_inside_the_tree_answers_exdev() {
    let Some(pol) = super::ready("exdev") else {
        return;
    };
    let s = Scratch::new("exdev");
    let src = s.src();
    for d in ["tmp", "bind"] {
        std::fs::create_dir(src.join(d)).unwrap();
    }
    std::fs::write(s.outside().join("secret"), "outside").unwrap();
    if !s.mount(&["-t", "tmpfs", "none"], &src.join("tmp"))
        || !s.mount(
            &["--bind", &s.outside().to_string_lossy()],
            &src.join("bind"),
        )
    {
        eprintln!("SKIP: a_mount_point_inside_the_tree_answers_exdev: cannot mount");
        return;
    }
    let core = s.core(&pol);
    let r = req();
    for d in ["tmp", "bind"] {
        assert_eq!(errno(core.lookup(r, 1, os(d))), libc::EXDEV, "lookup {d}");
        assert_eq!(errno(core.rmdir(r, 1, os(d))), libc::EXDEV, "rmdir {d}");
        assert_eq!(
            errno(core.rename(r, 1, os(d), 1, os("moved"), 0)),
            libc::EXDEV,
            "rename {d}"
        );
    }
    let fh = core.open(r, 1, libc::O_RDONLY | libc::O_DIRECTORY).unwrap();
    let names: Vec<_> = core
        .readdir(r, fh, 0)
        .unwrap()
        .into_iter()
        .map(|(_, e)| e.name.into_string().unwrap())
        .collect();
    assert!(
        names.contains(&"bind".to_string()) && !names.contains(&"secret".to_string()),
        "{names:?}"
    );
}

// The root is held from Core::new on: a mount over SOURCE made afterwards (as `seaccess mount
// DIR DIR` makes its own) does not change what the core serves, nor where it writes.
#[test]
fn the_root_is_the_tree_beneath_a_mount_over_it() {
    let Some(pol) = super::ready("over") else {
        return;
    };
    let s = Scratch::new("over");
    std::fs::write(s.src().join("beneath"), "beneath").unwrap();
    let core = s.core(&pol);
    if !s.mount(&["-t", "tmpfs", "none"], &s.src()) {
        eprintln!("SKIP: the_root_is_the_tree_beneath_a_mount_over_it: cannot mount");
        return;
    }
    let r = req();
    assert!(
        core.lookup(r, 1, os("beneath")).is_ok(),
        "the tree beneath is served"
    );
    core.create(r, 1, os("made"), 0o644, libc::O_WRONLY)
        .unwrap();
    assert!(
        !s.src().join("made").exists(),
        "a create went to the mount over the tree"
    );
    s.umount(&s.src());
    assert!(
        s.src().join("made").exists(),
        "the create reached the tree beneath"
    );
}

// A symbolic link is a node of its own, never followed: its lookup is the link, its open is
// ELOOP, and readlink gives its text.
#[test]
fn a_symbolic_link_is_never_followed() {
    let Some(pol) = super::ready("symlink") else {
        return;
    };
    let s = Scratch::new("symlink");
    std::os::unix::fs::symlink(s.outside(), s.src().join("out")).unwrap();
    let core = s.core(&pol);
    let r = req();
    let (n, st) = core.lookup(r, 1, os("out")).unwrap();
    assert_eq!(u32::from(st.stx_mode) & libc::S_IFMT, libc::S_IFLNK);
    assert_eq!(errno(core.open(r, n.id, libc::O_RDONLY)), libc::ELOOP);
    assert_eq!(core.readlink(r, n.id).unwrap(), s.outside());
    assert_eq!(
        errno(core.lookup(r, 1, os("out/secret"))),
        libc::EINVAL,
        "more than one component"
    );
}

// The server never opens a FIFO (an open would block a request thread until a writer comes):
// the open is refused at once, and so is a truncate.
#[test]
fn a_fifo_is_never_opened() {
    let Some(pol) = super::ready("fifo") else {
        return;
    };
    let s = Scratch::new("fifo");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        s.src().join("fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o666),
        0,
    )
    .unwrap();
    let core = Arc::new(s.core(&pol));
    let (n, _) = core.lookup(req(), 1, os("fifo")).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let (c, id) = (core.clone(), n.id);
    std::thread::spawn(move || {
        let _ = tx.send(errno(c.open(req(), id, libc::O_RDONLY)));
    });
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(5)),
        Ok(libc::ENXIO),
        "the open of a FIFO blocked or was made"
    );
    assert_eq!(
        errno(core.setattr(
            req(),
            id,
            &SetAttr {
                size: Some(0),
                ..Default::default()
            }
        )),
        libc::EINVAL
    );
}
