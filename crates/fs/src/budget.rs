//! What open files may hold of the server's descriptors.
//!
//! Every open of the mount holds a descriptor of the backing file in the server for as long as
//! the caller keeps it open. Without a bound one user opening a file a thousand times over
//! takes every descriptor the server may have, and then root's opens, creates and listings
//! fail too. The server's descriptor limit (read again at most once a second: an administrator may change it
//! under a running server with prlimit) is cut in three: the nodes' descriptors (their own
//! budget, [`crate::hot`]), a reserve for the server itself (the FUSE channels, the proc
//! connector, the audit log, a reload's reads), and the pool of open files. In the pool a uid
//! holds at most a quarter, and the uids other than root together at most three quarters, so
//! root's quarter is never taken by anyone: an open beyond a share fails with EMFILE, as the
//! caller's own descriptor limit would make it fail, and nobody else is refused for it. (Four
//! unprivileged uids at their share refuse a fifth; root, which the system's own services run
//! as, keeps its quarter whatever they do.)

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rustc_hash::FxHashMap;
use seaccess_types::lock;

use crate::error::{FsError, Result};

/// The fewest open files a uid may hold, however low the server's limit.
const SHARE_MIN: usize = 64;
/// Descriptors kept for the server's own use, outside the nodes' budget and the pool.
const RESERVE: usize = 256;

/// Open files held, per uid, and by every uid but root together.
#[derive(Default)]
struct Held {
    by_uid: FxHashMap<u32, usize>,
    others: usize,
}

/// Open files held against the pool.
pub struct Budget {
    held: Arc<Mutex<Held>>,
    /// The nodes' descriptors, which the pool leaves aside.
    node_fds: usize,
    /// The descriptor limit last read, and when (ms since the budget was made, plus one: 0 is
    /// "never"): read again at most every [`LIMIT_EVERY_MS`], not at each open (a system call
    /// on every open was a measurable part of the mount's cost).
    limit: AtomicU64,
    read_at: AtomicU64,
    start: Instant,
}

/// How often the descriptor limit is read again (an administrator's prlimit under a running
/// server takes effect within this).
const LIMIT_EVERY_MS: u64 = 1000;

/// One open file's place in its uid's share, given back when dropped.
pub struct Slot {
    held: Arc<Mutex<Held>>,
    uid: u32,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut h = lock(&self.held);
        if let Some(n) = h.by_uid.get_mut(&self.uid) {
            *n -= 1;
            if *n == 0 {
                h.by_uid.remove(&self.uid);
            }
        }
        if self.uid != 0 {
            h.others = h.others.saturating_sub(1);
        }
    }
}

/// The pool of open files that a descriptor limit of `limit` leaves beside `node_fds` node
/// descriptors and the reserve. The nodes' budget is set at start; a limit lowered under a
/// running server (prlimit) leaves them half of it at most, so that the pool is never empty.
pub fn pool(limit: u64, node_fds: usize) -> usize {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    limit
        .saturating_sub(node_fds.min(limit / 2))
        .saturating_sub(RESERVE)
}

/// One uid's share of a pool (a quarter, at least [`SHARE_MIN`]).
pub fn share(pool: usize) -> usize {
    (pool / 4).max(SHARE_MIN)
}

impl Budget {
    /// An empty budget beside `node_fds` node descriptors.
    pub fn new(node_fds: usize) -> Budget {
        Budget {
            held: Arc::default(),
            node_fds,
            limit: AtomicU64::new(0),
            read_at: AtomicU64::new(0),
            start: Instant::now(),
        }
    }

    /// The process's descriptor limit, read at most every [`LIMIT_EVERY_MS`].
    fn limit(&self) -> u64 {
        let now = u64::try_from(self.start.elapsed().as_millis())
            .unwrap_or(u64::MAX)
            .saturating_add(1);
        // Acquire/Release pair: whoever sees the new time sees the limit stored before it (a
        // zero limit read first would refuse every open).
        let at = self.read_at.load(Ordering::Acquire);
        if at != 0 && now.saturating_sub(at) < LIMIT_EVERY_MS {
            return self.limit.load(Ordering::Relaxed);
        }
        let l = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(u64::MAX);
        self.limit.store(l, Ordering::Relaxed);
        self.read_at.store(now, Ordering::Release);
        l
    }

