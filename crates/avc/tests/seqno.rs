//! The cache's seqno rules, against a scripted security server whose policy changes at exactly
//! the moments a test chooses: a decision of an older policy is never returned once a newer one
//! is known, whichever way the cache came to know of it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering::SeqCst};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};

use std::time::Duration;

use seaccess_avc::Avc;
use seaccess_types::*;

mod common;
use common::deadline;

/// How long a test waits for another thread's step before it fails: every wait here is on a
/// step that takes microseconds, so reaching this means the step never comes.
const STEP: Duration = Duration::from_secs(5);

/// A server whose policy generation is a number: every decision allows exactly the bits of its
/// seqno, so a decision shows which policy made it.
#[derive(Default)]
struct Scripted {
    seqno: AtomicU32,
    calls: AtomicUsize,
    /// When set, the next computation reads the seqno, says so, and waits to be released.
    pause: Mutex<Option<(Sender<()>, Receiver<()>)>>,
}

fn decision(seqno: u32) -> AvDecision {
    AvDecision {
        allowed: AccessVector(seqno),
        ..AvDecision::deny_all(Seqno(seqno))
    }
}

impl AccessServer for Scripted {
    fn compute_av(&self, _: Sid, _: Sid, _: ClassId) -> Result<AvDecision, ServerError> {
        self.calls.fetch_add(1, SeqCst);
        let s = self.seqno.load(SeqCst);
        if let Some((started, release)) = self.pause.lock().unwrap().take() {
            started.send(()).unwrap();
            release
                .recv_timeout(STEP)
                .expect("the test never released the paused computation");
        }
        Ok(decision(s))
    }
    fn xperm_drivers(
        &self,
        _: Sid,
        _: Sid,
        _: ClassId,
    ) -> Result<(Option<[u32; 8]>, Seqno), ServerError> {
        Ok((None, Seqno(self.seqno.load(SeqCst))))
    }
    fn compute_xperms(
        &self,
        _: Sid,
        _: Sid,
        _: ClassId,
        driver: u8,
    ) -> Result<(XpermsDecision, Seqno), ServerError> {
        Ok((
            XpermsDecision {
                driver,
                ..Default::default()
            },
            Seqno(self.seqno.load(SeqCst)),
        ))
    }
    fn seqno(&self) -> Seqno {
        Seqno(self.seqno.load(SeqCst))
    }
    fn names(&self) -> Arc<dyn PolicyNames> {
        common::names(self.seqno(), "file", None)
    }
}

fn setup() -> (Arc<Scripted>, Arc<Avc>) {
    let server = Arc::new(Scripted::default());
    server.seqno.store(1, SeqCst);
    let dynserver: Arc<dyn AccessServer> = server.clone();
    (server, Arc::new(Avc::new(dynserver, 64)))
}

const K: (Sid, Sid, ClassId) = (Sid(1), Sid(2), ClassId(1));
const K2: (Sid, Sid, ClassId) = (Sid(3), Sid(4), ClassId(1));

#[test]
fn a_miss_overtaken_by_a_reload_asks_again() {
    let _d = deadline("a_miss_overtaken_by_a_reload_asks_again", 3 * STEP);
    let (server, avc) = setup();
    let (started_tx, started_rx) = channel();
    let (release_tx, release_rx) = channel();
    *server.pause.lock().unwrap() = Some((started_tx, release_rx));
    let a = avc.clone();
    let reader = std::thread::spawn(move || a.decide(K.0, K.1, K.2).unwrap());
    // The reader's computation has read policy 1; policy 2 is loaded and announced meanwhile.
    started_rx
        .recv_timeout(STEP)
        .expect("the reader's miss never reached the server");
    server.seqno.store(2, SeqCst);
    avc.policy_changed(Seqno(2));
    release_tx.send(()).unwrap();
    assert_eq!(reader.join().unwrap(), decision(2));
    assert_eq!(
        server.calls.load(SeqCst),
        2,
        "the stale answer was not recomputed"
    );
    // What was stored is policy 2's.
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(2));
    assert_eq!(server.calls.load(SeqCst), 2);
}

