//! seaccess against libsepol on Debian's real policies: random valid queries from the oracle's
//! generator, zero mismatches allowed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_testkit::*;

fn av(flavour: &str, seed: u64, count: usize) {
    let (Some(oracle), Some(policy)) = (oracle(), debian_policy(flavour)) else {
        return;
    };
    differential_av(&oracle, &policy, seed, count);
}

fn sids(flavour: &str, seed: u64, count: usize) {
    let (Some(oracle), Some(policy)) = (oracle(), debian_policy(flavour)) else {
        return;
    };
    differential_sids(&oracle, &policy, seed, count);
}

#[test]
fn debian_default_compute_av_200k() {
    av("default", 1, 200_000);
}

#[test]
fn debian_mls_compute_av_50k() {
    av("mls", 2, 50_000);
}

#[test]
fn debian_default_compute_sid_50k() {
    sids("default", 3, 50_000);
}

#[test]
fn debian_mls_compute_sid_20k() {
    sids("mls", 4, 20_000);
}
