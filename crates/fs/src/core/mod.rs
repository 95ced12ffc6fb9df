//! The enforcing passthrough, knowing nothing of FUSE: each operation is what one request of
//! the kernel's FUSE client asks, and runs the hooks the kernel's SELinux module runs for the
//! system call behind it, in the kernel's order, then the system call on the backing tree.
//! A refused operation never touches the backing tree.
//!
//! How FUSE requests map to system calls, and what cannot be told apart:
//! - the kernel asks LOOKUP for every path component (entry timeout 0), so the search check
//!   of a walk is made in [`Core::lookup`] on the directory looked in (may_lookup);
//! - with `default_permissions` and an attribute timeout of 0 the kernel refreshes attributes
//!   with GETATTR before its own DAC checks, and such a GETATTR cannot be told from stat(2)'s:
//!   both are checked as stat(2) (`{getattr}`), so a caller allowed to search a directory but
//!   not to get its attributes is refused where a kernel would let it walk (fail closed);
//! - open flags carry __FMODE_EXEC for an exec, which asks `{execute}` (may_open with
//!   MAY_EXEC); the transition an exec makes is the kernel's, not ours;
//! - every open file is opened for direct I/O, so each read(2) and write(2) is a request and
//!   is checked (with the revalidation skip, as selinux_file_permission).
//!
//! The backing tree is reached only through descriptors ([`crate::backing`]): each node holds
//! one of its inode, names are resolved one component at a time beneath their parent's, and
//! no path string is ever resolved. The caller's kernel holds the directory locks across a
//! create, unlink or rename through the mount, so a name cannot change under one request made
//! there; what is changed around the mount, directly on the backing tree, can only make an
//! operation act on another object inside the tree, never on one outside it.

pub mod attrs;
mod entries;
#[allow(unsafe_code)] // the ioctls passed to the backing file
mod files;
mod fscreate;
mod state;
pub mod store;

use std::io::Write;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use rustc_hash::FxHashMap;
use seaccess_engine::{AuditSink, AuditTarget, Engine};
use seaccess_objmgr::hooks::fs::MountOpts;
use seaccess_objmgr::{FileSec, Labeling, ObjectManager, SuperSec, Task};
use seaccess_security::SecurityServer;
use seaccess_types::{lock, Sid};

use crate::backing::{Backing, Stat};
use crate::callers::{Caller, Callers};
use crate::error::{FsError, Result};
use crate::nodes::{Label, Node, Nodes, Origin};

pub use crate::request::{DirEntry, Handle, Labels, Req};
pub use state::Options;
pub use store::Store;

impl Handle {
    fn fsec(&self) -> seaccess_objmgr::Result<&FileSec> {
        self.fsec.as_ref().ok_or_else(|| {
            seaccess_objmgr::ObjmgrError::Invalid("a file opened without checks".into())
        })
    }
}

/// The mount's core.
pub struct Core {
    opts: Options,
    /// The policy, the cache and the object manager; `server` and `om` are its own.
    engine: Engine,
    /// Where the engine's records go (`--audit-log`).
    audit: Arc<AuditSink>,
    server: Arc<SecurityServer>,
    om: Arc<ObjectManager>,
    sb: Arc<SuperSec>,
    labels: ArcSwap<Labels>,
    /// The attribute labels are kept in.
    store: Store,
    /// /proc/self/fd, for what acts on a node through its magic link.
    backing: Backing,
    /// Node descriptors the process keeps at most (see [`crate::hot`] and [`Core::to_forget`]).
    node_fds: usize,
    callers: Callers,
    nodes: Nodes,
    handles: Mutex<FxHashMap<u64, Arc<Handle>>>,
    next_fh: AtomicU64,
    /// Every caller of a mount without checks.
    unchecked: Arc<Caller>,
    /// Lock requests waiting for a lock (SETLKW).
    waits: crate::locks::Waits,
    /// Each uid's share of the server's descriptors for open files, and each open file's
    /// place in it (by file handle).
    budget: crate::budget::Budget,
    slots: Mutex<FxHashMap<u64, crate::budget::Slot>>,
}