#[test]
fn a_newer_policy_seen_on_a_miss_retires_older_entries_before_the_announcement() {
    let (server, avc) = setup();
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1));
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1), "a hit");
    // Policy 2 is in place but its announcement has not reached the cache yet.
    server.seqno.store(2, SeqCst);
    assert_eq!(avc.decide(K2.0, K2.1, K2.2).unwrap(), decision(2));
    // Having answered from policy 2, the cache must not answer from policy 1 again.
    assert_eq!(avc.seqno(), Seqno(2));
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(2));
    // The announcement then arrives: nothing changes for the readers.
    avc.policy_changed(Seqno(2));
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(2));
}

#[test]
fn an_announcement_the_server_never_honours_is_an_error_not_a_hang() {
    let (_server, avc) = setup();
    avc.policy_changed(Seqno(99));
    let e = avc.decide(K.0, K.1, K.2).unwrap_err();
    assert!(e.to_string().contains("99"), "{e}");
}

#[test]
fn statistics_count_every_lookup_once() {
    let (server, avc) = setup();
    // The kernel's way: a change leaves every entry to be missed again.
    avc.set_refresh(false);
    for _ in 0..10 {
        avc.decide(K.0, K.1, K.2).unwrap();
    }
    let st = avc.cache_stats();
    assert_eq!(
        (st.lookups, st.hits, st.misses, st.allocations),
        (10, 9, 1, 1)
    );
    // After a change the old entry is dead, and freed when its slot is taken again: by the
    // next policy but one, as consecutive policies fill alternate tables.
    assert_eq!(avc.hash_stats().entries, 1);
    server.seqno.store(2, SeqCst);
    avc.policy_changed(Seqno(2));
    assert_eq!(
        avc.hash_stats().entries,
        0,
        "an entry of policy 1 counted under policy 2"
    );
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(2));
    let st = avc.cache_stats();
    assert_eq!((st.misses, st.allocations, st.frees), (2, 2, 0));
    server.seqno.store(3, SeqCst);
    avc.policy_changed(Seqno(3));
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(3));
    let st = avc.cache_stats();
    assert_eq!((st.misses, st.allocations, st.frees), (3, 3, 1));
    assert_eq!(avc.hash_stats().entries, 1);
}

#[test]
fn a_change_recomputes_cached_decisions_before_readers_see_it() {
    let (server, avc) = setup();
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1));
    assert_eq!(avc.decide(K2.0, K2.1, K2.2).unwrap(), decision(1));
    server.seqno.store(2, SeqCst);
    avc.policy_changed(Seqno(2));
    assert_eq!(
        server.calls.load(SeqCst),
        4,
        "each cached decision computed again, once"
    );
    assert_eq!(avc.hash_stats().entries, 2);
    // Readers then hit policy 2's decisions: no miss, no computation.
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(2));
    assert_eq!(avc.decide(K2.0, K2.1, K2.2).unwrap(), decision(2));
    assert_eq!(server.calls.load(SeqCst), 4);
    let st = avc.cache_stats();
    assert_eq!(
        (st.lookups, st.hits, st.misses, st.allocations),
        (4, 2, 2, 4)
    );
}

#[test]
fn readers_never_wait_for_a_refresh() {
    let _d = deadline("readers_never_wait_for_a_refresh", 3 * STEP);
    let (server, avc) = setup();
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1));
    let (started_tx, started_rx) = channel();
    let (release_tx, release_rx) = channel();
    *server.pause.lock().unwrap() = Some((started_tx, release_rx));
    server.seqno.store(2, SeqCst);
    let a = avc.clone();
    let writer = std::thread::spawn(move || a.policy_changed(Seqno(2)));
    // The refresh is stuck in its computation; a reader is answered meanwhile, from the policy
    // the cache still announces.
    started_rx
        .recv_timeout(STEP)
        .expect("the change recomputed nothing: no refresh on reload");
    assert_eq!(avc.seqno(), Seqno(1));
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1));
    release_tx.send(()).unwrap();
    writer.join().unwrap();
    assert_eq!(avc.seqno(), Seqno(2));
    let calls = server.calls.load(SeqCst);
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(2));
    assert_eq!(
        server.calls.load(SeqCst),
        calls,
        "the refreshed decision was a hit"
    );
}

