//! Labels for the loader's inode storage: a tree walked by descriptor from a directory the
//! daemon holds, each inode looked up in file_contexts (its path as file_contexts sees it, the
//! mode of the inode actually held) and handed over with a descriptor of that very inode, so
//! the loader keys inode storage by the descriptor, never by a path someone could reshape.
//!
//! The walk is crates/label's (walk.rs, the one `seaccess label` and libseaccess's
//! restorecon use): each directory is opened from its parent with `O_NOFOLLOW | O_DIRECTORY`
//! and read through its own descriptor. Every other object is opened here from the directory
//! held open with openat2 (`RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`,
//! `O_PATH | O_NOFOLLOW`): a symbolic link is an object itself (`lnk_file`, the kernel labels
//! links too), and a name swapped for a link during the walk gives the link, never what it
//! points to.
//!
//! An inode file_contexts has no label for (no match, or `<<none>>`) gets the policy's `file`
//! initial SID, as the kernel gives an inode with no label (inode_doinit_with_dentry); a
//! context the policy does not define gets a SID decided as `unlabeled`, as the kernel's
//! security_context_to_sid_force does for a label it cannot use.
//!
//! The SIDs handed over are what [`crate::tables::Universe`] needs (a directory's in `dirs`,
//! the rest in `files`): a loader labels first, builds the generation, then writes inode
//! storage. An inode reached by two paths (a hard link, a bind mount crossed on request) is
//! handed over once per path, each with its path's label; the last one written wins, where
//! restorecon would pick one by selabel_lookup_best_match.

use std::collections::HashMap;
use std::ffi::CStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{self as rfs, AtFlags, Mode, OFlags, ResolveFlags, StatxFlags};
use seaccess_engine::Engine;
use seaccess_label::walk::{self, Entry, Flow, Options};
use seaccess_label::xattr::Object;
use seaccess_label::{FileContexts, FileKind};
use seaccess_types::Sid;

use crate::error::{EnforceError, Result};
use crate::filesystems::fs_default;
use crate::layout::{FS_CREATOR, FS_UNCHECKED};

/// How every open below the root resolves: one component, beneath the directory held, no
/// link of any kind followed.
const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// How to label a tree.
#[derive(Clone, Debug, Default)]
pub struct TreeOptions {
    /// The path file_contexts knows the root by (`/var/www` for a tree mounted there);
    /// objects below are looked up as this and their names.
    pub key: Vec<u8>,
    /// Go into directories on other mounts (else a mount point below the root is neither
    /// labeled nor entered: its inode belongs to the other file system).
    pub cross_mounts: bool,
}

/// One labeled inode, for the loader.
pub struct Labeled<'a> {
    /// A descriptor of the inode (the directory's own, or an `O_PATH` one of anything
    /// else): inode storage is written keyed by it.
    pub fd: BorrowedFd<'a>,
    /// Its SID.
    pub sid: Sid,
    /// Its type, from the inode held.
    pub kind: FileKind,
    /// The path file_contexts was asked about.
    pub key: &'a [u8],
    /// Whether file_contexts had a label for it (else `sid` is the `file` initial SID).
    pub matched: bool,
}

/// What a tree's labeling did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Inodes handed over with a file_contexts label.
    pub labeled: u64,
    /// Inodes handed over with the `file` initial SID (no match, or `<<none>>`).
    pub unmatched: u64,
    /// Of those labeled, those whose context the policy does not define (decided as
    /// `unlabeled`).
    pub invalid: u64,
    /// Mount points below the root not labeled nor entered.
    pub mounts_skipped: u64,
    /// Objects that could not be reached, each with why (the walk goes on past them).
    pub errors: Vec<String>,
}

/// Opens directory `path` for [`label_tree`], its last component not followed: for the root a
/// daemon is given on its command line (everything below it is reached by descriptor).
pub fn open_root(path: &Path) -> Result<OwnedFd> {
    rfs::open(
        path,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io(path, "opening the root", e))
}

fn io(path: &Path, what: &'static str, e: rustix::io::Errno) -> EnforceError {
    EnforceError::Io {
        path: path.display().to_string(),
        what,
        source: e.into(),
    }
}

