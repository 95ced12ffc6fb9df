//! The three experiments, each one pass of real system calls on the tree, with the hooks an
//! object manager would call around them or without any.
//!
//! A pass returns the nanoseconds per operation. The hooked variants differ from vanilla only
//! by the hook calls: the paths, the walk lists and the open files are prepared before the
//! clock starts, as the kernel has them at hand (a dentry, an inode, a struct file).

use std::fs::File;
use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::time::Instant;

use seaccess_objmgr::hooks::fs::oflags::{O_RDONLY, O_RDWR};
use seaccess_objmgr::hooks::fs::{MAY_OPEN, MAY_READ, MAY_WRITE};
use seaccess_objmgr::{FileSec, InodeSec, ObjectManager, Task};

use super::tree::{Entry, Tree};
use crate::LabError;

/// Which variant a pass runs.
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
}

fn io(e: &Entry, err: std::io::Error) -> LabError {
    LabError::Io { path: e.path.clone(), what: err.to_string() }
}

fn denied(what: &str, e: &Entry, err: seaccess_objmgr::ObjmgrError) -> LabError {
    LabError::Objmgr { what: format!("{what} {}: {err}", e.rel) }
}

/// Everything one experiment needs, prepared once.
pub struct Prepared<'t> {
    /// Each entry with the directories its lookup searches.
    pub entries: Vec<(&'t Entry, Vec<(&'t InodeSec, &'t str)>)>,
}

impl<'t> Prepared<'t> {
    pub fn new(tree: &'t Tree, entries: impl Iterator<Item = &'t Entry>) -> Prepared<'t> {
        Prepared { entries: entries.map(|e| (e, tree.walk(e))).collect() }
    }

    /// Directory components searched by one lookup of every entry.
    pub fn components(&self) -> usize {
        self.entries.iter().map(|(_, w)| w.len()).sum()
    }
}

/// The 2008 walk: stat and open (and close) every directory and file, reading nothing. Each
/// system call looks its path up, so each is preceded by the search of every directory on it;
/// stat adds getattr; open adds the VFS's permission check with the access mode (may_open's
/// inode_permission) and the open check (selinux_file_open), in the kernel's order.
pub fn treewalk(v: Variant, om: &ObjectManager, task: &Task, p: &Prepared) -> Result<f64, LabError> {
    let start = Instant::now();
    for (e, walk) in &p.entries {
        if v != Variant::Vanilla {
            om.path_walk(task, walk).map_err(|err| denied("search", e, err))?;
            om.inode_getattr(task, &e.sec, &e.rel).map_err(|err| denied("getattr", e, err))?;
        }
        black_box(std::fs::symlink_metadata(&e.path).map_err(|err| io(e, err))?);
        let fsec = if v != Variant::Vanilla {
            om.path_walk(task, walk).map_err(|err| denied("search", e, err))?;
            om.inode_permission(task, &e.sec, MAY_OPEN | MAY_READ, Some(&e.name)).map_err(|err| denied("read", e, err))?;
            Some(om.file_open(task, &e.sec, &e.rel, O_RDONLY).map_err(|err| denied("open", e, err))?)
        } else {
            None
        };
        let f = File::open(&e.path).map_err(|err| io(e, err))?;
        drop(black_box(f));
        drop(black_box(fsec));
    }
    Ok(start.elapsed().as_nanos() as f64 / p.entries.len().max(1) as f64)
}

/// The read/write experiment's open file: the system's and the object manager's.
pub struct OpenFile<'t> {
    pub entry: &'t Entry,
    pub file: File,
    pub sec: FileSec,
}

impl<'t> OpenFile<'t> {
    /// Opens the tree's read/write file for reading and writing, through the open's hooks.
    pub fn open(om: &ObjectManager, task: &Task, tree: &'t Tree) -> Result<OpenFile<'t>, LabError> {
        let e = &tree.rw;
        om.path_walk(task, &tree.walk(e)).map_err(|err| denied("search", e, err))?;
        om.inode_permission(task, &e.sec, MAY_OPEN | MAY_READ | MAY_WRITE, Some(&e.name)).map_err(|err| denied("read/write", e, err))?;
        let sec = om.file_open(task, &e.sec, &e.rel, O_RDWR).map_err(|err| denied("open", e, err))?;
        let file = std::fs::OpenOptions::new().read(true).write(true).open(&e.path).map_err(|err| io(e, err))?;
        Ok(OpenFile { entry: e, file, sec })
    }
}

/// lmbench's simple read and write: `ops` one-byte reads and writes in turn at the start of an
/// open file, each preceded in the hooked variants by the read or write check of the open file.
pub fn readwrite(v: Variant, om: &ObjectManager, task: &Task, f: &OpenFile, ops: usize) -> Result<f64, LabError> {
    let e = f.entry;
    let mut byte = [0u8; 1];
    let start = Instant::now();
    for i in 0..ops {
        let write = i % 2 == 1;
        if v != Variant::Vanilla {
            let mask = if write { MAY_WRITE } else { MAY_READ };
            om.file_permission(task, &f.sec, &e.sec, mask, &e.rel).map_err(|err| denied("read/write", e, err))?;
        }
        let n = if write { f.file.write_at(&byte, 0) } else { f.file.read_at(&mut byte, 0) };
        black_box(n.map_err(|err| io(e, err))?);
    }
    Ok(start.elapsed().as_nanos() as f64 / ops.max(1) as f64)
}

/// The no-change build: stat every deep path, `reps` times over; each stat searches every
/// directory on the path and asks getattr of the last component.
pub fn pathwalk(v: Variant, om: &ObjectManager, task: &Task, p: &Prepared, reps: usize) -> Result<f64, LabError> {
    let start = Instant::now();
    for _ in 0..reps {
        for (e, walk) in &p.entries {
            if v != Variant::Vanilla {
                om.path_walk(task, walk).map_err(|err| denied("search", e, err))?;
                om.inode_getattr(task, &e.sec, &e.rel).map_err(|err| denied("getattr", e, err))?;
            }
            black_box(std::fs::symlink_metadata(&e.path).map_err(|err| io(e, err))?);
        }
    }
    Ok(start.elapsed().as_nanos() as f64 / (reps * p.entries.len()).max(1) as f64)
}

/// Cache lookups the path walk's searches make per directory component on one pass over
/// `p` (untimed), after a first pass has warmed whatever the variant remembers.
pub fn walk_lookups_per_component(v: Variant, om: &ObjectManager, task: &Task, p: &Prepared) -> Result<f64, LabError> {
    v.apply(om);
    let walk_all = || -> Result<(), LabError> {
        for (e, walk) in &p.entries {
            om.path_walk(task, walk).map_err(|err| denied("search", e, err))?;
        }
        Ok(())
    };
    walk_all()?;
    om.counters().reset();
    walk_all()?;
    Ok(om.counters().total() as f64 / p.components().max(1) as f64)
}