#[test]
fn a_refresh_answered_by_a_newer_policy_stores_nothing() {
    let (server, avc) = setup();
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1));
    // Policy 3 is already in place when policy 2 is announced.
    server.seqno.store(3, SeqCst);
    avc.policy_changed(Seqno(2));
    assert_eq!(
        avc.hash_stats().entries,
        0,
        "a decision of policy 3 stored as policy 2's"
    );
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(3));
    assert_eq!(avc.seqno(), Seqno(3));
}

/// The server's seqno wraps after 2^32 changes (as the kernel's does): the cache goes on
/// caching and returning the newest policy's decisions across the wrap, announced or found by
/// a miss, with refresh or without.
#[test]
fn decisions_keep_being_cached_across_the_seqno_wrap() {
    for refresh in [true, false] {
        let server = Arc::new(Scripted::default());
        let start = u32::MAX - 3;
        server.seqno.store(start, SeqCst);
        let dynserver: Arc<dyn AccessServer> = server.clone();
        let avc = Avc::new(dynserver, 64);
        avc.set_refresh(refresh);
        assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(start));
        let mut seq = start;
        for step in 0..8 {
            seq = seq.wrapping_add(1);
            server.seqno.store(seq, SeqCst);
            if step % 2 == 0 {
                avc.policy_changed(Seqno(seq));
            } else {
                // Not announced: a miss on a triple never asked finds the new policy.
                assert_eq!(
                    avc.decide(Sid(100 + step), K2.1, K2.2).unwrap(),
                    decision(seq),
                    "refresh {refresh}, seqno {seq}"
                );
            }
            assert_eq!(avc.seqno(), Seqno(seq));
            assert_eq!(
                avc.decide(K.0, K.1, K.2).unwrap(),
                decision(seq),
                "refresh {refresh}, seqno {seq}"
            );
            assert_eq!(
                avc.decide(K2.0, K2.1, K2.2).unwrap(),
                decision(seq),
                "refresh {refresh}, seqno {seq}"
            );
            if step % 2 == 1 {
                avc.policy_changed(Seqno(seq));
            }
            // And from the cache: no computation.
            let calls = server.calls.load(SeqCst);
            assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(seq));
            assert_eq!(
                server.calls.load(SeqCst),
                calls,
                "refresh {refresh}, seqno {seq}: not cached"
            );
        }
        assert!(seq < start, "the test did not cross the wrap");
    }
}

#[test]
fn seqno_order_is_serial_number_arithmetic() {
    assert!(Seqno(1).is_after(Seqno(0)));
    assert!(!Seqno(0).is_after(Seqno(1)));
    assert!(!Seqno(5).is_after(Seqno(5)));
    assert!(Seqno(0).is_after(Seqno(u32::MAX)));
    assert!(Seqno(2).is_after(Seqno(u32::MAX - 2)));
    assert!(!Seqno(u32::MAX).is_after(Seqno(3)));
}

// A fork after the server published a policy and before the cache was told of it (another
// thread was delivering the announcement, and the child does not have that thread): in the
// child, the cache answers from the new policy at once, not from the old decision it holds.
#[test]
fn a_child_forked_before_an_announcement_answers_from_the_new_policy() {
    let (server, avc) = setup();
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1));
    server.seqno.store(2, SeqCst);
    // The parent's window, closed by the announcement in the parent: the old decision is hit.
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1));
    // The fork: the prepare handler takes the guard, the child's handler repairs.
    avc.fork_guard().child();
    assert_eq!(avc.seqno(), Seqno(2));
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(2));
    // The announcement, if it comes (the child's next change delivers it again), changes nothing.
    avc.policy_changed(Seqno(2));
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(2));
}

