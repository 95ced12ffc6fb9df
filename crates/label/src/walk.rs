//! A tree walked through directory descriptors, for whatever relabels files as root
//! (`seaccess label --apply/--check/--plan`, libseaccess's `selinux_restorecon`).
//!
//! Why descriptors: a walk that hands out path strings lets whoever owns a directory inside the
//! tree swap it for a symbolic link between the listing and the write, and every later call
//! by path follows that link out of the tree (issue 34: 26,200 root-owned files relabelled
//! outside `--root`). Here the root is opened once (its last component not followed), each
//! directory is read with getdents on its own descriptor, each child directory is opened with
//! `openat(dir, name, O_DIRECTORY | O_NOFOLLOW)`, and every object is reached as a name in a
//! directory held open (getxattrat/setxattrat with AT_SYMLINK_NOFOLLOW), or, for a directory,
//! through the descriptor the walk read it with. No component beneath the root is ever
//! resolved by path, so a name swapped meanwhile can only make the walk act on another object
//! reachable from a directory it already holds, never follow a link out.
//!
//! The objects a walk holds open: its open ancestors (the tree's depth) and, in
//! [`walk_parallel`], the directories of the queued batches, bounded by the descriptor limit.

use std::borrow::Cow;
use std::ffi::{CStr, CString, OsStr};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};

use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags, RawDir, ResolveFlags};
use rustix::io::Errno;

use crate::spec::FileKind;
use crate::xattr::{self, Attrs, Object};

/// A tree to walk: the path given (opened once, its last component not followed: a symbolic
/// link there is an object of the walk, labelled itself) and the path file_contexts knows it
/// by (the same, or its place under an image's root).
#[derive(Clone, Debug)]
pub struct Root {
    /// The path as shown and opened; the components before the last are followed (whoever
    /// gives it names them).
    pub path: PathBuf,
    /// The key looked up for the root; an object below it is looked up as this key and its
    /// names below the root.
    pub key: Vec<u8>,
    /// A directory `path` must stay under (an image's `--root`): when set and `path` is below
    /// it, `path`'s parent is opened from it with openat2's RESOLVE_BENEATH, following no link,
    /// so a link swapped into a component after the caller resolved it fails the open instead
    /// of leading out.
    pub beneath: Option<PathBuf>,
}

/// How to walk.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Do not go into a directory on another file system than its root (it is visited, its
    /// entries are not): restorecon's and setfiles' `-x`.
    pub one_fs: bool,
    /// Visit each directory's entries in byte order (else in the order the file system lists
    /// them).
    pub sorted: bool,
}

/// What a visit asks of the walk next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Go on (into the object, when it is a directory).
    Continue,
    /// Go on, but not into this directory.
    Prune,
    /// End the walk now.
    Stop,
}

/// Something the walk could not do, and where.
#[derive(Debug)]
pub struct WalkError {
    /// The object, as shown.
    pub path: PathBuf,
    /// What was being done.
    pub what: &'static str,
    /// The object was visited, but its entries could not be read (a directory that cannot be
    /// opened or listed); otherwise the object itself was not reached.
    pub listing: bool,
    /// Why it failed.
    pub error: std::io::Error,
}

impl std::fmt::Display for WalkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}: {}", self.path.display(), self.what, self.error)
    }
}

impl std::error::Error for WalkError {}

/// A directory the walk holds open: read for its entries, and the base of every call on them.
struct Dir {
    fd: OwnedFd,
    path: Box<[u8]>,
    key: Box<[u8]>,
}

enum Place {
    /// A directory, through the descriptor the walk read it with.
    Itself(Arc<Dir>),
    /// One name in a directory held open.
    In(Arc<Dir>, CString),
    /// A root that is not a directory the walk could open: its name in its parent, with the
    /// root's own path and key.
    Root {
        parent: Arc<Dir>,
        name: CString,
        path: Box<[u8]>,
        key: Box<[u8]>,
    },
}

/// One object of a walk.
pub struct Entry {
    place: Place,
    kind: FileKind,
}

/// `base` and `name` with one `/` between them.
fn join(base: &[u8], name: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(base.len() + 1 + name.len());
    v.extend_from_slice(base);
    if v.last() != Some(&b'/') {
        v.push(b'/');
    }
    v.extend_from_slice(name);
    v
}

