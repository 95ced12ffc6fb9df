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

use seaccess_security::Generation;
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
            .replace("(allow dom_t audit_t (file (read write getattr open)))", "(allow dom_t audit_t (file (open)))");
        assert_ne!(out, src, "booleans.cil no longer has the rules this test removes");
        out
    })
}

/// Every generation by seqno, recorded as each change is announced.
type Generations = Arc<Mutex<HashMap<u32, Arc<Generation>>>>;

fn generation(gens: &Generations, seqno: u32) -> Arc<Generation> {
    let t0 = Instant::now();
    loop {
        if let Some(g) = gens.lock().unwrap().get(&seqno) {
            return g.clone();
        }
        // A decision of a generation whose announcement is still under way.
        assert!(t0.elapsed() < Duration::from_secs(30), "seqno {seqno} was never announced");
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
    let a = std::fs::read(compile("booleans", 33)).unwrap();
    let b = std::fs::read(variant()).unwrap();
    let (server, avc) = server_with_avc(&compile("booleans", 33), CAPACITY);
    avc.set_refresh(refresh);
    let gens: Generations = Arc::new(Mutex::new(HashMap::new()));
    {
        let g = server.snapshot();
        gens.lock().unwrap().insert(g.seqno().0, g);
        let (gens, s) = (gens.clone(), Arc::downgrade(&server));
        // Listeners run in order after the generation is published, serialised with every
        // other change: the snapshot taken here is the one announced.
        server.on_policy_change(move |seq| {
            if let Some(s) = s.upgrade() {
                let g = s.snapshot();
                assert_eq!(g.seqno(), seq);
                gens.lock().unwrap().insert(seq.0, g);
            }
        }).keep();
    }
    let g0 = server.snapshot();
    let queries: Vec<(Sid, Sid, ClassId)> = all_triples(g0.policy())
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (sid(&g0, f[0]), sid(&g0, f[1]), g0.class(f[2]).unwrap())
        })
        .collect();
    assert!(queries.len() > 4 * CAPACITY, "the working set should not fit in the cache");
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
            let (avc, gens, queries, completed, stop, checks) = (&avc, &gens, &queries, &completed, &stop, &checks);
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
                    assert!(d.seqno.0 >= floor, "decision of seqno {} after seqno {floor} was loaded", d.seqno);
                    assert!(d.seqno.0 >= last, "decision of seqno {} after one of {last} on the same thread", d.seqno);
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
                server.set_boolean(name, !server.pending_boolean(name).unwrap()).unwrap();
                server.commit_booleans()
            } else {
                server.reload(if (i / 2) % 2 == 0 { &b } else { &a }).unwrap()
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
    assert!(queries.iter().any(|&(s, t, c)| ga.compute_av(s, t, c).unwrap().allowed != gb.compute_av(s, t, c).unwrap().allowed));
}
