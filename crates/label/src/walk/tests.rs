#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The walk against trees changed under it: a directory swapped for a symbolic link to a
//! directory outside, before it is opened, after, and while workers write; reads the same way.
//! Labels here are `user.selinux` (any owner may write it on files and directories), so these
//! run without privilege; a link's own label needs `trusted.selinux` or `security.selinux`,
//! tried where the caller may write one.

use super::*;
use crate::xattr::USER;
use std::os::unix::fs::symlink;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("seaccess-walk-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Whether `dir`'s file system keeps user attributes (tmpfs before 6.6 did not).
fn keeps_user_attrs(dir: &Path) -> bool {
    let p = dir.join(".probe");
    std::fs::write(&p, b"").unwrap();
    let ok = rustix::fs::setxattr(&p, USER, b"x", rustix::fs::XattrFlags::empty()).is_ok();
    std::fs::remove_file(&p).unwrap();
    if !ok {
        eprintln!("SKIP: {} keeps no user attributes", dir.display());
    }
    ok
}

fn user_label(p: &Path) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 256];
    let n = rustix::fs::lgetxattr(p, USER, &mut buf[..]).ok()?;
    buf.truncate(n);
    Some(buf)
}

fn root(path: &Path, key: &str) -> Root {
    Root {
        path: path.to_path_buf(),
        key: key.as_bytes().to_vec(),
        beneath: None,
    }
}

/// (key, kind) of every object a sorted walk visits.
fn visited(roots: &[Root]) -> Vec<(String, FileKind)> {
    let mut seen = Vec::new();
    walk(
        roots,
        Options {
            sorted: true,
            ..Default::default()
        },
        &mut |e| {
            seen.push((String::from_utf8(e.key().into_owned()).unwrap(), e.kind()));
            Flow::Continue
        },
        &mut |e| panic!("{e}"),
    );
    seen
}

