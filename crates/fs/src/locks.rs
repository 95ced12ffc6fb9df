//! Waiting locks (SETLKW, and flock without LOCK_NB): one thread retries every pending wait
//! with a non-blocking lock, instead of one blocked server thread per waiter.
//!
//! Why it must be bounded and must watch its callers: fuser answers FUSE_INTERRUPT with
//! ENOSYS, after which the kernel sends no interrupt again, and a caller whose request we have
//! read waits in the kernel, uninterruptibly, until we answer: a SIGKILLed waiter stays in D
//! state until then. So each wait is answered EINTR as soon as its thread has a signal it
//! would take (pending, not blocked; SIGKILL always), or is gone: what the kernel would have
//! done on an interrupt (fuse_setlk turns EINTR into ERESTARTSYS, so a caller whose signal is
//! handled with SA_RESTART asks again). A uid holds at most [`WAITS_PER_UID`] waits and all
//! uids [`WAITS_MAX`], of which root's share is root's alone; beyond that a SETLKW gets ENOLCK at once (never a thread or a slot of
//! another uid's). A wait holds only a weak reference to its open file: once the file is
//! released the wait ends (EINTR) at its next try, and never takes a lock for a closed file.

use std::os::fd::AsRawFd;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;
use seaccess_types::lock;

use crate::error::{FsError, Result};
use crate::request::{Handle, Req};

/// How a wait is answered (the FUSE reply, moved in).
pub type Done = Box<dyn FnOnce(Result<()>) + Send>;

/// What a wait locks: an open file of the mount ([`Handle`]; a plain file in tests).
pub trait Lockable: Send + Sync {
    /// The open file a lock is taken on.
    fn file(&self) -> &std::fs::File;
}

impl Lockable for Handle {
    fn file(&self) -> &std::fs::File {
        &self.file
    }
}

impl Lockable for std::fs::File {
    fn file(&self) -> &std::fs::File {
        self
    }
}

/// Waits one uid may have pending. A waiting lock is one blocked thread of the caller; 128
/// covers a pool of workers contending for one file (a web server's, a database's), and is
/// what one user can make the waiter thread poll.
pub const WAITS_PER_UID: usize = 128;
/// Waits pending in all: each costs the waiter thread a /proc read and an fcntl per try, and
/// tries back off to one every [`BACKOFF_MAX`], so 1024 waits are at most about 20,000 small
/// system calls a second. The uids other than root share all but root's [`WAITS_PER_UID`]:
/// seven of them at their bound fill it, and root's waits are still taken.
pub const WAITS_MAX: usize = 1024;
/// The first retry comes after this, each next one twice as late, up to [`BACKOFF_MAX`].
const BACKOFF_FIRST: Duration = Duration::from_millis(1);
/// The longest a free lock or a caller's signal waits to be noticed.
pub const BACKOFF_MAX: Duration = Duration::from_millis(50);

struct Wait {
    handle: Weak<dyn Lockable>,
    fl: libc::flock,
    tid: u32,
    uid: u32,
    done: Done,
    next: Instant,
    backoff: Duration,
}

#[derive(Default)]
struct State {
    /// The waits not being tried now (the waiter thread takes the due ones out meanwhile).
    waits: Vec<Wait>,
    /// Waits accepted and not answered yet, in all and per uid: these, not `waits`, are what
    /// the bounds count, so a wait being tried still counts.
    total: usize,
    per_uid: FxHashMap<u32, usize>,
    /// A lock was released: try every wait now.
    poked: bool,
    stop: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// The pending waits and their thread.
pub struct Waits {
    shared: Arc<Shared>,
    /// Whether the thread runs (without it every SETLKW that would wait gets ENOLCK).
    running: bool,
}

impl Default for Waits {
    fn default() -> Waits {
        Waits::new()
    }
}

impl Waits {
    /// No waits, and the thread that will serve them.
    pub fn new() -> Waits {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let s = shared.clone();
        let running = std::thread::Builder::new()
            .name("seaccess-locks".into())
            .spawn(move || serve(&s))
            .is_ok();
        Waits { shared, running }
    }

    /// Waits for lock `fl` on `h`'s file for the caller `req`, answering through `done`;
    /// ENOLCK at once when the caller's uid, or everyone, has as many waits as allowed.
    pub fn add<L: Lockable + 'static>(&self, h: &Arc<L>, fl: libc::flock, req: Req, done: Done) {
        let refused = {
            let mut st = lock(&self.shared.state);
            let mine = st.per_uid.get(&req.uid).copied().unwrap_or(0);
            if !self.running || st.stop {
                Some("no thread serves waiting locks".to_string())
            } else if mine >= WAITS_PER_UID {
                Some(format!("uid {} already has {mine} waiting locks", req.uid))
            } else if req.uid != 0
                && st.total - st.per_uid.get(&0).copied().unwrap_or(0) >= WAITS_MAX - WAITS_PER_UID
            {
                // Root's share is never taken by the others: the system's own services keep
                // their waits whatever users do.
                Some(format!(
                    "users other than root have {} locks waiting",
                    WAITS_MAX - WAITS_PER_UID
                ))
            } else {
                *st.per_uid.entry(req.uid).or_insert(0) += 1;
                st.total += 1;
                let next = Instant::now() + BACKOFF_FIRST;
                let weak: Weak<dyn Lockable> = Arc::downgrade(h) as Weak<dyn Lockable>;
                st.waits.push(Wait {
                    handle: weak,
                    fl,
                    tid: req.pid,
                    uid: req.uid,
                    done,
                    next,
                    backoff: BACKOFF_FIRST,
                });
                self.shared.wake.notify_one();
                return;
            }
        };
        if let Some(why) = refused {
            done(Err(FsError::errno_of(libc::ENOLCK, why)));
        }
    }

