//! The security server shared by many threads: SIDs are stable and unique, and decisions agree
//! with a single-threaded computation while booleans are committed concurrently.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;
use std::sync::Arc;

use seaccess_testkit::*;

#[test]
fn sids_are_stable_across_threads() {
    let _deadline = seaccess_testkit::deadline(
        "sids_are_stable_across_threads",
        std::time::Duration::from_secs(60),
    );
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

/// A boolean state and the single-threaded answers under it.
type StateAnswers = (Vec<bool>, Arc<Vec<String>>);

/// The boolean states the committer below walks through: state `k` is the one after `k` commits.
fn commit_states(names: &[String], initial: &[(String, bool)], commits: usize) -> Vec<Vec<bool>> {
    let mut state: Vec<bool> = names
        .iter()
        .map(|n| initial.iter().find(|(m, _)| m == n).unwrap().1)
        .collect();
    let mut out = vec![state.clone()];
    for i in 0..commits {
        state[i % names.len()] = i % 3 == 0;
        out.push(state.clone());
    }
    out
}

/// Answers to `queries` computed on a freshly loaded server brought to boolean `state` by a
/// single commit, on this thread alone: the reference the concurrent readers are held to.
fn reference_answers(
    path: &std::path::Path,
    names: &[String],
    state: &[bool],
    queries: &[String],
) -> Vec<String> {
    let server = load(path);
    for (n, v) in names.iter().zip(state) {
        server.set_boolean(n, *v).unwrap();
    }
    server.commit_booleans();
    let g = server.snapshot();
    queries.iter().map(|q| answer(&g, "av", q)).collect()
}

#[test]
fn decisions_match_their_generation_during_commits() {
    let _deadline = seaccess_testkit::deadline(
        "decisions_match_their_generation_during_commits",
        std::time::Duration::from_secs(60),
    );
    const COMMITS: usize = 200;
    let path = compile("booleans", 33);
    let server = Arc::new(load(&path));
    let first = server.snapshot();
    let queries: Vec<String> = all_triples(first.policy()).into_iter().step_by(7).collect();
    let names: Vec<String> = first.booleans().into_iter().map(|b| b.0).collect();
    let states = commit_states(&names, &first.booleans(), COMMITS);
    // Every state the readers can see, answered beforehand by one thread on another server.
    let mut by_state: HashMap<Vec<bool>, Arc<Vec<String>>> = HashMap::new();
    for st in &states {
        if !by_state.contains_key(st) {
            by_state.insert(
                st.clone(),
                Arc::new(reference_answers(&path, &names, st, &queries)),
            );
        }
    }
    assert!(
        by_state.len() > 2,
        "the commits must produce several boolean states"
    );
    assert!(
        by_state.values().any(|a| a != &by_state[&states[0]]),
        "the boolean states must change some answers, or the comparison proves nothing"
    );
    let expected: Arc<Vec<StateAnswers>> = Arc::new(
        states
            .iter()
            .map(|st| (st.clone(), by_state[st].clone()))
            .collect(),
    );
    let base = first.seqno().0;
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // One more than the newest generation a reader has checked whole, so the committer can pace
    // itself: each generation is checked, and the next commit is made while readers work.
    let checked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (s, q, stop, expected, names) = (
                server.clone(),
                queries.clone(),
                stop.clone(),
                expected.clone(),
                names.clone(),
            );
            let checked = checked.clone();
            std::thread::spawn(move || {
                let mut seen = std::collections::BTreeSet::new();
                loop {
                    let done = stop.load(std::sync::atomic::Ordering::Relaxed);
                    let g = s.snapshot();
                    // The generation's seqno says how many commits it follows, hence its state.
                    let k = g.seqno().0.wrapping_sub(base) as usize;
                    let (state, answers) = expected.get(k).unwrap_or_else(|| {
                        panic!("seqno {} is no generation the committer made", g.seqno())
                    });
                    let reported: Vec<bool> = names.iter().map(|n| g.boolean(n).unwrap()).collect();
                    assert_eq!(
                        &reported, state,
                        "generation {k} reports other boolean values than were committed"
                    );
                    for (line, want) in q.iter().zip(answers.iter()) {
                        assert_eq!(&answer(&g, "av", line), want, "generation {k}: {line}");
                    }
                    seen.insert(k);
                    checked.fetch_max(k + 1, std::sync::atomic::Ordering::Release);
                    if done {
                        return seen;
                    }
                }
            })
        })
        .collect();
    for (i, _) in states.iter().enumerate().skip(1) {
        let waited = std::time::Instant::now();
        // A reader that stopped (a failed check) stops the pacing; its panic is reported below.
        while checked.load(std::sync::atomic::Ordering::Acquire) < i
            && waited.elapsed().as_secs() < 10
            && !readers.iter().any(|r| r.is_finished())
        {
            std::thread::yield_now();
        }
        let step = i - 1;
        server
            .set_boolean(&names[step % names.len()], step % 3 == 0)
            .unwrap();
        let next = server.commit_booleans();
        assert_eq!(
            next.0,
            base.wrapping_add(i as u32),
            "each commit takes the next seqno"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut seen = std::collections::BTreeSet::new();
    for r in readers {
        seen.extend(r.join().unwrap());
    }
    assert_eq!(
        seen.len(),
        COMMITS + 1,
        "the readers did not check every generation"
    );
    eprintln!(
        "readers checked {} of {} generations against single-threaded answers",
        seen.len(),
        COMMITS + 1
    );
}
