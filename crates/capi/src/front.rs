//! Each thread's front: the grants `avc_has_perm` and `avc_has_perm_noaudit` answered on this
//! thread from the cache, keyed by the caller's own SID pointers and class (and, in a table of
//! its own, `selinux_check_access`'s, keyed by its four argument pointers: [`query`]), so that
//! a repeated check is answered without proving the pointers ours, resolving the SIDs or
//! reading the shared cache (the seqlock's two reads, the generation's table): the kernel's
//! lesson of 2007, a file remembering what it was granted at open, applied to a C program's
//! repeated checks.
//!
//! What an entry holds is a fact of the cache, not of the thread: the decision the process's
//! cache (the one kernel's, for the process's life) gave for (source SID, target SID, class)
//! under one cache state. So the front is only as safe as its invalidation, whose one rule is
//! checked on every hit: the cache's stamp ([`Avc::stamp`]: its newest seqno and its mode
//! epoch) must be the one the front was filled under. A reload, a boolean, a switch of mode
//! (which revokes permissive grants) and a flush (`avc_reset`, whose statistics must then count
//! the next check as a lookup of the cache) move it; so do `avc_destroy` after it retires the
//! SIDs whose pointers key the entries, and `selinux_set_mapping` ([`invalidate`]). The stamp
//! is read before the lookup whose decision a fill remembers, so that a change racing a fill
//! leaves an entry stamped older than the change, which no later hit takes.
//!
//! Only grants are kept, and only of decisions that audit no grant (no auditallow): a hit then
//! has nothing to record, as the full way would have nothing. A pointer is compared, never
//! read: an entry's pointers were proven SIDs of this library when it was filled, and a SID is
//! never moved or freed before `avc_destroy` retires it (which moves the stamp).
//!
//! Finding the thread's front costs two loads: its address is kept in an initial-exec
//! thread-local (src/front_tls.c), not a `thread_local!` (a call to `__tls_get_addr` in a
//! shared library), read with inline assembly on x86-64 Linux (elsewhere there is no front).
//! Fronts themselves live in [`SLOTS`], claimed by thread identities (the thread pointer) for
//! good, as the cache's statistics stripes are: a later thread with a dead one's identity takes
//! over its front (sound: the two never run at once, and the entries are the cache's facts, not
//! the thread's), so fronts are never freed and never more than [`SLOTS_N`]. A thread whose two
//! slots other identities own checks without a front. A hit counts in the thread's own
//! statistics stripe ([`Avc::own_hits`]), found when the front was claimed; an identity without
//! a stripe of its own gets no front.
//!
//! Only the owning thread writes a front; the other reader is that thread itself, re-entered:
//! a signal handler or a callback that checks while the thread is inside its front. So a
//! front is `busy` while its thread reads or fills it, and a check that finds it busy goes
//! without it: it can never see half an entry nor write under a read. Compiler fences keep
//! the flag's stores around the accesses (a signal handler runs on its thread's CPU, which sees
//! that thread's stores in order).

use std::sync::atomic::{compiler_fence, AtomicPtr, AtomicU64, Ordering::*};

use seaccess_avc::Avc;
use seaccess_types::{AccessVector, AvDecision};

use crate::decision::AvDecisionC;
use crate::sid::SecurityId;

/// Slots for fronts, claimed by thread identities; a power of two.
const SLOTS_N: usize = 64;
/// Sets of a front, of two entries each (skewed ways, [`mix`]); a power of two.
const SETS: usize = 512;

/// Fronts, by their owner's identity ([`slot`]); null until a thread claims one.
static SLOTS: [AtomicPtr<Front>; SLOTS_N] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS_N];

/// One remembered grant. An empty one has source 0 and grant 0: it grants nothing, whatever
/// pointers it is asked with (NULL included).
#[repr(C)]
struct Entry {
    source: AtomicU64,
    target: AtomicU64,
    /// `allowed << 32 | class`.
    grant: AtomicU64,
    /// The rest of the decision `avc_has_perm_noaudit` reports: `auditdeny << 32 | flags`.
    rest: AtomicU64,
}

