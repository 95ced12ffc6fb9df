//! A check by names and one by numbers agree with the security server's own decision on every
//! test policy: the engine adds wiring, never an answer of its own.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_engine::Engine;
use seaccess_testkit::{all_triples, compile, policy_names, sample};
use seaccess_types::AccessVector;

#[test]
fn names_and_numbers_agree_with_the_server_on_the_test_policies() {
    let mut checked = 0;
    for name in policy_names() {
        let path = compile(&name, *seaccess_testkit::versions(&name).last().unwrap());
        let engine = Engine::open(&path).unwrap();
        let g = engine.server().snapshot();
        for line in sample(&all_triples(g.policy()), 300, 7) {
            let f: Vec<&str> = line.split(' ').collect();
            let (s, t, class) = (f[0], f[1], f[2]);
            // Contexts a policy does not accept are errors both ways.
            let (Ok(ssid), Ok(tsid)) = (g.context_to_sid(s), g.context_to_sid(t)) else {
                assert!(engine.check(s, t, class, &["x"]).is_err(), "{name}: {line}");
                continue;
            };
            let c = g.class(class).unwrap();
            let perms: Vec<String> = (0..32)
                .filter_map(|b| g.perm_name(c, b).map(String::from))
                .collect();
            if perms.is_empty() {
                continue;
            }
            let names: Vec<&str> = perms.iter().map(String::as_str).collect();
            let want = g.compute_av(ssid, tsid, c).unwrap();
            let asked = g.perms(c, &names).unwrap();
            let denied: Vec<String> = (asked & !want.allowed)
                .bits()
                .map(|b| g.perm_name(c, b).unwrap().to_string())
                .collect();

            let a = engine.check(s, t, class, &names).unwrap();
            assert_eq!(a.denied_names(), denied, "{name}: {line}");
            assert_eq!(
                a.allowed(),
                denied.is_empty() || want.flags.permissive(),
                "{name}: {line}"
            );
            assert_eq!(a.decision().allowed, want.allowed, "{name}: {line}");

            let n = engine
                .with_generation(|g| {
                    let (c, p) = g.class_perms(class, &names)?;
                    g.check(g.sid(s)?, g.sid(t)?, c, p)
                })
                .unwrap();
            if want.flags.permissive() {
                // The first check's denial, not enforced, was granted in the cache so that
                // it is reported once (as the kernel's AVC_CALLBACK_GRANT).
                assert!(n.allowed(), "{name}: {line}");
            } else {
                assert_eq!(n.verdict().denied, asked & !want.allowed, "{name}: {line}");
            }
            assert_eq!(n.seqno(), a.seqno());
            checked += 1;
        }
    }
    assert!(checked > 1000, "only {checked} triples checked");
    let _ = AccessVector::NONE;
}

/// The engine's record of a check is the cache's own record of it, byte for byte (the cache's
/// text is pinned by crates/testkit/tests/avc.rs).
#[test]
fn records_are_the_caches_records() {
    let path = compile("booleans", 33);
    let mine = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let m = mine.clone();
    let engine = Engine::builder()
        .audit(move |r| m.lock().unwrap().push(r.to_string()))
        .open(&path)
        .unwrap();
    let (server, avc) = seaccess_testkit::server_with_avc(&path, 4096);
    let theirs = seaccess_testkit::audit_recorder(&avc);
    let g = server.snapshot();
    let mut records = 0;
    for line in all_triples(g.policy()) {
        let f: Vec<&str> = line.split(' ').collect();
        let (Ok(s), Ok(t)) = (g.context_to_sid(f[0]), g.context_to_sid(f[1])) else {
            continue;
        };
        let c = g.class(f[2]).unwrap();
        for b in 0..32 {
            let Some(p) = g.perm_name(c, b) else { continue };
            let a = engine.check(f[0], f[1], f[2], &[p]).unwrap();
            let _ = avc.has_perm(s, t, c, AccessVector(1 << b), None);
            let theirs = theirs.lock().unwrap().pop();
            assert_eq!(a.record().map(String::from), theirs, "{line} {p}");
            assert_eq!(mine.lock().unwrap().pop(), theirs, "{line} {p}");
            records += usize::from(theirs.is_some());
        }
    }
    assert!(records > 0, "booleans.cil has audited decisions");
}
