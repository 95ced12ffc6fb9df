//! seaccess against libsepol on Debian's real policies: random valid queries from the oracle's
//! generator, zero mismatches allowed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_testkit::*;

fn av_check(flavour: &str, seed: u64, count: usize) {
    let (Some(oracle), Some(policy)) = (oracle(), debian_policy(flavour)) else { return };
    let server = load(&policy);
    let g = server.snapshot();
    let queries = gen(&oracle, &policy, seed, count);
    assert_eq!(queries.len(), count);
    let (n, shown) = mismatches(&g, &oracle, &policy, "av", &queries, 10);
    assert_eq!(n, 0, "{n} of {count} compute_av answers differ from libsepol:\n{}", shown.join("\n"));
    // The queries must exercise decisions, not just deny everything.
    let allowed = queries.iter().filter(|q| !answer(&g, "av", q).starts_with("0 ")).count();
    assert!(allowed > count / 10, "only {allowed} of {count} queries allow anything");
}

#[test]
fn debian_default_compute_av_200k() {
    av_check("default", 1, 200_000);
}

#[test]
fn debian_mls_compute_av_50k() {
    av_check("mls", 2, 50_000);
}

/// compute_create / relabel / member against sepol_transition_sid / change_sid / member_sid.
/// Socket classes are left out: there libsepol and the kernel differ (the kernel gives a new
/// socket the creating process's role, type and full range; libsepol treats it as a file), and
/// tests/kernel_differences.rs checks the kernel's behaviour on its own.
fn sid_check(flavour: &str, seed: u64, count: usize) {
    let (Some(oracle), Some(policy)) = (oracle(), debian_policy(flavour)) else { return };
    let server = load(&policy);
    let g = server.snapshot();
    let queries: Vec<String> = gen(&oracle, &policy, seed, count * 2)
        .into_iter()
        .filter(|q| !is_socket_class(q.rsplit(' ').next().unwrap_or("")))
        .take(count)
        .collect();
    assert_eq!(queries.len(), count);
    for mode in ["create", "relabel", "member"] {
        let (n, shown) = mismatches(&g, &oracle, &policy, mode, &queries, 10);
        assert_eq!(n, 0, "{mode}: {n} of {count} answers differ from libsepol:\n{}", shown.join("\n"));
    }
    // Some queries must actually hit type rules.
    let changed = queries
        .iter()
        .filter(|q| {
            let f: Vec<&str> = q.split(' ').collect();
            let a = answer(&g, "create", q);
            a != "error" && a.split(':').nth(2) != f[1].split(':').nth(2)
        })
        .count();
    assert!(changed > 0, "no query hit a type transition");
}

#[test]
fn debian_default_compute_sid_50k() {
    sid_check("default", 3, 50_000);
}

#[test]
fn debian_mls_compute_sid_20k() {
    sid_check("mls", 4, 20_000);
}