/// The mount a descriptor's inode is on (statx's `stx_mnt_id`): unlike `st_dev`, it tells a
/// bind mount of the same file system apart.
fn mount_id(fd: BorrowedFd<'_>) -> std::result::Result<u64, rustix::io::Errno> {
    Ok(rfs::statx(fd, c"", AtFlags::EMPTY_PATH, StatxFlags::MNT_ID)?.stx_mnt_id)
}

/// The file system type of the inode `fd` is open on, as the kernel names it
/// (struct file_system_type's name: mountinfo's type without a FUSE subtype).
pub(crate) fn fstype(fd: BorrowedFd<'_>) -> std::io::Result<String> {
    let id = mount_id(fd).map_err(std::io::Error::from)?;
    let t = mount_fstype(id)?;
    Ok(t.split('.').next().unwrap_or(&t).to_string())
}

/// The file system type of mount `id`, from /proc/self/mountinfo (the field after " - ").
fn mount_fstype(id: u64) -> std::io::Result<String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo")?;
    info.lines()
        .find(|l| l.split(' ').next() == Some(id.to_string().as_str()))
        .and_then(|l| l.split(" - ").nth(1))
        .and_then(|rest| rest.split(' ').next())
        .map(str::to_string)
        .ok_or_else(|| std::io::Error::other(format!("mount {id} is not in /proc/self/mountinfo")))
}

/// The SID the kernel gives an inode of a file system of type `fstype` that carries no
/// label (what file_contexts says nothing about keeps it): [`fs_default`]'s, the one the BPF
/// side gives an inode nobody labeled. Where that depends on who created the object (fs_use_task)
/// or on its path inside the file system (genfscon with several entries), the file system's
/// own SID or its genfscon entry for "/".
fn unlabeled_default(engine: &Engine, fstype: &str) -> Result<Sid> {
    engine
        .with_generation(|g| {
            let p = g.policy();
            let d = fs_default(p, fstype);
            Ok(match d.kind {
                FS_CREATOR | FS_UNCHECKED => p.fs_use(fstype).map(|(_, s)| s).or_else(|| {
                    let dir = p.class("dir").ok()?;
                    p.genfs_sid(fstype, "/", dir)
                }),
                _ => (d.sid != 0).then_some(Sid(d.sid)),
            })
        })?
        .ok_or_else(|| {
            EnforceError::Rejected(format!(
                "the policy gives no context to an unlabeled inode of a {fstype} file system"
            ))
        })
}

/// Labels the tree of directory `root` (an `O_PATH` or readable descriptor of it; `shown`
/// names it in errors) with file_contexts `fc` and `engine`'s policy, giving each inode to
/// `visit` with its descriptor and SID, root first, pre-order. An error from `visit` stops the
/// walk and is returned; objects the walk cannot reach are counted in [`Counts::errors`] and
/// passed over (they keep whatever label the BPF side gives an inode nobody labeled).
pub fn label_tree(
    engine: &Engine,
    fc: &FileContexts,
    root: BorrowedFd<'_>,
    shown: &Path,
    opts: &TreeOptions,
    visit: &mut dyn FnMut(&Labeled<'_>) -> Result<()>,
) -> Result<Counts> {
    // getdents needs a readable descriptor: the root again, as ".", beneath itself.
    let dir = rfs::openat2(
        root,
        c".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        RESOLVE,
    )
    .map_err(|e| io(shown, "opening the root for reading", e))?;
    let root_mount = mount_id(dir.as_fd()).map_err(|e| io(shown, "reading the mount", e))?;
    let fstype = mount_fstype(root_mount).map_err(|source| EnforceError::Io {
        path: shown.display().to_string(),
        what: "reading its mount's file system type",
        source,
    })?;
    let default_sid = unlabeled_default(engine, &fstype)?;
    let mut state = State {
        engine,
        fc,
        default_sid,
        root_mount,
        cross: opts.cross_mounts,
        sids: HashMap::new(),
        counts: Counts::default(),
        stopped: None,
    };
    let walk_opts = Options {
        one_fs: false,
        sorted: true,
    };
    let mut errors = Vec::new();
    walk::walk_fd(
        dir,
        shown,
        &opts.key,
        walk_opts,
        &mut |e| state.entry(&e, visit),
        &mut |e| {
            errors.push(e.to_string());
            Flow::Continue
        },
    );
    if let Some(e) = state.stopped.take() {
        return Err(e);
    }
    state.counts.errors.extend(errors);
    Ok(state.counts)
}

/// A labeling in progress.
struct State<'a> {
    engine: &'a Engine,
    fc: &'a FileContexts,
    default_sid: Sid,
    root_mount: u64,
    cross: bool,
    /// Each context's SID and whether the policy defines it: a tree has few contexts.
    sids: HashMap<String, (Sid, bool)>,
    counts: Counts,
    /// Why the walk was stopped.
    stopped: Option<EnforceError>,
}

