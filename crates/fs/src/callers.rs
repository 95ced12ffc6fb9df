//! Who is calling: the credential each thread that uses the mount acts with, decided on the
//! caller as it is at the request, and kept between its requests only while the kernel has
//! said nothing that could change it.
//!
//! A FUSE request names its calling thread (the thread id, which /proc serves) and carries the
//! filesystem uid and gid the kernel checks it with. The credential is computed from the
//! subjects file with that uid and the thread's executable and cgroup from /proc
//! ([`crate::who`]). While a thread waits for our answer it cannot exec, exit or change its
//! ids (a synchronous request holds it in the kernel until we reply), so what /proc shows
//! during the request is the caller as it is. Between requests it can, so a computed
//! credential is kept under the thread id only as long as nothing could have changed it:
//!
//! - the uid and gid: an entry records the ids it was computed for and serves only a request
//!   that carries the same ones (a setuid, an io_uring personality, a setfsuid all show in
//!   the request itself);
//! - exec, exit and id changes: the proc connector ([`crate::connector`]) queues an event into
//!   our socket inside the system call, before the thread runs on, so the event is in the
//!   socket before any request the thread makes afterwards is on /dev/fuse. Where the rules
//!   read the executable, every lookup first drains the socket under the table's lock, and
//!   applies each event (an exec drops
//!   the whole thread group: the other threads are gone and one may have taken the group's
//!   id; an exit, an id change or a new name drops the thread; a lost event drops everything)
//!   before any thread can look anything up. Thread ids are reused only after the exit event,
//!   so an entry never outlives its thread. Where they do not (uid= and cgroup= rules only,
//!   or no subjects file), the credential is a function of the request's ids and the cgroup
//!   read at the request, so an entry serves without that system call per request; events
//!   then reach the table through the events thread, as soon as they are queued, and only the
//!   name in audit records (pid and comm) can lag an exec or rename by that long;
//! - the cgroup: nothing announces a move, so a thread whose rule depended on its cgroup (a
//!   `cgroup=` rule at or before the rule it got) has its cgroup read again at each request;
//! - a computation that raced an event: it read /proc before another thread applied an event
//!   for the same thread (or group), so what it read may be from before the change. The table
//!   counts applied events (the epoch) and keeps the last few; an insertion made after an
//!   event for that thread, or after more events than are kept, is dropped (the request
//!   itself still gets the credential: the thread was as read when it asked).
//!
//! Where the connector cannot be opened (no CAP_NET_ADMIN, another user or pid namespace, a
//! kernel without it) nothing is kept: every request computes its caller. No descriptor is
//! held per caller, and the table is bounded, in all and per uid: beyond that a caller is
//! computed at every request, never refused for it.

use std::collections::VecDeque;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, Weak};

use rustc_hash::{FxHashMap, FxHashSet};
use seaccess_objmgr::{Cred, Task};
use seaccess_types::{lock, Sid};

use crate::connector::{Connector, Event, EventSource};
use crate::published::{Attr, Published};
use crate::request::Req;

pub use seaccess_subjects::{proc_info, ProcInfo};

/// A caller: its task (credential, pid and comm for audit records), or why it is refused.
pub struct Caller {
    /// The task it acts as, or why it is refused (every request of it fails closed).
    pub who: std::result::Result<Task, String>,
}

impl Caller {
    /// A caller that is not looked up (every request of a mount without checks).
    pub fn fixed(task: Task) -> Caller {
        Caller { who: Ok(task) }
    }
}

/// What computing a caller gives the table.
pub struct Computed {
    /// The caller, or why it is refused.
    pub caller: Arc<Caller>,
    /// The thread's group; None when the thread could not be read (then nothing is kept).
    pub tgid: Option<u32>,
    /// The cgroup the decision read, when a `cgroup=` rule was at or before the rule found:
    /// the entry serves only while the thread is still there.
    pub cgroup: Option<Option<String>>,
}

pub use crate::request::{MAX_ENTRIES, MAX_PER_UID};
/// Applied events remembered to judge an insertion that raced them.
const RECENT: usize = 4096;
/// Events applied in one drain before the table gives up and forgets everything (a fork
/// storm must not hold a request for long; what was not read can only drop entries).
const DRAIN_MAX: usize = 8192;

