//! Which nodes hold a descriptor of their inode ("hot") and which hold only its file handle
//! ("cold"), as virtiofsd's `--inode-file-handles`.
//!
//! The kernel keeps the inodes it looked up until memory runs short, and the server a node for
//! each; a node holding a descriptor for as long as it lives makes the server's descriptors
//! grow with every file ever looked up, past any limit. So each node also keeps its inode's
//! file handle, and at most a budget of nodes per process hold a descriptor: beyond it the
//! least recently used close theirs ([`Hot::heated`], the clock algorithm: a node used since
//! the hand last passed it gets a second chance). A cold node keeps everything else (its label
//! blob, the kernel's lookup count, its path): the kernel still knows it, and nothing about its
//! checks changes. Its next use opens the inode again by handle ([`Tree::reopen`]), which gives
//! that inode, or ESTALE once it is freed; never another file, and no path is resolved.
//!
//! A node whose file system gives no handles (or a server without CAP_DAC_READ_SEARCH, which
//! open_by_handle_at needs) keeps its descriptor for life ("pinned"); for those the kernel is
//! asked to forget the least recently used instead (FUSE_NOTIFY_PRUNE, [`crate::fuse`]).

use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use rustix::fs::OFlags;
use seaccess_types::lock;

use crate::backing::{self, Backing, FileHandle};

/// What the clock found of a node it passed.
pub(crate) enum Cool {
    /// Used since the hand last passed: kept hot, its mark cleared.
    Used,
    /// Already cold.
    Cold,
    /// Cooled now: its descriptor, to be dropped (closed, unless an operation still holds it).
    Cooled(Arc<OwnedFd>),
}

/// A node as the clock sees it ([`crate::nodes::Node`]): declared here, below the nodes, so
/// that the ring names no node type and the nodes module alone depends on this one.
pub(crate) trait Coolable: Send + Sync {
    /// Whether the node may be cooled (it has a handle and is not the root).
    fn coolable(&self) -> bool;
    /// Whether it is in the clock's ring (set and cleared only under the ring's lock).
    fn in_ring(&self) -> &AtomicBool;
    /// Gives up the descriptor; with `clock`, as the clock's hand does (see
    /// [`crate::nodes::Node`]'s `cool`).
    fn cool(&self, clock: bool) -> Cool;
}

/// The node descriptors of one process, whatever mount their nodes are of (descriptors are
/// the process's), and the clock's ring of the hot nodes that can be cooled.
#[derive(Debug, Default)]
pub struct Hot {
    /// Descriptors held by nodes (hot ones and pinned ones), counted under each node's lock.
    held: AtomicUsize,
    /// The hot nodes with a handle, oldest first; a node is in it at most once (its
    /// `in_ring`), and a dead or cold entry is dropped when the hand reaches it.
    ring: Mutex<VecDeque<Weak<dyn Coolable>>>,
}

/// The pool of every mount of the process (tests make their own).
static PROCESS: LazyLock<Arc<Hot>> = LazyLock::new(|| Arc::new(Hot::default()));

impl Hot {
    /// The process's pool.
    pub fn process() -> Arc<Hot> {
        PROCESS.clone()
    }

    /// How many descriptors nodes hold now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    pub(crate) fn opened(&self) {
        self.held.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn closed(&self) {
        self.held.fetch_sub(1, Ordering::Relaxed);
    }

    /// `n` has just become hot (made, or given a descriptor again): into the ring if it can be
    /// cooled, then, while more than `budget` descriptors are held, the least recently used
    /// nodes of the ring give theirs up. A request holding a node's descriptor keeps it open
    /// until it is done (each holds its own `Arc`), so cooling never pulls a descriptor from
    /// under an operation.
    pub(crate) fn heated<N: Coolable + 'static>(&self, n: &Arc<N>, budget: usize) {
        if !n.coolable() {
            return;
        }
        let mut closing = Vec::new();
        {
            let mut ring = lock(&self.ring);
            if !n.in_ring().swap(true, Ordering::AcqRel) {
                let w: Weak<N> = Arc::downgrade(n);
                ring.push_back(w);
            }
            // Two passes at most: the first may only clear the marks of use.
            let mut scan = ring.len() * 2;
            while self.held() > budget && scan > 0 {
                scan -= 1;
                let Some(w) = ring.pop_front() else { break };
                let Some(m) = w.upgrade() else { continue };
                match m.cool(true) {
                    Cool::Used => ring.push_back(w),
                    Cool::Cold => {}
                    Cool::Cooled(fd) => closing.push(fd),
                }
            }
            // Entries of nodes the kernel forgot while hot wait for the hand; when they
            // outnumber the live ones, they go at once (each keeps its node's memory).
            if ring.len() > 2 * self.held() + 64 {
                ring.retain(|w| w.strong_count() > 0);
            }
        }
        // Closed outside the ring's lock.
        drop(closing);
    }
}

