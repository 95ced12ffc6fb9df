//! [`Avc::flush`] (libselinux's avc_reset on one cache that stays in place) and the counting of
//! checks made with a thread hint ([`Avc::verdict_as`]), against a server whose decision for a
//! triple is a function of the triple, so that any answer shows which triple it was made for.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;

use seaccess_avc::Avc;
use seaccess_types::*;

mod common;

/// Every decision allows `s * 1000 + t` (in the low bits) and audits it as allowed: a torn
/// read mixing two entries would show up as a mismatch between the two words.
#[derive(Default)]
struct Fixed {
    calls: AtomicUsize,
}

fn decision(s: Sid, t: Sid) -> AvDecision {
    let v = s.0 * 1000 + t.0;
    AvDecision {
        allowed: AccessVector(v),
        auditallow: AccessVector(v),
        ..AvDecision::deny_all(Seqno(1))
    }
}

impl AccessServer for Fixed {
    fn compute_av(&self, s: Sid, t: Sid, _: ClassId) -> Result<AvDecision, ServerError> {
        self.calls.fetch_add(1, SeqCst);
        Ok(decision(s, t))
    }
    fn xperm_drivers(
        &self,
        _: Sid,
        _: Sid,
        _: ClassId,
    ) -> Result<(Option<[u32; 8]>, Seqno), ServerError> {
        Ok((Some([1, 0, 0, 0, 0, 0, 0, 0]), Seqno(1)))
    }
    fn compute_xperms(
        &self,
        _: Sid,
        _: Sid,
        _: ClassId,
        driver: u8,
    ) -> Result<(XpermsDecision, Seqno), ServerError> {
        self.calls.fetch_add(1, SeqCst);
        let mut x = XpermsDecision {
            driver,
            ..Default::default()
        };
        x.allowed[0] = u32::MAX;
        Ok((x, Seqno(1)))
    }
    fn seqno(&self) -> Seqno {
        Seqno(1)
    }
    fn names(&self) -> Arc<dyn PolicyNames> {
        common::names(self.seqno(), "file", None)
    }
}

fn setup() -> (Arc<Fixed>, Arc<Avc>) {
    let server = Arc::new(Fixed::default());
    let dynserver: Arc<dyn AccessServer> = server.clone();
    (server, Arc::new(Avc::new(dynserver, 64)))
}

const C: ClassId = ClassId(1);

#[test]
fn a_flush_empties_the_cache_and_zeroes_its_statistics() {
    let (server, avc) = setup();
    for s in 1..=4 {
        assert_eq!(
            avc.decide(Sid(s), Sid(9), C).unwrap(),
            decision(Sid(s), Sid(9))
        );
        assert_eq!(
            avc.decide(Sid(s), Sid(9), C).unwrap(),
            decision(Sid(s), Sid(9))
        );
    }
    avc.has_ioctl(Sid(1), Sid(9), C, AccessVector(1), 0x0001, None)
        .unwrap();
    assert_eq!(avc.hash_stats().entries, 4);
    assert_eq!(avc.xperm_entries(), (1, 1));
    assert_eq!(avc.cache_stats().hits, 5);
    let calls = server.calls.load(SeqCst);
    avc.flush();
    assert_eq!(avc.cache_stats(), seaccess_avc::CacheStats::default());
    assert_eq!(avc.hash_stats().entries, 0, "an entry survived the flush");
    assert_eq!(
        avc.xperm_entries(),
        (0, 0),
        "an ioctl entry survived the flush"
    );
    // The next check of each triple asks the server again, and is counted from zero.
    assert_eq!(
        avc.decide(Sid(1), Sid(9), C).unwrap(),
        decision(Sid(1), Sid(9))
    );
    assert_eq!(server.calls.load(SeqCst), calls + 1);
    assert_eq!(
        avc.decide(Sid(1), Sid(9), C).unwrap(),
        decision(Sid(1), Sid(9))
    );
    let st = avc.cache_stats();
    assert_eq!(
        (st.lookups, st.hits, st.misses, st.allocations),
        (2, 1, 1, 1)
    );
    // The mode survives a flush.
    avc.set_enforcing(false);
    avc.flush();
    assert!(!avc.enforcing());
}

#[test]
fn a_check_racing_flushes_gets_a_whole_answer() {
    let _deadline = common::deadline(
        "a_check_racing_flushes_gets_a_whole_answer",
        std::time::Duration::from_secs(60),
    );
    let (_server, avc) = setup();
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        for n in 0..2u32 {
            let (avc, stop) = (&avc, &stop);
            sc.spawn(move || {
                let mut i = 0u32;
                while !stop.load(SeqCst) {
                    let (s, t) = (Sid(1 + (i + n) % 40), Sid(1 + i % 7));
                    let d = avc.decide(s, t, C).unwrap();
                    assert_eq!(
                        d,
                        decision(s, t),
                        "a torn or foreign answer for {s:?} {t:?}"
                    );
                    let v = avc
                        .verdict_as(s, t, C, AccessVector(d.allowed.0), 1 + u64::from(n))
                        .unwrap();
                    assert_eq!(v.decision, decision(s, t));
                    i = i.wrapping_add(1);
                }
            });
        }
        for _ in 0..2000 {
            avc.flush();
        }
        stop.store(true, SeqCst);
    });
}