/// check_at for a policy the server has published but not yet announced: the cache moves to it
/// and answers from it; but when the server has gone on to a newer policy (unannounced too) by
/// the time the cache asks, that newer policy's decision is not the asked one's. It is refused
/// with its seqno, so that the caller resolves its class and permissions again in it (the
/// second seqno comparison in check_at's other-policy path, after the cache moved forward).
#[test]
fn check_at_never_answers_for_a_policy_with_a_newer_ones_decision() {
    // Policy 2 published, not announced, the cache holding policy 1's decision: it moves to 2
    // and answers from 2.
    let (server, avc) = setup();
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1));
    server.seqno.store(2, SeqCst);
    let v = avc
        .check_at(K.0, K.1, K.2, AccessVector(2), Seqno(2))
        .unwrap()
        .expect("policy 2's own decision");
    assert_eq!(v.decision, decision(2));
    assert_eq!(avc.seqno(), Seqno(2));

    // Policies 2 and then 3 published, neither announced; a caller resolved under 2. The cache
    // answers from 1, moves to 2, misses, and the server answers from 3.
    let (server, avc) = setup();
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1));
    server.seqno.store(3, SeqCst);
    let got = avc
        .check_at(K.0, K.1, K.2, AccessVector(1), Seqno(2))
        .unwrap()
        .map(|v| v.decision);
    assert_eq!(
        got,
        Err(Seqno(3)),
        "policy 3's decision returned as policy 2's"
    );
    assert_eq!(server.calls.load(SeqCst), 2);
    assert_eq!(avc.seqno(), Seqno(3));
    // Asked again under 3, as the caller then does: policy 3's decision, now cached.
    let v = avc
        .check_at(K.0, K.1, K.2, AccessVector(1), Seqno(3))
        .unwrap()
        .expect("policy 3's own decision");
    assert_eq!(v.decision, decision(3));
    assert_eq!(server.calls.load(SeqCst), 2);
}

/// The hooks' first question (`granted_quietly`): true only for a cached decision of the asked
/// policy that allows every requested bit; otherwise false, asking the server nothing and
/// counting nothing, so that the full check the caller then makes is counted once. And a check
/// refused on a hit (the full way after the granted hit declines) is one lookup, not two.
#[test]
fn granted_quietly_passes_only_a_cached_grant_of_the_asked_policy_and_counts_it_once() {
    let (server, avc) = setup();
    // Policy 1's decision allows bit 1 only.
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(1));
    let lookups = || avc.cache_stats().lookups;
    assert_eq!(lookups(), 1);
    assert!(avc.granted_quietly(K.0, K.1, K.2, AccessVector(1), Seqno(1)));
    assert_eq!(lookups(), 2, "a silent grant is one lookup");
    assert!(
        !avc.granted_quietly(K.0, K.1, K.2, AccessVector(1), Seqno(2)),
        "policy 1's decision passed as policy 2's"
    );
    assert!(
        !avc.granted_quietly(K.0, K.1, K.2, AccessVector(3), Seqno(1)),
        "a bit policy 1 denies passed"
    );
    assert!(
        !avc.granted_quietly(K2.0, K2.1, K2.2, AccessVector(1), Seqno(1)),
        "an uncached triple passed"
    );
    assert_eq!(lookups(), 2, "a declined silent grant counted");
    assert_eq!(server.calls.load(SeqCst), 1, "the server asked");
    // Published and announced policy 2: policy 1's entry no longer answers.
    server.seqno.store(2, SeqCst);
    avc.set_refresh(false);
    avc.policy_changed(Seqno(2));
    assert!(!avc.granted_quietly(K.0, K.1, K.2, AccessVector(1), Seqno(1)));
    // check_at refused on a hit: counted once.
    assert_eq!(avc.decide(K.0, K.1, K.2).unwrap(), decision(2));
    let before = avc.cache_stats();
    let v = avc
        .check_at(K.0, K.1, K.2, AccessVector(1), Seqno(2))
        .unwrap()
        .expect("policy 2's own decision");
    assert!(v.enforced, "bit 1 is not policy 2's");
    let after = avc.cache_stats();
    assert_eq!(
        (after.lookups - before.lookups, after.hits - before.hits),
        (1, 1)
    );
}
