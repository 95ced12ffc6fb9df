//! The three experiments: real system calls on the tree, with the hooks an object manager
//! would call around them or without any.
//!
//! An experiment runs in units: `n` consecutive operations of its work (wrapping around), in
//! one variant, timed. The hooked variants differ from vanilla only by the hook calls: the
//! paths, the walk lists and the open files are prepared before the clock starts, as the
//! kernel has them at hand (a dentry, an inode, a struct file). A unit can also run the hooks
//! alone, without the system calls, to time the object manager's own work apart from the
//! system's noise.

use std::fs::File;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::time::Instant;

use seaccess_objmgr::hooks::fs::oflags::{O_RDONLY, O_RDWR};
use seaccess_objmgr::hooks::fs::{WalkDirs, WalkMemo, MAY_OPEN, MAY_READ, MAY_WRITE};
use seaccess_objmgr::{FileSec, InodeSec, ObjectManager, Task};

use super::tree::{Entry, Tree};
use crate::LabError;

/// Which variant a unit runs.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Variant {
    /// System calls only.
    Vanilla,
    /// The hooks with every fast path off.
    Slow,
    /// The hooks with every fast path on.
    Fast,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Vanilla, Variant::Slow, Variant::Fast];

    /// Sets `om`'s fast paths for this variant (vanilla calls no hook, so leaves them).
    pub fn apply(self, om: &ObjectManager) {
        match self {
            Variant::Vanilla => {}
            Variant::Slow => om.fast_paths().set_all(false),
            Variant::Fast => om.fast_paths().set_all(true),
        }
    }

    /// Whether a unit of this variant calls the hooks; in a control run the fast variant
    /// calls none, so that it differs from vanilla only by its name and its place in the
    /// order.
    #[inline(always)]
    fn hooked(self, control: bool) -> bool {
        self != Variant::Vanilla && !(control && self == Variant::Fast)
    }
}

/// Whether a unit makes the system calls (false: the hooks alone).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Calls {
    System,
    HooksOnly,
}

/// One of the experiments.
pub trait Experiment {
    /// Operations in one pass over the experiment's work.
    fn ops(&self) -> usize;
    /// Runs `n` operations (at most [`Experiment::ops`]) from operation `from` on, wrapping
    /// around; the nanoseconds they took per operation.
    fn unit(&self, v: Variant, calls: Calls, from: usize, n: usize) -> Result<f64, LabError>;
}

fn io(e: &Entry, err: std::io::Error) -> LabError {
    LabError::Io {
        path: e.path.clone(),
        what: err.to_string(),
    }
}

fn denied(what: &str, e: &Entry, err: seaccess_objmgr::ObjmgrError) -> LabError {
    LabError::Objmgr {
        what: format!("{what} {}: {err}", e.rel),
    }
}

/// The directories one lookup searches: their blobs in a list of their own (8 bytes a
/// directory, so a dozen share two cache lines) and their names apart, read only for an
/// audit record; and the walk's memo, as the dentry of the last directory would keep it.
pub struct Walk<'t> {
    dirs: Vec<&'t InodeSec>,
    names: Vec<&'t str>,
    memo: WalkMemo,
}

impl WalkDirs for Walk<'_> {
    #[inline(always)]
    fn count(&self) -> usize {
        self.dirs.len()
    }
    #[inline(always)]
    fn dir(&self, i: usize) -> Option<&InodeSec> {
        self.dirs.get(i).copied()
    }
    fn name(&self, i: usize) -> &str {
        self.names.get(i).copied().unwrap_or_default()
    }
    #[inline(always)]
    fn memo(&self) -> Option<&WalkMemo> {
        Some(&self.memo)
    }
}

/// Entries with their blobs and the directories a lookup of each searches, prepared once.
pub struct Prepared<'t> {
    /// Each entry with its blob and the index of its walk in `walks`.
    pub entries: Vec<(&'t Entry, &'t InodeSec, usize)>,
    /// The walk to the children of each directory of the tree (its own walk and itself), by
    /// directory index, and last the root's own, empty walk. Entries of one directory share
    /// one, as lookups share the parent's dentry chain in the kernel: one short list per
    /// directory rather than one per entry keeps the hooked variants' memory traffic to what
    /// an object manager's would be.
    pub walks: Vec<Walk<'t>>,
}

