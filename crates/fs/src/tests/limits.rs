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
    while let Ok(fd) = rustix::fs::open("/dev/null", rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC, rustix::fs::Mode::empty()) {
        held.push(fd);
    }
    held.truncate(held.len().saturating_sub(spare));
    held
}

#[test]
fn an_object_the_server_cannot_hold_is_removed_again() {
    let Some(pol) = super::ready("limits") else { return };
    if std::env::var_os(CHILD).is_none() {
        let exe = std::env::current_exe().unwrap();
        let out = std::process::Command::new(exe)
            .args(["--exact", "tests::limits::an_object_the_server_cannot_hold_is_removed_again", "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && text.contains("1 passed"), "the child failed:\n{text}");
        return;
    }
    let s = Scratch::new("limits");
    // Without checks: no caller is looked up in /proc, so the only descriptors a request
    // needs are the backing tree's.
    let mut o = s.options(&pol, &s.dir.join("mnt"));
    o.checks = false;
    let core = Core::new(o).unwrap();
    let limit = rustix::process::Rlimit { current: Some(256), maximum: Some(256) };
    rustix::process::setrlimit(rustix::process::Resource::Nofile, limit).unwrap();
    let r = req();
    let held = exhaust(0);
    assert_eq!(errno(core.mkdir(r, 1, OsStr::new("dir"), 0o755)), libc::EMFILE);
    assert_eq!(errno(core.symlink(r, 1, OsStr::new("link"), std::path::Path::new("target"))), libc::EMFILE);
    assert_eq!(errno(core.mknod(r, 1, OsStr::new("fifo"), libc::S_IFIFO | 0o644, 0)), libc::EMFILE);
    drop(held);
    // One descriptor to spare: the file is made and opened, but no O_PATH one is left for it.
    let held = exhaust(1);
    assert_eq!(errno(core.create(r, 1, OsStr::new("file"), 0o644, libc::O_WRONLY)), libc::EMFILE);
    drop(held);
    let left: Vec<_> = std::fs::read_dir(s.src()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "objects the server could not hold were left behind: {left:?}");
}
