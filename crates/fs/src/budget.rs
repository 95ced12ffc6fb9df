//! What one user's open files may hold of the server's descriptors.
//!
//! Every open of the mount holds a descriptor of the backing file in the server for as long as
//! the caller keeps it open. Without a bound one user opening a file a thousand times over
//! takes every descriptor the server may have, and then root's opens, creates and listings
//! fail too. So a uid holds at most a quarter of the server's descriptor limit (read at each
//! open: an administrator may change it under a running server with prlimit); beyond that
//! its opens fail with EMFILE, as its own descriptor limit would make them fail, and the
//! other uids are not affected. Four uids at their share leave nothing for the rest: the limit
//! is raised to its hard maximum at start ([`Budget::new`]) so that the share is large.

use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap;
use seaccess_types::lock;

use crate::error::{FsError, Result};

/// The fewest open files a uid may hold, however low the server's limit.
const SHARE_MIN: usize = 64;

/// Open files held, per uid.
#[derive(Default)]
pub struct Budget {
    held: Arc<Mutex<FxHashMap<u32, usize>>>,
}

/// One open file's place in its uid's share, given back when dropped.
pub struct Slot {
    held: Arc<Mutex<FxHashMap<u32, usize>>>,
    uid: u32,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut m = lock(&self.held);
        if let Some(n) = m.get_mut(&self.uid) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.uid);
            }
        }
    }
}

/// A uid's share of `limit` descriptors.
pub fn share(limit: u64) -> usize {
    usize::try_from(limit / 4).unwrap_or(usize::MAX).max(SHARE_MIN)
}

impl Budget {
    /// An empty budget; the server's soft descriptor limit raised to its hard one.
    pub fn new() -> Budget {
        let l = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        if l.current < l.maximum {
            let _ = rustix::process::setrlimit(rustix::process::Resource::Nofile, rustix::process::Rlimit { current: l.maximum, maximum: l.maximum });
        }
        Budget::default()
    }

    /// A place for one more open file of `uid`, or EMFILE when it holds its share already.
    pub fn take(&self, uid: u32) -> Result<Slot> {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current.unwrap_or(u64::MAX);
        self.take_within(uid, share(limit))
    }

    fn take_within(&self, uid: u32, share: usize) -> Result<Slot> {
        let mut m = lock(&self.held);
        let n = m.entry(uid).or_insert(0);
        if *n >= share {
            return Err(FsError::errno_of(libc::EMFILE, format!("uid {uid} holds {n} open files of the mount, its share of the server's descriptors")));
        }
        *n += 1;
        Ok(Slot { held: self.held.clone(), uid })
    }

    /// How many open files `uid` holds.
    pub fn held(&self, uid: u32) -> usize {
        lock(&self.held).get(&uid).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// Break tried: `take_within` never refusing: one uid's 65th open file is granted.
    #[test]
    fn a_uid_holds_at_most_its_share_and_gets_it_back() {
        let b = Budget::default();
        let mine: Vec<Slot> = (0..64).map(|_| b.take_within(65534, 64).unwrap()).collect();
        assert_eq!(b.take_within(65534, 64).err().map(|e| e.errno()), Some(libc::EMFILE));
        let root = b.take_within(0, 64).unwrap();
        assert_eq!((b.held(65534), b.held(0)), (64, 1), "another uid is not affected");
        drop(mine);
        drop(root);
        assert_eq!((b.held(65534), b.held(0)), (0, 0));
        b.take_within(65534, 64).unwrap();
        assert_eq!(share(1024), 256);
        assert_eq!(share(100), SHARE_MIN);
    }
}