// Every object once, in pre-order, with its key and its lstat type; a link to a directory
// outside is an object of its own, never gone into.
#[test]
fn every_object_once_and_links_are_not_followed() {
    let t = scratch("all");
    let (r, out) = (t.join("r"), t.join("out"));
    std::fs::create_dir_all(r.join("d/e")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(r.join("a"), b"").unwrap();
    std::fs::write(r.join("d/f"), b"").unwrap();
    std::fs::write(out.join("x"), b"").unwrap();
    symlink(&out, r.join("l")).unwrap();
    let want = [
        ("/", FileKind::Dir),
        ("/a", FileKind::File),
        ("/d", FileKind::Dir),
        ("/d/e", FileKind::Dir),
        ("/d/f", FileKind::File),
        ("/l", FileKind::Lnk),
    ];
    let want: Vec<_> = want.iter().map(|(k, t)| (k.to_string(), *t)).collect();
    assert_eq!(visited(&[root(&r, "/")]), want);
    // Shown paths are the root's path and the names below it.
    let mut paths = Vec::new();
    walk(
        &[root(&r, "/")],
        Options {
            sorted: true,
            ..Default::default()
        },
        &mut |e| {
            paths.push(e.path());
            Flow::Continue
        },
        &mut |e| panic!("{e}"),
    );
    assert_eq!(paths[0], r);
    assert_eq!(paths[4], r.join("d/f"));
    std::fs::remove_dir_all(&t).unwrap();
}

// A root that is a symbolic link to a directory is one object, the link, labelled itself:
// nothing of the directory it names is visited or written.
#[test]
fn a_symlink_root_is_labelled_itself() {
    let t = scratch("rootlink");
    let (target, link) = (t.join("target"), t.join("link"));
    std::fs::create_dir_all(&target).unwrap();
    std::fs::write(target.join("inside"), b"").unwrap();
    symlink(&target, &link).unwrap();
    assert_eq!(
        visited(&[root(&link, "/link")]),
        vec![("/link".to_string(), FileKind::Lnk)]
    );
    // A link's own label: trusted.selinux (CAP_SYS_ADMIN) or security.selinux, where allowed.
    let mut wrote = None;
    walk(
        &[root(&link, "/link")],
        Options::default(),
        &mut |e| {
            for attr in [crate::xattr::TRUSTED, crate::xattr::SECURITY] {
                if e.write_label(b"u:r:link_t:s0", Attrs::Only(attr)).is_ok() {
                    wrote = Some(attr);
                    break;
                }
            }
            Flow::Continue
        },
        &mut |e| panic!("{e}"),
    );
    match wrote {
        None => eprintln!("SKIP: no attribute a link's label can be written to here"),
        Some(attr) => {
            let mut buf = [0u8; 64];
            let n = rustix::fs::lgetxattr(&link, attr, &mut buf[..]).unwrap();
            assert_eq!(&buf[..n], b"u:r:link_t:s0\0");
            assert!(
                rustix::fs::getxattr(&target, attr, &mut buf[..]).is_err(),
                "the directory the root link names was labelled"
            );
        }
    }
    std::fs::remove_dir_all(&t).unwrap();
}

// A root that is a file is labelled through its parent and name.
#[test]
fn a_file_root_is_one_object() {
    let t = scratch("fileroot");
    if !keeps_user_attrs(&t) {
        return;
    }
    let f = t.join("f");
    std::fs::write(&f, b"").unwrap();
    let mut n = 0;
    walk(
        &[root(&f, "/etc/f")],
        Options::default(),
        &mut |e| {
            n += 1;
            assert_eq!(
                (&*e.key(), e.kind(), e.path()),
                (&b"/etc/f"[..], FileKind::File, f.clone())
            );
            e.write_label(b"u:r:f_t:s0", Attrs::Only(USER)).unwrap();
            Flow::Continue
        },
        &mut |e| panic!("{e}"),
    );
    assert_eq!(n, 1);
    assert_eq!(user_label(&f).as_deref(), Some(&b"u:r:f_t:s0\0"[..]));
    std::fs::remove_dir_all(&t).unwrap();
}

/// A tree with `r/a`, `r/b/f1`, `r/b/f2` and, outside, `out/f1`, `out/f2`, `out/secret`, each
/// labelled `user.selinux=outside`.
fn swap_tree(name: &str) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let t = scratch(name);
    if !keeps_user_attrs(&t) {
        return None;
    }
    let (r, out) = (t.join("r"), t.join("out"));
    std::fs::create_dir_all(r.join("b")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(r.join("a"), b"").unwrap();
    for n in ["f1", "f2"] {
        std::fs::write(r.join("b").join(n), b"").unwrap();
    }
    for n in ["f1", "f2", "secret"] {
        let p = out.join(n);
        std::fs::write(&p, b"").unwrap();
        rustix::fs::setxattr(&p, USER, b"outside\0", rustix::fs::XattrFlags::empty()).unwrap();
    }
    Some((t, r, out))
}

/// Replaces `r/b` by a link to `out`, the directory kept as `r/b.real`.
fn swap(r: &Path, out: &Path) {
    std::fs::rename(r.join("b"), r.join("b.real")).unwrap();
    symlink(out, r.join("b")).unwrap();
}

fn outside_untouched(out: &Path) {
    for n in ["f1", "f2", "secret"] {
        assert_eq!(
            user_label(&out.join(n)).as_deref(),
            Some(&b"outside\0"[..]),
            "{n} outside the tree was relabelled"
        );
    }
}

/// A visit that labels every object but links `inside` and records what it saw.
fn label_all<'a>(
    seen: &'a mut Vec<(String, FileKind)>,
    on: &'a str,
    mut then: impl FnMut() + 'a,
) -> impl FnMut(Entry) -> Flow + 'a {
    move |e| {
        let key = String::from_utf8(e.key().into_owned()).unwrap();
        if e.kind() != FileKind::Lnk {
            e.write_label(b"inside", Attrs::Only(USER)).unwrap();
            if let Some(l) = e.read_label(Attrs::Only(USER)).unwrap() {
                assert_ne!(l, "outside", "{key}: read a label from outside the tree");
            }
        }
        if key == on {
            then();
        }
        seen.push((key, e.kind()));
        Flow::Continue
    }
}

// `b` is listed as a directory, then swapped for a link before the walk opens it: the walk
// finds a link (O_NOFOLLOW), visits it as one, and never goes outside.
#[test]
fn a_directory_swapped_for_a_link_before_it_is_opened_is_not_followed() {
    let Some((t, r, out)) = swap_tree("before") else {
        return;
    };
    let mut seen = Vec::new();
    walk(
        &[root(&r, "/")],
        Options {
            sorted: true,
            ..Default::default()
        },
        &mut label_all(&mut seen, "/a", || swap(&r, &out)),
        &mut |e| panic!("{e}"),
    );
    let keys: Vec<_> = seen.iter().map(|(k, t)| (k.as_str(), *t)).collect();
    assert_eq!(
        keys,
        vec![
            ("/", FileKind::Dir),
            ("/a", FileKind::File),
            ("/b", FileKind::Lnk)
        ]
    );
    outside_untouched(&out);
    std::fs::remove_dir_all(&t).unwrap();
}