impl Entry {
    /// Its type: from the listing, from fstatat where the listing gave none, or from the open
    /// that went into it.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// Its path, as shown: the root's path and the names below it.
    pub fn path(&self) -> PathBuf {
        let bytes: Cow<'_, [u8]> = match &self.place {
            Place::Itself(d) => Cow::Borrowed(&d.path),
            Place::In(d, n) => Cow::Owned(join(&d.path, n.to_bytes())),
            Place::Root { path, .. } => Cow::Borrowed(path),
        };
        PathBuf::from(OsStr::from_bytes(&bytes))
    }

    /// The path file_contexts is asked about: the root's key and the names below it.
    pub fn key(&self) -> Cow<'_, [u8]> {
        match &self.place {
            Place::Itself(d) => Cow::Borrowed(&d.key),
            Place::In(d, n) => Cow::Owned(join(&d.key, n.to_bytes())),
            Place::Root { key, .. } => Cow::Borrowed(key),
        }
    }

    /// The object for the label calls: a directory's own descriptor, or a name in the
    /// directory held open (never a path).
    pub fn object(&self) -> Object<'_> {
        match &self.place {
            Place::Itself(d) => Object::Fd(d.fd.as_fd()),
            Place::In(d, n)
            | Place::Root {
                parent: d, name: n, ..
            } => Object::At(d.fd.as_fd(), n),
        }
    }

    /// The descriptor of a directory the walk opened (to read it), for calls the label
    /// functions do not cover (a digest attribute, statfs); None for any other object.
    pub fn dir_fd(&self) -> Option<BorrowedFd<'_>> {
        match &self.place {
            Place::Itself(d) => Some(d.fd.as_fd()),
            _ => None,
        }
    }

    /// Its label (see [`xattr::read`]).
    pub fn read_label(&self, attrs: Attrs) -> std::io::Result<Option<String>> {
        xattr::read(self.object(), attrs)
    }

    /// Writes its label (see [`xattr::write`]); the attribute written.
    pub fn write_label(&self, context: &[u8], attrs: Attrs) -> Result<&'static str, Errno> {
        xattr::write(self.object(), context, attrs)
    }

    /// The directory whose descriptor this entry uses, to count the descriptors a batch
    /// keeps open.
    fn holder(&self) -> *const Dir {
        match &self.place {
            Place::Itself(d) | Place::In(d, _) | Place::Root { parent: d, .. } => Arc::as_ptr(d),
        }
    }
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

fn kind_of(t: FileType) -> FileKind {
    FileKind::from_mode(t.as_raw_mode())
}

fn bytes(p: &Path) -> Box<[u8]> {
    p.as_os_str().as_bytes().into()
}

/// What opening a root gave: the entry for the root itself, the directory to go into with its
/// device (None when the root is not a directory the walk could open), and an error to report
/// after the root's visit (a directory that could not be opened for reading).
type Opened = (Entry, Option<(Arc<Dir>, u64)>, Option<WalkError>);

/// Opens a root: its parent by path (followed), then its last component in that parent, not
/// followed.
fn open_root(root: &Root) -> Result<Opened, WalkError> {
    let p = &root.path;
    let fail = |what: &'static str, e: Errno| WalkError {
        path: p.clone(),
        what,
        listing: false,
        error: e.into(),
    };
    let Some(name) = p.file_name() else {
        // `/`, or a path ending in `..`: no name to refuse to follow; the directory as named.
        let fd = rfs::open(
            p,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| fail("opening", e))?;
        let dev = rfs::fstat(&fd)
            .map_err(|e| fail("reading the status", e))?
            .st_dev;
        let d = Arc::new(Dir {
            fd,
            path: bytes(p),
            key: root.key.clone().into(),
        });
        return Ok((
            Entry {
                place: Place::Itself(d.clone()),
                kind: FileKind::Dir,
            },
            Some((d, dev)),
            None,
        ));
    };
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let pflags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let pfd = match root.beneath.as_deref().filter(|b| *b != p.as_path()) {
        None => rfs::open(parent, pflags, Mode::empty()),
        Some(base) => {
            let rel = parent.strip_prefix(base).map_err(|_| WalkError {
                path: p.clone(),
                what: "opening",
                listing: false,
                error: std::io::Error::other(format!("not under {}", base.display())),
            })?;
            let rel = if rel.as_os_str().is_empty() {
                Path::new(".")
            } else {
                rel
            };
            let resolve =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            rfs::open(base, pflags, Mode::empty())
                .and_then(|b| rfs::openat2(&b, rel, pflags, Mode::empty(), resolve))
        }
    }
    .map_err(|e| fail("opening the parent directory", e))?;
    let name = CString::new(name.as_bytes()).map_err(|_| fail("naming", Errno::INVAL))?;
    let mut kind = kind_of(FileType::from_raw_mode(
        rfs::statat(&pfd, &name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| fail("reading the status", e))?
            .st_mode,
    ));
    let mut late = None;
    if kind == FileKind::Dir {
        match rfs::openat(&pfd, &name, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => {
                let dev = rfs::fstat(&fd)
                    .map_err(|e| fail("reading the status", e))?
                    .st_dev;
                let d = Arc::new(Dir {
                    fd,
                    path: bytes(p),
                    key: root.key.clone().into(),
                });
                return Ok((
                    Entry {
                        place: Place::Itself(d.clone()),
                        kind: FileKind::Dir,
                    },
                    Some((d, dev)),
                    None,
                ));
            }
            // Replaced since the fstatat: whatever is there now, not followed.
            Err(Errno::LOOP | Errno::NOTDIR) => {
                kind = kind_of(FileType::from_raw_mode(
                    rfs::statat(&pfd, &name, AtFlags::SYMLINK_NOFOLLOW)
                        .map_err(|e| fail("reading the status", e))?
                        .st_mode,
                ));
            }
            Err(e) => {
                late = Some(WalkError {
                    listing: true,
                    ..fail("opening the directory", e)
                })
            }
        }
    }
    let parent = Arc::new(Dir {
        fd: pfd,
        path: bytes(parent),
        key: Box::default(),
    });
    Ok((
        Entry {
            place: Place::Root {
                parent,
                name,
                path: bytes(p),
                key: root.key.clone().into(),
            },
            kind,
        },
        None,
        late,
    ))
}

