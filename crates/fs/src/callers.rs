//! Who is calling: the context each process that uses the mount acts with, computed once per
//! process and kept while the process lives.
//!
//! A FUSE request names its caller by thread id only. The first request from a thread reads
//! its executable, uid, cgroup and name from /proc and computes its credential (the subjects
//! file's rules, in the mount); the credential is then kept under that id. Pid reuse must
//! never hand one process's credential to another, so each entry holds a pidfd for the very
//! thread it describes (opened before /proc is read, so what is read is that thread's), and a
//! watcher thread drops the entry as soon as the pidfd reports the thread's exit. The id can
//! name another thread only after the old one exited and was reaped, and the allocator has
//! come round to it again (pid_max ids later); the watcher wakes on the exit itself. Its
//! start time is kept too, and checked again whenever an entry is made.

use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Mutex, Weak};

use arc_swap::ArcSwap;

use rustc_hash::FxHashMap;
use rustix::event::epoll;
use seaccess_objmgr::Task;

pub use seaccess_objmgr::subjects::{proc_info, ProcInfo};

/// A caller: its task (credential, pid and comm for audit records), or why it is refused.
pub struct Caller {
    pub who: std::result::Result<Task, String>,
    /// The thread's start time (jiffies since boot, /proc/PID/stat field 22).
    pub start: u64,
    pidfd: Option<OwnedFd>,
}

impl Caller {
    /// A caller that is not looked up (every request of a mount without checks).
    pub fn fixed(task: Task) -> Caller {
        Caller { who: Ok(task), start: 0, pidfd: None }
    }
}

/// A pidfd for thread `tid` (PIDFD_THREAD: readable when that thread, not its process, exits).
fn pidfd_thread(tid: u32) -> Option<OwnedFd> {
    const PIDFD_THREAD: libc::c_long = libc::O_EXCL as libc::c_long;
    let tid = libc::pid_t::try_from(tid).ok()?;
    // SAFETY: pidfd_open takes two integers and returns a new file descriptor or -1; nothing
    // of ours is passed by pointer.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, tid as libc::c_long, PIDFD_THREAD) };
    if fd < 0 {
        // Kernels before 6.9 have no PIDFD_THREAD: a process's pidfd works for its leader.
        let pid = rustix::process::Pid::from_raw(tid)?;
        return rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).ok();
    }
    let fd = i32::try_from(fd).ok()?;
    // SAFETY: `fd` was just returned by pidfd_open, is open, and nothing else owns it.
    Some(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Read on every request, written once per new caller: readers take no lock (a copy of the map
/// is swapped in on each change, under `write`).
struct Map {
    read: ArcSwap<FxHashMap<u32, Arc<Caller>>>,
    write: Mutex<()>,
}

impl Map {
    fn change(&self, f: impl FnOnce(&mut FxHashMap<u32, Arc<Caller>>)) {
        let _w = seaccess_types::lock(&self.write);
        let mut m = FxHashMap::clone(&self.read.load());
        f(&mut m);
        self.read.store(Arc::new(m));
    }
}

/// The callers seen, by thread id.
pub struct Callers {
    map: Arc<Map>,
    epoll: Option<Arc<OwnedFd>>,
}

impl Default for Callers {
    fn default() -> Callers {
        Callers::new()
    }
}

impl Callers {
    /// An empty table with its watcher thread (without one, nothing is kept: every request
    /// computes its caller again).
    pub fn new() -> Callers {
        let map = Arc::new(Map { read: ArcSwap::from_pointee(FxHashMap::default()), write: Mutex::new(()) });
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC).ok().map(Arc::new);
        if let Some(ep) = &epoll {
            let (ep, weak) = (ep.clone(), Arc::downgrade(&map));
            let spawned = std::thread::Builder::new().name("seaccess-callers".into()).spawn(move || watch(&ep, &weak));
            if spawned.is_err() {
                return Callers { map, epoll: None };
            }
        }
        Callers { map, epoll }
    }

    /// The caller with thread id `pid`, computed by `make` (from its /proc information) when
    /// it is not known yet.
    pub fn get(&self, pid: u32, make: impl FnOnce(u32, &ProcInfo) -> std::result::Result<Task, String>) -> Arc<Caller> {
        if let Some(c) = self.map.read.load().get(&pid) {
            return c.clone();
        }
        let pidfd = if self.epoll.is_some() { pidfd_thread(pid) } else { None };
        let Some(info) = proc_info(pid) else {
            return Arc::new(Caller { who: Err(format!("pid {pid} has no /proc entry (gone, or in another pid namespace)")), start: 0, pidfd: None });
        };
        let who = make(pid, &info);
        let caller = Arc::new(Caller { who, start: info.start, pidfd });
        // Kept only while its pidfd can tell when it ends.
        if let (Some(ep), Some(fd)) = (&self.epoll, &caller.pidfd) {
            let data = epoll::EventData::new_u64(u64::from(pid) << 32 | u64::from(fd.as_raw_fd() as u32));
            self.map.change(|m| {
                if epoll::add(ep.as_fd(), fd, data, epoll::EventFlags::IN | epoll::EventFlags::ONESHOT).is_ok() {
                    m.insert(pid, caller.clone());
                }
            });
        }
        caller
    }

    /// Forgets every caller (their credentials are computed again at their next request).
    pub fn clear(&self) {
        self.map.change(|m| m.clear());
    }

    pub fn len(&self) -> usize {
        self.map.read.load().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The watcher: drops a caller when its pidfd reports its exit.
fn watch(ep: &OwnedFd, map: &Weak<Map>) {
    let mut events = Vec::with_capacity(64);
    loop {
        events.clear();
        if epoll::wait(ep.as_fd(), rustix::buffer::spare_capacity(&mut events), None).is_err() {
            continue;
        }
        let Some(map) = map.upgrade() else { return };
        map.change(|m| {
            for e in &events {
                let d = e.data.u64();
                let (pid, fd) = ((d >> 32) as u32, d as u32);
                let same = m.get(&pid).and_then(|c| c.pidfd.as_ref()).is_some_and(|p| p.as_raw_fd() as u32 == fd);
                if same {
                    m.remove(&pid);
                }
            }
        });
    }
}
