//! `selinux_check_access`'s own table in the thread's front: the queries it granted from the
//! cache, keyed by the caller's four argument pointers (source and target contexts, class and
//! permission names), so that a repeated query skips the query memo's probe, the SIDs' and
//! names' slots and the second hash of the SID-keyed table ([`super::hit_at`]).
//!
//! A pointer says nothing of what it points at now: a program may rewrite a string in place.
//! So an entry keeps, beside the four pointers, what the strings were when the query was
//! granted: the two SIDs whose texts the contexts were and the name slot's class and permission
//! strings ([`crate::lookup::names_at`]); a hit compares each argument with its string, up to
//! its NUL, as the memo does, and answers only if all four are equal. Those strings live as
//! long as the process (a name slot is filled once and never freed; a SID's text stays mapped,
//! zeroed when `avc_destroy` retires it).
//!
//! What an entry says ("these four strings were granted") holds while the cache's stamp is the
//! one the front was filled under: the names' numbers are a generation's, the grant a state's,
//! and `avc_destroy` moves the stamp before it retires the SIDs as well as after. A hit reads
//! the stamp before the comparisons and again after them: a retirement that zeroed a text the
//! comparisons read moved the stamp first, and the second reading sees it. The rest is the
//! front's: the busy flag against re-entry, one stamp for both tables, emptied together
//! ([`Front::stamp_for`]), the hit counted in the thread's own statistics stripe.

use std::ffi::c_char;
use std::sync::atomic::{fence, AtomicU64, Ordering::*};

use seaccess_avc::Avc;
use seaccess_types::AvDecision;

use super::{enter_for_fill, keeps, mine, Front, Stamp};
use crate::sid::SecurityId;

/// Sets of the query table, of two entries each (skewed, as the SID-keyed table's); a power of
/// two. 32 KiB a thread.
pub(super) const QUERY_SETS: usize = 256;
const QUERY_BITS: u32 = QUERY_SETS.trailing_zeros();

/// One granted query. Empty: every word 0 (no argument pointer is NULL in a hit).
#[repr(C)]
pub(super) struct QueryEntry {
    /// The caller's pointers: source context, target context, class, permission.
    args: [AtomicU64; 4],
    /// The SIDs whose texts the contexts were (proven SIDs of this library at the fill).
    source: AtomicU64,
    target: AtomicU64,
    /// The name slot's NUL-terminated class and permission names.
    class: AtomicU64,
    perm: AtomicU64,
}

/// Two entries: the first way of its set and the second (see [`mix`]).
#[repr(C, align(128))]
pub(super) struct QuerySet(pub(super) [QueryEntry; 2]);

impl QueryEntry {
    #[inline(always)]
    fn holds(&self, args: &[u64; 4]) -> bool {
        self.args
            .iter()
            .zip(args)
            .all(|(a, &b)| a.load(Relaxed) == b)
    }

    pub(super) fn empty(&self) {
        for w in self.words() {
            w.store(0, Relaxed);
        }
    }

    fn words(&self) -> [&AtomicU64; 8] {
        let [a, b, c, d] = &self.args;
        [
            a,
            b,
            c,
            d,
            &self.source,
            &self.target,
            &self.class,
            &self.perm,
        ]
    }

    fn copy_from(&self, other: &QueryEntry) {
        for (to, from) in self.words().into_iter().zip(other.words()) {
            to.store(from.load(Relaxed), Relaxed);
        }
    }
}