/// Checks counted through thread hints are exact: more threads than stripes, some sharing a
/// stripe's hash, each with its own hint, and every check counted once as a hit or a miss.
#[test]
fn hinted_checks_are_counted_exactly() {
    let _deadline = common::deadline(
        "hinted_checks_are_counted_exactly",
        std::time::Duration::from_secs(60),
    );
    let (_server, avc) = setup();
    const THREADS: u64 = 100;
    const CHECKS: u64 = 2000;
    std::thread::scope(|sc| {
        for n in 0..THREADS {
            let avc = &avc;
            sc.spawn(move || {
                // Thread pointers are far apart and page aligned; these are too, and consecutive
                // ones, so that some land in one stripe.
                let hint = 0x7f00_0000_0000 + (n << 12) * if n % 2 == 0 { 1 } else { 0x801 };
                for i in 0..CHECKS {
                    let s = Sid(1 + (i % 5) as u32);
                    let v = avc.verdict_as(s, Sid(2), C, AccessVector(1), hint).unwrap();
                    assert_eq!(v.decision, decision(s, Sid(2)));
                }
            });
        }
    });
    let st = avc.cache_stats();
    assert_eq!(st.lookups, THREADS * CHECKS);
    assert_eq!(st.hits + st.misses, THREADS * CHECKS);
    assert!(st.misses >= 5 && st.misses < 5 * THREADS, "{st:?}");
    avc.flush();
    avc.verdict_as(Sid(1), Sid(2), C, AccessVector(1), 77)
        .unwrap();
    let st = avc.cache_stats();
    assert_eq!((st.lookups, st.misses), (1, 1));
}

/// A hinted check decides as the plain one does: a denial is enforced, a grant in permissive
/// mode is recorded so that the denial is seen once, and a zero hint is still counted.
#[test]
fn a_hinted_check_decides_as_has_perm_noaudit() {
    let (_server, avc) = setup();
    let (s, t) = (Sid(1), Sid(2));
    let allowed = decision(s, t).allowed;
    let denied = AccessVector(1 << 20);
    let v = avc.verdict_as(s, t, C, allowed, 0).unwrap();
    assert!(v.allowed() && v.denied.is_empty() && v.audited == allowed);
    let v = avc.verdict_as(s, t, C, denied, 5).unwrap();
    assert!(!v.allowed() && v.denied == denied && v.enforced);
    assert!(avc.has_perm_noaudit(s, t, C, denied).is_err());
    avc.set_enforcing(false);
    let v = avc.verdict_as(s, t, C, denied, 5).unwrap();
    assert!(v.allowed() && v.denied == denied && !v.enforced);
    // Granted in the cache now: the next check sees no denial.
    let v = avc.verdict_as(s, t, C, denied, 5).unwrap();
    assert!(v.denied.is_empty(), "{v:?}");
    assert_eq!(avc.cache_stats().lookups, 5);
}

/// The inlined hit path answers only a cached decision that allows every requested permission,
/// and counts only what it answers: a miss or a denial is left to the full check, which counts
/// it, so a check is counted once either way.
#[test]
fn an_allowed_hit_is_counted_once_and_nothing_else_is_answered() {
    let (server, avc) = setup();
    let (s, t) = (Sid(3), Sid(4));
    let d = decision(s, t);
    assert_eq!(
        avc.allowed_hit_as(s, t, C, d.allowed, avc.seqno(), 9),
        None,
        "answered before the decision was cached"
    );
    assert_eq!(server.calls.load(SeqCst), 0);
    assert_eq!(avc.cache_stats().lookups, 0);
    avc.verdict_as(s, t, C, d.allowed, 9).unwrap();
    assert_eq!(
        avc.allowed_hit_as(s, t, C, d.allowed, avc.seqno(), 9),
        Some(d)
    );
    assert_eq!(
        avc.allowed_hit_as(s, t, C, AccessVector(1 << 20), avc.seqno(), 9),
        None,
        "a denial answered"
    );
    assert_eq!(
        avc.allowed_hit_as(s, t, ClassId(2), d.allowed, avc.seqno(), 9),
        None,
        "another class answered"
    );
    let st = avc.cache_stats();
    assert_eq!((st.lookups, st.hits, st.misses), (2, 1, 1));
}

/// The stamp a caller keeps grants under moves at a flush and at a restamp, and only the
/// stamp: the mode, the seqno and the cache's answers stay; and an identity's own hit counter
/// is the one its hinted checks count in.
#[test]
fn a_flush_and_a_restamp_move_the_stamp_and_nothing_else() {
    let (_server, avc) = setup();
    avc.set_enforcing(false);
    let before = avc.stamp();
    avc.flush();
    let flushed = avc.stamp();
    assert_ne!(flushed, before, "a flush left the stamp");
    avc.restamp();
    assert_ne!(avc.stamp(), flushed, "a restamp left the stamp");
    assert!(!avc.enforcing(), "the mode moved");
    assert_eq!(avc.seqno(), Seqno(1), "the seqno moved");
    assert_eq!(
        avc.decide(Sid(2), Sid(3), C).unwrap(),
        decision(Sid(2), Sid(3))
    );
    let me = 0x7f00_dead_b000u64;
    let own = avc.own_hits(me).expect("a free stripe for a new identity");
    let n = avc.cache_stats().hits;
    own.store(own.load(SeqCst) + 1, SeqCst);
    assert_eq!(avc.cache_stats().hits, n + 1, "the counter is not summed");
    assert_eq!(
        avc.own_hits(me).map(|c| c as *const _),
        Some(own as *const _),
        "the identity's counter moved"
    );
    assert!(
        avc.own_hits(0).is_none(),
        "identity 0 has no stripe of its own"
    );
}
