//! The fast paths never change an answer: random sequences of opens, reads, writes, walks
//! (fresh lists of directories, and walks kept from one operation to the next with a memo),
//! stats, permission checks of files and directories, creates, relabels, policy reloads, boolean commits, credential overrides and commits
//! and enforcing switches, run under each of the 8 combinations of fast paths, give the same
//! results and the same audit records, in the same order.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fs_support;

use fs_support::*;
use seaccess_objmgr::hooks::fs::{
    oflags::*, MountOpts, WalkDirs, WalkMemo, MAY_APPEND, MAY_EXEC, MAY_READ, MAY_WRITE,
};
use seaccess_objmgr::{Cred, FileSec, InodeSec, Task};

/// A walk an object manager keeps (as a dentry chain), with its memo.
struct Kept<'a> {
    dirs: Vec<(&'a InodeSec, &'a str)>,
    memo: WalkMemo,
}

impl WalkDirs for Kept<'_> {
    fn count(&self) -> usize {
        self.dirs.count()
    }
    fn dir(&self, i: usize) -> Option<&InodeSec> {
        self.dirs.dir(i)
    }
    fn name(&self, i: usize) -> &str {
        self.dirs.name(i)
    }
    fn memo(&self) -> Option<&WalkMemo> {
        Some(&self.memo)
    }
}

/// xorshift64*: the same sequence for every combination.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const DOMAINS: [&str; 5] = [
    "u:r:quiet_t:s0",
    "u:r:quiet_t:s0",
    "u:r:perm_t:s0",
    "u:r:deny_t:s0",
    "u:r:allow_t:s0",
];
const TYPES: [&str; 4] = [
    "u:object_r:a_t:s0",
    "u:object_r:b_t:s0",
    "u:object_r:c_t:s0",
    "u:object_r:frozen_t:s0",
];

/// One run of `ops` operations from `seed` with fast paths `on`: every result and record,
/// and the number of cache lookups the hooks made.
fn run(seed: u64, ops: usize, on: [bool; 3], policies: &[Vec<u8>; 2]) -> (Vec<String>, u64) {
    let e = env();
    let fp = e.om.fast_paths();
    fp.set_revalidate(on[0]);
    fp.set_search_cache(on[1]);
    fp.set_posix(on[2]);
    let om = &e.om;
    let sb = om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let dirs: Vec<InodeSec> = ["a_t", "a_t", "b_t", "c_t", "b_t"]
        .iter()
        .enumerate()
        .map(|(i, t)| {
            om.inode_init(
                &sb,
                2 + i as u64,
                DIR,
                &format!("/d{i}"),
                Some(&format!("u:object_r:{t}:s0")),
            )
        })
        .collect();
    let files: Vec<InodeSec> = ["b_t", "a_t", "c_t"]
        .iter()
        .enumerate()
        .map(|(i, t)| {
            om.inode_init(
                &sb,
                20 + i as u64,
                REG,
                &format!("/f{i}"),
                Some(&format!("u:object_r:{t}:s0")),
            )
        })
        .collect();
    // A walk kept across operations for each task, as its working directory (a memo holds
    // one credential's walk at a time, so walks shared by every task would rarely be warm):
    // the memos meet relabels, reloads, boolean commits and other credentials between two
    // uses.
    let kept: Vec<Kept> = [&[0, 1][..], &[0, 2, 4], &[1, 3, 0, 4], &[3, 1], &[4, 2, 0]]
        .iter()
        .map(|ix| Kept {
            dirs: ix.iter().map(|&i| (&dirs[i], "k")).collect(),
            memo: WalkMemo::new(),
        })
        .collect();
    let mut tasks: Vec<Task> = DOMAINS
        .iter()
        .enumerate()
        .map(|(i, c)| Task::new(100 + i as u32, "t", Cred::new(e.sid(c))))
        .collect();
    let mut open: Vec<(usize, FileSec)> = Vec::new();
    let mut rng = Rng(seed);
    let mut out = Vec::new();
    let mut policy = 0;
    let mut walk_c = true;
    let res = |r: seaccess_objmgr::Result<()>| r.map_err(|e| e.errno());
    for n in 0..ops {
        let ti = rng.below(tasks.len());
        let what = rng.below(100);
        // A quarter of the operations run with the task's credential overridden by another
        // domain's, for that operation only.
        let ov = (rng.below(4) == 0).then(|| Cred::new(e.sid(DOMAINS[rng.below(DOMAINS.len())])));
        let mut task = tasks.remove(ti);
        let line = {
            let mut guard;
            let t: &Task = match &ov {
                Some(c) => {
                    guard = task.override_creds(c.clone());
                    &mut guard
                }
                None => &task,
            };
            match what {
                0..=9 => {
                    let walk: Vec<(&InodeSec, &str)> = (0..1 + rng.below(4))
                        .map(|_| (&dirs[rng.below(dirs.len())], "d"))
                        .collect();
                    format!("walk {:?}", res(om.path_walk(t, &walk)))
                }
                20..=29 => {
                    let fi = rng.below(files.len());
                    let flags = [O_RDONLY, O_WRONLY, O_RDWR, O_WRONLY | O_APPEND][rng.below(4)];
                    let r = om.file_open(t, &files[fi], "/f", flags);
                    let s = format!(
                        "open {fi} {flags} {:?}",
                        r.as_ref().map(|_| ()).map_err(|e| e.errno())
                    );
                    if let Ok(f) = r {
                        open.push((fi, f));
                        if open.len() > 12 {
                            open.remove(0);
                        }
                    }
                    s
                }
                30..=59 if !open.is_empty() => {
                    let (fi, f) = &open[rng.below(open.len())];
                    let mask = [
                        MAY_READ,
                        MAY_WRITE,
                        MAY_READ | MAY_WRITE,
                        MAY_APPEND,
                        MAY_EXEC,
                    ][rng.below(5)];
                    format!(
                        "rw {fi} {mask} {:?}",
                        res(om.file_permission(t, f, &files[*fi], mask, "/f"))
                    )
                }
                60..=64 => {
                    let d = &dirs[rng.below(dirs.len())];
                    let mask = [MAY_READ, MAY_WRITE, MAY_EXEC | MAY_READ][rng.below(3)];
                    format!(
                        "perm {mask} {:?}",
                        res(om.inode_permission(t, d, mask, Some("d")))
                    )
                }
                86..=91 => {
                    // The VFS's permission check of a file (as an open makes it).
                    let f = &files[rng.below(files.len())];
                    let mask = [
                        MAY_READ,
                        MAY_WRITE,
                        MAY_READ | MAY_WRITE,
                        MAY_APPEND | MAY_WRITE,
                        MAY_EXEC,
                    ][rng.below(5)];
                    format!(
                        "fperm {mask} {:?}",
                        res(om.inode_permission(t, f, mask, Some("f")))
                    )
                }
                10..=19 | 92..=99 => {
                    // Twice: the first records the grants, the second the memo.
                    let k = &kept[ti];
                    format!(
                        "kept walk {:?} {:?}",
                        res(om.path_walk(t, k)),
                        res(om.path_walk(t, k))
                    )
                }
                65..=69 => format!(
                    "stat {:?}",
                    res(om.inode_getattr(t, &files[rng.below(files.len())], "/f"))
                ),
                70..=72 => format!(
                    "create {:?}",
                    om.inode_create(t, &dirs[rng.below(dirs.len())], "n", REG)
                        .map_err(|e| e.errno())
                ),
                73..=80 => {
                    let all = dirs.len() + files.len();
                    let i = rng.below(all);
                    let inode = if i < dirs.len() {
                        &dirs[i]
                    } else {
                        &files[i - dirs.len()]
                    };
                    let ty = TYPES[rng.below(TYPES.len())];
                    om.inode_post_setxattr(inode, "security.selinux", ty)
                        .unwrap();
                    format!("relabel {i} {ty}")
                }
                81 => {
                    policy ^= 1;
                    e.server.reload(&policies[policy]).unwrap();
                    format!("reload {policy}")
                }
                82 => {
                    walk_c = !walk_c;
                    e.server.set_boolean("walk_c", walk_c).unwrap();
                    e.server.commit_booleans();
                    format!("walk_c {walk_c}")
                }
                83 => {
                    let on = !e.avc.enforcing();
                    e.avc.set_enforcing(on);
                    format!("enforcing {on}")
                }
                _ => "nothing".to_string(),
            }
        };
        if (84..86).contains(&what) && ov.is_none() {
            task.commit_creds(Cred::new(e.sid(DOMAINS[rng.below(DOMAINS.len())])))
                .unwrap();
        }
        tasks.insert(ti, task);
        out.push(format!("{n} task {ti} override {} {line}", ov.is_some()));
        out.extend(e.take());
    }
    (out, e.om.counters().total())
}