    /// A place for one more open file of `uid`, or EMFILE when it holds its share already
    /// (or, for a uid other than root, when the others hold all but root's share).
    pub fn take(&self, uid: u32) -> Result<Slot> {
        self.take_within(uid, pool(self.limit(), self.node_fds))
    }

    fn take_within(&self, uid: u32, pool: usize) -> Result<Slot> {
        let share = share(pool);
        let mut h = lock(&self.held);
        let n = h.by_uid.get(&uid).copied().unwrap_or(0);
        // Root may use the whole pool; the others never root's quarter.
        let (mine, theirs) = if uid == 0 {
            (pool.max(SHARE_MIN), 0)
        } else {
            (share, pool.saturating_sub(share))
        };
        if n >= mine {
            return Err(FsError::errno_of(libc::EMFILE, format!("uid {uid} holds {n} open files of the mount, its share of the server's descriptors")));
        }
        if uid != 0 && h.others >= theirs {
            return Err(FsError::errno_of(libc::EMFILE, format!("users other than root hold {} open files of the mount, all but root's share of the server's descriptors", h.others)));
        }
        *h.by_uid.entry(uid).or_insert(0) += 1;
        if uid != 0 {
            h.others += 1;
        }
        Ok(Slot {
            held: self.held.clone(),
            uid,
        })
    }

    /// How many open files `uid` holds.
    pub fn held(&self, uid: u32) -> usize {
        lock(&self.held).by_uid.get(&uid).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// Break tried: `take_within` never refusing: one uid's 65th open file is granted.
    #[test]
    fn a_uid_holds_at_most_its_share_and_gets_it_back() {
        let b = Budget::new(0);
        let mine: Vec<Slot> = (0..64)
            .map(|_| b.take_within(65534, 256).unwrap())
            .collect();
        assert_eq!(
            b.take_within(65534, 256).err().map(|e| e.errno()),
            Some(libc::EMFILE)
        );
        let root = b.take_within(0, 256).unwrap();
        assert_eq!(
            (b.held(65534), b.held(0)),
            (64, 1),
            "another uid is not affected"
        );
        drop(mine);
        drop(root);
        assert_eq!((b.held(65534), b.held(0)), (0, 0));
        b.take_within(65534, 256).unwrap();
        assert_eq!(share(1024), 256);
        assert_eq!(share(100), SHARE_MIN);
        assert_eq!(pool(20_000, 10_000), 20_000 - 10_000 - RESERVE);
        assert_eq!(
            pool(1024, 10_000),
            1024 - 512 - RESERVE,
            "a limit lowered under the server leaves the nodes half"
        );
    }

    /// Break tried: the others' total not checked (three uids at their share, then a fourth,
    /// take root's quarter) and root held to a quarter like the others.
    #[test]
    fn root_keeps_its_quarter_whatever_the_others_hold() {
        let b = Budget::new(0);
        let others: Vec<Slot> = (1..=3u32)
            .flat_map(|u| (0..64).map(move |_| u))
            .map(|u| b.take_within(u, 256).unwrap())
            .collect();
        assert_eq!(
            b.take_within(4, 256).err().map(|e| e.errno()),
            Some(libc::EMFILE),
            "a fourth uid would take root's quarter"
        );
        let root: Vec<Slot> = (0..64).map(|_| b.take_within(0, 256).unwrap()).collect();
        assert_eq!(root.len(), 64);
        drop(others);
        let more: Vec<Slot> = (0..128).map(|_| b.take_within(0, 256).unwrap()).collect();
        assert_eq!(b.held(0), 192, "root may use the whole pool");
        drop((root, more));
        assert_eq!(b.held(0), 0);
    }
}
