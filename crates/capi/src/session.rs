//! A `seaccess run` session: the state every process of one session shares, as processes on
//! one kernel share the kernel's (the enforcing mode, the booleans' pending and active values,
//! the policy loaded).
//!
//! The session's supervisor owns that state. It publishes it in a page (the session
//! directory's `state`, laid out in seaccess_types::session) that this library maps read-only,
//! as libselinux maps selinuxfs's `status`: a check compares one word, the page's sequence,
//! with the last one this process applied ([`sync`]), and only a change costs more. Changes go
//! the other way through the session's selinuxfs view (`enforce`, `booleans/NAME`,
//! `commit_pending_bools`, `load`), which the supervisor serves and where it checks the
//! writer's context as selinuxfs's sel_write_enforce, sel_write_bool, sel_commit_bools_write
//! and sel_write_load do: this library writes those files as libselinux does, and never the
//! page. A process that cannot change the page cannot change the session's state by another
//! route than the checked one.
//!
//! The process's cache statistics go to a second file (`avc_stats`), one line a process, which
//! the view's `avc/cache_stats` sums, as the kernel's gives one line a CPU.

use std::ffi::{c_char, CString};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering::*};
use std::sync::Mutex;

use once_cell::race::OnceBox;

use seaccess_types::session as layout;

use crate::ffi::{Errno, Res, EINVAL};
use crate::kernel::{self, Kernel};

/// The session directory (`state`, `avc_stats`, `policy`).
pub const SESSION_ENV: &str = "SEACCESS_SESSION";
/// Where the session's selinuxfs view is mounted (what `selinux_mnt` says).
pub const SELINUXFS_ENV: &str = "SEACCESS_SELINUXFS";

/// A shared mapping of one of the session's files: its state page (read-only) or its statistics
/// (written through atomics).
struct Page {
    base: *const u8,
    len: usize,
}

impl Drop for Page {
    fn drop(&mut self) {
        // SAFETY: `base` and `len` are a mapping `map` made and nothing else unmaps. A page is
        // dropped only if it was never published: one found not to be a session's, or the one
        // that lost the race to fill SESSION or STATS (`race::OnceBox` drops the later value
        // unseen). A published page is in a static and lives for the process.
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

// SAFETY: a published mapping is never unmapped (it lives for the process) and is only read
// and written through atomics, so that sharing the pointer between threads is sound.
unsafe impl Send for Page {}
// SAFETY: as for Send.
unsafe impl Sync for Page {}

impl Page {
    fn word(&self, at: usize) -> u32 {
        if at + 4 > self.len {
            return 0;
        }
        // SAFETY: `at` is a 4-aligned offset inside the mapping (checked above; the layout's
        // offsets are multiples of 4 and the mapping is page-aligned); the supervisor writes the
        // word while we read it, which an atomic load allows.
        unsafe { (*(self.base.add(at) as *const AtomicU32)).load(Acquire) }
    }

    fn byte(&self, at: usize) -> u8 {
        if at >= self.len {
            return 0;
        }
        // SAFETY: `at` is inside the mapping (checked above); read atomically as for `word`.
        unsafe { (*(self.base.add(at) as *const AtomicU8)).load(Acquire) }
    }

    fn nbools(&self) -> usize {
        (self.word(layout::NBOOLS) as usize)
            .min(self.len.saturating_sub(layout::BOOLS_AT) / layout::BOOL_SIZE)
    }

    fn bool_name(&self, i: usize) -> String {
        let at = layout::BOOLS_AT + i * layout::BOOL_SIZE;
        let name: Vec<u8> = (0..layout::NAME_LEN)
            .map(|j| self.byte(at + j))
            .take_while(|&b| b != 0)
            .collect();
        String::from_utf8_lossy(&name).into_owned()
    }

    /// The index of boolean `name`, if the page has it.
    fn find(&self, name: &str) -> Option<usize> {
        (0..self.nbools()).find(|&i| self.bool_name(i) == name)
    }

    /// The fields under the kernel's sequence protocol: read again while the writer is inside
    /// a change (odd sequence) or finished one meanwhile.
    fn snapshot(&self, with_bools: bool) -> Snapshot {
        loop {
            let s1 = self.word(layout::SEQUENCE);
            if s1 & 1 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let snap = Snapshot {
                sequence: s1,
                enforcing: self.word(layout::ENFORCING) != 0,
                policyload: self.word(layout::POLICYLOAD),
                policy_gen: self.word(layout::POLICY_GEN),
                active: if with_bools {
                    (0..self.nbools())
                        .map(|i| {
                            (
                                self.bool_name(i),
                                self.byte(
                                    layout::BOOLS_AT + i * layout::BOOL_SIZE + layout::NAME_LEN,
                                ) != 0,
                            )
                        })
                        .collect()
                } else {
                    Vec::new()
                },
            };
            if self.word(layout::SEQUENCE) == s1 {
                return snap;
            }
        }
    }
}

struct Snapshot {
    sequence: u32,
    enforcing: bool,
    policyload: u32,
    policy_gen: u32,
    active: Vec<(String, bool)>,
}

struct Session {
    dir: PathBuf,
    selinuxfs: PathBuf,
    page: Page,
}

/// Opened racing (two threads asking first each map the page, the later mapping dropped), never
/// waited for: a child forked while another thread opened it would wait forever (see
/// [`crate::fork`]).
static SESSION: OnceBox<Option<Session>> = OnceBox::new();

fn map(path: &std::path::Path, write: bool) -> Option<(*mut u8, usize)> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .open(path)
        .ok()?;
    let len = usize::try_from(f.metadata().ok()?.len())
        .ok()
        .filter(|&l| l > 0)?;
    let prot = if write {
        libc::PROT_READ | libc::PROT_WRITE
    } else {
        libc::PROT_READ
    };
    use std::os::fd::AsRawFd;
    // SAFETY: a fresh shared mapping of `len` bytes of an open file; the kernel chooses the
    // address; the descriptor may be closed afterwards (the mapping keeps the file).
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            prot,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        )
    };
    (p != libc::MAP_FAILED).then_some((p as *mut u8, len))
}

