//! seaccess against libsepol on Debian's reference policy source built monolithic by checkpolicy
//! (`make refpolicy`), as standard, mcs and mls: policies Linux loads whose role attributes take
//! role values that no role entry names. Random valid queries from the oracle's generator, zero
//! mismatches allowed.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_testkit::*;

/// The policy loads in seaccess (it loads in the kernel and in libsepol).
fn loads(kind: &str) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let (oracle, policy) = (oracle()?, refpolicy(kind)?);
    if let Err(e) = seaccess_security::SecurityServer::from_bytes(&std::fs::read(&policy).unwrap())
    {
        panic!(
            "{}: seaccess refuses a policy the kernel loads: {e}",
            policy.display()
        );
    }
    Some((oracle, policy))
}

fn av(kind: &str, seed: u64) {
    let Some((oracle, policy)) = loads(kind) else {
        return;
    };
    differential_av(&oracle, &policy, seed, 50_000);
}

fn sids(kind: &str, seed: u64) {
    let Some((oracle, policy)) = loads(kind) else {
        return;
    };
    differential_sids(&oracle, &policy, seed, 20_000);
}

#[test]
fn refpolicy_standard_compute_av() {
    av("standard", 11);
}

#[test]
fn refpolicy_mcs_compute_av() {
    av("mcs", 12);
}

#[test]
fn refpolicy_mls_compute_av() {
    av("mls", 13);
}

#[test]
fn refpolicy_standard_compute_sid() {
    sids("standard", 14);
}

#[test]
fn refpolicy_mcs_compute_sid() {
    sids("mcs", 15);
}

#[test]
fn refpolicy_mls_compute_sid() {
    sids("mls", 16);
}