impl Core {
    /// Loads the policy, file_contexts, subjects and booleans, opens SOURCE and labels the
    /// root. Any file or option that cannot be used is an error here: nothing is mounted.
    /// Call it before mounting: SOURCE is held from here on, so a tree mounted over itself is
    /// reached beneath its mount.
    pub fn new(opts: Options) -> Result<Core> {
        Core::with_pool(opts, crate::hot::Hot::process())
    }

    /// [`Core::new`] with its node descriptors counted in `hot` (the process's pool in
    /// production; a test's own, so that tests running at once do not share a budget).
    pub(crate) fn with_pool(opts: Options, hot: Arc<crate::hot::Hot>) -> Result<Core> {
        let store = Store::choose(&opts)?;
        let root = crate::backing::open_root(&opts.source).map_err(|e| FsError::Config {
            what: format!("{}: {e}", opts.source.display()),
        })?;
        let backing = Backing::new().map_err(|e| FsError::Config {
            what: format!("/proc/self/fd: {e}"),
        })?;
        // Node descriptors: half of what the process may have (the rest for open files, the
        // FUSE channels and the process's own), shared by every mount of the process.
        let limit = crate::backing::raise_nofile().map_err(|e| FsError::Config {
            what: format!("raising RLIMIT_NOFILE: {e}"),
        })?;
        let node_fds = opts
            .max_node_fds
            .unwrap_or(usize::try_from(limit / 2).unwrap_or(usize::MAX))
            .max(1);
        let (tree, pinned) = crate::hot::Tree::new(root.as_fd(), &backing, hot, node_fds);
        let config = |e: seaccess_engine::EngineError| FsError::Config {
            what: e.to_string(),
        };
        let engine = Engine::builder()
            .enforcing(!opts.permissive)
            .object_manager(true)
            .open(&opts.policy)
            .map_err(config)?;
        let server = engine.server().clone();
        let om = engine.object_manager().map_err(config)?.clone();
        om.fast_paths().set_all(opts.fast_paths);
        // The backing tree keeps labels in extended attributes: the ext4 behaviour of the
        // policy's fs_use_xattr.
        let sb = om
            .mount("fuse", "ext4", &MountOpts::default())
            .map_err(|e| FsError::Config {
                what: format!("{}: {e}", opts.policy.display()),
            })?;
        if sb.labeling != Labeling::Xattr {
            return Err(FsError::Config {
                what: format!(
                    "{}: the policy has no fs_use_xattr ext4, so files cannot carry labels",
                    opts.policy.display()
                ),
            });
        }
        let audit =
            Arc::new(AuditSink::open(&AuditTarget::of(opts.audit_log.as_ref())).map_err(config)?);
        let sink = audit.clone();
        engine.set_audit(move |r| sink.avc(r));
        let labels = state::read(&opts, &engine)?.labels(&opts, &server)?;
        state::apply_booleans(&opts, &engine)?;
        let core = Core {
            opts,
            engine,
            audit,
            server,
            om,
            sb,
            labels: ArcSwap::from_pointee(labels),
            store,
            backing,
            node_fds,
            callers: Callers::new(),
            nodes: Nodes::new(tree),
            handles: Mutex::new(FxHashMap::default()),
            next_fh: AtomicU64::new(1),
            unchecked: Arc::new(Caller::fixed(Task::new(
                0,
                "unchecked",
                seaccess_objmgr::Cred::new(Sid::NULL),
            ))),
            waits: crate::locks::Waits::new(),
            budget: crate::budget::Budget::new(node_fds),
            slots: Mutex::new(FxHashMap::default()),
        };
        if core.opts.checks {
            crate::who::warn_forgeable(&core.labels.load(), &|m| core.log(m));
        }
        if let Some(why) = pinned {
            core.log(&format!(
                "{}: {why}; above {node_fds} the kernel is asked to forget the least used",
                core.opts.source.display()
            ));
        }
        let st = crate::backing::stat(root.as_fd())?;
        core.nodes
            .get_or_make(root, &st, "", true, |id, fd| core.label(id, "", fd, &st));
        Ok(core)
    }

