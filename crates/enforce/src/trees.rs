//! The daemon's walks of its trees (`--root`, `--tree`): labels from file_contexts, by
//! descriptor ([`crate::label`]), given to the daemon in a first walk that learns which SIDs the
//! trees carry and written into inode storage in a second, a batch at a time, each after the
//! generation in use decides its SIDs. Two walks rather than one with every descriptor held: a
//! whole system's inodes outnumber the descriptors a process may have open.

use std::collections::BTreeSet;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use seaccess_engine::Engine;
use seaccess_label::{FileContexts, FileKind};
use seaccess_types::Sid;

use crate::bpf::Enforcer;
use crate::error::{sys, Result};
use crate::label::{self, TreeOptions};
use crate::tables::{Generation, Limits, Role};

/// Inodes labeled per batch: descriptors held at once while inode storage is written.
pub(crate) const BATCH: usize = 64;

/// Walks every tree (`roots` labeled as file_contexts labels `/`, `trees` as their own paths) with file_contexts `fc` (none: nothing to walk), giving `visit`
/// each inode's descriptor, SID and whether it is a directory; an inode file_contexts says
/// nothing about keeps the label it has, as restorecon leaves such a file alone (a file a
/// confined task created keeps its type transition's label across reloads), and is not given.
/// Returns each tree's counts, by its path.
pub(crate) fn walk(
    engine: &Engine,
    fc: Option<&FileContexts>,
    roots: &[PathBuf],
    trees: &[PathBuf],
    enforcer: &Enforcer,
    visit: &mut dyn FnMut(BorrowedFd<'_>, Sid, bool) -> Result<()>,
) -> Result<Vec<(String, label::Counts)>> {
    let mut out = Vec::new();
    let Some(fc) = fc else {
        return Ok(out);
    };
    let all = roots
        .iter()
        .map(|p| (p, true))
        .chain(trees.iter().map(|p| (p, false)));
    for (path, is_root) in all {
        let abs =
            std::fs::canonicalize(path).map_err(sys(format!("resolving {}", path.display())))?;
        let key = if is_root {
            b"/".to_vec()
        } else {
            abs.as_os_str().as_encoded_bytes().to_vec()
        };
        let root = label::open_root(&abs)?;
        let topts = TreeOptions {
            key,
            cross_mounts: false,
        };
        let counts = label::label_tree(engine, fc, root.as_fd(), &abs, &topts, &mut |l| {
            if !l.matched && enforcer.inode(l.fd)?.is_some() {
                return Ok(());
            }
            visit(l.fd, l.sid, l.kind == FileKind::Dir)
        })?;
        out.push((abs.display().to_string(), counts));
    }
    Ok(out)
}

/// The second walk's writer: a batch's labels go into inode storage once the generation in
/// use decides every SID among them (one the first walk did not meet, the tree having changed
/// between the walks, is added in place first, as a miss would be), so that no inode carries
/// a SID its generation does not decide.
pub(crate) struct Writer<'a> {
    pub(crate) engine: &'a Engine,
    pub(crate) enforcer: &'a Enforcer,
    pub(crate) generation: &'a mut Generation,
    pub(crate) limits: &'a Limits,
}

impl Writer<'_> {
    pub(crate) fn write(&mut self, batch: &mut Vec<(OwnedFd, Sid, bool)>) -> Result<()> {
        let s = &self.generation.sids;
        let late: BTreeSet<(u32, bool)> = batch
            .iter()
            .filter(|&&(_, sid, dir)| !(if dir { &s.dirs } else { &s.files }).contains(&sid.0))
            .map(|&(_, sid, dir)| (sid.0, dir))
            .collect();
        if !late.is_empty() {
            let mut g = self.generation.clone();
            let (mut dec, mut tr, mut named) = (Vec::new(), Vec::new(), Vec::new());
            for (sid, dir) in late {
                let role = if dir { Role::Dir } else { Role::File };
                let a = g.add_sid(self.engine, Sid(sid), role, self.limits)?;
                dec.extend(a.decisions.iter());
                tr.extend(a.transitions.iter());
                named.extend(a.named.iter().copied());
            }
            self.enforcer.extend(&dec, &tr, &named)?;
            *self.generation = g;
        }
        for (fd, sid, _) in batch.drain(..) {
            self.enforcer.set_inode(fd.as_fd(), sid.0)?;
        }
        Ok(())
    }
}
