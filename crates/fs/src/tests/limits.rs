//! A create whose new object the server cannot hold (no descriptor left) removes it again:
//! never an object on the tree that the server could not label. The descriptor limit is the
//! process's, so the test runs in a child process of its own (this test binary, run again for
//! this one test).

use std::ffi::OsStr;
use std::os::fd::OwnedFd;

use super::{errno, req, Scratch};
use crate::core::Core;

const CHILD: &str = "SEACCESS_FS_TEST_CHILD";

/// Opens /dev/null until the limit is reached, then closes `spare` of them.
fn exhaust(spare: usize) -> Vec<OwnedFd> {
    let mut held = Vec::new();
    while let Ok(fd) = rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        held.push(fd);
    }
    held.truncate(held.len().saturating_sub(spare));
    held
}

#[test]
fn an_object_the_server_cannot_hold_is_removed_again() {
    let Some(pol) = super::ready("limits") else {
        return;
    };
    if std::env::var_os(CHILD).is_none() {
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args([
                "--exact",
                "tests::limits::an_object_the_server_cannot_hold_is_removed_again",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && text.contains("1 passed"),
            "the child failed:\n{text}"
        );
        return;
    }
    let s = Scratch::new("limits");
    // Without checks: no caller is looked up in /proc, so the only descriptors a request
    // needs are the backing tree's.
    let mut o = s.options(&pol, &s.dir.join("mnt"));
    o.checks = false;
    let core = Core::new(o).unwrap();
    let limit = rustix::process::Rlimit {
        current: Some(256),
        maximum: Some(256),
    };
    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit).unwrap();
    let r = req();
    let held = exhaust(0);
    assert_eq!(
        errno(core.mkdir(r, 1, OsStr::new("dir"), 0o755)),
        libc::EMFILE
    );
    assert_eq!(
        errno(core.symlink(r, 1, OsStr::new("link"), std::path::Path::new("target"))),
        libc::EMFILE
    );
    assert_eq!(
        errno(core.mknod(r, 1, OsStr::new("fifo"), libc::S_IFIFO | 0o644, 0)),
        libc::EMFILE
    );
    drop(held);
    // One descriptor to spare: the file is made and opened, but no O_PATH one is left for it.
    let held = exhaust(1);
    assert_eq!(
        errno(core.create(r, 1, OsStr::new("file"), 0o644, libc::O_WRONLY)),
        libc::EMFILE
    );
    drop(held);
    let left: Vec<_> = std::fs::read_dir(s.src())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        left.is_empty(),
        "objects the server could not hold were left behind: {left:?}"
    );
}

// A name resolved only for the checks of an unlink, rmdir or rename (the kernel looks such a
// name up itself first; here it never did) leaves no node behind, and so no descriptor holding
// a removed file's storage for as long as the mount lives.
#[test]
fn a_name_resolved_for_the_checks_alone_is_not_kept() {
    let Some(pol) = super::ready("transient") else {
        return;
    };
    let s = Scratch::new("transient");
    for f in ["a", "b"] {
        std::fs::write(s.src().join(f), f).unwrap();
    }
    std::fs::create_dir(s.src().join("d")).unwrap();
    let core = s.core(&pol);
    let (r, before) = (req(), core.sizes().1);
    core.unlink(r, 1, OsStr::new("a")).unwrap();
    core.rmdir(r, 1, OsStr::new("d")).unwrap();
    core.rename(r, 1, OsStr::new("b"), 1, OsStr::new("c"), 0)
        .unwrap();
    assert_eq!(
        core.sizes().1,
        before,
        "nodes were kept for names the kernel never looked up"
    );
}

// The nodes offered to the kernel to forget are the least recently used, beyond what is kept,
// and only once the process has more than the bound alive; never the root, nor a node held by
// an open file. On ramfs, which gives no file handles: elsewhere nodes are cooled instead.
#[test]
fn the_least_used_nodes_are_forgotten_first() {
    let Some(pol) = super::ready("least_used") else {
        return;
    };
    let s = Scratch::new("least_used");
    if !s.mount(&["-t", "ramfs", "none"], &s.src()) {
        eprintln!("SKIP: the_least_used_nodes_are_forgotten_first: cannot mount ramfs");
        return;
    }
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
    for f in names {
        std::fs::write(s.src().join(f), f).unwrap();
    }
    let core = s.core(&pol);
    let r = req();
    let ids: Vec<u64> = names
        .iter()
        .map(|f| core.lookup(r, 1, OsStr::new(f)).unwrap().0.id)
        .collect();
    assert!(
        core.nodes().least_used(11, 11, 0).is_empty(),
        "nothing to forget at the bound"
    );
    for id in &ids[..3] {
        core.getattr(r, *id, None).unwrap(); // a, b, c: used in the new epoch
    }
    let fh = core.open(r, ids[3], libc::O_RDONLY).unwrap(); // d: held open
    let mut old = core.nodes().least_used(11, 5, 8);
    old.sort_unstable();
    assert_eq!(old.len(), 3);
    assert!(
        old.iter().all(|id| ids[4..].contains(id)),
        "not the least used: {old:?} of {ids:?}"
    );
    let mut all = core.nodes().least_used(11, 5, 0);
    all.sort_unstable();
    let want: Vec<u64> = ids.iter().copied().filter(|id| *id != ids[3]).collect();
    assert_eq!(all, want, "the root or a node held open offered");
    core.release(fh);
}