fn open_session() -> Option<Session> {
    let dir = PathBuf::from(kernel::env(SESSION_ENV)?);
    let selinuxfs = PathBuf::from(kernel::env(SELINUXFS_ENV)?);
    let Some((base, len)) = map(&dir.join(layout::STATE_FILE), false) else {
        crate::callbacks::log(
            crate::callbacks::SELINUX_ERROR,
            &format!("seaccess: {SESSION_ENV}={}: no session state page there; this process keeps its own state\n", dir.display()),
        );
        return None;
    };
    let page = Page { base, len };
    if page.word(layout::MAGIC_AT) != layout::MAGIC {
        crate::callbacks::log(
            crate::callbacks::SELINUX_ERROR,
            &format!(
                "seaccess: {}: not a session state page\n",
                dir.join(layout::STATE_FILE).display()
            ),
        );
        return None;
    }
    Some(Session {
        dir,
        selinuxfs,
        page,
    })
}

fn session() -> Option<&'static Session> {
    SESSION.get_or_init(|| Box::new(open_session())).as_ref()
}

/// Whether this process belongs to a session.
pub(crate) fn active() -> bool {
    session().is_some()
}

/// Where the session's selinuxfs view is, for a process of a session.
pub(crate) fn selinuxfs() -> Option<&'static std::path::Path> {
    session().map(|s| s.selinuxfs.as_path())
}

/// The sequence this process last applied (u32::MAX: none yet; the page's is always even).
static SEEN: AtomicU32 = AtomicU32::new(u32::MAX);
/// (policyload << 32 | policy_gen) last applied; [`NOT_APPLIED`] before the first.
static APPLIED: AtomicU64 = AtomicU64::new(NOT_APPLIED);
const NOT_APPLIED: u64 = u64::MAX;
/// Whether a thread is applying the session's state ([`sync_slow`]): one applies, the others go
/// on. A flag rather than a lock, so that a child forked while another thread applied can
/// clear it ([`Held`]): a lock held by a thread the child does not have would stay held, and
/// the child would never follow the session again.
static APPLYING: AtomicBool = AtomicBool::new(false);

