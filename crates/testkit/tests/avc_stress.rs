//! The cache under a storm of policy changes: threads check access while another thread
//! reloads policies and commits booleans a thousand times. Every decision returned must be the
//! decision of the policy generation its seqno names, computed without a cache; none may come
//! from a policy older than one whose load has completed, or older than one the same thread has
//! already been answered from; nothing deadlocks and nothing grows without bound.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use seaccess_security::{Generation, SecurityServer};
use seaccess_testkit::*;
use seaccess_types::{AccessVector, ClassId, Sid};

const CHANGES: usize = 1000;
const READERS: usize = 3;
/// Smaller than the working set, so that entries are evicted during the storm too.
const CAPACITY: usize = 256;

/// booleans.cil without two unconditional allow rules: reloading between it and the original
/// changes decisions that no boolean controls.
fn variant() -> std::path::PathBuf {
    compile_variant("booleans", "booleans-reload", 33, |src| {
        let out = src
            .replace("(allow domain self (process (fork signal getattr)))", "")
            .replace(
                "(allow dom_t audit_t (file (read write getattr open)))",
                "(allow dom_t audit_t (file (open)))",
            );
        assert_ne!(
            out, src,
            "booleans.cil no longer has the rules this test removes"
        );
        out
    })
}

/// Every generation by seqno, recorded as each change is announced.
type Generations = Arc<Mutex<HashMap<u32, Arc<Generation>>>>;

/// Every generation `server` publishes from now on, by seqno (the current one included).
fn record_generations(server: &Arc<SecurityServer>) -> Generations {
    let gens: Generations = Arc::new(Mutex::new(HashMap::new()));
    let g = server.snapshot();
    gens.lock().unwrap().insert(g.seqno().0, g);
    let (record, s) = (gens.clone(), Arc::downgrade(server));
    // Listeners run in order after the generation is published, serialised with every other
    // change: the snapshot taken here is the one announced.
    server
        .on_policy_change(move |seq| {
            if let Some(s) = s.upgrade() {
                let g = s.snapshot();
                assert_eq!(g.seqno(), seq);
                record.lock().unwrap().insert(seq.0, g);
            }
        })
        .keep();
    gens
}

fn generation(gens: &Generations, seqno: u32) -> Arc<Generation> {
    let t0 = Instant::now();
    loop {
        if let Some(g) = gens.lock().unwrap().get(&seqno) {
            return g.clone();
        }
        // A decision of a generation whose announcement is still under way.
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "seqno {seqno} was never announced"
        );
        std::thread::yield_now();
    }
}

#[test]
fn decisions_match_their_generation_through_a_thousand_changes() {
    storm(true);
}

/// The same with the kernel's way of handling a change: no refresh, every entry missed again.
#[test]
fn decisions_match_their_generation_through_a_thousand_changes_without_refresh() {
    storm(false);
}

