//! The fast paths engage (lookups skipped) and never outlive what they relied on: a relabel,
//! a policy reload or boolean commit that revokes a permission, a credential change and an
//! enforcing switch each take effect at the very next read, write, walk, getattr, permission
//! check and open, with every combination of fast paths on (the inode's remembered grant is
//! part of the "nothing beyond POSIX" switch, and so is a walk's memo: each combination runs
//! with a walk that keeps one and with one that does not). Expected answers come from objmgr-files.cil (its header
//! lists what quiet_t may do) and the variant this test makes of it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fs_support;

use fs_support::*;
use std::cell::Cell;

use seaccess_objmgr::hooks::fs::{
    oflags::*, MountOpts, WalkDirs, WalkMemo, MAY_OPEN, MAY_READ, MAY_WRITE,
};
use seaccess_objmgr::{errno, Cred, FileSec, Hook, InodeSec, Task};

struct World {
    e: Env,
    root: InodeSec,
    d: InodeSec,
    sub: InodeSec,
    c: InodeSec,
    f: InodeSec,
    /// A c_t file: quiet_t may read and open it only under boolean walk_c.
    g: InodeSec,
    /// The memo of the walk to /d/sub/c, when the walk keeps one.
    memo: Option<WalkMemo>,
}

/// The walk from the root to /d/sub/c, with the world's memo if it keeps one, counting the
/// directories it reads.
struct Chain<'a> {
    dirs: [(&'a InodeSec, &'a str); 4],
    memo: Option<&'a WalkMemo>,
    reads: Cell<usize>,
}

impl WalkDirs for Chain<'_> {
    fn count(&self) -> usize {
        self.dirs.count()
    }
    fn dir(&self, i: usize) -> Option<&InodeSec> {
        self.reads.set(self.reads.get() + 1);
        self.dirs.dir(i)
    }
    fn name(&self, i: usize) -> &str {
        self.dirs.name(i)
    }
    fn memo(&self) -> Option<&WalkMemo> {
        self.memo
    }
}

fn world() -> World {
    let e = env();
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let root = e.om.inode_init(&sb, 2, DIR, "/", Some("u:object_r:a_t:s0"));
    let d =
        e.om.inode_init(&sb, 10, DIR, "/d", Some("u:object_r:a_t:s0"));
    let sub =
        e.om.inode_init(&sb, 11, DIR, "/d/sub", Some("u:object_r:b_t:s0"));
    let c =
        e.om.inode_init(&sb, 12, DIR, "/d/sub/c", Some("u:object_r:c_t:s0"));
    let f =
        e.om.inode_init(&sb, 13, REG, "/d/sub/c/f", Some("u:object_r:b_t:s0"));
    let g =
        e.om.inode_init(&sb, 14, REG, "/d/sub/c/g", Some("u:object_r:c_t:s0"));
    World {
        e,
        root,
        d,
        sub,
        c,
        f,
        g,
        memo: None,
    }
}

impl World {
    fn walk(&self, t: &Task) -> seaccess_objmgr::Result<()> {
        self.walk_reading(t).0
    }
    /// The walk, and how many directories it read.
    fn walk_reading(&self, t: &Task) -> (seaccess_objmgr::Result<()>, usize) {
        let chain = Chain {
            dirs: [
                (&self.root, "/"),
                (&self.d, "d"),
                (&self.sub, "sub"),
                (&self.c, "c"),
            ],
            memo: self.memo.as_ref(),
            reads: Cell::new(0),
        };
        (self.e.om.path_walk(t, &chain), chain.reads.get())
    }
    fn read(&self, t: &Task, file: &FileSec) -> seaccess_objmgr::Result<()> {
        self.e
            .om
            .file_permission(t, file, &self.f, MAY_READ, "/d/sub/c/f")
    }
    fn write(&self, t: &Task, file: &FileSec) -> seaccess_objmgr::Result<()> {
        self.e
            .om
            .file_permission(t, file, &self.f, MAY_WRITE, "/d/sub/c/f")
    }
    fn getattr(&self, t: &Task) -> seaccess_objmgr::Result<()> {
        self.e.om.inode_getattr(t, &self.f, "/d/sub/c/f")
    }
    /// An open for reading as the VFS asks it: inode_permission with the access mode, then the
    /// open check.
    fn open_read(&self, t: &Task, inode: &InodeSec) -> seaccess_objmgr::Result<()> {
        self.e
            .om
            .inode_permission(t, inode, MAY_OPEN | MAY_READ, Some("f"))?;
        self.e
            .om
            .file_open(t, inode, "/d/sub/c/f", O_RDONLY)
            .map(|_| ())
    }
    /// Warm: a walk, a read and a write, a getattr and an open for reading that are allowed,
    /// twice.
    fn warm(&self, t: &Task) -> FileSec {
        let file = self
            .e
            .om
            .file_open(t, &self.f, "/d/sub/c/f", O_RDWR)
            .unwrap();
        for _ in 0..2 {
            self.walk(t).unwrap();
            self.read(t, &file).unwrap();
            self.write(t, &file).unwrap();
            self.getattr(t).unwrap();
            self.open_read(t, &self.f).unwrap();
        }
        file
    }
}

