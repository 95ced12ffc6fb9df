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

pub mod attrs;
mod entries;
mod files;
mod state;

use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use rustc_hash::FxHashMap;
use seaccess_avc::{Avc, DEFAULT_CAPACITY};
use seaccess_objmgr::hooks::fs::MountOpts;
use seaccess_objmgr::{FileSec, Labeling, ObjectManager, SuperSec, Task};
use seaccess_security::SecurityServer;
use seaccess_types::{lock, Sid};

use crate::callers::{Caller, Callers};
use crate::error::{FsError, Result};
use crate::nodes::{Label, Node, Nodes, Origin};

pub use state::{Labels, Options};

/// The attribute new labels are written to, and the fallback read after it.
pub use seaccess_label::xattr::{SECURITY as XATTR_SECURITY, USER as XATTR_USER};

/// Who makes a request: the calling thread and its filesystem user and group ids, as FUSE
/// gives them.
#[derive(Debug, Clone, Copy)]
pub struct Req {
    pub pid: u32,
    pub uid: u32,
    pub gid: u32,
}

/// An open file or directory of the mount.
pub struct Handle {
    pub node: Arc<Node>,
    /// The open's blob (none on a mount without checks).
    pub fsec: Option<FileSec>,
    pub file: std::fs::File,
    /// Its path as the caller opened it, for audit records (the kernel's f_path).
    pub shown: String,
    /// A directory's entries, read at the first readdir.
    pub entries: Mutex<Option<Vec<DirEntry>>>,
}

impl Handle {
    fn fsec(&self) -> seaccess_objmgr::Result<&FileSec> {
        self.fsec.as_ref().ok_or_else(|| seaccess_objmgr::ObjmgrError::Invalid("a file opened without checks".into()))
    }
}

/// A directory entry as readdir gives it.
#[derive(Debug, Clone)]
pub struct DirEntry {
    pub ino: u64,
    pub mode: u32,
    pub name: std::ffi::OsString,
}

/// Where AVC records go: the audit log file in audit.log's format, or standard error.
struct AuditSink {
    file: Mutex<Option<std::fs::File>>,
    serial: AtomicU64,
}