fn storm(refresh: bool) {
    let _deadline = seaccess_testkit::deadline(
        &format!("the reload storm (refresh {refresh})"),
        std::time::Duration::from_secs(60),
    );
    let a = std::fs::read(compile("booleans", 33)).unwrap();
    let b = std::fs::read(variant()).unwrap();
    let (server, avc) = server_with_avc(&compile("booleans", 33), CAPACITY);
    avc.set_refresh(refresh);
    let gens = record_generations(&server);
    let g0 = server.snapshot();
    let queries: Vec<(Sid, Sid, ClassId)> = all_triples(g0.policy())
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (sid(&g0, f[0]), sid(&g0, f[1]), g0.class(f[2]).unwrap())
        })
        .collect();
    assert!(
        queries.len() > 4 * CAPACITY,
        "the working set should not fit in the cache"
    );
    let bools: Vec<String> = g0.booleans().into_iter().map(|b| b.0).collect();
    drop(g0);

    // A deadlock fails the test instead of hanging the suite.
    let done = Arc::new(AtomicBool::new(false));
    {
        let done = done.clone();
        std::thread::spawn(move || {
            let t0 = Instant::now();
            while !done.load(Relaxed) {
                if t0.elapsed() > Duration::from_secs(300) {
                    eprintln!("avc stress: no progress in 300 s: deadlock");
                    std::process::abort();
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
    }

    let completed = Arc::new(AtomicU32::new(server.seqno().0));
    let stop = Arc::new(AtomicBool::new(false));
    let checks = Arc::new(AtomicU64::new(0));
    let mut distinct_seqnos = 0;
    std::thread::scope(|sc| {
        for r in 0..READERS {
            let (avc, gens, queries, completed, stop, checks) =
                (&avc, &gens, &queries, &completed, &stop, &checks);
            sc.spawn(move || {
                let mut i = r * 7919 % queries.len();
                let mut last = 0u32;
                let mut g = generation(gens, completed.load(Acquire));
                let mut n = 0u64;
                while !stop.load(Relaxed) {
                    let (s, t, c) = queries[i];
                    i = (i + 37) % queries.len();
                    let floor = completed.load(Acquire);
                    let d = match n % 3 {
                        // The check path: the decision it returns is the one it used.
                        0 => match avc.has_perm_noaudit(s, t, c, AccessVector(1)) {
                            Ok(d) => d,
                            Err(_) => avc.decide(s, t, c).unwrap(),
                        },
                        _ => avc.decide(s, t, c).unwrap(),
                    };
                    assert!(
                        d.seqno.0 >= floor,
                        "decision of seqno {} after seqno {floor} was loaded",
                        d.seqno
                    );
                    assert!(
                        d.seqno.0 >= last,
                        "decision of seqno {} after one of {last} on the same thread",
                        d.seqno
                    );
                    last = d.seqno.0;
                    if g.seqno() != d.seqno {
                        g = generation(gens, d.seqno.0);
                    }
                    let want = g.compute_av(s, t, c).unwrap();
                    assert_eq!(d, want, "({s}, {t}, {c}) at seqno {}", d.seqno);
                    n += 1;
                }
                checks.fetch_add(n, Relaxed);
            });
        }
        for i in 0..CHANGES {
            let seq = if i % 2 == 0 {
                let name = &bools[(i / 2) % bools.len()];
                server
                    .set_boolean(name, !server.pending_boolean(name).unwrap())
                    .unwrap();
                server.commit_booleans()
            } else {
                server
                    .reload(if (i / 2) % 2 == 0 { &b } else { &a })
                    .unwrap()
            };
            completed.store(seq.0, Release);
            // Now and then, let the readers run a few hundred checks under one generation;
            // otherwise change again at once, to widen the races between misses and changes.
            if i % 4 == 0 {
                std::thread::sleep(Duration::from_micros(300));
            } else {
                std::thread::yield_now();
            }
        }
        stop.store(true, Relaxed);
        distinct_seqnos = gens.lock().unwrap().len();
    });
    done.store(true, Relaxed);

    assert_eq!(distinct_seqnos, CHANGES + 1);
    let st = avc.cache_stats();
    let n = checks.load(Relaxed);
    eprintln!("avc stress: {n} checks over {CHANGES} policy changes; {st:?}");
    assert!(n > 10_000, "only {n} checks ran");
    assert!(st.hits > 0 && st.misses > 0 && st.reclaims > 0, "{st:?}");
    assert_eq!(st.lookups, st.hits + st.misses);
    // Bounded: at most the capacity, however many generations came and went.
    let h = avc.hash_stats();
    assert!(h.entries <= avc.capacity(), "{h:?}");
    assert_eq!(avc.seqno(), server.seqno());
    // The decisions really changed along the way (else the test proves nothing).
    let (ga, gb) = {
        let gens = gens.lock().unwrap();
        (gens[&1].clone(), gens[&3].clone())
    };
    assert!(queries
        .iter()
        .any(|&(s, t, c)| ga.compute_av(s, t, c).unwrap().allowed
            != gb.compute_av(s, t, c).unwrap().allowed));
}

/// Issue 9 under load: readers check permissions the policy denies while another thread
/// switches enforcing mode back and forth and commits booleans. A check made entirely within an
/// enforcing period (started after `set_enforcing(true)` returned, ended before the next
/// `set_enforcing(false)` began) may be allowed only by its policy generation's own decision
/// (or a permissive domain), never by a grant recorded in permissive mode.
#[test]
fn no_permissive_grant_answers_after_the_switch_to_enforcing() {
    let _deadline = seaccess_testkit::deadline(
        "no_permissive_grant_answers_after_the_switch_to_enforcing",
        std::time::Duration::from_secs(60),
    );
    const SWITCHES: usize = 2000;
    let (server, avc) = server_with_avc(&compile("booleans", 33), 4096);
    let gens = record_generations(&server);
    let g0 = server.snapshot();
    // Every (triple, permission) the first generation denies to a domain that is not permissive.
    let mut denials = Vec::new();
    for l in all_triples(g0.policy()) {
        let f: Vec<&str> = l.split(' ').collect();
        let (s, t, c) = (sid(&g0, f[0]), sid(&g0, f[1]), g0.class(f[2]).unwrap());
        let d = g0.compute_av(s, t, c).unwrap();
        let n = g0.policy().classes[c.0 as usize - 1].perms.len() as u32;
        if !d.flags.permissive() {
            denials.extend(
                (0..n)
                    .filter(|b| !d.allowed.contains(AccessVector(1 << b)))
                    .map(|b| (s, t, c, AccessVector(1 << b))),
            );
        }
    }
    assert!(
        denials.len() > 100,
        "too few denials to exercise: {}",
        denials.len()
    );
    let bools: Vec<String> = g0.booleans().into_iter().map(|b| b.0).collect();
    drop(g0);

    // Odd while permissive mode may be in effect: bumped before set_enforcing(false) is called
    // and after set_enforcing(true) has returned.
    let mode_gen = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let (enforced_checks, permissive_grants) = (AtomicU64::new(0), AtomicU64::new(0));
    std::thread::scope(|sc| {
        for r in 0..READERS {
            let (avc, gens, denials, mode_gen, stop) = (&avc, &gens, &denials, &mode_gen, &stop);
            let (enforced_checks, permissive_grants) = (&enforced_checks, &permissive_grants);
            sc.spawn(move || {
                let mut i = r * 7919 % denials.len();
                let mut g = generation(gens, avc.seqno().0);
                let (mut enforced, mut granted) = (0u64, 0u64);
                while !stop.load(Relaxed) {
                    let (s, t, c, p) = denials[i];
                    i = (i + 31) % denials.len();
                    let before = mode_gen.load(SeqCst);
                    let first = avc.seqno().0;
                    let r = if i % 2 == 0 { avc.has_perm_noaudit(s, t, c, p).map(|_| ()) } else { avc.has_perm(s, t, c, p, None) };
                    let after = mode_gen.load(SeqCst);
                    if before % 2 == 1 {
                        granted += u64::from(r.is_ok());
                        continue;
                    }
                    if before != after || r.is_err() {
                        continue;
                    }
                    enforced += 1;
                    // Allowed while enforcing: only the policy of the decision's generation, one
                    // of those current during the check, may have allowed it.
                    let last = avc.seqno().0;
                    let ok = (first..=last).any(|q| {
                        if g.seqno().0 != q {
                            g = generation(gens, q);
                        }
                        let want = g.compute_av(s, t, c).unwrap();
                        want.allowed.contains(p) || want.flags.permissive()
                    });
                    assert!(ok, "({s}, {t}, {c}) {p:?} allowed in enforcing mode by no policy generation: a permissive grant survived the switch");
                }
                enforced_checks.fetch_add(enforced, Relaxed);
                permissive_grants.fetch_add(granted, Relaxed);
            });
        }
        for i in 0..SWITCHES {
            mode_gen.fetch_add(1, SeqCst);
            avc.set_enforcing(false);
            std::thread::sleep(Duration::from_micros(50));
            avc.set_enforcing(true);
            mode_gen.fetch_add(1, SeqCst);
            if i % 16 == 0 {
                let name = &bools[(i / 16) % bools.len()];
                server
                    .set_boolean(name, !server.pending_boolean(name).unwrap())
                    .unwrap();
                server.commit_booleans();
            }
            std::thread::sleep(Duration::from_micros(50));
        }
        stop.store(true, Relaxed);
    });
    let (e, p) = (
        enforced_checks.load(Relaxed),
        permissive_grants.load(Relaxed),
    );
    eprintln!("enforcing switch stress: {e} allowed checks within enforcing periods verified, {p} permissive grants");
    assert!(p > 1000, "too few permissive grants to prove anything: {p}");
}