/// Runs `f` with each of the 8 combinations of fast paths (revalidate, search cache, posix),
/// each with a walk that keeps a memo and with one that does not (a failure's output names
/// which).
fn each_combination(f: impl Fn(&World, [bool; 3])) {
    for bits in 0..16u8 {
        let on = [bits & 1 != 0, bits & 2 != 0, bits & 4 != 0];
        let mut w = world();
        if bits & 8 != 0 {
            w.memo = Some(WalkMemo::new());
        }
        eprintln!("fast paths {on:?}, walk memo {}", w.memo.is_some());
        let fp = w.e.om.fast_paths();
        fp.set_revalidate(on[0]);
        fp.set_search_cache(on[1]);
        fp.set_posix(on[2]);
        f(&w, on);
    }
}

fn denied(r: seaccess_objmgr::Result<()>, what: &str, on: [bool; 3]) {
    assert_eq!(
        r.map_err(|e| e.errno()),
        Err(errno::EACCES),
        "{what} with fast paths {on:?}"
    );
}

#[test]
fn warm_operations_skip_the_cache_exactly_when_their_fast_path_is_on() {
    each_combination(|w, on| {
        let t = w.e.task("u:r:quiet_t:s0");
        let file = w.warm(&t);
        let om = &w.e.om;
        om.counters().reset();
        let (r, reads) = w.walk_reading(&t);
        r.unwrap();
        // With the posix switch on, a walk with a memo reads no directory at all; one without
        // reads each once (a grant each).
        let want = if !on[2] {
            None
        } else if w.memo.is_some() {
            Some(0)
        } else {
            Some(4)
        };
        assert!(
            want.is_none_or(|n| n == reads),
            "warm walk read {reads} directories, fast paths {on:?}, memo {}",
            w.memo.is_some()
        );
        w.read(&t, &file).unwrap();
        w.write(&t, &file).unwrap();
        let walk = om.counters().get(Hook::InodePermission);
        let rw = om.counters().get(Hook::FilePermission);
        assert_eq!(
            walk,
            if on[1] || on[2] { 0 } else { 4 },
            "warm walk lookups, fast paths {on:?}"
        );
        assert_eq!(
            rw,
            if on[0] { 0 } else { 2 },
            "warm read+write lookups, fast paths {on:?}"
        );
        // The inode's remembered grant: a warm getattr, read permission check and open make no
        // lookup at all.
        om.counters().reset();
        w.getattr(&t).unwrap();
        w.open_read(&t, &w.f).unwrap();
        let one = if on[2] { 0 } else { 1 };
        let got = [Hook::InodeGetattr, Hook::InodePermission, Hook::FileOpen]
            .map(|h| om.counters().get(h));
        assert_eq!(
            got, [one; 3],
            "warm getattr, permission and open lookups, fast paths {on:?}"
        );
        assert!(w.e.take().is_empty());
    });
}