struct Entry {
    caller: Arc<Caller>,
    tgid: u32,
    uid: u32,
    gid: u32,
    cgroup: Option<Option<String>>,
}

struct Table {
    /// None: no events, so nothing is kept.
    source: Option<Box<dyn EventSource>>,
    by_tid: FxHashMap<u32, Entry>,
    /// The threads kept of each group (a set: a group of thousands of threads exits one
    /// event at a time).
    by_tgid: FxHashMap<u32, FxHashSet<u32>>,
    per_uid: FxHashMap<u32, usize>,
    /// Events applied so far (and clears).
    epoch: u64,
    /// The last events applied, with the epoch each made.
    recent: VecDeque<(u64, Event)>,
    /// The fscreate contexts threads published, fed the same events.
    published: Published,
}

impl Table {
    fn remove(&mut self, tid: u32) {
        if let Some(e) = self.by_tid.remove(&tid) {
            if let Some(v) = self.by_tgid.get_mut(&e.tgid) {
                v.remove(&tid);
                if v.is_empty() {
                    self.by_tgid.remove(&e.tgid);
                }
            }
            if let Some(n) = self.per_uid.get_mut(&e.uid) {
                *n -= 1;
                if *n == 0 {
                    self.per_uid.remove(&e.uid);
                }
            }
        }
    }

    fn apply(&mut self, ev: Event) {
        self.published.apply(&ev);
        self.apply_callers(ev);
    }

    /// An event's effect on the callers kept (a fork changes none: a new thread is computed
    /// at its first request).
    fn apply_callers(&mut self, ev: Event) {
        match ev {
            Event::Fork { .. } => return,
            Event::Exec { tgid } => {
                for tid in self.by_tgid.remove(&tgid).unwrap_or_default() {
                    // Keep by_tgid out of remove's way: it is gone already.
                    if let Some(e) = self.by_tid.remove(&tid) {
                        if let Some(n) = self.per_uid.get_mut(&e.uid) {
                            *n -= 1;
                            if *n == 0 {
                                self.per_uid.remove(&e.uid);
                            }
                        }
                    }
                }
            }
            Event::Exit { tid } | Event::Ids { tid } | Event::Comm { tid } => self.remove(tid),
            Event::Lost => {
                self.by_tid.clear();
                self.by_tgid.clear();
                self.per_uid.clear();
            }
        }
        self.epoch += 1;
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back((self.epoch, ev));
    }

    /// Applies every event queued now.
    fn drain(&mut self) {
        let mut n = 0;
        while let Some(ev) = self.source.as_mut().and_then(|s| s.next()) {
            self.apply(ev);
            n += 1;
            if n == DRAIN_MAX {
                self.apply(Event::Lost);
                return;
            }
        }
    }

    /// Whether an entry for `tid` of `tgid`, computed from what /proc showed after `since`,
    /// is still good: no event applied since concerns it.
    fn still_good(&self, since: u64, tid: u32, tgid: u32) -> bool {
        if self.epoch == since {
            return true;
        }
        match self.recent.front() {
            Some(&(first, _)) if first <= since + 1 => {}
            _ => return false,
        }
        self.recent
            .iter()
            .filter(|(e, _)| *e > since)
            .all(|(_, ev)| match *ev {
                Event::Exec { tgid: g } => g != tgid,
                Event::Exit { tid: t } | Event::Ids { tid: t } | Event::Comm { tid: t } => t != tid,
                Event::Fork { .. } => true,
                Event::Lost => false,
            })
    }

    fn insert(&mut self, tid: u32, e: Entry) {
        self.remove(tid);
        if self.by_tid.len() >= MAX_ENTRIES
            || self.per_uid.get(&e.uid).copied().unwrap_or(0) >= MAX_PER_UID
        {
            return;
        }
        *self.per_uid.entry(e.uid).or_insert(0) += 1;
        self.by_tgid.entry(e.tgid).or_default().insert(tid);
        self.by_tid.insert(tid, e);
    }
}

/// A shared credential's SID and create SID.
type CredKey = (Sid, Option<Sid>);

