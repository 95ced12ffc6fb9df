//! Policies the kernel refuses at load (policydb_read and its sanity checks), and where the
//! reader says the damage is.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_policy::read_policy;
use seaccess_testkit::*;

/// bounds_chain.cil plus `extra`, compiled at version 33 (secilc -N, as its header says).
fn chain(label: &str, extra: &str) -> Vec<u8> {
    let extra = extra.to_string();
    let path = compile_variant("bounds_chain", label, 33, move |s| format!("{s}\n{extra}\n"));
    std::fs::read(path).unwrap()
}

// bounds_chain.cil has g_t -> c_t -> p_t (two hops). The kernel's walk refuses a chain when
// `++depth == POLICYDB_BOUNDS_MAXDEPTH` (4): at its fourth hop. Three hops load.
const TYPE3: &str = "(type h_t) (roletype r h_t) (typebounds g_t h_t)";
const TYPE4: &str = "(type h_t) (roletype r h_t) (typebounds g_t h_t) (type i_t) (roletype r i_t) (typebounds h_t i_t)";

fn roles(n: usize) -> String {
    // r0 <- r1 <- ... <- rn, each holding the same types: n hops from rn.
    let mut s = String::new();
    for i in 0..=n {
        s += &format!("(role r{i}) (roletype r{i} obj_t) (userrole u r{i})\n");
        if i > 0 {
            s += &format!("(rolebounds r{} r{i})\n", i - 1);
        }
    }
    s
}

fn users(n: usize) -> String {
    let mut s = String::new();
    for i in 0..=n {
        s += &format!("(user u{i}) (userrole u{i} r) (userlevel u{i} (s0)) (userrange u{i} ((s0) (s0)))\n");
        if i > 0 {
            s += &format!("(userbounds u{} u{i})\n", i - 1);
        }
    }
    s
}

fn refused(bytes: &[u8], section: &str, symbol: &str) {
    let Err(e) = read_policy(bytes) else { panic!("a four-hop bounds chain loads") };
    let msg = e.to_string();
    assert!(msg.starts_with(&format!("{section}, byte ")), "{msg}");
    assert!(msg.contains(symbol) && msg.contains("bounds"), "{msg}");
    // The offset is the entry of the symbol at fault: its name follows a few header words.
    let entry = &bytes[e.offset()..(e.offset() + 32).min(bytes.len())];
    assert!(entry.windows(symbol.len()).any(|w| w == symbol.as_bytes()), "{msg}: not at {symbol}'s entry");
}

#[test]
fn type_bounds_chain_of_the_kernel_limit_is_refused() {
    read_policy(&chain("bounds3t", TYPE3)).expect("a three-hop type chain loads");
    refused(&chain("bounds4t", TYPE4), "types", "i_t");
}

#[test]
fn role_bounds_chain_of_the_kernel_limit_is_refused() {
    read_policy(&chain("bounds3r", &roles(3))).expect("a three-hop role chain loads");
    refused(&chain("bounds4r", &roles(4)), "roles", "r4");
}

#[test]
fn user_bounds_chain_of_the_kernel_limit_is_refused() {
    read_policy(&chain("bounds3u", &users(3))).expect("a three-hop user chain loads");
    refused(&chain("bounds4u", &users(4)), "users", "u4");
}
