//! The mount's nodes: one per backing inode the kernel has been told of, each with an O_PATH
//! descriptor of that inode, the blob its checks read (the object manager's [`InodeSec`]) and
//! its path inside the mount.
//!
//! Every operation on a node acts through its descriptor (see [`crate::backing`]), held from
//! the moment the node is made until the kernel forgets it, an unlinked node's too: such a
//! node has no name on the tree, and nothing reaches it but the descriptor. A node is keyed
//! by the backing file's device and inode numbers, so hard links share one node and one
//! label, as they share one inode in the kernel. The key is sound because the descriptor
//! pins the inode: its number cannot be given to another file while the node holds it, so
//! an entry of the table never names a newer file. Its path is text only, where it was last
//! seen (looked up, created or renamed to), for file_contexts and audit records: nothing
//! resolves it. Labels are given once, when a node is made (the kernel's
//! inode_doinit_with_dentry), and change only through a relabel or a reload of file_contexts.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};

use rustc_hash::FxHashMap;
use seaccess_objmgr::InodeSec;
use crate::{lock_read, lock_write};

/// The last component of a node path ("/" for the root), as audit records name it.
pub fn name_of(path: &str) -> &str {
    match path.rsplit('/').next() {
        Some(n) if !n.is_empty() => n,
        _ => "/",
    }
}

/// Nodes alive in this process, in every table (each holds a descriptor, and descriptors are
/// the process's).
static LIVE: AtomicUsize = AtomicUsize::new(0);

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
    /// The backing inode (O_PATH | O_NOFOLLOW), held while the node lives.
    fd: OwnedFd,
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
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Node {
    /// The backing inode's descriptor, which every operation on the node goes through.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
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
#[derive(Default)]
pub struct Nodes {
    inner: RwLock<Table>,
    /// Advanced at each [`Nodes::least_used`]: a node's `used` is the epoch of its last use.
    epoch: AtomicU64,
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

    /// How many nodes this process has alive, in every table (descriptors are the process's).
    pub fn live() -> usize {
        LIVE.load(Ordering::Relaxed)
    }

    /// When `live` nodes (see [`Nodes::live`]) are more than `high`, the ids of this table's
    /// least recently used ones, as many as are beyond `keep`, for the kernel to be asked to
    /// forget (it keeps its inodes of them until memory runs short otherwise, and each node
    /// holds a descriptor). Never the root, nor a node held elsewhere (an open file, a
    /// request under way), which the kernel cannot forget either. Each call starts a new
    /// epoch of use.
    pub fn least_used(&self, live: usize, high: usize, keep: usize) -> Vec<u64> {
        self.epoch.fetch_add(1, Ordering::Relaxed);
        if live <= high {
            return Vec::new();
        }
        let t = lock_read(&self.inner);
        let mut v: Vec<(u64, u64)> = t.by_id.values().filter(|n| n.id != 1 && Arc::strong_count(n) == 1).map(|n| (n.used.load(Ordering::Relaxed), n.id)).collect();
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
    /// the descriptor) if there is none; a node already there keeps its own descriptor of the
    /// same inode and `fd` is closed. The path is updated to `path`; when `lookup` is set the
    /// kernel's lookup count goes up by one. Without `lookup` (an object resolved for the
    /// core's own checks, which the kernel is not told of) a node made for it is not kept in
    /// the table: it, and its descriptor, last as long as the caller holds it.
    pub fn get_or_make(&self, fd: OwnedFd, st: &crate::backing::Stat, path: &str, lookup: bool, label: impl FnOnce(u64, BorrowedFd<'_>) -> Label) -> Arc<Node> {
        // The same key is the same inode: a node in the table pins its inode, and `fd` pins
        // this one, so neither number can have been reused for the other.
        let key = crate::backing::key(st);
        if let Some(n) = self.find(key, lookup) {
            self.touch(&n);
            if &*n.path() != path {
                n.set_path(path.to_string());
            }
            return n;
        }
        let id = if path.is_empty() {
            1
        } else {
            let mut t = lock_write(&self.inner);
            t.next = t.next.max(1) + 1;
            t.next
        };
        let l = label(id, fd.as_fd());
        let node = |fd: OwnedFd, l: Label| {
            LIVE.fetch_add(1, Ordering::Relaxed);
            Arc::new(Node {
                id,
                key,
                kind: crate::backing::kind(st),
                fd,
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
            return node(fd, l);
        }
        let mut t = lock_write(&self.inner);
        if let Some(id) = t.by_key.get(&key) {
            if let Some(n) = t.by_id.get(id).cloned() {
                if lookup {
                    n.lookups.fetch_add(1, Ordering::Relaxed);
                }
                return n;
            }
        }
        let n = node(fd, l);
        t.by_key.insert(key, id);
        t.by_id.insert(id, n.clone());
        n
    }

    /// The node of `key`, its lookup count up by one if `lookup` (under the table's lock, so
    /// that a FORGET cannot drop it in between).
    fn find(&self, key: (u64, u64), lookup: bool) -> Option<Arc<Node>> {
        let t = lock_read(&self.inner);
        let n = t.by_key.get(&key).and_then(|id| t.by_id.get(id)).cloned()?;
        if lookup {
            n.lookups.fetch_add(1, Ordering::Relaxed);
        }
        Some(n)
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
            } else if let Some(rest) = p.strip_prefix(from).filter(|r| r.starts_with('/') && !from.is_empty()) {
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