struct Shared {
    table: Mutex<Table>,
    /// One credential per SID, shared by the callers that have it (its decision caches warm
    /// for all of them); forgotten with the table on a reload.
    creds: Mutex<FxHashMap<CredKey, Arc<Cred>>>,
    /// How a thread's cgroup is read (a test's fake, else /proc).
    cgroup_of: fn(u32) -> Option<String>,
}

/// The callers seen, by thread id.
pub struct Callers {
    shared: Arc<Shared>,
}

impl Default for Callers {
    fn default() -> Callers {
        Callers::new()
    }
}

/// Credentials kept per SID at most (more distinct SIDs than rules and transitions give is
/// not expected; beyond it a credential is made for each caller).
const MAX_CREDS: usize = 4096;

impl Callers {
    /// The table, fed by the proc connector. Without one (said once on standard error)
    /// nothing is kept.
    pub fn new() -> Callers {
        match Connector::open() {
            Ok(c) => {
                let wake = rustix::io::dup(c.fd()).ok();
                let callers =
                    Callers::with_source(Some(Box::new(c)), seaccess_subjects::proc_cgroup);
                if let Some(fd) = wake {
                    callers.spawn_drainer(fd);
                }
                callers
            }
            Err(why) => {
                eprintln!("seaccess mount: callers are not cached (every request reads its caller from /proc): {why}");
                Callers::with_source(None, seaccess_subjects::proc_cgroup)
            }
        }
    }

    /// A table fed by `source` (None: nothing is kept), reading cgroups with `cgroup_of`.
    pub fn with_source(
        source: Option<Box<dyn EventSource>>,
        cgroup_of: fn(u32) -> Option<String>,
    ) -> Callers {
        let table = Table {
            source,
            by_tid: FxHashMap::default(),
            by_tgid: FxHashMap::default(),
            per_uid: FxHashMap::default(),
            epoch: 0,
            recent: VecDeque::new(),
            published: Published::default(),
        };
        Callers {
            shared: Arc::new(Shared {
                table: Mutex::new(table),
                creds: Mutex::new(FxHashMap::default()),
                cgroup_of,
            }),
        }
    }

    /// A thread that drains the socket as soon as events wait: so that they do not pile up
    /// (and overflow into a loss) while the mount is idle, and so that entries served without
    /// draining first ([`Callers::get_by_ids`]) name their thread as it is in audit records.
    /// Requests that need the events drain for themselves.
    fn spawn_drainer(&self, fd: OwnedFd) {
        let weak: Weak<Shared> = Arc::downgrade(&self.shared);
        let spawned = std::thread::Builder::new()
            .name("seaccess-events".into())
            .spawn(move || loop {
                let mut p = [rustix::event::PollFd::new(
                    &fd,
                    rustix::event::PollFlags::IN,
                )];
                let second = rustix::event::Timespec {
                    tv_sec: 1,
                    tv_nsec: 0,
                };
                let _ = rustix::event::poll(&mut p, Some(&second));
                let Some(shared) = weak.upgrade() else { return };
                lock(&shared.table).drain();
                drop(shared);
                // At most a thousand wake-ups a second, whatever the system execs (and however a
                // broken socket answers).
                std::thread::sleep(std::time::Duration::from_millis(1));
            });
        if spawned.is_err() {
            eprintln!(
                "seaccess mount: no thread to drain process events while idle; requests drain them"
            );
        }
    }

    /// The caller `req` names, from the table, else computed by `compute` (which reads the
    /// thread from /proc). Events queued are applied first: for a subjects file whose
    /// rules read the executable (`exe=`, `transition`), which only an exec changes.
    pub fn get(&self, req: Req, compute: impl FnOnce() -> Computed) -> Arc<Caller> {
        self.get_with(req, true, compute)
    }

    /// As [`Callers::get`], for a subjects file whose rules read only the request's uid and the
    /// thread's cgroup (or no subjects file): the credential is a function of what the request
    /// carries and the cgroup read again at each request, so a kept entry serves without
    /// applying queued events first, which costs a system call per request (some 5% of a
    /// request's round trip). What an entry may still hold from before an exec or a rename
    /// is the name audit records give (pid and comm), until the events thread applies the
    /// event, as soon as it is queued.
    pub fn get_by_ids(&self, req: Req, compute: impl FnOnce() -> Computed) -> Arc<Caller> {
        self.get_with(req, false, compute)
    }