/// A directory's entries (not `.` and `..`), with the types the listing gives.
fn list(
    dir: &Dir,
    buf: &mut [MaybeUninit<u8>],
    sorted: bool,
) -> Result<Vec<(CString, FileType)>, Errno> {
    let mut out = Vec::new();
    let mut rd = RawDir::new(&dir.fd, buf);
    while let Some(e) = rd.next() {
        let e = e?;
        let n = e.file_name();
        if n == c"." || n == c".." {
            continue;
        }
        out.push((n.to_owned(), e.file_type()));
    }
    if sorted {
        out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    }
    Ok(out)
}

/// A directory being walked: its entries and how far the walk is.
struct Frame {
    dir: Arc<Dir>,
    names: Option<Vec<(CString, FileType)>>,
    next: usize,
}

/// The walk itself, on the calling thread: every object of every root, in pre-order, given to
/// `visit`; what fails to `fail`. Either may stop it.
fn run(
    roots: &[Root],
    opts: Options,
    visit: &mut dyn FnMut(Entry) -> Flow,
    fail: &mut dyn FnMut(WalkError) -> Flow,
) {
    // getdents' buffer, reused by every listing (a name is at most 255 bytes).
    let mut buf = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
    for root in roots {
        let (entry, descend, late) = match open_root(root) {
            Ok(o) => o,
            Err(e) => {
                if fail(e) == Flow::Stop {
                    return;
                }
                continue;
            }
        };
        let flow = visit(entry);
        // Entries that could not be read matter only to a walk that was to go into them.
        if let Some(e) = late.filter(|_| flow == Flow::Continue) {
            if fail(e) == Flow::Stop {
                return;
            }
        }
        match flow {
            Flow::Stop => return,
            Flow::Prune => continue,
            Flow::Continue => {}
        }
        let Some((top, dev)) = descend else { continue };
        if descend_into(top, dev, opts, &mut buf, visit, fail) == Flow::Stop {
            return;
        }
    }
}

/// Every object below directory `top` (on device `dev`), in pre-order; [`Flow::Stop`] when a
/// callback stopped the walk.
fn descend_into(
    top: Arc<Dir>,
    dev: u64,
    opts: Options,
    buf: &mut [MaybeUninit<u8>],
    visit: &mut dyn FnMut(Entry) -> Flow,
    fail: &mut dyn FnMut(WalkError) -> Flow,
) -> Flow {
    let mut stack = vec![Frame {
        dir: top,
        names: None,
        next: 0,
    }];
    while let Some(frame) = stack.last_mut() {
        let names = match &mut frame.names {
            Some(n) => n,
            None => match list(&frame.dir, buf, opts.sorted) {
                Ok(n) => frame.names.insert(n),
                Err(e) => {
                    let path = PathBuf::from(OsStr::from_bytes(&frame.dir.path));
                    stack.pop();
                    if fail(WalkError {
                        path,
                        what: "reading the directory",
                        listing: true,
                        error: e.into(),
                    }) == Flow::Stop
                    {
                        return Flow::Stop;
                    }
                    continue;
                }
            },
        };
        let Some(slot) = names.get_mut(frame.next) else {
            stack.pop();
            continue;
        };
        frame.next += 1;
        let (name, t) = (std::mem::take(&mut slot.0), slot.1);
        let dir = frame.dir.clone();
        let (flow, child) = step(dir, name, t, opts, dev, visit, fail);
        if flow == Flow::Stop {
            return Flow::Stop;
        }
        if let Some(c) = child {
            stack.push(Frame {
                dir: c,
                names: None,
                next: 0,
            });
        }
    }
    Flow::Continue
}

