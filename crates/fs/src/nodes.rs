//! The mount's nodes: one per backing inode the kernel has been told of, each with the blob its
//! checks read (the object manager's [`InodeSec`]), its path inside the mount, and its inode:
//! an O_PATH descriptor while it is hot, and its file handle, by which a cold node opens the
//! inode again (see [`crate::hot`]; a node whose file system gives no handles keeps its
//! descriptor for life).
//!
//! Every operation on a node acts through its descriptor (see [`crate::backing`]), taken from
//! the node under a short lock and held by the operation until it is done ([`Node::fd`]), so
//! a node cooled meanwhile closes nothing an operation uses. An unlinked node has no name on
//! the tree, and nothing reaches it but its descriptor or its handle; a handle gives ESTALE
//! once the inode is freed, never another file. A node is keyed by the backing file's device
//! and inode numbers, so hard links share one node and one label, as they share one inode in
//! the kernel; how a key stays sound when a cold node no longer pins its inode is
//! [`Node::adopt`]'s. Its path is text only, where it was last seen (looked up, created or
//! renamed to), for file_contexts and audit records: nothing resolves it. Labels are given
//! once, when a node is made (the kernel's inode_doinit_with_dentry), and change only through
//! a relabel or a reload of file_contexts; cooling a node changes none of it.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use rustc_hash::FxHashMap;
use seaccess_objmgr::InodeSec;
use seaccess_types::lock;

use crate::backing::FileHandle;
use crate::hot::{Cool, Coolable, Tree};
use crate::{lock_read, lock_write};

/// The last component of a node path ("/" for the root), as audit records name it.
pub fn name_of(path: &str) -> &str {
    match path.rsplit('/').next() {
        Some(n) if !n.is_empty() => n,
        _ => "/",
    }
}

/// Pinned nodes (without a file handle, holding their descriptor for life) alive in this
/// process, in every table (descriptors are the process's).
static PINNED: AtomicUsize = AtomicUsize::new(0);

/// Where a node's label came from: a relabel or reload only recomputes labels that did not
/// come from the file itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The store attribute on the backing file (see [`crate::core::store`]).
    Xattr,
    /// file_contexts, or the policy's `file` initial SID where file_contexts has no entry.
    Computed,
}

/// One node.
#[derive(Debug)]
pub struct Node {
    /// The FUSE node id (1 for the mount's root).
    pub id: u64,
    /// The backing file's device and inode numbers.
    pub key: (u64, u64),
    /// Its file type (S_IFMT bits), which an inode keeps for life.
    pub kind: u32,
    /// The inode's file handle: with one the node may give up its descriptor (cold) and open
    /// the inode again by it; without one (pinned) it keeps its descriptor for life.
    handle: Option<FileHandle>,
    tree: Arc<Tree>,
    /// The backing inode (O_PATH | O_NOFOLLOW) while the node is hot. Shared: an operation
    /// holds its own reference until it is done.
    fd: Mutex<Option<Arc<OwnedFd>>>,
    /// Used since the clock's hand last passed it (see [`crate::hot::Hot::heated`]).
    used_since: AtomicBool,
    /// In the clock's ring (set and cleared only under the ring's lock).
    pub(crate) in_ring: AtomicBool,
    /// Its path relative to the mount's root ("" for the root): text for file_contexts and
    /// audit records, never resolved.
    path: RwLock<Arc<str>>,
    pub sec: Arc<InodeSec>,
    origin: RwLock<Origin>,
    /// Why every operation on it is refused, when its label cannot be read or is not a
    /// context of the policy (fail closed); cleared by a relabel or a reload that fixes it.
    closed: RwLock<Option<String>>,
    has_closed: AtomicBool,
    /// The kernel's lookup count (FUSE forget).
    lookups: AtomicU64,
    /// The table's epoch when it was last used (see [`Nodes::least_used`]).
    used: AtomicU64,
}

impl Drop for Node {
    fn drop(&mut self) {
        if self.handle.is_none() {
            PINNED.fetch_sub(1, Ordering::Relaxed);
        }
        if seaccess_types::lock::get_mut(&mut self.fd).is_some() {
            self.tree.hot.closed();
        }
    }
}

impl Coolable for Node {
    fn coolable(&self) -> bool {
        Node::coolable(self)
    }

    fn in_ring(&self) -> &AtomicBool {
        &self.in_ring
    }