/// The four pointers' two places, from one multiplication: the first way of one set and the
/// second way of another.
#[inline(always)]
fn mix(args: &[u64; 4]) -> u64 {
    let [s, t, c, p] = *args;
    (s ^ t.rotate_left(16) ^ c.rotate_left(32) ^ p.rotate_left(48))
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

impl Front {
    #[inline(always)]
    fn query0(&self, m: u64) -> &QueryEntry {
        &self.queries[(m >> (64 - QUERY_BITS)) as usize].0[0]
    }

    #[inline(always)]
    fn query1(&self, m: u64) -> &QueryEntry {
        &self.queries[(m >> (64 - 2 * QUERY_BITS)) as usize & (QUERY_SETS - 1)].0[1]
    }
}

/// `Ok` when the calling thread's front holds a grant of the query `args` (source and target
/// contexts, class, permission), its four strings unchanged, under the cache's current state;
/// the hit is counted. Otherwise the arguments to go on with: the caller's own, or, once an
/// entry's key has matched them, the entry's (the same pointers, read back so that the caller's
/// need not be kept in registers across the comparisons' calls); and whether an entry of these
/// pointers under the current state found a string changed, which says the program asks
/// through these buffers with other strings (see [`crate::memo::query`]). Nothing else needs
/// testing first: an entry is filled only by a check that found a policy loaded, no session to
/// follow and no class mapping, and setting a mapping moves the stamp.
#[inline(always)]
pub(crate) fn hit(args: [*const c_char; 4]) -> Result<(), ([*const c_char; 4], bool)> {
    let Some(f) = mine() else {
        return Err((args, false));
    };
    if args[0].is_null() || !f.enter() {
        return Err((args, false));
    }
    let key = args.map(|a| a as u64);
    let m = mix(&key);
    let e = f.query0(m);
    let e = if e.holds(&key) {
        Some(e)
    } else {
        Some(f.query1(m)).filter(|e| e.holds(&key))
    };
    // SAFETY: `avc` was set by `claim` from the process's cache, which lives for the process.
    let avc = unsafe { &*f.avc.load(Relaxed) };
    let stamp = f.stamp.load(Relaxed);
    let answer = match e.filter(|_| stamp == avc.stamp()) {
        None => Err((args, false)),
        Some(e) => {
            // Each pointer is read from the entry where it is used rather than kept across the
            // comparisons' calls, which spilled four of them (callgrind: 8 instructions a hit).
            let [scon, tcon, class, perm] = &e.args;
            let sid = |w: &AtomicU64| {
                // SAFETY: an entry's SIDs were proven SIDs of this library when it was filled
                // (its source is nonzero: its first pointer, the caller's, is not NULL), and a
                // SID's memory stays mapped for the process; every field of a SID is an atomic.
                unsafe { &*(w.load(Relaxed) as *const SecurityId) }
            };
            #[cfg(test)]
            crate::park::parked(crate::park::At::Comparing);
            // A SID's text is NULL once `avc_destroy` retired it, which may happen during this
            // hit; nothing else compared can be NULL, so nothing else is tested (12
            // instructions a hit).
            let text = |w: &AtomicU64| Some(sid(w).c_text()).filter(|p| !p.is_null());
            let cmp = |arg: &AtomicU64, ours: *const c_char| {
                // SAFETY: neither pointer is NULL: the arguments are the entry's, and `fill`
                // stores none that is NULL; a text is tested before it comes here, and the
                // name slot's names are never NULL. The texts and names are NUL-terminated
                // strings that stay mapped for the process (see the module comment), the
                // arguments NUL-terminated strings by libselinux's contract; strcmp stops at
                // the first difference, so neither string is read past its NUL.
                unsafe { libc::strcmp(arg.load(Relaxed) as *const c_char, ours) == 0 }
            };
            let same = text(&e.source).is_some_and(|s| cmp(scon, s))
                && text(&e.target).is_some_and(|t| cmp(tcon, t))
                && cmp(class, e.class.load(Relaxed) as *const c_char)
                && cmp(perm, e.perm.load(Relaxed) as *const c_char);
            #[cfg(test)]
            crate::park::parked(crate::park::At::Compared);
            // The texts read above were not being retired: a retirement moves the stamp first.
            fence(Acquire);
            if same && avc.stamp() == stamp {
                Ok(())
            } else {
                // Read again rather than kept across the calls above.
                let args = e.args.each_ref().map(|a| a.load(Relaxed) as *const c_char);
                Err((args, !same))
            }
        }
    };
    f.leave();
    if answer.is_ok() {
        f.count_hit();
    }
    answer
}

/// How a query was granted: by the cache's decision (and the permission bits asked), or by
/// the SID-keyed table of the front, whose entries are such decisions' grants already.
pub(crate) enum Granted<'d> {
    Decision(u32, &'d AvDecision),
    Front,
}

/// Remembers on the calling thread's front that the query of these four pointers, whose
/// contexts are the texts of `source` and `target` and whose names are name slot `names`'s,
/// was granted under the cache's stamp `at`: by a decision the SID-keyed table would keep
/// ([`keeps`], the rule of both tables) that allows the permission asked, or by that table's
/// entry under `at`.
#[cold]
#[inline(never)]
pub(crate) fn fill(
    avc: &'static Avc,
    at: Stamp,
    args: [*const c_char; 4],
    (source, target): (&SecurityId, &SecurityId),
    names: usize,
    how: Granted<'_>,
) {
    let kept = match how {
        Granted::Decision(requested, d) => {
            requested != 0 && requested & !d.allowed.0 == 0 && keeps(at, Some(d))
        }
        Granted::Front => keeps(at, None),
    };
    if !kept || args.iter().any(|a| a.is_null()) {
        return;
    }
    let Some((class, perm)) = crate::lookup::names_at(names) else {
        return;
    };
    let Some(f) = enter_for_fill(avc, at) else {
        return;
    };
    let args = args.map(|a| a as u64);
    let m = mix(&args);
    let (first, second) = (f.query0(m), f.query1(m));
    // The query's own entry if it has one (its strings may have been rewritten since), else
    // its first place, whose entry moves to its own second place.
    let to = if first.holds(&args) {
        first
    } else if second.holds(&args) {
        second
    } else {
        let old = first.args.each_ref().map(|a| a.load(Relaxed));
        if old[0] != 0 {
            f.query1(mix(&old)).copy_from(first);
        }
        for (w, &v) in first.args.iter().zip(&args) {
            w.store(v, Relaxed);
        }
        first
    };
    to.source.store(source as *const SecurityId as u64, Relaxed);
    to.target.store(target as *const SecurityId as u64, Relaxed);
    to.class.store(class as u64, Relaxed);
    to.perm.store(perm as u64, Relaxed);
    f.leave();
}

/// Whether the calling thread's front holds an entry for these four pointers, whatever the
/// stamp: what a fill left.
#[cfg(test)]
pub(crate) fn holds(args: [*const c_char; 4]) -> bool {
    let args = args.map(|a| a as u64);
    let m = mix(&args);
    mine().is_some_and(|f| f.query0(m).holds(&args) || f.query1(m).holds(&args))
}
