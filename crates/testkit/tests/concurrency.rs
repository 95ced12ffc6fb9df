//! The security server shared by many threads: SIDs are stable and unique, and decisions agree
//! with a single-threaded computation while booleans are committed concurrently.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use seaccess_testkit::*;

#[test]
fn sids_are_stable_across_threads() {
    let server = Arc::new(load(&compile("example", 33)));
    let g = server.snapshot();
    let contexts = contexts(g.policy());
    let expected: Vec<_> = {
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let s = server.clone();
                let ctx = contexts.clone();
                std::thread::spawn(move || {
                    let g = s.snapshot();
                    // Each thread walks the contexts in a different order.
                    let mut order: Vec<usize> = (0..ctx.len()).collect();
                    if i % 2 == 1 {
                        order.reverse();
                    }
                    let mut out = vec![seaccess_types::Sid::NULL; ctx.len()];
                    for j in order {
                        out[j] = g.context_to_sid(&ctx[j]).unwrap();
                    }
                    out
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    };
    for other in &expected[1..] {
        assert_eq!(&expected[0], other, "threads disagree on SIDs");
    }
    let mut uniq = expected[0].clone();
    uniq.sort();
    uniq.dedup();
    assert_eq!(uniq.len(), contexts.len(), "two contexts share a SID");
    for (sid, ctx) in expected[0].iter().zip(&contexts) {
        assert_eq!(&g.sid_to_context(*sid).unwrap(), ctx);
    }
}

#[test]
fn decisions_match_their_generation_during_commits() {
    let server = Arc::new(load(&compile("booleans", 33)));
    let queries = all_triples(server.snapshot().policy());
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (s, q, stop) = (server.clone(), queries.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut n = 0;
                loop {
                    let g = s.snapshot();
                    for line in q.iter().step_by(7) {
                        let d = answer(&g, "av", line);
                        // The same generation answers the same way every time.
                        assert_eq!(d, answer(&g, "av", line));
                        n += 1;
                    }
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return n;
                    }
                }
            })
        })
        .collect();
    let names: Vec<String> = server.snapshot().booleans().into_iter().map(|b| b.0).collect();
    let mut seq = server.seqno();
    for i in 0..200 {
        server.set_boolean(&names[i % names.len()], i % 3 == 0).unwrap();
        let next = server.commit_booleans();
        assert!(next > seq);
        seq = next;
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
}
