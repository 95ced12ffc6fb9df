//! The fscreate context callers publish through the mount: what a kernel keeps in each
//! thread's credential (/proc/thread-self/attr/fscreate, libselinux's setfscreatecon) and
//! uses for every file the thread creates, on any file system. Here no kernel keeps it, so
//! libseaccess tells each seaccess mount it can see when a thread sets or clears it, by a
//! setxattr of [`FSCREATE_XATTR`] on the mount's root (the value is the context; empty clears).
//!
//! Why that channel, and what keeps it honest:
//! - the FUSE request names its calling thread (the kernel fills in the thread id), so a
//!   thread sets only its own entry: nothing in the value names a thread, and no process can
//!   set another's (the kernel's proc_pid_attr_write refuses another task's attributes too);
//! - `system.*` names are left by the VFS to the file system (xattr_permission) and by the
//!   capability module to the LSMs (cap_inode_setxattr looks at `security.*` only), so any
//!   process that can reach the mount point can publish, with no write permission on the root
//!   and no capability; the mount checks it as the kernel's selinux_setprocattr does
//!   (`process {setfscreate}` on itself, a context of the policy or EINVAL with the
//!   `op=fscreate invalid_context=` record) before it keeps it;
//! - entries are keyed by thread id and follow the kernel's rules through the proc connector
//!   the caller table uses ([`crate::callers`]): forgotten at exec (selinux_bprm_creds_for_exec
//!   clears the create SID; the other threads are gone) and exit, copied to a process the
//!   thread forks (the credential is copied at fork). The table is drained before every use,
//!   so an event queued by the kernel before a request is applied before that request;
//! - what the connector cannot say is never guessed: a new thread's creator is not named
//!   (CLONE_THREAD reports the process's parent), so a thread created while a thread of its
//!   process has a published context is [`Attr::Unknown`], and so is every entry after lost
//!   events (an exec may have gone unseen). A create by such a thread fails (EIO, logged)
//!   until it sets or clears its fscreate context again.
//!
//! What it cannot do: a context set before the mount was mounted (or before the process could
//! reach it) was published nowhere, so files that thread creates on the mount get the policy's
//! label; a child made with CLONE_PARENT is reported with its creator's parent and inherits
//! nothing. Without the proc connector nothing can be forgotten at exec, so nothing is kept
//! and publishing fails (EOPNOTSUPP).

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};
use seaccess_types::Sid;

use crate::connector::Event;

/// The attribute libseaccess sets on a mount's root to publish its thread's fscreate context.
pub const FSCREATE_XATTR: &str = "system.seaccess.fscreate";

/// Entries one uid may publish (its threads' inherited entries are not counted: they live no
/// longer than the threads, which the system bounds).
pub const MAX_PER_UID: usize = crate::request::MAX_PER_UID;

/// The thread group of thread `tid` (/proc/TID/status), None when it is gone or not in our
/// pid namespace.
pub fn tgid_of(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// A thread's published fscreate context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attr {
    /// Files it creates get this SID (checked at each create).
    Set(Sid),
    /// It may have one the mount cannot know: why.
    Unknown(Arc<str>),
}

struct Entry {
    tgid: u32,
    /// Who published it (None: inherited).
    uid: Option<u32>,
    attr: Attr,
}

/// The published contexts, by thread id (kept inside the caller table, under its lock, and
/// fed its events).
#[derive(Default)]
pub struct Published {
    by_tid: FxHashMap<u32, Entry>,
    by_tgid: FxHashMap<u32, FxHashSet<u32>>,
    per_uid: FxHashMap<u32, usize>,
}

impl Published {
    /// Whether no thread has an entry (then no event can give one: nothing to inherit).
    pub fn is_empty(&self) -> bool {
        self.by_tid.is_empty()
    }

    /// How many threads have an entry.
    pub fn len(&self) -> usize {
        self.by_tid.len()
    }

