//! A relabel during a check never lets the check's grant land on the relabelled inode, however
//! many relabels come between (issue 19, item 2; and item 10: a relabel that did not move the
//! inode's relabel generation would be caught here with a single relabel).
//!
//! Reproduced as it was found: a server that parks one check inside compute_av while this
//! thread relabels the file (once, and 16,384 and 32,768 times: the counts that brought a
//! 15-bit generation advanced by 2 a relabel back to where the check loaded it), then lets the
//! check finish; afterwards the same operation by the same type must get exactly the uncached
//! answer. Expected answers come from objmgr-files.cil through the security server
//! (`seaccess_testkit::passes`): quiet_t may read, open and getattr b_t files and search a_t
//! directories, and none of them on frozen_t.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fs_support;

use fs_support::parking::{parking_env, Trap, DEADLINE};
use fs_support::*;
use std::sync::mpsc::channel;

use seaccess_objmgr::hooks::fs::{oflags::O_RDONLY, MountOpts, MAY_READ};
use seaccess_objmgr::{errno, InodeSec, ObjectManager, Task};
use seaccess_types::Sid;

/// The operations that share the inode's remembered grant, each with the class and
/// permission the policy is asked for and the label the inode starts with.
#[derive(Clone, Copy, Debug)]
enum Op {
    Getattr,
    Permission,
    Open,
    Walk,
}

impl Op {
    const ALL: [Op; 4] = [Op::Getattr, Op::Permission, Op::Open, Op::Walk];

    fn run(self, om: &ObjectManager, t: &Task, inode: &InodeSec) -> seaccess_objmgr::Result<()> {
        match self {
            Op::Getattr => om.inode_getattr(t, inode, "/f"),
            Op::Permission => om.inode_permission(t, inode, MAY_READ, Some("f")),
            Op::Open => om.file_open(t, inode, "/f", O_RDONLY).map(|_| ()),
            Op::Walk => om.path_walk(t, &[(inode, "d")]),
        }
    }

    /// (mode, start label, what the policy is asked): the open asks `open` too (open_perms).
    fn inode(self) -> (u32, &'static str, &'static str, &'static [&'static str]) {
        match self {
            Op::Getattr => (REG, "u:object_r:b_t:s0", "file", &["getattr"]),
            Op::Permission => (REG, "u:object_r:b_t:s0", "file", &["read"]),
            Op::Open => (REG, "u:object_r:b_t:s0", "file", &["read", "open"]),
            Op::Walk => (DIR, "u:object_r:a_t:s0", "dir", &["search"]),
        }
    }
}

const FROZEN: &str = "u:object_r:frozen_t:s0";

/// One run: `op` by quiet_t parks in compute_av, the inode is relabelled to frozen_t
/// `relabels` times, the check finishes; then `op` is repeated with every fast path on and
/// must answer as it does with them off, and as the policy says. What went wrong, if anything.
fn run(op: Op, relabels: usize) -> Option<String> {
    let (e, parking) = parking_env(&files_policy());
    let (mode, start, class, perms) = op.inode();
    let quiet = e.sid("u:r:quiet_t:s0");
    let (old, new) = (e.sid(start), e.sid(FROZEN));
    let passes = |t: Sid| {
        perms
            .iter()
            .all(|p| seaccess_testkit::passes(&e.server, quiet, t, class, p))
    };
    assert!(
        passes(old) && !passes(new),
        "{op:?}: the policy must allow the start label and deny frozen_t"
    );

    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let inode = e.om.inode_init(&sb, 13, mode, "/f", Some(start));
    let task = e.task("u:r:quiet_t:s0");
    let (parked_tx, parked) = channel();
    let (go, go_rx) = channel();
    *parking.trap.lock().unwrap() = Some(Trap {
        ssid: quiet,
        tsid: old,
        parked: parked_tx,
        go: go_rx,
    });

    let during = std::thread::scope(|s| {
        let checker = s.spawn(|| {
            let t = Task::new(43, "chk", task.cred().clone());
            op.run(&e.om, &t, &inode)
        });
        parked
            .recv_timeout(DEADLINE)
            .unwrap_or_else(|_| panic!("{op:?}: the check never reached compute_av"));
        for _ in 0..relabels {
            e.om.inode_post_setxattr(&inode, "security.selinux", FROZEN)
                .unwrap();
        }
        go.send(()).unwrap();
        checker.join().unwrap()
    });
    // The parked check read the start label: its answer is the start label's.
    during.unwrap_or_else(|err| panic!("{op:?}: the check made before the relabels: {err}"));
    assert_eq!(inode.sid(), new);

    let fast = op.run(&e.om, &task, &inode).map_err(|err| err.errno());
    e.om.fast_paths().set_all(false);
    let uncached = op.run(&e.om, &task, &inode).map_err(|err| err.errno());
    assert_eq!(
        uncached,
        Err(errno::EACCES),
        "{op:?}: the uncached answer after {relabels} relabels"
    );
    (fast != uncached).then(|| format!("{op:?} after {relabels} relabels during one check: {fast:?} on the fast path, {uncached:?} uncached"))
}

/// Every operation after each count of relabels; every wrong answer listed.
fn run_all(counts: &[usize]) {
    let wrong: Vec<String> = counts
        .iter()
        .flat_map(|&n| Op::ALL.map(|op| run(op, n)))
        .flatten()
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn a_check_parked_during_relabels_leaves_no_grant_behind() {
    run_all(&[16_384, 32_768]);
}

/// Item 10's guard: one relabel (or two) during one check, on every path.
#[test]
fn a_check_parked_during_one_relabel_leaves_no_grant_behind() {
    run_all(&[1, 2]);
}