/// Walks the tree of directory `dir`, a descriptor the caller opened (for reading: getdents
/// needs it) by whatever means it trusts, as [`walk`] walks a root: `dir` itself is visited
/// first, as `path` (shown) and `key` (looked up), then everything below it. Nothing is
/// resolved by path, not even the root: for a caller holding a directory from openat2 with
/// RESOLVE_BENEATH, or from a descriptor passed to it.
pub fn walk_fd(
    dir: OwnedFd,
    path: &Path,
    key: &[u8],
    opts: Options,
    visit: &mut dyn FnMut(Entry) -> Flow,
    fail: &mut dyn FnMut(WalkError) -> Flow,
) {
    let dev = match rfs::fstat(&dir) {
        Ok(st) => st.st_dev,
        Err(e) => {
            fail(WalkError {
                path: path.to_path_buf(),
                what: "reading the status",
                listing: false,
                error: e.into(),
            });
            return;
        }
    };
    let top = Arc::new(Dir {
        fd: dir,
        path: bytes(path),
        key: key.into(),
    });
    let root = Entry {
        place: Place::Itself(top.clone()),
        kind: FileKind::Dir,
    };
    if visit(root) != Flow::Continue {
        return;
    }
    let mut buf = vec![MaybeUninit::<u8>::uninit(); 64 * 1024];
    descend_into(top, dev, opts, &mut buf, visit, fail);
}

/// One name of a listing: its type (fstatat where the listing has none), visited; a directory
/// opened first, without following a link, and returned when the walk is to go into it.
fn step(
    dir: Arc<Dir>,
    name: CString,
    listed: FileType,
    opts: Options,
    dev: u64,
    visit: &mut dyn FnMut(Entry) -> Flow,
    fail: &mut dyn FnMut(WalkError) -> Flow,
) -> (Flow, Option<Arc<Dir>>) {
    let path = |dir: &Dir, name: &CStr| {
        PathBuf::from(OsStr::from_bytes(&join(&dir.path, name.to_bytes())))
    };
    let stat_kind = |dir: &Dir, name: &CStr| {
        rfs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW)
            .map(|st| kind_of(FileType::from_raw_mode(st.st_mode)))
    };
    let kind = if listed == FileType::Unknown {
        match stat_kind(&dir, &name) {
            Ok(k) => k,
            Err(e) => {
                return (
                    fail(WalkError {
                        path: path(&dir, &name),
                        what: "reading the status",
                        listing: false,
                        error: e.into(),
                    }),
                    None,
                )
            }
        }
    } else {
        kind_of(listed)
    };
    if kind != FileKind::Dir {
        return (
            visit(Entry {
                place: Place::In(dir, name),
                kind,
            }),
            None,
        );
    }
    match rfs::openat(&dir.fd, &name, DIR_FLAGS, Mode::empty()) {
        Ok(fd) => {
            let other_fs = match opts.one_fs.then(|| rfs::fstat(&fd)) {
                None => false,
                Some(Ok(st)) => st.st_dev != dev,
                Some(Err(e)) => {
                    return (
                        fail(WalkError {
                            path: path(&dir, &name),
                            what: "reading the status",
                            listing: false,
                            error: e.into(),
                        }),
                        None,
                    )
                }
            };
            let child = Arc::new(Dir {
                fd,
                path: join(&dir.path, name.to_bytes()).into(),
                key: join(&dir.key, name.to_bytes()).into(),
            });
            match visit(Entry {
                place: Place::Itself(child.clone()),
                kind: FileKind::Dir,
            }) {
                Flow::Continue if !other_fs => (Flow::Continue, Some(child)),
                Flow::Continue | Flow::Prune => (Flow::Continue, None),
                Flow::Stop => (Flow::Stop, None),
            }
        }
        // Replaced since the listing (by a link, a file): what is there now, not followed.
        Err(Errno::LOOP | Errno::NOTDIR) => match stat_kind(&dir, &name) {
            Ok(kind) => (
                visit(Entry {
                    place: Place::In(dir, name),
                    kind,
                }),
                None,
            ),
            Err(e) => (
                fail(WalkError {
                    path: path(&dir, &name),
                    what: "reading the status",
                    listing: false,
                    error: e.into(),
                }),
                None,
            ),
        },
        Err(Errno::NOENT) => (
            fail(WalkError {
                path: path(&dir, &name),
                what: "opening the directory",
                listing: false,
                error: Errno::NOENT.into(),
            }),
            None,
        ),
        // Unreadable (no permission, no descriptor left): labelled by its name, its entries
        // not reached, and said so.
        Err(e) => {
            let p = path(&dir, &name);
            match visit(Entry {
                place: Place::In(dir, name),
                kind,
            }) {
                Flow::Continue => (
                    fail(WalkError {
                        path: p,
                        what: "opening the directory",
                        listing: true,
                        error: e.into(),
                    }),
                    None,
                ),
                flow => (flow, None),
            }
        }
    }
}