    /// Thread `tid`'s entry, if it has one.
    pub fn get(&self, tid: u32) -> Option<&Attr> {
        self.by_tid.get(&tid).map(|e| &e.attr)
    }

    fn remove(&mut self, tid: u32) {
        let Some(e) = self.by_tid.remove(&tid) else {
            return;
        };
        if let Some(v) = self.by_tgid.get_mut(&e.tgid) {
            v.remove(&tid);
            if v.is_empty() {
                self.by_tgid.remove(&e.tgid);
            }
        }
        if let Some(u) = e.uid {
            if let Some(n) = self.per_uid.get_mut(&u) {
                *n -= 1;
                if *n == 0 {
                    self.per_uid.remove(&u);
                }
            }
        }
    }

    fn insert(&mut self, tid: u32, e: Entry) {
        self.remove(tid);
        if let Some(u) = e.uid {
            *self.per_uid.entry(u).or_insert(0) += 1;
        }
        self.by_tgid.entry(e.tgid).or_default().insert(tid);
        self.by_tid.insert(tid, e);
    }

    /// Thread `tid` of group `tgid`, acting as `uid`, set its fscreate SID (None clears it).
    /// Refused when `uid` has [`MAX_PER_UID`] entries already (the old entry stays).
    pub fn set(&mut self, tid: u32, tgid: u32, uid: u32, sid: Option<Sid>) -> Result<(), String> {
        let Some(sid) = sid else {
            self.remove(tid);
            return Ok(());
        };
        let mine = self.by_tid.get(&tid).is_some_and(|e| e.uid == Some(uid));
        if !mine && self.per_uid.get(&uid).copied().unwrap_or(0) >= MAX_PER_UID {
            return Err(format!(
                "uid {uid} has {MAX_PER_UID} threads with published fscreate contexts"
            ));
        }
        self.insert(
            tid,
            Entry {
                tgid,
                uid: Some(uid),
                attr: Attr::Set(sid),
            },
        );
        Ok(())
    }