impl<'t> Prepared<'t> {
    pub fn new(
        tree: &'t Tree,
        entries: impl Iterator<Item = &'t Entry>,
    ) -> Result<Prepared<'t>, LabError> {
        let mut walks = Vec::with_capacity(tree.dirs.len() + 1);
        for d in &tree.dirs {
            let mut w = tree.walk(d)?;
            w.push((tree.sec(d)?, d.name.as_str()));
            walks.push(Walk {
                dirs: w.iter().map(|&(s, _)| s).collect(),
                names: w.iter().map(|&(_, n)| n).collect(),
                memo: WalkMemo::new(),
            });
        }
        let root = walks.len();
        walks.push(Walk {
            dirs: Vec::new(),
            names: Vec::new(),
            memo: WalkMemo::new(),
        });
        let entries = entries
            .map(|e| Ok((e, tree.sec(e)?, e.parents.last().copied().unwrap_or(root))))
            .collect::<Result<_, LabError>>()?;
        Ok(Prepared { entries, walks })
    }

    /// The directories a lookup of entry `w` (its walk index) searches.
    fn walk(&self, w: usize) -> &Walk<'t> {
        self.walks.get(w).unwrap_or(&NO_WALK)
    }

    /// Directory components searched by one lookup of every entry.
    pub fn components(&self) -> usize {
        self.entries
            .iter()
            .map(|&(_, _, w)| self.walk(w).count())
            .sum()
    }

    /// The directory components of the shortest and the longest lookup.
    pub fn depths(&self) -> (usize, usize) {
        self.entries
            .iter()
            .fold((usize::MAX, 0), |(lo, hi), &(_, _, w)| {
                (lo.min(self.walk(w).count()), hi.max(self.walk(w).count()))
            })
    }

    /// `n` entries from `from` on, wrapping around, each with its blob and its walk.
    fn from(
        &self,
        from: usize,
        n: usize,
    ) -> impl Iterator<Item = (&'t Entry, &'t InodeSec, &Walk<'t>)> {
        self.entries
            .get(from..)
            .unwrap_or_default()
            .iter()
            .chain(&self.entries)
            .take(n)
            .map(|&(e, s, w)| (e, s, self.walk(w)))
    }
}

static NO_WALK: Walk<'static> = Walk {
    dirs: Vec::new(),
    names: Vec::new(),
    memo: WalkMemo::new(),
};

fn per_op(start: Instant, n: usize) -> f64 {
    start.elapsed().as_nanos() as f64 / n.max(1) as f64
}

/// One stat(2) of entry `e`: in the hooked variants the search of every directory on its path
/// (`walk`) and getattr, then the system call. Inlined, so that both experiments time exactly
/// the calls they make.
#[inline(always)]
fn stat(
    om: &ObjectManager,
    task: &Task,
    e: &Entry,
    sec: &InodeSec,
    walk: &Walk,
    hooked: bool,
    calls: Calls,
) -> Result<(), LabError> {
    if hooked {
        om.path_walk(task, walk)
            .map_err(|err| denied("search", e, err))?;
        om.inode_getattr(task, sec, &e.rel)
            .map_err(|err| denied("getattr", e, err))?;
    }
    if calls == Calls::System {
        black_box(std::fs::symlink_metadata(&e.path).map_err(|err| io(e, err))?);
    }
    Ok(())
}

/// The 2008 walk: stat and open (and close) every directory and file, reading nothing. Each
/// system call looks its path up, so each is preceded by the search of every directory on it;
/// stat adds getattr; open adds the VFS's permission check with the access mode (may_open's
/// inode_permission) and the open check (selinux_file_open), in the kernel's order. Close
/// asks nothing (the kernel's file_free_security is bookkeeping).
pub struct TreeWalk<'a, 't> {
    pub om: &'a ObjectManager,
    pub task: &'a Task,
    pub work: &'a Prepared<'t>,
    /// A control run (see [`Variant::hooked`]).
    pub control: bool,
}

impl Experiment for TreeWalk<'_, '_> {
    fn ops(&self) -> usize {
        self.work.entries.len()
    }

    fn unit(&self, v: Variant, calls: Calls, from: usize, n: usize) -> Result<f64, LabError> {
        let (om, task, hooked) = (self.om, self.task, v.hooked(self.control));
        let start = Instant::now();
        for (e, sec, walk) in self.work.from(from, n) {
            stat(om, task, e, sec, walk, hooked, calls)?;
            let fsec = if hooked {
                om.path_walk(task, walk)
                    .map_err(|err| denied("search", e, err))?;
                om.inode_permission(task, sec, MAY_OPEN | MAY_READ, Some(&e.name))
                    .map_err(|err| denied("read", e, err))?;
                Some(
                    om.file_open(task, sec, &e.rel, O_RDONLY)
                        .map_err(|err| denied("open", e, err))?,
                )
            } else {
                None
            };
            if calls == Calls::System {
                drop(black_box(File::open(&e.path).map_err(|err| io(e, err))?));
            }
            black_box(fsec);
        }
        Ok(per_op(start, n))
    }
}