/// Walks `roots` on the calling thread, giving each object to `visit` in pre-order (each
/// directory before its entries); what cannot be read or opened goes to `fail`. A directory
/// is visited through the descriptor the walk reads it with, after it is opened.
pub fn walk(
    roots: &[Root],
    opts: Options,
    visit: &mut dyn FnMut(Entry) -> Flow,
    fail: &mut dyn FnMut(WalkError) -> Flow,
) {
    run(roots, opts, visit, fail)
}

/// Entries a batch carries at most.
const BATCH: usize = 256;

/// Raises this process's soft limit on open descriptors to its hard limit: a deep tree keeps
/// its open ancestors, and [`walk_parallel`]'s queue keeps its batches' directories.
pub fn raise_fd_limit() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let r = getrlimit(Resource::Nofile);
    if r.current != r.maximum {
        // A hard limit the kernel will not give as a soft one (infinity above nr_open) leaves
        // the soft one as it was; the walk then keeps its batches smaller.
        let _ = setrlimit(
            Resource::Nofile,
            Rlimit {
                current: r.maximum,
                maximum: r.maximum,
            },
        );
    }
}

/// How many directories one batch may keep open, so that every batch that can be alive at
/// once (`alive`) holds at most half the soft descriptor limit; the other half is for the open
/// ancestors and the rest of the process.
fn dirs_per_batch(alive: usize) -> usize {
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(u64::MAX);
    usize::try_from(limit / 2)
        .unwrap_or(usize::MAX)
        .checked_div(alive.max(1))
        .unwrap_or(1)
        .clamp(1, 64)
}

/// Walks `roots` on the calling thread and runs `work` on every object from `threads` threads,
/// in batches through a bounded queue; what `work` returns is gathered, with the number of
/// objects walked. `fail` hears what the walk could not read; `progress` each batch's size.
pub fn walk_parallel<R: Send>(
    roots: &[Root],
    opts: Options,
    threads: usize,
    work: &(dyn Fn(&Entry) -> Option<R> + Sync),
    fail: &mut dyn FnMut(WalkError),
    progress: &mut dyn FnMut(u64),
) -> (Vec<R>, u64) {
    let threads = threads.max(1);
    let queued = threads * 4;
    // Batches alive at once: the queue's, one a worker, the one being filled.
    let max_dirs = dirs_per_batch(queued + threads + 1);
    let (tx, rx) = mpsc::sync_channel::<Vec<Entry>>(queued);
    let rx = Mutex::new(rx);
    let mut walked = 0u64;
    let results = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut got = Vec::new();
                    loop {
                        let batch = match rx.lock() {
                            Ok(r) => r.recv(),
                            Err(_) => break,
                        };
                        let Ok(batch) = batch else { break };
                        got.extend(batch.iter().filter_map(work));
                    }
                    got
                })
            })
            .collect();
        let mut batch: Vec<Entry> = Vec::with_capacity(BATCH);
        let (mut dirs, mut last) = (0usize, std::ptr::null::<Dir>());
        let mut visit = |e: Entry| {
            if e.holder() != last {
                last = e.holder();
                dirs += 1;
            }
            batch.push(e);
            walked += 1;
            if batch.len() >= BATCH || dirs >= max_dirs {
                progress(batch.len() as u64);
                (dirs, last) = (0, std::ptr::null());
                if tx
                    .send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)))
                    .is_err()
                {
                    return Flow::Stop;
                }
            }
            Flow::Continue
        };
        run(roots, opts, &mut visit, &mut |e| {
            fail(e);
            Flow::Continue
        });
        if !batch.is_empty() {
            progress(batch.len() as u64);
            let _ = tx.send(batch);
        }
        drop(tx);
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    (results, walked)
}

#[cfg(test)]
mod tests;