// `b` is swapped for a link right after the walk opened it: its entries are read and
// labelled through the descriptor the walk holds (the real directory, now `b.real`).
#[test]
fn a_directory_swapped_after_it_is_opened_is_walked_through_its_descriptor() {
    let Some((t, r, out)) = swap_tree("after") else {
        return;
    };
    let mut seen = Vec::new();
    walk(
        &[root(&r, "/")],
        Options {
            sorted: true,
            ..Default::default()
        },
        &mut label_all(&mut seen, "/b", || swap(&r, &out)),
        &mut |e| panic!("{e}"),
    );
    let keys: Vec<_> = seen.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, vec!["/", "/a", "/b", "/b/f1", "/b/f2"]);
    outside_untouched(&out);
    for n in ["f1", "f2"] {
        assert_eq!(
            user_label(&r.join("b.real").join(n)).as_deref(),
            Some(&b"inside\0"[..])
        );
    }
    std::fs::remove_dir_all(&t).unwrap();
}

// The workers' race: batches of `d`'s entries are queued, then `d` is swapped for a link to a
// directory outside holding the same names, while the workers write and read. Every write lands
// inside and no read returns an outside label.
#[test]
fn workers_act_through_the_directory_they_were_given() {
    let t = scratch("workers");
    if !keeps_user_attrs(&t) {
        return;
    }
    let (r, out) = (t.join("r"), t.join("out"));
    std::fs::create_dir_all(r.join("b")).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    const N: usize = 1000;
    for i in 0..N {
        std::fs::write(r.join("b").join(format!("f{i}")), b"").unwrap();
        let p = out.join(format!("f{i}"));
        std::fs::write(&p, b"").unwrap();
        rustix::fs::setxattr(&p, USER, b"outside\0", rustix::fs::XattrFlags::empty()).unwrap();
    }
    let swapped = AtomicBool::new(false);
    let (outside_reads, written) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let work = |e: &Entry| -> Option<()> {
        if e.kind() == FileKind::File && !swapped.swap(true, Ordering::SeqCst) {
            swap(&r, &out);
        }
        if e.read_label(Attrs::Only(USER)).unwrap().as_deref() == Some("outside") {
            outside_reads.fetch_add(1, Ordering::Relaxed);
        }
        if e.kind() != FileKind::Lnk && e.write_label(b"inside", Attrs::Only(USER)).is_ok() {
            written.fetch_add(1, Ordering::Relaxed);
        }
        None
    };
    let (_, walked) = walk_parallel(
        &[root(&r, "/")],
        Options::default(),
        2,
        &work,
        &mut |e| panic!("{e}"),
        &mut |_| {},
    );
    assert!(swapped.load(Ordering::SeqCst));
    assert_eq!(walked as usize, N + 2);
    assert_eq!(
        outside_reads.load(Ordering::Relaxed),
        0,
        "labels were read outside the tree"
    );
    assert_eq!(written.load(Ordering::Relaxed), N + 2);
    for i in 0..N {
        assert_eq!(
            user_label(&out.join(format!("f{i}"))).as_deref(),
            Some(&b"outside\0"[..]),
            "f{i} outside the tree was relabelled"
        );
        assert_eq!(
            user_label(&r.join("b.real").join(format!("f{i}"))).as_deref(),
            Some(&b"inside\0"[..])
        );
    }
    std::fs::remove_dir_all(&t).unwrap();
}