/// Two entries on one cache line: the first way of its set and the second (see [`mix`]).
#[repr(C, align(64))]
struct Set([Entry; 2]);

/// A thread's front. The sets first, so that a set's address is the front's plus its offset.
#[repr(C, align(128))]
struct Front {
    sets: [Set; SETS],
    /// `selinux_check_access`'s grants, by its four argument pointers ([`query`]).
    queries: [query::QuerySet; query::QUERY_SETS],
    /// The thread identity that claimed it.
    owner: AtomicU64,
    /// Nonzero while its thread is inside it (see the module's comment).
    busy: AtomicU64,
    /// The cache's stamp its entries were filled under.
    stamp: AtomicU64,
    /// The owner's hit counter in the cache's statistics ([`Avc::own_hits`]).
    hits: AtomicPtr<AtomicU64>,
    /// The process's cache, whose grants these are.
    avc: AtomicPtr<Avc>,
}

pub(crate) mod query;

extern "C" {
    /// Sets the calling thread's `seaccess_front` (src/front_tls.c).
    fn seaccess_front_set(front: *mut std::ffi::c_void);
}

/// Makes every front's entries unusable (emptied at its thread's next fill): the cache's
/// stamp moves.
pub(crate) fn invalidate(avc: &Avc) {
    avc.restamp();
}

/// The calling thread's front, if it found one before: its `seaccess_front`.
#[inline(always)]
fn mine() -> Option<&'static Front> {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    let p: *const Front = {
        let p: *const Front;
        // SAFETY: reads the calling thread's `seaccess_front` (front_tls.c, initial-exec): the
        // GOT entry the linker fills with its offset from the thread pointer, then the word at
        // that offset in %fs. Only memory of this thread is read; flags are left alone.
        unsafe {
            std::arch::asm!(
                "mov {p}, qword ptr [rip + seaccess_front@GOTTPOFF]",
                "mov {p}, qword ptr fs:[{p}]",
                p = out(reg) p,
                options(nostack, readonly, preserves_flags),
            )
        };
        p
    };
    #[cfg(not(all(target_arch = "x86_64", target_os = "linux")))]
    let p: *const Front = std::ptr::null();
    // SAFETY: a non-null `seaccess_front` was set by `fill` to a front of SLOTS, leaked by
    // `claim` and never freed; every field is an atomic.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// The first slot of thread identity `thread` (the second is its neighbour). Thread pointers
/// are page aligned and a stack's size apart: a multiplication brings every bit to the top.
fn slot(thread: u64) -> usize {
    (thread.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - SLOTS_N.trailing_zeros())) as usize
}