impl AuditSink {
    fn write(&self, record: &str) {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        let n = self.serial.fetch_add(1, Ordering::Relaxed) + 1;
        // AVC records, and the SELINUX_ERR ones (an invalid context, a validatetrans failure).
        let kind = if record.starts_with("avc:") { "AVC" } else { "SELINUX_ERR" };
        let line = format!("type={kind} msg=audit({}.{:03}:{n}): {record}\n", now.as_secs(), now.subsec_millis());
        let mut f = lock(&self.file);
        let ok = f.as_mut().map(|f| f.write_all(line.as_bytes()).is_ok());
        if ok != Some(true) {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
    }
}

/// The mount's core.
pub struct Core {
    opts: Options,
    server: Arc<SecurityServer>,
    om: ObjectManager,
    sb: Arc<SuperSec>,
    labels: ArcSwap<Labels>,
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
    /// Loads the policy, file_contexts, subjects and booleans and labels the root. Any file
    /// that cannot be used is an error here: nothing is mounted.
    pub fn new(opts: Options) -> Result<Core> {
        let bytes = std::fs::read(&opts.policy).map_err(|e| FsError::Config { what: format!("{}: {e}", opts.policy.display()) })?;
        let server = Arc::new(SecurityServer::from_bytes(&bytes).map_err(|e| FsError::Config { what: format!("{}: {e}", opts.policy.display()) })?);
        let avc = Arc::new(Avc::new(server.clone(), DEFAULT_CAPACITY));
        avc.follow(&*server).keep();
        avc.set_enforcing(!opts.permissive);
        let om = ObjectManager::new(server.clone(), &*server, avc.clone());
        om.fast_paths().set_all(opts.fast_paths);
        // The backing tree keeps labels in extended attributes: the ext4 behaviour of the
        // policy's fs_use_xattr.
        let sb = om.mount("fuse", "ext4", &MountOpts::default()).map_err(|e| FsError::Config { what: format!("{}: {e}", opts.policy.display()) })?;
        if sb.labeling != Labeling::Xattr {
            return Err(FsError::Config { what: format!("{}: the policy has no fs_use_xattr ext4, so files cannot carry labels", opts.policy.display()) });
        }
        let file = match &opts.audit_log {
            Some(p) => Some(
                std::fs::OpenOptions::new().create(true).append(true).open(p).map_err(|e| FsError::Config { what: format!("{}: {e}", p.display()) })?,
            ),
            None => None,
        };
        let sink = Arc::new(AuditSink { file: Mutex::new(file), serial: AtomicU64::new(0) });
        avc.set_audit_callback(move |r| sink.write(r));
        let labels = state::load(&opts, &server)?;
        state::apply_booleans(&opts, &server)?;
        let core = Core {
            opts,
            server,
            om,
            sb,
            labels: ArcSwap::from_pointee(labels),
            callers: Callers::new(),
            nodes: Nodes::default(),
            handles: Mutex::new(FxHashMap::default()),
            next_fh: AtomicU64::new(1),
            unchecked: Arc::new(Caller::fixed(Task::new(0, "unchecked", seaccess_objmgr::Cred::new(Sid::NULL)))),
            waits: crate::locks::Waits::new(),
            budget: crate::budget::Budget::new(),
            slots: Mutex::new(FxHashMap::default()),
        };
        if core.opts.checks {
            crate::who::warn_forgeable(&core.labels.load(), &|m| core.log(m));
        }
        let meta = std::fs::symlink_metadata(&core.opts.source)?;
        if !meta.is_dir() {
            return Err(FsError::Config { what: format!("{}: not a directory", core.opts.source.display()) });
        }
        core.nodes.get_or_make(&meta, "", true, |id| core.label(id, "", &meta));
        Ok(core)
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
        let bytes = std::fs::read(&self.opts.policy).map_err(|e| FsError::Config { what: format!("{}: {e}", self.opts.policy.display()) })?;
        // Checked on a scratch server first, so that a policy whose contexts the new subjects
        // or booleans do not fit leaves the running one untouched.
        let scratch = SecurityServer::from_bytes(&bytes).map_err(|e| FsError::Config { what: format!("{}: {e}", self.opts.policy.display()) })?;
        let labels = state::load(&self.opts, &scratch)?;
        self.server.reload(&bytes).map_err(|e| FsError::Config { what: format!("{}: {e}", self.opts.policy.display()) })?;
        state::apply_booleans(&self.opts, &self.server)?;
        self.labels.store(Arc::new(labels));
        self.callers.clear();
        for n in self.nodes.all() {
            if n.origin() == Origin::Computed || n.closed().is_some() {
                if let Ok(meta) = std::fs::symlink_metadata(self.backing(&n.path())) {
                    let l = self.label(n.id, &n.path(), &meta);
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

    /// The backing path of a node path.
    fn backing(&self, rel: &str) -> PathBuf {
        if rel.is_empty() {
            self.opts.source.clone()
        } else {
            self.opts.source.join(rel)
        }
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
    fn open_check(&self, hook: impl FnOnce() -> seaccess_objmgr::Result<FileSec>) -> Result<Option<FileSec>> {
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
        let c = self.callers.get(req, || crate::who::compute(&self.labels.load(), &self.server, &self.callers, req, &|m| self.log(m)));
        if let Err(why) = &c.who {
            return Err(FsError::Closed(why.clone()));
        }
        Ok(c)
    }

    /// The node `id`, refused if its label could not be given.
    fn node(&self, id: u64) -> Result<Arc<Node>> {
        let n = self.nodes.get(id).ok_or_else(|| FsError::errno_of(libc::ESTALE, format!("node {id} is not known")))?;
        if let Some(why) = n.closed() {
            return Err(FsError::Closed(format!("{}: {why}", self.shown(&n.path()))));
        }
        Ok(n)
    }

    /// The label of the backing file `meta` at node path `rel`: its `security.selinux` (or
    /// `user.selinux`) attribute, else file_contexts for PREFIX/`rel`, else the policy's
    /// `file` initial SID. An attribute that cannot be read, or a context the policy does not
    /// know, closes the node.
    fn label(&self, id: u64, rel: &str, meta: &std::fs::Metadata) -> Label {
        let path = self.backing(rel);
        let abs = format!("/{rel}");
        let mk = |ctx: Option<&str>| self.om.inode_init(&self.sb, id, meta.mode(), &abs, ctx);
        if !self.opts.checks {
            return Label { sec: mk(None), origin: Origin::Computed, closed: None };
        }
        let closed = |why: String| Label { sec: mk(None), origin: Origin::Xattr, closed: Some(why) };
        match read_label(&path) {
            Err(e) => return closed(format!("its label cannot be read: {e}")),
            Ok(Some(ctx)) => {
                return match self.server.context_to_sid(&ctx) {
                    Ok(_) => Label { sec: mk(Some(&ctx)), origin: Origin::Xattr, closed: None },
                    Err(e) => closed(format!("its label {ctx:?} is not a context of the policy: {e}")),
                };
            }
            Ok(None) => {}
        }
        let labels = self.labels.load();
        if let Some(fc) = &labels.file_contexts {
            let prefix = self.opts.path_prefix.to_string_lossy();
            let key = if rel.is_empty() { prefix.to_string() } else { format!("{}/{rel}", prefix.trim_end_matches('/')) };
            match fc.context(key.as_bytes(), seaccess_label::FileKind::from_mode(meta.mode())) {
                Err(e) => return Label { sec: mk(None), origin: Origin::Computed, closed: Some(format!("file_contexts: {e}")) },
                Ok(Some(ctx)) => {
                    return match self.server.context_to_sid(ctx) {
                        Ok(_) => Label { sec: mk(Some(ctx)), origin: Origin::Computed, closed: None },
                        Err(e) => Label { sec: mk(None), origin: Origin::Computed, closed: Some(format!("file_contexts gives {ctx:?}, not a context of the policy: {e}")) },
                    };
                }
                Ok(None) => {}
            }
        }
        Label { sec: mk(None), origin: Origin::Computed, closed: None }
    }

    /// Writes `sid`'s context as the backing file's label (with its NUL, as lsetfilecon).
    fn store_label(&self, path: &Path, sid: Sid) -> Result<()> {
        let ctx = self.server.sid_to_context(sid).map_err(|e| FsError::Closed(e.to_string()))?;
        // security.selinux, else the user.selinux fallback, read back the same way.
        seaccess_label::xattr::write(seaccess_label::xattr::Object::Link(path), ctx.as_bytes(), seaccess_label::xattr::Attrs::Either)?;
        Ok(())
    }

    fn new_fh(&self, h: Handle, slot: crate::budget::Slot) -> u64 {
        let fh = self.next_fh.fetch_add(1, Ordering::Relaxed);
        lock(&self.handles).insert(fh, Arc::new(h));
        lock(&self.slots).insert(fh, slot);
        fh
    }

    fn handle(&self, fh: u64) -> Result<Arc<Handle>> {
        lock(&self.handles).get(&fh).cloned().ok_or_else(|| FsError::errno_of(libc::EBADF, format!("file handle {fh} is not open")))
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

    /// The node of `name` in `dir` as it is now on the backing tree (made, unlabelled until
    /// now, if the kernel never looked it up), refused if closed.
    fn existing(&self, dir: &Node, name: &str) -> Result<(Arc<Node>, std::fs::Metadata)> {
        let rel = Core::child(&dir.path(), name);
        let meta = std::fs::symlink_metadata(self.backing(&rel))?;
        let n = self.nodes.get_or_make(&meta, &rel, false, |id| self.label(id, &rel, &meta));
        if let Some(why) = n.closed() {
            return Err(FsError::Closed(format!("{}: {why}", self.shown(&rel))));
        }
        Ok((n, meta))
    }
}

/// An object's label from its extended attributes (without the C string's NUL): crates/label's
/// rule, which `seaccess label --apply` writes by.
fn read_label(path: &Path) -> std::io::Result<Option<String>> {
    seaccess_label::xattr::read(seaccess_label::xattr::Object::Link(path), seaccess_label::xattr::Attrs::Either)
}