    fn get_with(
        &self,
        req: Req,
        events_first: bool,
        compute: impl FnOnce() -> Computed,
    ) -> Arc<Caller> {
        let since = {
            let mut t = lock(&self.shared.table);
            if t.source.is_none() {
                drop(t);
                return compute().caller;
            }
            if events_first {
                t.drain();
            }
            if let Some(e) = t
                .by_tid
                .get(&req.pid)
                .filter(|e| e.uid == req.uid && e.gid == req.gid)
            {
                match &e.cgroup {
                    None => return e.caller.clone(),
                    Some(cg) => {
                        let (cg, caller) = (cg.clone(), e.caller.clone());
                        drop(t);
                        if (self.shared.cgroup_of)(req.pid) == cg {
                            return caller;
                        }
                        t = lock(&self.shared.table);
                        t.drain();
                    }
                }
            }
            t.epoch
        };
        let c = compute();
        if let Some(tgid) = c.tgid {
            let mut t = lock(&self.shared.table);
            t.drain();
            if t.still_good(since, req.pid, tgid) {
                t.insert(
                    req.pid,
                    Entry {
                        caller: c.caller.clone(),
                        tgid,
                        uid: req.uid,
                        gid: req.gid,
                        cgroup: c.cgroup,
                    },
                );
            }
        }
        c.caller
    }

    /// The one credential for `sid`.
    pub fn cred(&self, sid: Sid) -> Arc<Cred> {
        self.cred_creating(sid, None)
    }

    /// The one credential for `sid` creating files with `create` (setfscreatecon's SID).
    pub fn cred_creating(&self, sid: Sid, create: Option<Sid>) -> Arc<Cred> {
        let mut m = lock(&self.shared.creds);
        if let Some(c) = m.get(&(sid, create)) {
            return c.clone();
        }
        let mut p = seaccess_objmgr::PreparedCred::new(sid);
        p.create_sid = create;
        let c = p.build();
        if m.len() < MAX_CREDS {
            m.insert((sid, create), c.clone());
        }
        c
    }

    /// Thread `req.pid` of group `tgid` sets its fscreate SID (None clears it), as the request's
    /// uid (see [`crate::published`]). Events queued before the request are applied first (a
    /// fork before it copies the old value, an exec before it clears before this sets).
    /// Refused without the proc connector (EOPNOTSUPP: nothing could be forgotten at exec) and
    /// beyond the uid's share (ENOSPC).
    pub fn publish(&self, req: Req, tgid: u32, sid: Option<Sid>) -> crate::error::Result<()> {
        use crate::error::FsError;
        let mut t = lock(&self.shared.table);
        if t.source.is_none() {
            return Err(FsError::errno_of(libc::EOPNOTSUPP, "the proc connector is not there, so a published context could not be forgotten at exec or exit"));
        }
        t.drain();
        t.published
            .set(req.pid, tgid, req.uid, sid)
            .map_err(|why| FsError::errno_of(libc::ENOSPC, why))
    }

    /// Thread `tid`'s published fscreate context, after every event queued (its exec or exit,
    /// the fork that made it) is applied.
    pub fn published(&self, tid: u32) -> Option<Attr> {
        let mut t = lock(&self.shared.table);
        if t.published.is_empty() {
            return None;
        }
        t.drain();
        t.published.get(tid).cloned()
    }

    /// How many threads have a published context.
    pub fn published_len(&self) -> usize {
        lock(&self.shared.table).published.len()
    }

    /// Forgets every caller (their credentials are computed again at their next request); a
    /// computation under way is not kept either.
    pub fn clear(&self) {
        // Published contexts stay: a reload keeps every SID (the kernel's credentials keep
        // their create SIDs across a policy load too).
        lock(&self.shared.table).apply_callers(Event::Lost);
        lock(&self.shared.creds).clear();
    }

    /// How many callers are kept.
    pub fn len(&self) -> usize {
        lock(&self.shared.table).by_tid.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether callers are kept at all (the connector is there).
    pub fn caching(&self) -> bool {
        lock(&self.shared.table).source.is_some()
    }
}

#[cfg(test)]
#[allow(unsafe_code)]
#[path = "callers_tests.rs"]
mod tests;