thread_local! {
    static CALLS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
    /// Whether this thread holds [`APPLYING`] (a program callback run by its apply may fork).
    static APPLYING_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// [`APPLYING`], taken by this thread until dropped (a panic included).
struct Applying;

impl Applying {
    fn take() -> Option<Applying> {
        APPLYING
            .compare_exchange(false, true, Acquire, Relaxed)
            .ok()?;
        APPLYING_HERE.with(|h| h.set(true));
        Some(Applying)
    }
}

impl Drop for Applying {
    fn drop(&mut self) {
        APPLYING_HERE.with(|h| h.set(false));
        APPLYING.store(false, Release);
    }
}

/// What the fork handlers hold across a fork (`crate::hold_for_fork`, first: [`publish`] takes
/// the slot's lock and then the cache's statistics). In the child, its drop also ends an apply
/// another thread of the parent was making: the child's next check applies the session's state
/// again, in full.
pub(crate) struct Held {
    _slot: std::sync::MutexGuard<'static, Option<(usize, u32)>>,
    pid: u32,
}

pub(crate) fn hold() -> Held {
    Held {
        _slot: seaccess_types::lock(&SLOT),
        pid: std::process::id(),
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if std::process::id() != self.pid && !APPLYING_HERE.with(std::cell::Cell::get) {
            APPLYING.store(false, Release);
        }
    }
}

/// Checks between two publications of this process's cache statistics.
const PUBLISH_EVERY: u32 = 1024;

/// Set once this process is known to belong to no session (which never changes after): every
/// check then skips [`sync`] in one load, not the two tests of the session's lazily made state.
static NO_SESSION: AtomicBool = AtomicBool::new(false);

/// Whether this process is known to belong to no session: [`sync`] does nothing.
pub(crate) fn known_none() -> bool {
    NO_SESSION.load(Relaxed)
}

/// Brings this process's kernel to the session's state, if it changed since the last look: one
/// atomic load when it did not.
#[inline]
pub(crate) fn sync(k: &Kernel) {
    if NO_SESSION.load(Relaxed) {
        return;
    }
    let Some(s) = session() else {
        NO_SESSION.store(true, Relaxed);
        return;
    };
    let seq = s.page.word(layout::SEQUENCE);
    if seq != SEEN.load(Acquire) {
        sync_slow(k, s);
    }
    let n = CALLS.with(|c| {
        let n = c.get().wrapping_add(1);
        c.set(n);
        n
    });
    if n % PUBLISH_EVERY == 0 {
        publish(k);
    }
}

#[cold]
fn sync_slow(k: &Kernel, s: &Session) {
    // One thread applies; the others (and a callback that calls back in while it applies) go
    // on with the state as it was a moment ago, as a check racing a change does on a kernel.
    let Some(applying) = Applying::take() else {
        return;
    };
    let snap = s.page.snapshot(true);
    let applied = APPLIED.load(Relaxed);
    let (load, gen) = ((applied >> 32) as u32, applied as u32);
    if gen != snap.policy_gen && applied != NOT_APPLIED {
        // Another process loaded a policy into the session: load the session's image.
        let _ = kernel::load(&s.dir.join(layout::POLICY_FILE).to_string_lossy());
    }
    if load != snap.policyload || gen != snap.policy_gen {
        let mut changed = false;
        for (name, v) in &snap.active {
            if k.server.pending_boolean(name).is_ok_and(|p| p != *v)
                || k.server.snapshot().boolean(name).is_ok_and(|a| a != *v)
            {
                changed |= k.server.set_boolean(name, *v).is_ok();
            }
        }
        if changed {
            k.server.commit_booleans();
        }
    }
    APPLIED.store(
        (u64::from(snap.policyload) << 32) | u64::from(snap.policy_gen),
        Relaxed,
    );
    drop(applying);
    if k.enforcing.load(Acquire) != snap.enforcing {
        kernel::set_enforcing(k, snap.enforcing);
    }
    SEEN.store(snap.sequence, Release);
    publish(k);
}

/// The session page's (policyload, enforcing, deny_unknown), for the status page calls.
pub(crate) fn status() -> Option<(u32, bool, bool)> {
    let s = session()?;
    let snap = s.page.snapshot(false);
    Some((
        snap.policyload,
        snap.enforcing,
        s.page.word(layout::DENY_UNKNOWN) != 0,
    ))
}

/// The pending value of boolean `name` in the session (ENOENT for a name it lacks), None
/// outside a session.
pub(crate) fn pending(name: &str) -> Option<Res<bool>> {
    let s = session()?;
    Some(
        s.page
            .find(name)
            .map(|i| {
                s.page
                    .byte(layout::BOOLS_AT + i * layout::BOOL_SIZE + layout::NAME_LEN + 1)
                    != 0
            })
            .ok_or(crate::ffi::ENOENT),
    )
}

/// Writes `data` to the view's file `rel` (`enforce`, `booleans/NAME`...), as libselinux writes
/// selinuxfs: the supervisor checks the write and answers its errno (EACCES for a denial).
/// The page shows the change before the write returns.
pub(crate) fn write(rel: &str, data: &[u8]) -> Option<Res<()>> {
    let s = session()?;
    let path = s.selinuxfs.join(rel);
    let r = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).open(&path)?;
        f.write_all(data)?;
        // The view applies a policy image when it is synced (it arrives in pieces).
        f.sync_all()
    })();
    Some(r.map_err(|e| Errno(e.raw_os_error().unwrap_or(EINVAL.0))))
}

/// The statistics slot this process writes, and the pid that claimed it (a forked child
/// claims its own).
static SLOT: Mutex<Option<(usize, u32)>> = Mutex::new(None);
/// Mapped racing, as [`SESSION`].
static STATS: OnceBox<Option<Page>> = OnceBox::new();