    /// A lock was released or downgraded: every wait tries again now.
    pub fn poke(&self) {
        let mut st = lock(&self.shared.state);
        if !st.waits.is_empty() {
            st.poked = true;
            self.shared.wake.notify_one();
        }
    }

    /// How many waits are pending.
    pub fn pending(&self) -> usize {
        lock(&self.shared.state).total
    }
}

impl Drop for Waits {
    fn drop(&mut self) {
        lock(&self.shared.state).stop = true;
        self.shared.wake.notify_one();
    }
}

/// What one try of a wait gives.
enum Try {
    Again,
    Answer(Result<()>),
}

fn interrupted(why: String) -> Try {
    Try::Answer(Err(FsError::errno_of(libc::EINTR, why)))
}

fn try_once(w: &Wait) -> Try {
    if let Some(why) = signalled(w.tid) {
        return interrupted(why);
    }
    let Some(h) = w.handle.upgrade() else {
        return interrupted("its file was released".into());
    };
    let mut fl = w.fl;
    match fcntl_lock(h.file(), libc::F_OFD_SETLK, &mut fl) {
        Ok(()) => Try::Answer(Ok(())),
        Err(e) if conflict(&e) => Try::Again,
        Err(e) => Try::Answer(Err(e)),
    }
}

/// The waiter thread: sleeps until the earliest try is due (or a wait is added, or a lock
/// released), tries the due waits without holding the state, answers outside it.
fn serve(shared: &Shared) {
    loop {
        let due: Vec<Wait> = {
            let mut st = lock(&shared.state);
            loop {
                if st.stop {
                    let all = std::mem::take(&mut st.waits);
                    drop(st);
                    for w in all {
                        (w.done)(Err(FsError::errno_of(
                            libc::EINTR,
                            "the mount is going away",
                        )));
                    }
                    return;
                }
                let now = Instant::now();
                if std::mem::take(&mut st.poked) {
                    for w in &mut st.waits {
                        w.next = now;
                        w.backoff = BACKOFF_FIRST;
                    }
                }
                match st.waits.iter().map(|w| w.next).min() {
                    None => st = seaccess_types::lock::wait(&shared.wake, st),
                    Some(t) if t > now => {
                        st = seaccess_types::lock::wait_timeout(&shared.wake, st, t - now).0
                    }
                    Some(_) => break,
                }
            }
            let now = Instant::now();
            let (due, rest): (Vec<Wait>, Vec<Wait>) = std::mem::take(&mut st.waits)
                .into_iter()
                .partition(|w| w.next <= now);
            st.waits = rest;
            due
        };
        let mut again = Vec::new();
        let mut answers = Vec::new();
        for mut w in due {
            match try_once(&w) {
                Try::Again => {
                    w.backoff = (w.backoff * 2).min(BACKOFF_MAX);
                    w.next = Instant::now() + w.backoff;
                    again.push(w);
                }
                Try::Answer(r) => answers.push((w, r)),
            }
        }
        {
            let mut st = lock(&shared.state);
            st.waits.extend(again);
            for (w, _) in &answers {
                st.total = st.total.saturating_sub(1);
                if let Some(n) = st.per_uid.get_mut(&w.uid) {
                    *n -= 1;
                    if *n == 0 {
                        st.per_uid.remove(&w.uid);
                    }
                }
            }
        }
        for (w, r) in answers {
            (w.done)(r);
        }
    }
}

/// Why thread `tid` would not wait any longer, if it would not: it is gone, or a signal it
/// takes is pending (SIGKILL always: it cannot be blocked, and a group exit sets it on every
/// thread).
fn signalled(tid: u32) -> Option<String> {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{tid}/status")) else {
        return Some(format!("thread {tid} is gone"));
    };
    let mask = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
            .unwrap_or(0)
    };
    let pending = mask("SigPnd:") | mask("ShdPnd:");
    const SIGKILL: u64 = 1 << (libc::SIGKILL - 1);
    if pending & SIGKILL != 0 {
        return Some(format!("thread {tid} is killed"));
    }
    if pending & !mask("SigBlk:") != 0 {
        return Some(format!("thread {tid} has a signal pending"));
    }
    None
}

/// Whether a lock error is a conflict with another lock (try again later).
pub fn conflict(e: &FsError) -> bool {
    matches!(e, FsError::Io(io) if matches!(io.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EACCES)))
}

/// A struct flock for FUSE's range: the end inclusive, OFFSET_MAX (or more) for "to the end
/// of the file".
pub fn flock(start: u64, end: u64, typ: i32) -> libc::flock {
    let len = if end >= i64::MAX as u64 || end < start {
        0
    } else {
        end - start + 1
    };
    libc::flock {
        l_type: typ as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: start as libc::off_t,
        l_len: len as libc::off_t,
        l_pid: 0,
    }
}

/// fcntl with a lock command on `file`.
pub fn fcntl_lock(file: &std::fs::File, cmd: libc::c_int, fl: &mut libc::flock) -> Result<()> {
    // SAFETY: the lock commands read and write one struct flock through the pointer, which
    // is a live exclusive borrow; the descriptor is open for the call's length.
    let r = unsafe { libc::fcntl(file.as_raw_fd(), cmd, fl as *mut libc::flock) };
    if r < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    Ok(())
}

#[cfg(test)]
#[path = "locks_tests.rs"]
mod tests;
