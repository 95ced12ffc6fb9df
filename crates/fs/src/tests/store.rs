//! Labels come from the store attribute alone (issue 34, item 5): trusted.selinux by default,
//! security.selinux for a tree mounted over itself, another only when asked (and, where any
//! file owner can write it, only with unsafe_xattr); the store is `security.selinux` through
//! the mount and is no attribute of its own there.

use std::ffi::OsStr;

use super::{attr_of, ctx, errno, req, set_attr, Scratch, ETC, SHADOW, TMP};
use crate::core::Core;

const TRUSTED: &str = "trusted.selinux";
const SECURITY: &str = "security.selinux";
const USER: &str = "user.selinux";

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

/// The label the core shows for `name` at the root.
fn label(core: &Core, name: &str) -> Vec<u8> {
    let (n, _) = core.lookup(req(), 1, os(name)).unwrap();
    core.getxattr(req(), n.id, SECURITY).unwrap()
}

// By default (SOURCE is not the mount point) labels are read from trusted.selinux only: a
// security.selinux or user.selinux that any file owner could have written is not read, even
// where trusted.selinux is absent.
#[test]
fn the_default_store_is_trusted_and_the_only_one_read() {
    let Some(pol) = super::ready("default_store") else {
        return;
    };
    let s = Scratch::new("default_store");
    let src = s.src();
    for f in ["forged", "kept"] {
        std::fs::write(src.join(f), f).unwrap();
    }
    set_attr(&src.join("forged"), SECURITY, SHADOW);
    set_attr(&src.join("forged"), USER, SHADOW);
    set_attr(&src.join("kept"), TRUSTED, ETC);
    set_attr(&src.join("kept"), SECURITY, SHADOW);
    let core = s.core(&pol);
    assert_eq!(core.store().name(), TRUSTED);
    let forged = label(&core, "forged");
    assert_ne!(
        forged,
        ctx(SHADOW),
        "a forged security.selinux or user.selinux was read"
    );
    assert_eq!(
        label(&core, "kept"),
        ctx(ETC),
        "trusted.selinux was not read"
    );
}

// Through the mount the store is security.selinux: trusted.selinux is absent to get, refused
// to set or remove (EPERM) and never listed; a relabel and a create write trusted.selinux,
// never the backing security.selinux.
#[test]
fn the_store_is_security_selinux_through_the_mount() {
    let Some(pol) = super::ready("store_names") else {
        return;
    };
    let s = Scratch::new("store_names");
    let src = s.src();
    std::fs::write(src.join("f"), "f").unwrap();
    set_attr(&src.join("f"), TRUSTED, ETC);
    set_attr(&src.join("f"), SECURITY, SHADOW);
    let core = s.core(&pol);
    let r = req();
    let (n, _) = core.lookup(r, 1, os("f")).unwrap();
    assert_eq!(errno(core.getxattr(r, n.id, TRUSTED)), libc::ENODATA);
    assert_eq!(
        errno(core.setxattr(r, n.id, TRUSTED, &ctx(TMP), 0)),
        libc::EPERM
    );
    assert_eq!(errno(core.removexattr(r, n.id, TRUSTED)), libc::EPERM);
    assert_eq!(
        attr_of(&src.join("f"), TRUSTED),
        Some(ctx(ETC)),
        "trusted.selinux changed through the mount"
    );
    let list = core.listxattr(r, n.id).unwrap();
    let names: Vec<_> = list.split(|b| *b == 0).filter(|n| !n.is_empty()).collect();
    assert_eq!(
        names.iter().filter(|n| **n == SECURITY.as_bytes()).count(),
        1,
        "security.selinux once: {names:?}"
    );
    assert!(
        !names.contains(&TRUSTED.as_bytes()),
        "the store listed: {names:?}"
    );
    core.setxattr(r, n.id, SECURITY, &ctx(TMP), 0).unwrap();
    assert_eq!(
        attr_of(&src.join("f"), TRUSTED),
        Some(ctx(TMP)),
        "a relabel did not write the store"
    );
    assert_eq!(
        attr_of(&src.join("f"), SECURITY),
        Some(ctx(SHADOW)),
        "a relabel wrote security.selinux"
    );
    assert_eq!(core.getxattr(r, n.id, SECURITY).unwrap(), ctx(TMP));
    assert_eq!(
        errno(core.removexattr(r, n.id, SECURITY)),
        libc::EACCES,
        "the label removed"
    );
    let (made, _, _) = core.create(r, 1, os("new"), 0o644, libc::O_WRONLY).unwrap();
    let shown = core.getxattr(r, made.id, SECURITY).unwrap();
    assert_eq!(
        attr_of(&src.join("new"), TRUSTED),
        Some(shown),
        "a new object's label is not in the store"
    );
    assert_eq!(
        attr_of(&src.join("new"), SECURITY),
        None,
        "a new object got security.selinux"
    );
}