impl State<'_> {
    fn entry(&mut self, e: &Entry, visit: &mut dyn FnMut(&Labeled<'_>) -> Result<()>) -> Flow {
        match self.label(e, visit) {
            Ok(flow) => flow,
            Err(err) => {
                self.stopped = Some(err);
                Flow::Stop
            }
        }
    }

    /// One object: its inode held, looked up, handed over.
    fn label(
        &mut self,
        e: &Entry,
        visit: &mut dyn FnMut(&Labeled<'_>) -> Result<()>,
    ) -> Result<Flow> {
        let held: OwnedFd;
        let fd = match (e.dir_fd(), e.object()) {
            (Some(d), _) => d,
            (None, Object::At(dir, name)) => match open_beneath(dir, name) {
                Ok(f) => {
                    held = f;
                    held.as_fd()
                }
                Err(err) => {
                    self.counts
                        .errors
                        .push(format!("{}: opening: {err}", e.path().display()));
                    return Ok(Flow::Continue);
                }
            },
            (None, _) => {
                self.counts
                    .errors
                    .push(format!("{}: not reached by descriptor", e.path().display()));
                return Ok(Flow::Continue);
            }
        };
        let path = e.path();
        let st = rfs::fstat(fd).map_err(|err| io(&path, "reading the status", err))?;
        let kind = FileKind::from_mode(st.st_mode);
        if kind == FileKind::Dir && !self.cross {
            let m = mount_id(fd).map_err(|err| io(&path, "reading the mount", err))?;
            if m != self.root_mount {
                self.counts.mounts_skipped += 1;
                return Ok(Flow::Prune);
            }
        }
        let key = e.key();
        let found = self
            .fc
            .lookup(&key, kind)
            .map_err(|source| EnforceError::Label {
                path: String::from_utf8_lossy(&key).into_owned(),
                source,
            })?
            .map(|s| s.context.to_string());
        let (sid, matched) = match found {
            None => {
                self.counts.unmatched += 1;
                (self.default_sid, false)
            }
            Some(ctx) => {
                let (sid, valid) = self.sid(ctx)?;
                self.counts.labeled += 1;
                if !valid {
                    self.counts.invalid += 1;
                }
                (sid, true)
            }
        };
        visit(&Labeled {
            fd,
            sid,
            kind,
            key: &key,
            matched,
        })?;
        Ok(Flow::Continue)
    }

    /// The SID of a file_contexts context and whether the policy defines it.
    fn sid(&mut self, ctx: String) -> Result<(Sid, bool)> {
        if let Some(&v) = self.sids.get(&ctx) {
            return Ok(v);
        }
        let v = self.engine.with_generation(|g| {
            let p = g.policy();
            Ok(match p.context_to_sid(&ctx) {
                Ok(s) => (s, true),
                Err(_) => (p.context_to_sid_force(&ctx)?, false),
            })
        })?;
        self.sids.insert(ctx, v);
        Ok(v)
    }
}

/// `name` in directory `dir`, itself (a link not followed), as an `O_PATH` descriptor.
fn open_beneath(
    dir: BorrowedFd<'_>,
    name: &CStr,
) -> std::result::Result<OwnedFd, rustix::io::Errno> {
    rfs::openat2(
        dir,
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        RESOLVE,
    )
}