#[test]
fn every_combination_of_fast_paths_gives_the_same_results_and_records() {
    let revoked =
        seaccess_testkit::compile_variant("objmgr-files", "objmgr-files-revoked-eq", 33, |s| {
            s.replace(
                "(allow quiet_t a_t (dir (search read getattr)))",
                "(allow quiet_t a_t (dir (read getattr)))",
            )
            .replace(
                "(allow quiet_t b_t (file (read write append open getattr ioctl)))",
                "(allow quiet_t b_t (file (write open getattr)))",
            )
        });
    let policies = [
        std::fs::read(files_policy()).unwrap(),
        std::fs::read(revoked).unwrap(),
    ];
    let mut slow_total = 0;
    let mut fast_total = [0u64; 8];
    for seed in [1u64, 0x5eed, 0xdead_beef, 42, 7777] {
        let (reference, slow) = run(seed, 2500, [false; 3], &policies);
        slow_total += slow;
        let denials = reference.iter().filter(|l| l.contains("Err(13)")).count();
        let oks = reference.iter().filter(|l| l.contains("Ok(")).count();
        assert!(
            denials > 50 && oks > 300,
            "seed {seed:#x}: a sequence worth comparing ({oks} allowed, {denials} denied)"
        );
        for bits in 1..8u8 {
            let on = [bits & 1 != 0, bits & 2 != 0, bits & 4 != 0];
            let (got, lookups) = run(seed, 2500, on, &policies);
            fast_total[usize::from(bits)] += lookups;
            if let Some(i) =
                (0..reference.len().max(got.len())).find(|&i| reference.get(i) != got.get(i))
            {
                let lo = i.saturating_sub(6);
                panic!(
                    "seed {seed:#x}, fast paths {on:?}: first difference at line {i}\nwithout fast paths:\n{}\nwith:\n{}",
                    reference[lo..(i + 1).min(reference.len())].join("\n"),
                    got[lo..(i + 1).min(got.len())].join("\n")
                );
            }
        }
    }
    // Each combination was used: fewer lookups than with none.
    for (bits, &n) in fast_total.iter().enumerate().skip(1) {
        assert!(
            n < slow_total,
            "fast paths {bits:03b}: {n} lookups, {slow_total} without"
        );
    }
}