    /// The labels in force (tests look at them).
    #[cfg(test)]
    pub(crate) fn labels(&self) -> Arc<Labels> {
        self.labels.load_full()
    }

    /// The node table (tests look at it).
    #[cfg(test)]
    pub(crate) fn nodes(&self) -> &Nodes {
        &self.nodes
    }

    /// The attribute labels are kept in on the backing tree.
    pub fn store(&self) -> Store {
        self.store
    }

    /// Whether this mount's nodes keep their descriptors for life (its file system gives no
    /// file handles): then only [`Core::to_forget`] bounds them.
    pub fn pins_nodes(&self) -> bool {
        !self.nodes.has_handles()
    }

    /// The nodes the kernel should be asked to forget (FUSE_NOTIFY_PRUNE), the least recently
    /// used pinned ones, when more than the node descriptor budget are alive: the kernel keeps
    /// the inodes it looked up until memory runs short, and a pinned node cannot give up its
    /// descriptor (one with a handle is cooled instead, see [`crate::hot`]), so without this a
    /// tree without handles walked far enough uses up the process's descriptors. Down to
    /// three quarters of the budget; call it every so often (each call starts a new epoch of
    /// use).
    pub fn to_forget(&self) -> Vec<u64> {
        self.nodes
            .least_used(Nodes::pinned(), self.node_fds, self.node_fds / 4 * 3)
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    pub fn object_manager(&self) -> &ObjectManager {
        &self.om
    }

    pub fn server(&self) -> &Arc<SecurityServer> {
        &self.server
    }

    /// How many callers and nodes are known.
    pub fn sizes(&self) -> (usize, usize) {
        (self.callers.len(), self.nodes.len())
    }

    /// Reloads the policy, file_contexts, subjects and booleans (SIGHUP). All are read and
    /// checked first; if any fails nothing changes and the error says which. Then the policy
    /// is replaced (one step for every check), callers are forgotten so their credentials
    /// follow the new subjects, and labels that did not come from the files themselves are
    /// computed again.
    pub fn reload(&self) -> Result<()> {
        let config = |e: seaccess_engine::EngineError| FsError::Config {
            what: e.to_string(),
        };
        // Read and checked before anything changes, so that a policy whose contexts the new
        // subjects or booleans do not fit leaves the running one untouched. The candidate
        // gives no SID: those come from the live server once the policy is loaded.
        let candidate = self
            .engine
            .candidate_file(&self.opts.policy)
            .map_err(config)?;
        let files = state::read(&self.opts, &candidate)?;
        self.engine.reload_candidate(candidate).map_err(config)?;
        let labels = files.labels(&self.opts, &self.server)?;
        state::apply_booleans(&self.opts, &self.engine)?;
        self.labels.store(Arc::new(labels));
        self.callers.clear();
        for n in self.nodes.all() {
            if n.origin() == Origin::Computed || n.closed().is_some() {
                // A cold node is opened again for it (a node whose inode is gone keeps its label).
                let Ok(fd) = n.fd() else { continue };
                if let Ok(st) = crate::backing::stat(fd.as_fd()) {
                    let l = self.label(n.id, &n.path(), fd.as_fd(), &st);
                    n.sec.set_sid(l.sec.sid());
                    n.set_origin(l.origin);
                    n.set_closed(l.closed);
                }
            }
        }
        Ok(())
    }

    /// Writes a line to standard error (what is not an AVC record: a closed node, a reload).
    pub fn log(&self, msg: &str) {
        let _ = writeln!(std::io::stderr(), "seaccess mount: {msg}");
    }

    /// What to say at unmount if the system log or the kernel audit did not take records
    /// ([`AuditSink::lost_note`]).
    pub fn audit_lost_note(&self) -> Option<String> {
        self.audit.lost_note()
    }

    /// The path callers see, for `path=` in audit records.
    fn shown(&self, rel: &str) -> String {
        let m = self.opts.mountpoint.to_string_lossy();
        if rel.is_empty() {
            m.into_owned()
        } else {
            format!("{}/{rel}", m.trim_end_matches('/'))
        }
    }

    /// A hook's answer; on a mount without checks (a benchmark's baseline) no hook runs.
    #[inline]
    fn gate(&self, hook: impl FnOnce() -> seaccess_objmgr::Result<()>) -> Result<()> {
        if self.opts.checks {
            hook()?;
        }
        Ok(())
    }

    /// The open check's blob (none without checks).
    #[inline]
    fn open_check(
        &self,
        hook: impl FnOnce() -> seaccess_objmgr::Result<FileSec>,
    ) -> Result<Option<FileSec>> {
        if self.opts.checks {
            return Ok(Some(hook()?));
        }
        Ok(None)
    }

    /// The caller `req` names, or why it is refused (see [`crate::callers`] and [`crate::who`]).
    fn caller(&self, req: Req) -> Result<Arc<Caller>> {
        if !self.opts.checks {
            return Ok(self.unchecked.clone());
        }
        if req.pid == 0 {
            return Err(FsError::Closed("a request with no calling process".into()));
        }
        let labels = self.labels.load();
        let compute =
            || crate::who::compute(&labels, &self.server, &self.callers, req, &|m| self.log(m));
        // Only an exec changes what exe= and transition rules read; the rest the request carries.
        let c = if labels.reads_exe {
            self.callers.get(req, compute)
        } else {
            self.callers.get_by_ids(req, compute)
        };
        if let Err(why) = &c.who {
            return Err(FsError::Closed(why.clone()));
        }
        Ok(c)
    }

    /// The node `id`, refused if its label could not be given.
    fn node(&self, id: u64) -> Result<Arc<Node>> {
        let n = self
            .nodes
            .get(id)
            .ok_or_else(|| FsError::errno_of(libc::ESTALE, format!("node {id} is not known")))?;
        if let Some(why) = n.closed() {
            return Err(FsError::Closed(format!("{}: {why}", self.shown(&n.path()))));
        }
        Ok(n)
    }

    /// The label of the backing inode `fd` (attributes `st`) at node path `rel`: its store
    /// attribute, else file_contexts for PREFIX/`rel`, else the policy's `file` initial SID
    /// (inode_doinit_with_dentry). An attribute that cannot be read, or a context the policy
    /// does not know, closes the node.
    fn label(&self, id: u64, rel: &str, fd: BorrowedFd<'_>, st: &Stat) -> Label {
        let abs = format!("/{rel}");
        let mode = u32::from(st.stx_mode);
        let mk = |ctx: Option<&str>| self.om.inode_init(&self.sb, id, mode, &abs, ctx);
        if !self.opts.checks {
            return Label {
                sec: mk(None),
                origin: Origin::Computed,
                closed: None,
            };
        }
        let closed = |why: String| Label {
            sec: mk(None),
            origin: Origin::Xattr,
            closed: Some(why),
        };
        match self.read_label(fd) {
            Err(e) => return closed(format!("its label cannot be read: {e}")),
            Ok(Some(ctx)) => {
                return match self.server.context_to_sid(&ctx) {
                    Ok(_) => Label {
                        sec: mk(Some(&ctx)),
                        origin: Origin::Xattr,
                        closed: None,
                    },
                    Err(e) => closed(format!(
                        "its label {ctx:?} is not a context of the policy: {e}"
                    )),
                };
            }
            Ok(None) => {}
        }
        let labels = self.labels.load();
        if let Some(fc) = &labels.file_contexts {
            let prefix = self.opts.path_prefix.to_string_lossy();
            let key = if rel.is_empty() {
                prefix.to_string()
            } else {
                format!("{}/{rel}", prefix.trim_end_matches('/'))
            };
            match fc.context(key.as_bytes(), seaccess_label::FileKind::from_mode(mode)) {
                Err(e) => {
                    return Label {
                        sec: mk(None),
                        origin: Origin::Computed,
                        closed: Some(format!("file_contexts: {e}")),
                    }
                }
                Ok(Some(ctx)) => {
                    return match self.server.context_to_sid(ctx) {
                        Ok(_) => Label {
                            sec: mk(Some(ctx)),
                            origin: Origin::Computed,
                            closed: None,
                        },
                        Err(e) => Label {
                            sec: mk(None),
                            origin: Origin::Computed,
                            closed: Some(format!(
                                "file_contexts gives {ctx:?}, not a context of the policy: {e}"
                            )),
                        },
                    };
                }
                Ok(None) => {}
            }
        }
        Label {
            sec: mk(None),
            origin: Origin::Computed,
            closed: None,
        }
    }

    /// The label in the store attribute of the inode `fd` holds, without the C string's NUL
    /// (None when it has none). A value that is not UTF-8 is an error, never a guess.
    fn read_label(&self, fd: BorrowedFd<'_>) -> std::io::Result<Option<String>> {
        let mut v = match self.backing.get_xattr(fd, self.store.name()) {
            Ok(v) => v,
            // No label there, or a file system that keeps no such attribute.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENODATA | libc::EOPNOTSUPP)) => {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        while v.last() == Some(&0) {
            v.pop();
        }
        String::from_utf8(v).map(Some).map_err(|_| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, "the label is not UTF-8")
        })
    }

    /// Writes `sid`'s context to the store attribute of the inode `fd` holds (with its NUL,
    /// as lsetfilecon).
    fn store_label(&self, fd: BorrowedFd<'_>, sid: Sid) -> Result<()> {
        let ctx = self
            .server
            .sid_to_context(sid)
            .map_err(|e| FsError::Closed(e.to_string()))?;
        let mut v = ctx.into_bytes();
        v.push(0);
        Ok(self.backing.set_xattr(fd, self.store.name(), &v, 0)?)
    }

    fn new_fh(&self, h: Handle, slot: crate::budget::Slot) -> u64 {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        lock(&self.handles).insert(fh, Arc::new(h));
        lock(&self.slots).insert(fh, slot);
        fh
    }

    fn handle(&self, fh: u64) -> Result<Arc<Handle>> {
        lock(&self.handles)
            .get(&fh)
            .cloned()
            .ok_or_else(|| FsError::errno_of(libc::EBADF, format!("file handle {fh} is not open")))
    }

    /// The kernel dropped `n` lookups of node `id`.
    pub fn forget(&self, id: u64, n: u64) {
        self.nodes.forget(id, n);
    }

    /// A child's node path.
    fn child(parent: &str, name: &str) -> String {
        if parent.is_empty() {
            name.to_string()
        } else {
            format!("{parent}/{name}")
        }
    }

    /// The node of `name` in `dir` as it is now on the backing tree (resolved beneath `dir`'s
    /// descriptor; made, labelled, if the kernel never looked it up), and its attributes;
    /// `lookup` counts a kernel lookup. Not refused when closed: the caller decides.
    fn resolve_child(
        &self,
        dir: &Arc<Node>,
        name: &str,
        lookup: bool,
    ) -> Result<(Arc<Node>, Stat)> {
        let fd = crate::backing::resolve(dir.fd()?.as_fd(), name)?;
        let st = crate::backing::stat(fd.as_fd())?;
        let rel = Core::child(&dir.path(), name);
        let n = self.nodes.get_or_make(fd, &st, &rel, lookup, |id, fd| {
            self.label(id, &rel, fd, &st)
        });
        Ok((n, st))
    }

    /// The node of `name` in `dir` as it is now on the backing tree, refused if closed.
    fn existing(&self, dir: &Arc<Node>, name: &str) -> Result<(Arc<Node>, Stat)> {
        let (n, st) = self.resolve_child(dir, name, false)?;
        if let Some(why) = n.closed() {
            return Err(FsError::Closed(format!("{}: {why}", self.shown(&n.path()))));
        }
        Ok((n, st))
    }
}
