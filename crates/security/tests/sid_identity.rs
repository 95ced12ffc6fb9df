//! One SID per context, as the kernel's sidtab keeps it: initial SIDs are found by their
//! context (sidtab_set_initial hashes them; when several initial SIDs share a context the
//! lowest is the one found), and security_compute_sid answers with the source or target SID
//! when the computed context equals theirs instead of minting another SID for the same context.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashMap;

use seaccess_security::{Generation, SecurityServer};
use seaccess_testkit::*;
use seaccess_types::Sid;

/// (SID, context text) of every initial SID the policy gives a context.
fn initial_sids(g: &Generation) -> Vec<(Sid, String)> {
    (1..=256u32)
        .filter_map(|s| g.sid_to_context(Sid(s)).ok().map(|c| (Sid(s), c)))
        .collect()
}

/// The lowest initial SID with each context text: the one the kernel's hash finds.
fn first_initial(g: &Generation) -> HashMap<String, Sid> {
    let mut m = HashMap::new();
    for (s, c) in initial_sids(g) {
        m.entry(c).or_insert(s);
    }
    m
}

fn context_to_sid_finds_initial_sids(server: &SecurityServer) {
    let g = server.snapshot();
    let first = first_initial(&g);
    assert!(!first.is_empty());
    for (text, sid) in &first {
        assert_eq!(g.context_to_sid(text).unwrap(), *sid, "{text}");
        assert_eq!(server.context_to_sid(text).unwrap(), *sid, "{text}");
    }
    assert_eq!(
        g.sid_table().len(),
        0,
        "an initial SID's context was given a dynamic SID"
    );
}

#[test]
fn context_to_sid_of_an_initial_context_is_the_initial_sid_example() {
    context_to_sid_finds_initial_sids(&load(&compile("example", 33)));
}

#[test]
fn context_to_sid_of_an_initial_context_is_the_initial_sid_debian() {
    if let Some(p) = debian_policy("default") {
        context_to_sid_finds_initial_sids(&load(&p));
    }
}

/// security_compute_sid on the process class with no type_transition keeps the source's
/// user, role, type and full range (mls_compute_sid copies the process's range), so the new
/// context is the kernel SID's own and the answer is the kernel SID.
#[test]
fn compute_create_without_transition_returns_the_source_sid() {
    let s = load(&compile("example", 33));
    let g = s.snapshot();
    let process = g.class("process").unwrap();
    let obj = sid(&g, "system_u:object_r:etc_t:s0");
    assert_eq!(
        g.compute_create(Sid(1), obj, process, None).unwrap(),
        Sid(1)
    );
    assert_eq!(g.sid_table().len(), 1, "only the object's SID is dynamic");
}

/// The example policy gives `file` (5) and `any_socket` (8) the same context. The kernel's
/// shortcut answers with the SID the caller passed, not with whichever SID the table finds.
#[test]
fn compute_sid_shortcut_returns_the_callers_sid_not_an_alias() {
    let s = load(&compile("example", 33));
    let g = s.snapshot();
    let (file_sid, any_socket) = (Sid(5), Sid(8));
    assert_eq!(
        g.sid_to_context(file_sid).unwrap(),
        g.sid_to_context(any_socket).unwrap()
    );
    let process = g.class("process").unwrap();
    let file = g.class("file").unwrap();
    // Process class: the source's whole context (see above).
    assert_eq!(
        g.compute_create(any_socket, Sid(1), process, None).unwrap(),
        any_socket
    );
    assert_eq!(
        g.compute_relabel(any_socket, Sid(1), process).unwrap(),
        any_socket
    );
    // type_member on a file: user, type from the target, object_r, the source's low level
    // (mls_compute_sid, AVTAB_MEMBER): kernel's low is s0, so the target's own context.
    assert_eq!(
        g.compute_member(Sid(1), any_socket, file).unwrap(),
        any_socket
    );
    assert_eq!(g.sid_table().len(), 0);
}

/// No SID given by the server shares its context text with another, apart from initial
/// SIDs the policy itself gives one context (the kernel keeps those as they are).
#[test]
fn no_two_sids_resolve_to_the_same_context() {
    let s = load(&compile("example", 33));
    let g = s.snapshot();
    let ctxs = contexts(g.policy());
    let mut sids: Vec<Sid> = ctxs.iter().map(|c| sid(&g, c)).collect();
    sids.extend(initial_sids(&g).iter().map(|(s, _)| *s));
    let classes: Vec<_> = ["process", "file", "dir", "tcp_socket"]
        .iter()
        .map(|c| g.class(c).unwrap())
        .collect();
    let some: Vec<Sid> = sids.iter().copied().step_by(7).collect();
    for &a in &some {
        for &b in &some {
            for &c in &classes {
                sids.extend(g.compute_create(a, b, c, None).ok());
                sids.extend(g.compute_member(a, b, c).ok());
                sids.extend(g.compute_relabel(a, b, c).ok());
            }
        }
    }
    let first = first_initial(&g);
    let dynamic: Vec<Sid> = (257..257 + g.sid_table().len() as u32).map(Sid).collect();
    let mut seen: HashMap<String, Sid> = HashMap::new();
    for s in dynamic {
        let text = g.sid_to_context(s).unwrap();
        if let Some(i) = first.get(&text) {
            panic!("dynamic SID {s} has initial SID {i}'s context {text}");
        }
        if let Some(o) = seen.insert(text.clone(), s) {
            panic!("SIDs {o} and {s} both stand for {text}");
        }
    }
    for s in sids {
        let text = g.sid_to_context(s).unwrap();
        let expect = first.get(&text).or(seen.get(&text)).copied();
        assert!(
            expect == Some(s) || (s.0 <= 256 && first.contains_key(&text)),
            "SID {s} for {text}, expected {expect:?}"
        );
    }
}

/// A reload may give initial SIDs other contexts: lookups follow the new policy's initial
/// contexts, a dynamic SID made earlier for what is now an initial context keeps its meaning,
/// and an initial SID's old context becomes an ordinary context with a dynamic SID.
#[test]
fn initial_contexts_follow_a_reload() {
    let s = load(&compile("example", 33));
    let g = s.snapshot();
    let old_devnull = g.sid_to_context(Sid(27)).unwrap();
    let etc = old_devnull.replace("devnull_t", "etc_t");
    let d = s.context_to_sid(&etc).unwrap();
    assert!(d.0 > 256);
    let variant = compile_variant("example", "example-devnull-etc", 33, |src| {
        src.replace(
            "(sidcontext devnull (system_u object_r devnull_t low_low))",
            "(sidcontext devnull (system_u object_r etc_t low_low))",
        )
    });
    s.reload(&std::fs::read(variant).unwrap()).unwrap();
    let g = s.snapshot();
    assert_eq!(g.sid_to_context(Sid(27)).unwrap(), etc);
    assert_eq!(s.context_to_sid(&etc).unwrap(), Sid(27));
    assert_eq!(
        s.sid_to_context(d).unwrap(),
        etc,
        "an earlier SID keeps its context"
    );
    let nd = s.context_to_sid(&old_devnull).unwrap();
    assert!(nd.0 > 256 && nd != d, "{nd}");
    assert_eq!(s.context_to_sid(&old_devnull).unwrap(), nd);
}