#[test]
fn a_relabel_takes_effect_at_the_next_read_write_and_walk() {
    each_combination(|w, on| {
        let t = w.e.task("u:r:quiet_t:s0");
        let file = w.warm(&t);
        // frozen_t: quiet_t may not search it (dontaudit'ed) nor read or write files of it.
        w.e.om
            .inode_post_setxattr(&w.sub, "security.selinux", "u:object_r:frozen_t:s0")
            .unwrap();
        w.e.om
            .inode_post_setxattr(&w.f, "security.selinux", "u:object_r:frozen_t:s0")
            .unwrap();
        denied(w.walk(&t), "walk", on);
        assert!(w.e.take().is_empty(), "dontaudit'ed");
        denied(w.read(&t, &file), "read", on);
        denied(w.write(&t, &file), "write", on);
        assert_eq!(w.e.asked(), ["denied file {read}", "denied file {write}"]);
        denied(w.getattr(&t), "getattr", on);
        denied(w.open_read(&t, &w.f), "open", on);
        assert_eq!(w.e.asked(), ["denied file {getattr}", "denied file {read}"]);
        // A relabel to a type that allows them again: allowed at once, nothing recorded.
        w.e.om
            .inode_post_setxattr(&w.f, "security.selinux", "u:object_r:a_t:s0")
            .unwrap();
        w.getattr(&t).unwrap();
        w.open_read(&t, &w.f).unwrap();
        assert!(w.e.take().is_empty());
    });
}

#[test]
fn a_reload_or_a_boolean_commit_that_revokes_takes_effect_at_the_next_read_write_and_walk() {
    let revoked =
        seaccess_testkit::compile_variant("objmgr-files", "objmgr-files-revoked", 33, |s| {
            s.replace(
                "(allow quiet_t a_t (dir (search read getattr)))",
                "(allow quiet_t a_t (dir (read getattr)))",
            )
            .replace(
                "(allow quiet_t b_t (file (read write append open getattr ioctl)))",
                "(allow quiet_t b_t (file (append open ioctl)))",
            )
        });
    let revoked = std::fs::read(revoked).unwrap();
    each_combination(|w, on| {
        let t = w.e.task("u:r:quiet_t:s0");
        let file = w.warm(&t);
        w.e.server.reload(&revoked).unwrap();
        denied(w.walk(&t), "walk", on);
        denied(w.read(&t, &file), "read", on);
        denied(w.write(&t, &file), "write", on);
        assert_eq!(
            w.e.asked(),
            [
                "denied dir {search}",
                "denied file {read}",
                "denied file {write}"
            ]
        );
        denied(w.getattr(&t), "getattr", on);
        denied(w.open_read(&t, &w.f), "open", on);
        assert_eq!(w.e.asked(), ["denied file {getattr}", "denied file {read}"]);
    });
    each_combination(|w, on| {
        let t = w.e.task("u:r:quiet_t:s0");
        w.warm(&t);
        for _ in 0..2 {
            w.open_read(&t, &w.g).unwrap();
        }
        w.e.server.set_boolean("walk_c", false).unwrap();
        w.e.server.commit_booleans();
        denied(w.walk(&t), "walk", on);
        denied(w.open_read(&t, &w.g), "open", on);
        assert_eq!(w.e.asked(), ["denied dir {search}", "denied file {read}"]);
    });
}

#[test]
fn a_credential_change_takes_effect_at_the_next_read_write_and_walk() {
    each_combination(|w, on| {
        let mut t = w.e.task("u:r:quiet_t:s0");
        let file = w.warm(&t);
        {
            let g = t.override_creds(Cred::new(w.e.sid("u:r:deny_t:s0")));
            denied(w.walk(&g), "walk (override)", on);
            denied(w.read(&g, &file), "read (override)", on);
            denied(w.write(&g, &file), "write (override)", on);
            assert_eq!(
                w.e.asked(),
                ["denied dir {search}", "denied fd {use}", "denied fd {use}"]
            );
            denied(w.getattr(&g), "getattr (override)", on);
            denied(w.open_read(&g, &w.f), "open (override)", on);
            assert_eq!(w.e.asked(), ["denied file {getattr}", "denied file {read}"]);
        }
        w.getattr(&t).unwrap();
        w.open_read(&t, &w.f).unwrap();
        w.walk(&t).unwrap();
        w.read(&t, &file).unwrap();
        t.commit_creds(Cred::new(w.e.sid("u:r:deny_t:s0"))).unwrap();
        denied(w.walk(&t), "walk (commit)", on);
        denied(w.read(&t, &file), "read (commit)", on);
        denied(w.write(&t, &file), "write (commit)", on);
        denied(w.getattr(&t), "getattr (commit)", on);
        denied(w.open_read(&t, &w.f), "open (commit)", on);
        // A new credential of the same SID starts with an empty search cache but means the
        // same: back to quiet_t, the walk is allowed again.
        t.commit_creds(Cred::new(w.e.sid("u:r:quiet_t:s0")))
            .unwrap();
        w.walk(&t).unwrap();
    });
}