/// lmbench's simple read and write: one-byte reads and writes in turn at the start of an open
/// file, each preceded in the hooked variants by the read or write check of the open file.
pub struct ReadWrite<'a, 't> {
    pub om: &'a ObjectManager,
    pub task: &'a Task,
    pub entry: &'t Entry,
    /// The file's inode blob and its open file's.
    pub isec: &'t InodeSec,
    pub file: File,
    pub sec: FileSec,
    /// Operations per pass.
    pub ops: usize,
    /// A control run (see [`Variant::hooked`]).
    pub control: bool,
}

impl<'a, 't> ReadWrite<'a, 't> {
    /// Opens the tree's read/write file for reading and writing, through the open's hooks.
    pub fn open(
        om: &'a ObjectManager,
        task: &'a Task,
        tree: &'t Tree,
        ops: usize,
    ) -> Result<ReadWrite<'a, 't>, LabError> {
        let e = &tree.rw;
        let isec = tree.sec(e)?;
        om.path_walk(task, &tree.walk(e)?)
            .map_err(|err| denied("search", e, err))?;
        om.inode_permission(task, isec, MAY_OPEN | MAY_READ | MAY_WRITE, Some(&e.name))
            .map_err(|err| denied("read/write", e, err))?;
        let sec = om
            .file_open(task, isec, &e.rel, O_RDWR)
            .map_err(|err| denied("open", e, err))?;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(&e.path)
            .map_err(|err| io(e, err))?;
        Ok(ReadWrite {
            om,
            task,
            entry: e,
            isec,
            file,
            sec,
            ops,
            control: false,
        })
    }
}

impl Experiment for ReadWrite<'_, '_> {
    fn ops(&self) -> usize {
        self.ops
    }

    fn unit(&self, v: Variant, calls: Calls, from: usize, n: usize) -> Result<f64, LabError> {
        let (e, hooked) = (self.entry, v.hooked(self.control));
        let mut byte = [0u8; 1];
        let start = Instant::now();
        for i in from..from + n {
            let write = i % 2 == 1;
            if hooked {
                let mask = if write { MAY_WRITE } else { MAY_READ };
                self.om
                    .file_permission(self.task, &self.sec, self.isec, mask, &e.rel)
                    .map_err(|err| denied("read/write", e, err))?;
            }
            if calls == Calls::System {
                let r = if write {
                    self.file.write_at(&byte, 0)
                } else {
                    self.file.read_at(&mut byte, 0)
                };
                black_box(r.map_err(|err| io(e, err))?);
            }
        }
        Ok(per_op(start, n))
    }
}

/// The no-change build: stat deep existing paths over and over; each stat searches every
/// directory on the path and asks getattr of the last component.
pub struct PathWalk<'a, 't> {
    pub om: &'a ObjectManager,
    pub task: &'a Task,
    pub work: &'a Prepared<'t>,
    /// A control run (see [`Variant::hooked`]).
    pub control: bool,
}

impl Experiment for PathWalk<'_, '_> {
    fn ops(&self) -> usize {
        self.work.entries.len()
    }

    fn unit(&self, v: Variant, calls: Calls, from: usize, n: usize) -> Result<f64, LabError> {
        let (om, task, hooked) = (self.om, self.task, v.hooked(self.control));
        let start = Instant::now();
        for (e, sec, walk) in self.work.from(from, n) {
            stat(om, task, e, sec, walk, hooked, calls)?;
        }
        Ok(per_op(start, n))
    }
}

impl PathWalk<'_, '_> {
    /// Cache lookups the searches alone make per directory component on one pass (untimed),
    /// after a first pass has warmed whatever the variant remembers.
    pub fn lookups_per_component(&self, v: Variant) -> Result<f64, LabError> {
        v.apply(self.om);
        let walk_all = || -> Result<(), LabError> {
            for (e, _, walk) in self.work.from(0, self.work.entries.len()) {
                self.om
                    .path_walk(self.task, walk)
                    .map_err(|err| denied("search", e, err))?;
            }
            Ok(())
        };
        walk_all()?;
        self.om.counters().reset();
        walk_all()?;
        Ok(self.om.counters().total() as f64 / self.work.components().max(1) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // A control run's fast variant calls no hook; vanilla never does, the slow one always.
    #[test]
    fn only_the_control_runs_fast_variant_goes_without_hooks() {
        assert_eq!(Variant::ALL.map(|v| v.hooked(false)), [false, true, true]);
        assert_eq!(Variant::ALL.map(|v| v.hooked(true)), [false, true, false]);
    }
}
