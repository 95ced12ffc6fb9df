//! seaccess against libsepol on the project's own test policies, at every policy version each
//! supports: (source, target, class) triples over contexts covering every user, role, type and
//! each user's levels. One test per policy, so the harness runs them in parallel; on the policies
//! with more triples than [`SAMPLE`], a deterministic random sample of them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_testkit::*;

/// Triples compared per policy version. Every policy but the two largest (example, transitions:
/// over half a million triples each) is compared whole; those two are sampled, a different sample
/// at each version, so the suite's time stays flat as they grow.
const SAMPLE: usize = 60_000;

fn check(name: &str) {
    let Some(oracle) = oracle() else { return };
    if header(name).no_oracle {
        eprintln!("{name}: libsepol 3.4 cannot answer on it; checked against its source in kernel_semantics.rs");
        return;
    }
    for v in versions(name) {
        let path = compile(name, v);
        let server = load(&path);
        let g = server.snapshot();
        let every = all_triples(g.policy());
        assert!(!every.is_empty(), "{name}.{v}: no triples");
        let triples = sample(&every, SAMPLE, u64::from(v));
        let (n, shown) = mismatches(&g, &oracle, &path, "av", &triples, 10);
        assert_eq!(
            n,
            0,
            "{name}.{v}: {n} of {} compute_av answers differ:\n{}",
            triples.len(),
            shown.join("\n")
        );
        // Type rules too, where libsepol and the kernel agree (sockets differ: see
        // kernel_semantics.rs). A computed context the policy does not allow is refused by both.
        let non_socket: Vec<String> = triples
            .iter()
            .filter(|q| !is_socket_class(q.rsplit(' ').next().unwrap_or("")))
            .cloned()
            .collect();
        let mut refused = Vec::new();
        for mode in ["create", "relabel", "member"] {
            let c = compare_expecting_errors(&g, &oracle, &path, mode, &non_socket, 10);
            assert_eq!(
                c.differ,
                0,
                "{name}.{v} {mode}: {} answers differ:\n{}",
                c.differ,
                c.shown.join("\n")
            );
            assert!(
                c.both_errors < non_socket.len(),
                "{name}.{v} {mode}: every query refused by both"
            );
            refused.push(format!("{mode} {}", c.both_errors));
        }
        eprintln!(
            "{name}.{v}: {} of {} triples agree (refused by both: {})",
            triples.len(),
            every.len(),
            refused.join(", ")
        );
    }
}

/// One `#[test]` per listed policy, and one more for every test policy not listed yet (added
/// since), so a new policy is compared from the day it lands, if serially until it is listed.
macro_rules! own_policies {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { check(stringify!($name)); })*

        #[test]
        fn policies_not_listed_yet() {
            let listed = [$(stringify!($name)),*];
            for name in policy_names() {
                if !listed.contains(&name.as_str()) {
                    eprintln!("{name}: not listed in own_policies!; compared here");
                    check(&name);
                }
            }
        }
    };
}

own_policies!(
    attributes,
    booleans,
    bounds,
    bounds_chain,
    classorder_a,
    classorder_b,
    classorder_gone,
    constraints,
    example,
    glblub,
    mls,
    mls_ops,
    nonmls,
    permissive,
    renumber_a,
    renumber_b,
    transitions,
    unknown,
    unknown_deny,
    unknown_reject,
    xperms,
);

/// Two refusals are no agreement: a query neither side can answer must count as a mismatch.
#[test]
fn a_query_both_sides_refuse_is_a_mismatch() {
    let Some(oracle) = oracle() else { return };
    let path = compile("example", 33);
    let server = load(&path);
    let g = server.snapshot();
    let refused = vec!["no:such:context no:such:context file".to_string()];
    let (n, _) = mismatches(&g, &oracle, &path, "av", &refused, 1);
    assert_eq!(n, 1, "an error on both sides counted as agreement");
    let c = compare_expecting_errors(&g, &oracle, &path, "create", &refused, 1);
    assert_eq!(
        (c.differ, c.both_errors),
        (0, 1),
        "expected errors must be counted, not reported as differences"
    );
}

/// The sample is deterministic, of the size asked, without repeats, and all of a short list.
#[test]
fn samples_are_deterministic_subsets() {
    let items: Vec<u32> = (0..10_000).collect();
    let a = sample(&items, 500, 7);
    assert_eq!(a, sample(&items, 500, 7));
    assert_ne!(a, sample(&items, 500, 8));
    assert_eq!(a.len(), 500);
    assert!(
        a.windows(2).all(|w| w[0] < w[1]),
        "a sample keeps order and has no repeats"
    );
    assert!(
        *a.last().unwrap() > 5_000,
        "a sample spreads over the whole list"
    );
    assert_eq!(sample(&items[..10], 500, 7), items[..10].to_vec());
}