// A tree mounted over itself keeps labels in security.selinux, which then only the mount
// reaches; trusted.selinux is an ordinary attribute there.
#[test]
fn a_tree_mounted_over_itself_keeps_security_selinux() {
    let Some(pol) = super::ready("over_itself") else {
        return;
    };
    let s = Scratch::new("over_itself");
    let src = s.src();
    std::fs::write(src.join("f"), "f").unwrap();
    set_attr(&src.join("f"), SECURITY, ETC);
    set_attr(&src.join("f"), TRUSTED, SHADOW);
    let core = Core::new(s.options(&pol, &src)).unwrap();
    assert_eq!(core.store().name(), SECURITY);
    assert_eq!(label(&core, "f"), ctx(ETC));
    let (n, _) = core.lookup(req(), 1, os("f")).unwrap();
    assert_eq!(core.getxattr(req(), n.id, TRUSTED).unwrap(), ctx(SHADOW));
}

// --xattr: the three names only; security.selinux or user.selinux on a tree not mounted over
// itself only with unsafe_xattr, and the error says why and what to do.
#[test]
fn an_unsafe_store_needs_unsafe_xattr() {
    let Some(pol) = super::ready("unsafe") else {
        return;
    };
    let s = Scratch::new("unsafe");
    let mnt = s.dir.join("mnt");
    let with = |x: &str, unsafe_xattr: bool| {
        let mut o = s.options(&pol, &mnt);
        o.xattr = Some(x.into());
        o.unsafe_xattr = unsafe_xattr;
        Core::new(o).map(|c| c.store().name())
    };
    for x in [SECURITY, USER] {
        let e = with(x, false)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            e.contains("any file owner can write") && e.contains("--unsafe-xattr"),
            "{x} without unsafe_xattr: {e:?}"
        );
        assert_eq!(with(x, true).ok(), Some(x));
    }
    assert_eq!(with(TRUSTED, false).ok(), Some(TRUSTED));
    let e = with("trusted.other", true)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(e.contains("trusted.other"), "{e:?}");
}

// user.selinux as the store (asked for, unsafe): read alone, and hidden through the mount.
#[test]
fn a_user_store_is_read_alone_and_hidden() {
    let Some(pol) = super::ready("user_store") else {
        return;
    };
    let s = Scratch::new("user_store");
    let src = s.src();
    std::fs::write(src.join("f"), "f").unwrap();
    set_attr(&src.join("f"), USER, ETC);
    set_attr(&src.join("f"), SECURITY, SHADOW);
    let mut o = s.options(&pol, &s.dir.join("mnt"));
    o.xattr = Some(USER.into());
    o.unsafe_xattr = true;
    let core = Core::new(o).unwrap();
    assert_eq!(label(&core, "f"), ctx(ETC));
    let (n, _) = core.lookup(req(), 1, os("f")).unwrap();
    assert_eq!(errno(core.getxattr(req(), n.id, USER)), libc::ENODATA);
    assert_eq!(
        errno(core.setxattr(req(), n.id, USER, &ctx(TMP), 0)),
        libc::EPERM
    );
}