fn stats_map() -> Option<(*const AtomicU64, usize)> {
    let s = session()?;
    let page = STATS
        .get_or_init(|| {
            Box::new(
                map(&s.dir.join(layout::STATS_FILE), true).map(|(base, len)| Page {
                    base: base as *const u8,
                    len,
                }),
            )
        })
        .as_ref()?;
    Some((page.base as *const AtomicU64, page.len / 8))
}

fn slot_word(
    base: *const AtomicU64,
    words: usize,
    slot: usize,
    i: usize,
) -> Option<&'static AtomicU64> {
    let at = slot * (layout::STATS_SLOT_SIZE / 8) + i;
    // SAFETY: `at` is inside the mapping (checked), which lives for the process and is only
    // accessed through atomics.
    (at < words).then(|| unsafe { &*base.add(at) })
}

/// Writes this process's cache statistics to its line of the session's statistics.
pub(crate) fn publish(k: &Kernel) {
    let Some((base, words)) = stats_map() else {
        return;
    };
    let pid = std::process::id();
    let Ok(mut slot) = SLOT.try_lock() else {
        return;
    };
    let idx = match *slot {
        Some((i, p)) if p == pid => i,
        _ => {
            let Some(i) = (1..layout::STATS_SLOTS).find(|&i| {
                slot_word(base, words, i, 0).is_some_and(|w| {
                    w.compare_exchange(0, u64::from(pid), AcqRel, Relaxed)
                        .is_ok()
                })
            }) else {
                return;
            };
            if slot.is_none() {
                // SAFETY: registers a plain extern "C" function that lives for the process.
                unsafe { libc::atexit(retire) };
            }
            *slot = Some((i, pid));
            i
        }
    };
    let c = k.avc.cache_stats();
    for (i, v) in [
        c.lookups,
        c.hits,
        c.misses,
        c.allocations,
        c.reclaims,
        c.frees,
    ]
    .into_iter()
    .enumerate()
    {
        if let Some(w) = slot_word(base, words, idx, i + 1) {
            w.store(v, Relaxed);
        }
    }
}

/// At exit: this process's figures move to the retired line and its slot is freed (the
/// kernel's counters do not go down when a process ends).
extern "C" fn retire() {
    let _ = std::panic::catch_unwind(|| {
        if let Some(k) = kernel::loaded() {
            publish(k);
        }
        let Some((base, words)) = stats_map() else {
            return;
        };
        let Ok(slot) = SLOT.lock() else { return };
        let Some((idx, pid)) = *slot else { return };
        if pid != std::process::id() {
            return;
        }
        for i in 1..7 {
            if let (Some(w), Some(r)) = (
                slot_word(base, words, idx, i),
                slot_word(base, words, layout::STATS_RETIRED, i),
            ) {
                r.fetch_add(w.swap(0, AcqRel), AcqRel);
            }
        }
        if let Some(w) = slot_word(base, words, idx, 0) {
            w.store(0, Release);
        }
    });
}

/// Sets `selinux_mnt` to the session's view when the library is loaded, before `main`: programs
/// read the variable itself (avcstat, sestatus), as libselinux's constructor sets it.
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static SET_SELINUX_MNT: extern "C" fn() = set_selinux_mnt;

#[cfg(target_os = "linux")]
extern "C" fn set_selinux_mnt() {
    let _ = std::panic::catch_unwind(|| {
        let Some(mnt) = kernel::env(SELINUXFS_ENV) else {
            return;
        };
        if kernel::env(SESSION_ENV).is_none() {
            return;
        }
        if let Ok(c) = CString::new(mnt.as_bytes()) {
            crate::paths::set_selinuxmnt(c.as_ptr() as *const c_char);
        }
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The fork handlers' hold dropped as in the child: in a process other than the one that
    /// took it.
    fn drop_in_child() {
        drop(Held {
            _slot: seaccess_types::lock(&SLOT),
            pid: std::process::id().wrapping_add(1),
        });
    }

    /// A child forked while another thread of the parent applied the session's state applies
    /// it again itself (that thread is not in the child to finish); an apply of the forking
    /// thread itself (a program's callback that forked during it) is left to that thread.
    #[test]
    fn a_child_takes_over_an_apply_its_parent_left() {
        // Another thread takes the apply and is gone without ending it, as at a fork.
        std::thread::spawn(|| std::mem::forget(Applying::take()))
            .join()
            .unwrap();
        assert!(Applying::take().is_none(), "the apply is held");
        // In the parent, the hold changes nothing.
        drop(hold());
        assert!(Applying::take().is_none(), "the parent's apply stays held");
        drop_in_child();
        let mine = Applying::take();
        assert!(mine.is_some(), "the child applies");
        drop_in_child();
        assert!(
            Applying::take().is_none(),
            "the forking thread's own apply is kept"
        );
        drop(mine);
        assert!(Applying::take().is_some());
    }
}