/// A key's two places: the first way of one set and the second way of another, both from one
/// multiplication (SIDs are 128 bytes apart: the pointers' low bits say nothing, and the
/// multiplication brings the rest to the top). Skewed so that keys sharing their first place
/// rarely share their second: three keys of one set no longer evict each other in turn, as
/// they did when both ways were one set's (a 2-way set thrashes on a cycle of three).
#[inline(always)]
fn mix(source: u64, target: u64, class: u16) -> u64 {
    let k = source ^ target.rotate_left(29) ^ u64::from(class);
    k.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

const SET_BITS: u32 = SETS.trailing_zeros();

#[inline(always)]
fn first(m: u64) -> usize {
    (m >> (64 - SET_BITS)) as usize
}

#[inline(always)]
fn second(m: u64) -> usize {
    (m >> (64 - 2 * SET_BITS)) as usize & (SETS - 1)
}

impl Entry {
    #[inline(always)]
    fn grants(&self, source: u64, target: u64, class: u16, requested: u32) -> bool {
        let g = self.grant.load(Relaxed);
        self.source.load(Relaxed) == source
            && self.target.load(Relaxed) == target
            && g as u32 == u32::from(class)
            && requested & !((g >> 32) as u32) == 0
    }
}

/// Whether the calling thread's front holds a grant of every permission of `requested`
/// (nonzero) to (`source`, `target`, `class`) under the cache's current state; counts the hit
/// if so. Nothing else needs testing first: a front is filled only by a check that found a
/// policy loaded, no session to follow and no class mapping (see [`fill`]), and setting a
/// mapping moves the stamp.
#[inline(always)]
pub(crate) fn hit(
    source: *const SecurityId,
    target: *const SecurityId,
    class: u16,
    requested: u32,
) -> bool {
    lookup::<false>(source, target, class, requested)
        .map(|(.., f)| f.count_hit())
        .is_some()
}

/// [`hit`] for numbers resolved in the generation of seqno `at` (selinux_check_access's memo):
/// only while the front's stamp is of that seqno, whose numbers its entries are keyed by. The
/// stamp of the grant on a hit.
#[inline(always)]
pub(crate) fn hit_at(
    source: *const SecurityId,
    target: *const SecurityId,
    class: u16,
    requested: u32,
    at: u32,
) -> Option<Stamp> {
    lookup::<false>(source, target, class, requested)
        .filter(|(_, _, stamp, _)| *stamp as u32 == at)
        .map(|(_, _, stamp, f)| {
            f.count_hit();
            Stamp(stamp)
        })
}

/// [`hit`] with the whole decision, as the cache gave it (`avc_has_perm_noaudit`'s).
#[inline(always)]
pub(crate) fn decision(
    source: *const SecurityId,
    target: *const SecurityId,
    class: u16,
    requested: u32,
) -> Option<AvDecisionC> {
    lookup::<true>(source, target, class, requested).map(|(grant, rest, stamp, f)| {
        f.count_hit();
        AvDecisionC {
            allowed: (grant >> 32) as u32,
            decided: AccessVector::ALL.0,
            auditallow: 0,
            auditdeny: (rest >> 32) as u32,
            // The stamp's low half is the cache's seqno, the decision's (see `fill`).
            seqno: stamp as u32,
            flags: rest as u32,
        }
    })
}

/// On a hit (which the caller counts, [`Front::count_hit`]): the entry's grant word, the rest of
/// its decision (when `REST`), the stamp and the front.
#[inline(always)]
fn lookup<const REST: bool>(
    source: *const SecurityId,
    target: *const SecurityId,
    class: u16,
    requested: u32,
) -> Option<(u64, u64, u64, &'static Front)> {
    let f = mine()?;
    if requested == 0 || !f.enter() {
        return None;
    }
    let (s, t) = (source as u64, target as u64);
    let m = mix(s, t, class);
    let e = f.way0(m);
    let e = if e.grants(s, t, class, requested) {
        Some(e)
    } else {
        Some(f.way1(m)).filter(|e| e.grants(s, t, class, requested))
    };
    // SAFETY: `avc` was set by `claim` from the process's cache, which lives for the process.
    let avc = unsafe { &*f.avc.load(Relaxed) };
    let stamp = f.stamp.load(Relaxed);
    let found = e.filter(|_| stamp == avc.stamp()).map(|e| {
        let rest = if REST { e.rest.load(Relaxed) } else { 0 };
        (e.grant.load(Relaxed), rest, stamp, f)
    });
    f.leave();
    found
}

impl Front {
    /// Enters the front (busy); false if its thread is inside it already (this check
    /// re-enters it: see the module's comment), which it then must not read nor write.
    #[inline(always)]
    fn enter(&self) -> bool {
        if self.busy.load(Relaxed) != 0 {
            return false;
        }
        self.busy.store(1, Relaxed);
        compiler_fence(SeqCst);
        true
    }

    /// Leaves the front its thread entered (no longer busy).
    #[inline(always)]
    fn leave(&self) {
        compiler_fence(SeqCst);
        self.busy.store(0, Relaxed);
    }

    /// Makes the front's stamp `at`, emptying both tables if it was another: an entry is only
    /// ever of the front's stamp. Only its thread, inside it (busy), calls this.
    fn stamp_for(&self, at: Stamp) {
        if self.stamp.load(Relaxed) == at.0 {
            return;
        }
        for e in self.sets.iter().flat_map(|s| &s.0) {
            e.source.store(0, Relaxed);
            e.grant.store(0, Relaxed);
        }
        for e in self.queries.iter().flat_map(|s| &s.0) {
            e.empty();
        }
        self.stamp.store(at.0, Relaxed);
    }

    /// The first place of the key whose mix is `m`.
    #[inline(always)]
    fn way0(&self, m: u64) -> &Entry {
        &self.sets[first(m)].0[0]
    }

    /// Its second place.
    #[inline(always)]
    fn way1(&self, m: u64) -> &Entry {
        &self.sets[second(m)].0[1]
    }

    /// Counts a hit in the owner's statistics stripe.
    #[inline(always)]
    fn count_hit(&self) {
        let c = self.hits.load(Relaxed);
        // SAFETY: `hits` was set by `claim` to the owner's counter in the process's cache
        // (which lives as long as the process); only this thread, its owner, adds to it.
        let c = unsafe { &*c };
        c.store(c.load(Relaxed).wrapping_add(1), Relaxed);
    }
}

/// What a fill is stamped with: the cache's stamp, read before the lookup whose grant is then
/// remembered.
#[derive(Copy, Clone)]
pub(crate) struct Stamp(u64);

impl Stamp {
    /// The cache's seqno the stamp was read with (its low half).
    pub(crate) fn seqno(self) -> u32 {
        self.0 as u32
    }
}

#[inline(always)]
pub(crate) fn stamp(avc: &Avc) -> Stamp {
    Stamp(avc.stamp())
}

/// Whether a front may remember a grant made under stamp `at`, by the cache's decision `d` if
/// one is given (else by the SID-keyed table's entry under `at`): only a decision of the
/// stamp's seqno that audits no grant and decides every permission (a hit then has nothing to
/// record and reports the whole decision); and nothing in a process that may belong to a
/// session (its checks must follow the session's mode and booleans first, which a hit does
/// not), nor elsewhere than x86-64 Linux, where the front is not read ([`mine`]). The rule of
/// both tables' fills.
fn keeps(at: Stamp, d: Option<&AvDecision>) -> bool {
    d.is_none_or(|d| {
        d.auditallow == AccessVector::NONE
            && d.decided == AccessVector::ALL
            && d.seqno.0 == at.seqno()
    }) && crate::session::known_none()
        && cfg!(all(target_arch = "x86_64", target_os = "linux"))
}

/// Remembers on the calling thread's front (claiming one if it has none) the decision `d`
/// the process's cache `avc` gave for (`source`, `target`, `class`) under `at`, both pointers
/// proven SIDs of this library, by a check that found no class mapping set, if [`keeps`] says
/// so.
#[cold]
#[inline(never)]
pub(crate) fn fill(
    avc: &'static Avc,
    at: Stamp,
    source: *const SecurityId,
    target: *const SecurityId,
    class: u16,
    d: &AvDecision,
) {
    if !keeps(at, Some(d)) {
        return;
    }
    let allowed = d.allowed.0;
    #[cfg(test)]
    crate::park::parked(crate::park::At::Fill);
    let Some(f) = enter_for_fill(avc, at) else {
        return;
    };
    let (s, t) = (source as u64, target as u64);
    let m = mix(s, t, class);
    let newest = f.way0(m);
    if !newest.grants(s, t, class, allowed) && !f.way1(m).grants(s, t, class, allowed) {
        // The first way's entry moves to its own second place, as the older of its key's two.
        let old = newest.source.load(Relaxed);
        if old != 0 {
            let (ot, og) = (newest.target.load(Relaxed), newest.grant.load(Relaxed));
            let older = f.way1(mix(old, ot, og as u16));
            older.source.store(old, Relaxed);
            older.target.store(ot, Relaxed);
            older.grant.store(og, Relaxed);
            older.rest.store(newest.rest.load(Relaxed), Relaxed);
        }
        newest.target.store(t, Relaxed);
        newest
            .grant
            .store(u64::from(allowed) << 32 | u64::from(class), Relaxed);
        newest.rest.store(
            u64::from(d.auditdeny.0) << 32 | u64::from(d.flags.0),
            Relaxed,
        );
        newest.source.store(s, Relaxed);
    }
    f.leave();
}

/// The calling thread's front (claimed if it has none), entered (busy) for a fill stamped `at`
/// and emptied if its stamp was another; None if the thread has no front, it is busy (the
/// thread is inside it: this fill re-enters it) or it holds another cache's grants.
fn enter_for_fill(avc: &'static Avc, at: Stamp) -> Option<&'static Front> {
    let f = mine().or_else(|| find(avc))?;
    if !std::ptr::eq(f.avc.load(Relaxed), avc) || !f.enter() {
        return None;
    }
    f.stamp_for(at);
    Some(f)
}

/// The front of the calling thread's identity, claimed if it has none, and remembered in its
/// `seaccess_front`; None without an identity, a free slot or a statistics stripe of its own.
#[cold]
fn find(avc: &'static Avc) -> Option<&'static Front> {
    let thread = crate::thread::id();
    if thread == 0 {
        return None;
    }
    let i = slot(thread);
    let owned = [i, i ^ 1]
        .into_iter()
        .find_map(|j| front_at(j).filter(|f| f.owner.load(Relaxed) == thread));
    let f = match owned {
        Some(f) => f,
        None => claim(avc, thread, i)?,
    };
    // SAFETY: stores the address of a front that lives for the process into this thread's own
    // thread-local; nothing else is touched.
    unsafe { seaccess_front_set(f as *const Front as *mut std::ffi::c_void) };
    Some(f)
}

fn front_at(i: usize) -> Option<&'static Front> {
    let p = SLOTS.get(i)?.load(Acquire);
    // SAFETY: a non-null slot holds a front leaked by `claim` (never freed) and published with
    // Release after it was made; every field is an atomic.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Claims a free slot of the two of identity `thread` (`i` and its neighbour) with a new
/// front, which stays its identity's for the process's life.
fn claim(avc: &'static Avc, thread: u64, i: usize) -> Option<&'static Front> {
    let hits = avc.own_hits(thread)?;
    for j in [i, i ^ 1] {
        let cell = SLOTS.get(j)?;
        if !cell.load(Acquire).is_null() {
            continue;
        }
        let layout = std::alloc::Layout::new::<Front>();
        // SAFETY: the layout is a Front's, not zero-sized.
        let raw = unsafe { std::alloc::alloc_zeroed(layout) } as *mut Front;
        if raw.is_null() {
            return None;
        }
        // SAFETY: `raw` was allocated by the global allocator with a Front's layout, and every
        // field of a Front is an atomic integer or pointer (or padding of one), for which
        // all-zero bytes are a valid value.
        let f: Box<Front> = unsafe { Box::from_raw(raw) };
        f.owner.store(thread, Relaxed);
        f.hits
            .store(hits as *const AtomicU64 as *mut AtomicU64, Relaxed);
        f.avc.store(avc as *const Avc as *mut Avc, Relaxed);
        // Not a stamp a cache starts with: the first fill empties the zeroed entries again,
        // harmlessly (and an empty entry grants nothing whatever the stamp).
        f.stamp.store(u64::MAX, Relaxed);
        let p = Box::into_raw(f);
        match cell.compare_exchange(std::ptr::null_mut(), p, AcqRel, Acquire) {
            Ok(_) => return front_at(j),
            // SAFETY: `p` came from Box::into_raw above and was never published.
            Err(_) => drop(unsafe { Box::from_raw(p) }),
        }
    }
    None
}

/// Whether the calling thread's front holds a grant of `requested` to the key, whatever the
/// stamp: what a fill left.
#[cfg(test)]
pub(crate) fn holds(
    source: *const SecurityId,
    target: *const SecurityId,
    class: u16,
    requested: u32,
) -> bool {
    let (s, t) = (source as u64, target as u64);
    mine().is_some_and(|f| {
        let m = mix(s, t, class);
        [f.way0(m), f.way1(m)]
            .iter()
            .any(|e| e.grants(s, t, class, requested))
    })
}

/// A key's two places ([`first`], [`second`]).
#[cfg(test)]
pub(crate) fn places(source: u64, target: u64, class: u16) -> (usize, usize) {
    let m = mix(source, target, class);
    (first(m), second(m))
}

/// Marks the calling thread's front busy (or not), as a check inside it does.
#[cfg(test)]
pub(crate) fn set_busy(busy: bool) {
    if let Some(f) = mine() {
        f.busy.store(u64::from(busy), Relaxed);
    }
}