    fn cool(&self, clock: bool) -> Cool {
        Node::cool(self, clock)
    }
}

impl Node {
    /// The backing inode's descriptor, which every operation on the node goes through, held
    /// until the caller drops it. A cold node opens its inode again by handle first (ESTALE
    /// once the inode is freed: the operation fails as on a stale NFS file).
    pub fn fd(self: &Arc<Self>) -> std::io::Result<Arc<OwnedFd>> {
        if !self.used_since.load(Ordering::Relaxed) {
            self.used_since.store(true, Ordering::Relaxed);
        }
        let mut slot = lock(&self.fd);
        if let Some(fd) = slot.as_ref() {
            return Ok(fd.clone());
        }
        // Only a node with a handle is ever cold.
        let h = self
            .handle
            .as_ref()
            .ok_or_else(|| std::io::Error::from_raw_os_error(libc::ESTALE))?;
        let fd = Arc::new(self.tree.reopen(h, self.key)?);
        *slot = Some(fd.clone());
        self.tree.hot.opened();
        drop(slot);
        self.tree.hot.heated(self, self.tree.budget);
        Ok(fd)
    }

    /// Whether the node holds a descriptor now.
    pub fn is_hot(&self) -> bool {
        lock(&self.fd).is_some()
    }

    /// Whether the node may be cooled: it has a handle, and is not the root (through which
    /// every walk starts).
    pub(crate) fn coolable(&self) -> bool {
        self.handle.is_some() && self.id != 1
    }

    /// Gives up the descriptor. With `clock`, for the clock's hand, which has just taken the
    /// node out of its ring (under the ring's lock): not if the node was used since the hand
    /// last passed it (then only that mark is cleared). Without, at once (tests).
    pub(crate) fn cool(&self, clock: bool) -> Cool {
        let mut slot = lock(&self.fd);
        if slot.is_none() {
            if clock {
                self.in_ring.store(false, Ordering::Release);
            }
            return Cool::Cold;
        }
        if clock && self.used_since.swap(false, Ordering::Relaxed) {
            return Cool::Used;
        }
        if !self.coolable() {
            return Cool::Used;
        }
        let Some(fd) = slot.take() else {
            return Cool::Cold;
        };
        self.tree.hot.closed();
        if clock {
            self.in_ring.store(false, Ordering::Release);
        }
        Cool::Cooled(fd)
    }

    /// `fd` holds the inode numbered as this node's key is now (it was just resolved, and is
    /// held): whether that is this node's inode. If it is and the node is cold, `fd` becomes
    /// its descriptor (the result says whether it did); if not, `fd` is given back.
    ///
    /// INVARIANT (the key names the node's inode): a hot node's descriptor pins its inode,
    /// and `fd` pins the one that has the number now; both alive with one number, they are one
    /// inode. A cold node pins nothing: its inode may have been freed and its number given to
    /// a new file, so a cold node is that inode only if `fd`'s handle is its own (a handle
    /// names one generation of one inode). Checked under the node's lock, so that the node
    /// cannot turn cold between the check and the answer. Callers make a new node for the key
    /// when this says no; the old one stays known by its id, answering ESTALE, until the
    /// kernel forgets it.
    pub(crate) fn adopt(&self, fd: OwnedFd) -> Result<bool, OwnedFd> {
        let mut slot = lock(&self.fd);
        if slot.is_some() {
            return Ok(false);
        }
        match &self.handle {
            Some(h) if self.tree.same(h, fd.as_fd()) => {
                *slot = Some(Arc::new(fd));
                self.tree.hot.opened();
                self.used_since.store(true, Ordering::Relaxed);
                Ok(true)
            }
            _ => Err(fd),
        }
    }

    /// The path (shared, not copied: every request reads it).
    pub fn path(&self) -> Arc<str> {
        lock_read(&self.path).clone()
    }

    pub fn set_path(&self, p: String) {
        *lock_write(&self.path) = p.into();
    }

    pub fn origin(&self) -> Origin {
        *lock_read(&self.origin)
    }

    pub fn set_origin(&self, o: Origin) {
        *lock_write(&self.origin) = o;
    }

    /// Why the node is closed, if it is.
    pub fn closed(&self) -> Option<String> {
        if !self.has_closed.load(Ordering::Acquire) {
            return None;
        }
        lock_read(&self.closed).clone()
    }

    pub fn set_closed(&self, why: Option<String>) {
        let mut c = lock_write(&self.closed);
        self.has_closed.store(why.is_some(), Ordering::Release);
        *c = why;
    }
}