// Both routes to a name in a held directory (getxattrat/setxattrat, and /proc/self/fd/N/NAME
// for kernels before 6.13) reach the name in the directory held, after that directory was
// renamed and a link to a directory outside put in its place.
#[test]
fn both_attribute_routes_stay_in_the_held_directory() {
    let t = scratch("routes");
    if !keeps_user_attrs(&t) {
        return;
    }
    let (d, out) = (t.join("d"), t.join("out"));
    std::fs::create_dir_all(&d).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(d.join("f"), b"").unwrap();
    std::fs::write(out.join("f"), b"").unwrap();
    let fd = rfs::open(&d, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    std::fs::rename(&d, t.join("d.real")).unwrap();
    symlink(&out, &d).unwrap();
    let mut buf = [0u8; 16];
    crate::xattrat::set(fd.as_fd(), c"f", c"user.selinux", b"sys\0").unwrap();
    let n = crate::xattrat::get(fd.as_fd(), c"f", c"user.selinux", &mut buf).unwrap();
    assert_eq!(&buf[..n], b"sys\0");
    crate::xattrat::set_proc(fd.as_fd(), c"f", c"user.test", b"proc\0").unwrap();
    let n = crate::xattrat::get_proc(fd.as_fd(), c"f", c"user.test", &mut buf).unwrap();
    assert_eq!(&buf[..n], b"proc\0");
    assert_eq!(
        user_label(&t.join("d.real/f")).as_deref(),
        Some(&b"sys\0"[..])
    );
    assert_eq!(user_label(&out.join("f")), None);
    assert!(rustix::fs::getxattr(out.join("f"), "user.test", &mut buf[..]).is_err());
    // A link in the held directory is the object itself, never what it names: Linux keeps no
    // user attributes on links (EPERM), so a write that followed it would have succeeded on
    // the file outside.
    symlink(out.join("f"), t.join("d.real/l")).unwrap();
    assert_eq!(
        crate::xattrat::set(fd.as_fd(), c"l", c"user.selinux", b"x\0"),
        Err(Errno::PERM)
    );
    assert_eq!(
        crate::xattrat::set_proc(fd.as_fd(), c"l", c"user.selinux", b"x\0"),
        Err(Errno::PERM)
    );
    assert_eq!(user_label(&out.join("f")), None);
    std::fs::remove_dir_all(&t).unwrap();
}

// A root below an image's directory (`beneath`) is opened from that directory following no
// link: a component swapped for a link to a directory outside fails the open, where a path
// would have led out; the same path with a real directory there is walked.
#[test]
fn a_root_beneath_a_directory_follows_no_link_to_reach_it() {
    let t = scratch("beneath");
    let (img, out) = (t.join("img"), t.join("out"));
    std::fs::create_dir_all(img.join("x/y")).unwrap();
    std::fs::create_dir_all(out.join("y")).unwrap();
    let r = Root {
        path: img.join("x/y"),
        key: b"/x/y".to_vec(),
        beneath: Some(img.clone()),
    };
    assert_eq!(
        visited(std::slice::from_ref(&r)),
        vec![("/x/y".to_string(), FileKind::Dir)]
    );
    std::fs::rename(img.join("x"), img.join("x.real")).unwrap();
    symlink(&out, img.join("x")).unwrap();
    let (mut seen, mut errors) = (0, Vec::new());
    walk(
        std::slice::from_ref(&r),
        Options::default(),
        &mut |_| {
            seen += 1;
            Flow::Continue
        },
        &mut |e| {
            errors.push(e.error.raw_os_error());
            Flow::Continue
        },
    );
    assert_eq!((seen, errors), (0, vec![Some(libc::ELOOP)]));
    // The image's root itself is the admin's path: named, not resolved beneath itself.
    let top = Root {
        path: img.clone(),
        key: b"/".to_vec(),
        beneath: Some(img.clone()),
    };
    assert_eq!(visited(&[top]).len(), 4);
    std::fs::remove_dir_all(&t).unwrap();
}

// Where the listing gives no type (DT_UNKNOWN: some file systems), fstatat says, not following:
// a directory is opened and gone into, a link is a link.
#[test]
fn an_entry_without_a_listed_type_is_typed_by_fstatat() {
    let t = scratch("unknown");
    std::fs::create_dir_all(t.join("d")).unwrap();
    symlink(t.join("d"), t.join("l")).unwrap();
    let fd = rfs::open(&t, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).unwrap();
    let dir = Arc::new(Dir {
        fd,
        path: bytes(&t),
        key: b"/".as_slice().into(),
    });
    let mut seen = Vec::new();
    for name in [c"d", c"l"] {
        let (flow, child) = step(
            dir.clone(),
            name.to_owned(),
            FileType::Unknown,
            Options::default(),
            0,
            &mut |e| {
                seen.push((e.key().into_owned(), e.kind()));
                Flow::Continue
            },
            &mut |e| panic!("{e}"),
        );
        assert_eq!(flow, Flow::Continue);
        assert_eq!(child.is_some(), name == c"d");
    }
    assert_eq!(
        seen,
        vec![
            (b"/d".to_vec(), FileKind::Dir),
            (b"/l".to_vec(), FileKind::Lnk)
        ]
    );
    std::fs::remove_dir_all(&t).unwrap();
}