/// What the nodes of one mount share: how to open their inodes again by handle, the pool their
/// descriptors count in, and the budget.
#[derive(Debug)]
pub struct Tree {
    /// SOURCE opened for reading (open_by_handle_at takes no O_PATH descriptor): handles are
    /// decoded on its mount. None when nodes cannot be cooled here.
    mount: Option<std::fs::File>,
    /// The mount id name_to_handle_at gives for SOURCE: a handle taken on another mount is
    /// not kept (the resolver never crosses one, so none is).
    mnt_id: i32,
    pub(crate) hot: Arc<Hot>,
    /// Node descriptors the process keeps at most, where nodes can be cooled.
    pub(crate) budget: usize,
}

impl Tree {
    /// The tree of SOURCE (`root`), its nodes' descriptors counted in `hot`. When its file
    /// system gives no handles, or a handle cannot be opened again (no CAP_DAC_READ_SEARCH),
    /// nodes are pinned, and the second value says why.
    pub fn new(
        root: BorrowedFd<'_>,
        backing: &Backing,
        hot: Arc<Hot>,
        budget: usize,
    ) -> (Tree, Option<String>) {
        let mut t = Tree {
            mount: None,
            mnt_id: 0,
            hot,
            budget,
        };
        let probe = || -> std::io::Result<(std::fs::File, i32)> {
            let (h, mnt) = backing::handle_of(root)?;
            let mount = backing.reopen(root, libc::S_IFDIR, OFlags::RDONLY)?;
            let again = backing::open_handle(mount.as_fd(), &h)?;
            if backing::key(&backing::stat(again.as_fd())?) != backing::key(&backing::stat(root)?) {
                return Err(std::io::Error::other(
                    "the root's handle opened another inode",
                ));
            }
            Ok((mount, mnt))
        };
        match probe() {
            Ok((mount, mnt)) => {
                t.mount = Some(mount);
                t.mnt_id = mnt;
                (t, None)
            }
            Err(e) => (
                t,
                Some(format!(
                    "nodes keep their descriptors (no file handles: {e})"
                )),
            ),
        }
    }

    /// Whether nodes of this tree can be cooled.
    pub fn has_handles(&self) -> bool {
        self.mount.is_some()
    }

    /// The handle of the inode `fd` holds, where nodes can be cooled.
    pub(crate) fn handle(&self, fd: BorrowedFd<'_>) -> Option<FileHandle> {
        self.mount.as_ref()?;
        backing::handle_of(fd)
            .ok()
            .filter(|(_, mnt)| *mnt == self.mnt_id)
            .map(|(h, _)| h)
    }

    /// Whether `fd` holds the inode `h` names (their handles are equal).
    pub(crate) fn same(&self, h: &FileHandle, fd: BorrowedFd<'_>) -> bool {
        self.handle(fd).as_ref() == Some(h)
    }

    /// The inode `h` names, opened again: ESTALE when it is gone. Its (dev, ino) must be
    /// `key` (a handle names one inode; this is belt and braces, and fails closed).
    pub(crate) fn reopen(&self, h: &FileHandle, key: (u64, u64)) -> std::io::Result<OwnedFd> {
        let mount = self
            .mount
            .as_ref()
            .ok_or_else(|| std::io::Error::from_raw_os_error(libc::ESTALE))?;
        let fd = backing::open_handle(mount.as_fd(), h)?;
        if backing::key(&backing::stat(fd.as_fd())?) != key {
            return Err(std::io::Error::from_raw_os_error(libc::ESTALE));
        }
        Ok(fd)
    }
}