/// The node table.
pub struct Nodes {
    inner: RwLock<Table>,
    /// Advanced at each [`Nodes::least_used`]: a node's `used` is the epoch of its last use.
    epoch: AtomicU64,
    tree: Arc<Tree>,
}

#[derive(Default)]
struct Table {
    by_id: FxHashMap<u64, Arc<Node>>,
    by_key: FxHashMap<(u64, u64), u64>,
    next: u64,
}

/// A label for a node about to be made: its blob, where it came from, and why it is closed.
pub struct Label {
    pub sec: InodeSec,
    pub origin: Origin,
    pub closed: Option<String>,
}

impl Nodes {
    /// An empty table of the nodes of `tree`.
    pub fn new(tree: Tree) -> Nodes {
        Nodes {
            inner: RwLock::default(),
            epoch: AtomicU64::new(0),
            tree: Arc::new(tree),
        }
    }

    /// Whether its nodes can be cooled (see [`crate::hot`]).
    pub fn has_handles(&self) -> bool {
        self.tree.has_handles()
    }

    /// Node `id`, marked used now.
    pub fn get(&self, id: u64) -> Option<Arc<Node>> {
        let n = lock_read(&self.inner).by_id.get(&id).cloned()?;
        self.touch(&n);
        Some(n)
    }

    fn touch(&self, n: &Node) {
        let e = self.epoch.load(Ordering::Relaxed);
        // Written only when it changes: most requests leave the node's line alone.
        if n.used.load(Ordering::Relaxed) != e {
            n.used.store(e, Ordering::Relaxed);
        }
    }

    /// How many pinned nodes this process has alive, in every table (descriptors are the
    /// process's).
    pub fn pinned() -> usize {
        PINNED.load(Ordering::Relaxed)
    }

    /// When `live` pinned nodes (see [`Nodes::pinned`]) are more than `high`, the ids of this
    /// table's least recently used pinned ones, as many as are beyond `keep`, for the kernel
    /// to be asked to forget (it keeps its inodes of them until memory runs short otherwise,
    /// and each holds a descriptor it cannot give up). Never the root, nor a node held
    /// elsewhere (an open file, a request under way), which the kernel cannot forget either,
    /// nor a node with a handle (it is cooled instead). Each call starts a new epoch of use.
    pub fn least_used(&self, live: usize, high: usize, keep: usize) -> Vec<u64> {
        self.epoch.fetch_add(1, Ordering::Relaxed);
        if live <= high {
            return Vec::new();
        }
        let t = lock_read(&self.inner);
        let mut v: Vec<(u64, u64)> = t
            .by_id
            .values()
            .filter(|n| n.id != 1 && n.handle.is_none() && Arc::strong_count(n) == 1)
            .map(|n| (n.used.load(Ordering::Relaxed), n.id))
            .collect();
        let excess = live.saturating_sub(keep).min(v.len());
        if excess == 0 {
            return Vec::new();
        }
        // The `excess` oldest first, in no order among themselves.
        v.select_nth_unstable(excess - 1);
        v.truncate(excess);
        v.into_iter().map(|(_, id)| id).collect()
    }