#[test]
fn a_grant_made_in_permissive_mode_is_never_remembered() {
    each_combination(|w, on| {
        let t = w.e.task("u:r:quiet_t:s0");
        let file = w.warm(&t);
        w.e.om
            .inode_post_setxattr(&w.sub, "security.selinux", "u:object_r:frozen_t:s0")
            .unwrap();
        w.e.om
            .inode_post_setxattr(&w.f, "security.selinux", "u:object_r:frozen_t:s0")
            .unwrap();
        w.e.avc.set_enforcing(false);
        let file2 = w.e.om.file_open(&t, &w.f, "/d/sub/c/f", O_RDWR).unwrap();
        for _ in 0..3 {
            w.walk(&t).unwrap();
            w.read(&t, &file).unwrap();
            w.read(&t, &file2).unwrap();
            w.write(&t, &file2).unwrap();
        }
        // Recorded once, as the cache then grants it (the search of frozen_t is dontaudit'ed;
        // the reads and the write are within what the open's denial granted).
        assert_eq!(w.e.asked(), ["denied file {read write open}"]);
        w.e.avc.set_enforcing(true);
        denied(w.walk(&t), "walk", on);
        denied(w.read(&t, &file), "read", on);
        denied(w.read(&t, &file2), "read (opened in permissive mode)", on);
        denied(w.write(&t, &file2), "write (opened in permissive mode)", on);
        w.e.take();
        // getattr and an open of the relabelled file, granted in permissive mode (recorded
        // once), are denied again as soon as the mode is enforcing.
        w.e.avc.set_enforcing(false);
        for _ in 0..3 {
            w.getattr(&t).unwrap();
            w.open_read(&t, &w.f).unwrap();
        }
        assert_eq!(
            w.e.asked(),
            [
                "denied file {getattr}",
                "denied file {read}",
                "denied file {open}"
            ]
        );
        w.e.avc.set_enforcing(true);
        denied(w.getattr(&t), "getattr", on);
        denied(w.open_read(&t, &w.f), "open", on);
    });
}

#[test]
fn a_permissive_domains_denials_are_recorded_and_never_remembered() {
    each_combination(|w, on| {
        let t = w.e.task("u:r:perm_t:s0");
        // perm_t may search a_t only; b_t and c_t are granted by the permissive domain, each
        // recorded once (then granted in the cache). No decision of a permissive domain is
        // remembered by a fast path, not even a_t's: the cache adds its permissive grants to
        // the decision's allowed permissions without a mark, so a fast path cannot tell them
        // from the policy's own.
        w.walk(&t).unwrap();
        assert_eq!(
            w.e.asked(),
            ["denied dir {search}", "denied dir {search}"],
            "{on:?}"
        );
        w.e.om.counters().reset();
        w.walk(&t).unwrap();
        assert!(w.e.take().is_empty());
        assert_eq!(w.e.om.counters().get(Hook::InodePermission), 4, "{on:?}");
    });
}

#[test]
fn a_permissive_domains_grants_on_files_are_never_remembered() {
    each_combination(|w, on| {
        let t = w.e.task("u:r:perm_t:s0");
        w.getattr(&t).unwrap();
        w.open_read(&t, &w.f).unwrap();
        assert_eq!(
            w.e.asked(),
            [
                "denied file {getattr}",
                "denied file {read}",
                "denied file {open}"
            ],
            "{on:?}"
        );
        w.e.om.counters().reset();
        w.getattr(&t).unwrap();
        w.open_read(&t, &w.f).unwrap();
        assert!(w.e.take().is_empty());
        let got = [Hook::InodeGetattr, Hook::InodePermission, Hook::FileOpen]
            .map(|h| w.e.om.counters().get(h));
        assert_eq!(got, [1, 1, 1], "{on:?}");
    });
}

#[test]
fn an_auditallowed_grant_is_recorded_every_time() {
    each_combination(|w, on| {
        let t = w.e.task("u:r:allow_t:s0");
        for _ in 0..3 {
            w.walk(&t).unwrap();
            w.getattr(&t).unwrap();
            w.open_read(&t, &w.f).unwrap();
            let want = [
                "granted dir {search}",
                "granted dir {search}",
                "granted dir {search}",
                "granted dir {search}",
                "granted file {getattr}",
                "granted file {read}",
                "granted file {read open}",
            ];
            assert_eq!(w.e.asked(), want, "{on:?}");
        }
    });
}