    /// Applies a process event, as the kernel's credential rules would have it.
    pub fn apply(&mut self, ev: &Event) {
        match *ev {
            Event::Exec { tgid } => {
                for tid in self.by_tgid.get(&tgid).cloned().unwrap_or_default() {
                    self.remove(tid);
                }
            }
            Event::Exit { tid } => self.remove(tid),
            Event::Fork {
                parent,
                child,
                child_tgid,
            } if child == child_tgid => {
                // A new process: the forking thread's credential, copied.
                match self.by_tid.get(&parent) {
                    Some(e) => {
                        let attr = e.attr.clone();
                        self.insert(
                            child,
                            Entry {
                                tgid: child_tgid,
                                uid: None,
                                attr,
                            },
                        );
                    }
                    // A reused id must not keep a dead thread's entry.
                    None => self.remove(child),
                }
            }
            Event::Fork {
                child, child_tgid, ..
            } => {
                if self
                    .by_tgid
                    .get(&child_tgid)
                    .is_some_and(|v| v.iter().any(|t| *t != child))
                {
                    let why = format!("thread {child} was created while a thread of process {child_tgid} had a published fscreate context, and the kernel does not say which thread created it");
                    self.insert(
                        child,
                        Entry {
                            tgid: child_tgid,
                            uid: None,
                            attr: Attr::Unknown(why.into()),
                        },
                    );
                } else {
                    self.remove(child);
                }
            }
            Event::Lost => {
                let why: Arc<str> =
                    "process events were lost (an exec or fork may have gone unseen)".into();
                let tids: Vec<u32> = self.by_tid.keys().copied().collect();
                for tid in tids {
                    // A thread that is gone (or whose id another process took) is forgotten;
                    // one still there may have executed unseen.
                    let alive = tgid_of(tid)
                        .is_some_and(|g| self.by_tid.get(&tid).is_some_and(|e| e.tgid == g));
                    match self.by_tid.get_mut(&tid) {
                        Some(e) if alive => e.attr = Attr::Unknown(why.clone()),
                        _ => self.remove(tid),
                    }
                }
            }
            Event::Ids { .. } | Event::Comm { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const X: Sid = Sid(7);
    const Y: Sid = Sid(8);

    /// Break tried: Fork copying nothing (a forked child creates with the default label).
    #[test]
    fn a_forked_process_inherits_the_forking_threads_context_and_exec_clears_it() {
        let mut p = Published::default();
        // Process 10: its thread 11 set X, its main thread nothing.
        p.set(11, 10, 1000, Some(X)).unwrap();
        p.apply(&Event::Fork {
            parent: 11,
            child: 20,
            child_tgid: 20,
        });
        p.apply(&Event::Fork {
            parent: 10,
            child: 30,
            child_tgid: 30,
        });
        assert_eq!(p.get(20), Some(&Attr::Set(X)), "forked by thread 11");
        assert_eq!(p.get(30), None, "forked by thread 10, which set nothing");
        // The child executes: cleared (selinux_bprm_creds_for_exec); the parent keeps its own.
        p.apply(&Event::Exec { tgid: 20 });
        assert_eq!((p.get(20), p.get(11)), (None, Some(&Attr::Set(X))));
        // Clearing, exiting.
        p.set(11, 10, 1000, None).unwrap();
        assert_eq!(p.get(11), None);
        p.set(11, 10, 1000, Some(Y)).unwrap();
        p.apply(&Event::Exit { tid: 11 });
        assert!(p.is_empty());
    }

    /// Break tried: a new thread given nothing when another thread of its process has a context
    /// (it would create with the policy's label where its creator's context may apply).
    #[test]
    fn a_new_threads_creator_is_unknown_so_its_context_is_unknown() {
        let mut p = Published::default();
        p.apply(&Event::Fork {
            parent: 1,
            child: 41,
            child_tgid: 40,
        });
        assert_eq!(
            p.get(41),
            None,
            "no thread of 40 has a context: nothing to inherit"
        );
        p.set(40, 40, 0, Some(X)).unwrap();
        p.apply(&Event::Fork {
            parent: 1,
            child: 42,
            child_tgid: 40,
        });
        assert!(matches!(p.get(42), Some(Attr::Unknown(_))));
        // Setting or clearing its own makes it known again.
        p.set(42, 40, 0, None).unwrap();
        assert_eq!(p.get(42), None);
        // An exec of the group forgets every thread of it.
        p.set(42, 40, 0, Some(Y)).unwrap();
        p.apply(&Event::Exec { tgid: 40 });
        assert!(p.is_empty());
    }

    /// Break tried: Lost ignored (an exec missed leaves the old program's context in force).
    #[test]
    fn lost_events_make_living_threads_unknown_and_forget_the_dead() {
        let mut p = Published::default();
        let me = std::process::id();
        p.set(me, me, 0, Some(X)).unwrap();
        // No thread has this id (beyond pid_max's largest default).
        p.set(4_194_304 + 17, 4_194_304 + 17, 0, Some(X)).unwrap();
        p.apply(&Event::Lost);
        assert!(matches!(p.get(me), Some(Attr::Unknown(_))));
        assert_eq!(p.get(4_194_304 + 17), None);
    }

    /// Break tried: the per-uid bound not checked.
    #[test]
    fn one_uid_publishes_a_bounded_number_of_entries() {
        let mut p = Published::default();
        for t in 0..MAX_PER_UID as u32 {
            p.set(100_000 + t, 100_000 + t, 5, Some(X)).unwrap();
        }
        assert!(p.set(1, 1, 5, Some(X)).is_err());
        assert!(
            p.set(100_000, 100_000, 5, Some(Y)).is_ok(),
            "a thread that has one may change it"
        );
        assert!(
            p.set(1, 1, 6, Some(X)).is_ok(),
            "another uid is not held back"
        );
    }
}