    /// The node of the backing inode `fd` holds (its attributes `st`) seen at `path`, made
    /// with `label` (given the new node's id, which is also the inode number callers see, and
    /// the descriptor) if there is none; a node already there that is hot keeps its own
    /// descriptor of the same inode and `fd` is closed, a cold one takes `fd` (see
    /// [`Node::adopt`]). The path is updated to `path`; when `lookup` is set the kernel's
    /// lookup count goes up by one. Without `lookup` (an object resolved for the core's own
    /// checks, which the kernel is not told of) a node made for it is not kept in the table:
    /// it, and its descriptor, last as long as the caller holds it.
    pub fn get_or_make(
        &self,
        fd: OwnedFd,
        st: &crate::backing::Stat,
        path: &str,
        lookup: bool,
        label: impl FnOnce(u64, BorrowedFd<'_>) -> Label,
    ) -> Arc<Node> {
        let key = crate::backing::key(st);
        let fd = match self.find(key, fd, lookup) {
            Ok(n) => {
                self.touch(&n);
                if &*n.path() != path {
                    n.set_path(path.to_string());
                }
                return n;
            }
            Err(fd) => fd,
        };
        let id = if path.is_empty() {
            1
        } else {
            let mut t = lock_write(&self.inner);
            t.next = t.next.max(1) + 1;
            t.next
        };
        let l = label(id, fd.as_fd());
        // The root is never cooled, nor a node the table does not keep.
        let handle = if lookup && id != 1 {
            self.tree.handle(fd.as_fd())
        } else {
            None
        };
        let node = |fd: OwnedFd, l: Label, handle: Option<FileHandle>| {
            if handle.is_none() {
                PINNED.fetch_add(1, Ordering::Relaxed);
            }
            self.tree.hot.opened();
            Arc::new(Node {
                id,
                key,
                kind: crate::backing::kind(st),
                handle,
                tree: self.tree.clone(),
                fd: Mutex::new(Some(Arc::new(fd))),
                used_since: AtomicBool::new(true),
                in_ring: AtomicBool::new(false),
                path: RwLock::new(path.into()),
                sec: Arc::new(l.sec),
                origin: RwLock::new(l.origin),
                has_closed: AtomicBool::new(l.closed.is_some()),
                closed: RwLock::new(l.closed),
                lookups: AtomicU64::new(u64::from(lookup)),
                used: AtomicU64::new(self.epoch.load(Ordering::Relaxed)),
            })
        };
        if !lookup {
            return node(fd, l, None);
        }
        let mut t = lock_write(&self.inner);
        // Another request may have made the key's node meanwhile.
        let fd = match t.by_key.get(&key).and_then(|id| t.by_id.get(id)).cloned() {
            Some(n) => match n.adopt(fd) {
                Ok(heated) => {
                    n.lookups.fetch_add(1, Ordering::Relaxed);
                    drop(t);
                    if heated {
                        self.tree.hot.heated(&n, self.tree.budget);
                    }
                    return n;
                }
                Err(fd) => fd,
            },
            None => fd,
        };
        let n = node(fd, l, handle);
        // A stale node's key (see Node::adopt) goes to the new node; the stale one stays
        // known by its id until the kernel forgets it.
        t.by_key.insert(key, id);
        t.by_id.insert(id, n.clone());
        drop(t);
        self.tree.hot.heated(&n, self.tree.budget);
        n
    }

    /// The node of `key` if `fd` holds its inode (see [`Node::adopt`]), its lookup count up by
    /// one if `lookup` (under the table's lock, so that a FORGET cannot drop it in between);
    /// else `fd` back.
    fn find(&self, key: (u64, u64), fd: OwnedFd, lookup: bool) -> Result<Arc<Node>, OwnedFd> {
        let t = lock_read(&self.inner);
        let Some(n) = t.by_key.get(&key).and_then(|id| t.by_id.get(id)).cloned() else {
            return Err(fd);
        };
        let heated = n.adopt(fd)?;
        if lookup {
            n.lookups.fetch_add(1, Ordering::Relaxed);
        }
        drop(t);
        if heated {
            self.tree.hot.heated(&n, self.tree.budget);
        }
        Ok(n)
    }

    /// The kernel forgot `n` lookups of node `id`: drop it when none are left (never the root).
    pub fn forget(&self, id: u64, n: u64) {
        if id == 1 {
            return;
        }
        let mut t = lock_write(&self.inner);
        let gone = match t.by_id.get(&id) {
            Some(node) => {
                let left = node.lookups.load(Ordering::Relaxed).saturating_sub(n);
                node.lookups.store(left, Ordering::Relaxed);
                left == 0
            }
            None => false,
        };
        if gone {
            if let Some(node) = t.by_id.remove(&id) {
                if t.by_key.get(&node.key) == Some(&id) {
                    t.by_key.remove(&node.key);
                }
            }
        }
    }

    /// Every node whose path is `from` or under it now lives under `to` (a rename).
    pub fn moved(&self, from: &str, to: &str) {
        let t = lock_read(&self.inner);
        for n in t.by_id.values() {
            let p = n.path();
            if &*p == from {
                n.set_path(to.to_string());
            } else if let Some(rest) = p
                .strip_prefix(from)
                .filter(|r| r.starts_with('/') && !from.is_empty())
            {
                n.set_path(format!("{to}{rest}"));
            }
        }
    }

    /// Every node (for a reload).
    pub fn all(&self) -> Vec<Arc<Node>> {
        lock_read(&self.inner).by_id.values().cloned().collect()
    }

    pub fn len(&self) -> usize {
        lock_read(&self.inner).by_id.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
