//! Switching enforcing mode revokes what permissive mode granted (issue 9), on Debian's default
//! policy and on the project's test policies, through the shared helper of
//! `seaccess_testkit::enforcing`. Every expectation is derived from the security server first.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use seaccess_security::Generation;
use seaccess_testkit::enforcing::{assert_switch_revokes_permissive_grants, Check, RecordedAvc};
use seaccess_testkit::*;
use seaccess_types::{AccessVector, ClassId, Sid};

/// The one permission `name` of `class`, which the policy denies on the triple to a domain that
/// is not permissive; whether that denial is audited.
fn denied(g: &Generation, (s, t, c): (Sid, Sid, ClassId), name: &str) -> (AccessVector, bool) {
    let p = g.perms(c, &[name]).unwrap();
    let d = g.compute_av(s, t, c).unwrap();
    assert!(
        !d.allowed.contains(p),
        "the policy allows {name}: the test needs a denial"
    );
    assert!(!d.flags.permissive(), "the source domain is permissive");
    (p, d.auditdeny.contains(p))
}

#[test]
fn debian_default_policy_httpd_reading_shadow() {
    let Some(path) = debian_policy("default") else {
        return;
    };
    let (server, avc) = server_with_avc(&path, DEFAULT);
    let g = server.snapshot();
    let triple = (
        sid(&g, "system_u:system_r:httpd_t:s0"),
        sid(&g, "system_u:object_r:shadow_t:s0"),
        g.class("file").unwrap(),
    );
    let cache = RecordedAvc::new(avc.clone());
    let (read, audited) = denied(&g, triple, "read");
    assert!(
        audited,
        "Debian's policy dontaudits httpd_t reading shadow_t: pick another permission"
    );
    assert_switch_revokes_permissive_grants(&cache, triple, Check::Perm(read), audited);
    let (write, audited) = denied(&g, triple, "write");
    assert_switch_revokes_permissive_grants(&cache, triple, Check::NoAudit(write), audited);
    // The policy has no extended-permission rules, so the ioctl permission alone decides.
    let (ioctl, _) = denied(&g, triple, "ioctl");
    let cmd = 0x5401;
    let (allowed, audited) = g.check_ioctl(triple.0, triple.1, triple.2, cmd).unwrap();
    assert!(!allowed);
    assert_switch_revokes_permissive_grants(&cache, triple, Check::Ioctl(ioctl, cmd), audited);
}

const DEFAULT: usize = seaccess_avc::DEFAULT_CAPACITY;

/// A command denied by the extended-permission rules of a driver that has a decision, so the
/// permissive grant lands in the ioctl decision cache too.
#[test]
fn ioctl_grants_of_the_driver_decision_cache_are_revoked() {
    let (server, avc) = server_with_avc(&compile("xperms", 33), 4096);
    let g = server.snapshot();
    let chr = g.class("chr_file").unwrap();
    let ioctl = g.perms(chr, &["ioctl"]).unwrap();
    let triple = (subject(&g, "dom_t"), sid(&g, "u:object_r:dev_t:s0"), chr);
    assert!(g
        .compute_av(triple.0, triple.1, chr)
        .unwrap()
        .allowed
        .contains(ioctl));
    let drivers = g.ioctl_drivers(triple.0, triple.1, chr).unwrap().unwrap();
    // A denied, audited command of a flagged driver.
    let cmd = (0..=u16::MAX)
        .find(|&cmd| {
            let drv = cmd >> 8;
            drivers[usize::from(drv >> 5)] & (1 << (drv & 31)) != 0
                && g.check_ioctl(triple.0, triple.1, chr, cmd).unwrap() == (false, true)
        })
        .expect("xperms.cil should deny some command of a driver it has rules for");
    let cache = RecordedAvc::new(avc.clone());
    assert_switch_revokes_permissive_grants(&cache, triple, Check::Ioctl(ioctl, cmd), true);
    assert!(
        avc.xperm_entries().1 > 0,
        "the driver decision was never cached"
    );
}

/// The switch revokes grants even when the cache was wired without refresh (the kernel's way).
#[test]
fn without_refresh_too() {
    let (server, avc) = server_with_avc(&compile("booleans", 33), 4096);
    avc.set_refresh(false);
    let g = server.snapshot();
    let (s, t, c, b) = find_denied(&g);
    let cache = RecordedAvc::new(avc);
    let audited = g
        .compute_av(s, t, c)
        .unwrap()
        .auditdeny
        .contains(AccessVector(1 << b));
    assert_switch_revokes_permissive_grants(
        &cache,
        (s, t, c),
        Check::Perm(AccessVector(1 << b)),
        audited,
    );
}

/// A triple and a permission (bit) the policy denies to a domain that is not permissive.
fn find_denied(g: &Generation) -> (Sid, Sid, ClassId, u32) {
    for (s, t, c) in sid_triples(g) {
        let d = g.compute_av(s, t, c).unwrap();
        let n = g.policy().classes[c.0 as usize - 1].perms.len() as u32;
        if d.flags.permissive() {
            continue;
        }
        if let Some(b) =
            (0..n).find(|&b| d.allowed.0 & (1 << b) == 0 && d.auditdeny.0 & (1 << b) != 0)
        {
            return (s, t, c, b);
        }
    }
    panic!("no denial in the policy");
}

/// A permissive domain is permissive whatever the global mode says: its grants are kept across
/// switches (reported once); a reload that makes the domain enforcing revokes them.
#[test]
fn permissive_domains_keep_their_grants_until_the_policy_changes() {
    let (server, avc) = server_with_avc(&compile("permissive", 33), 4096);
    let g = server.snapshot();
    let log = audit_recorder(&avc);
    let s = subject(&g, "perm_t");
    let (t, c) = (sid(&g, "u:object_r:data_t:s0"), g.class("file").unwrap());
    let d = g.compute_av(s, t, c).unwrap();
    assert!(d.flags.permissive());
    let write = g.perms(c, &["write"]).unwrap();
    assert!(!d.allowed.contains(write) && d.auditdeny.contains(write));
    assert!(avc.has_perm(s, t, c, write, None).is_ok());
    assert!(log
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .ends_with("permissive=1"));
    let n = log.lock().unwrap().len();
    for mode in [false, true, false, true] {
        avc.set_enforcing(mode);
        assert!(avc.has_perm(s, t, c, write, None).is_ok());
    }
    assert_eq!(
        log.lock().unwrap().len(),
        n,
        "a permissive domain's grant was dropped by a mode switch"
    );

    // The same policy with perm_t no longer permissive.
    let enforcing = compile_variant("permissive", "permissive-enforced", 33, |src| {
        let out = src.replace("(typepermissive perm_t)", "");
        assert_ne!(out, src);
        out
    });
    server.reload(&std::fs::read(enforcing).unwrap()).unwrap();
    let g2 = server.snapshot();
    let s2 = subject(&g2, "perm_t");
    let d2 = g2.compute_av(s2, t, c).unwrap();
    assert!(!d2.flags.permissive() && !d2.allowed.contains(write));
    assert_eq!(
        avc.has_perm(s2, t, c, write, None).unwrap_err(),
        seaccess_avc::AvcError::Denied { denied: write }
    );
    assert!(log
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .ends_with("permissive=0"));
}

/// `on_reset` callbacks are told of a switch in either direction, with the unchanged seqno.
#[test]
fn a_switch_tells_the_reset_callbacks() {
    let (server, avc) = server_with_avc(&compile("booleans", 33), 4096);
    let resets = Arc::new(Mutex::new(Vec::new()));
    let r = resets.clone();
    avc.on_reset(move |s| r.lock().unwrap().push(s));
    avc.set_enforcing(true);
    assert!(resets.lock().unwrap().is_empty(), "no switch, no reset");
    avc.set_enforcing(false);
    avc.set_enforcing(true);
    assert_eq!(
        *resets.lock().unwrap(),
        vec![server.seqno(), server.seqno()]
    );
}

/// With refresh on (the default), the switching thread recomputes the entries whose grants it
/// revoked: readers then hit the policy's own decision instead of missing on it.
#[test]
fn a_switch_recomputes_the_entries_it_revokes() {
    let (server, avc) = server_with_avc(&compile("booleans", 33), 4096);
    let g = server.snapshot();
    let (s, t, c, b) = find_denied(&g);
    avc.set_enforcing(false);
    assert!(avc.has_perm_noaudit(s, t, c, AccessVector(1 << b)).is_ok());
    assert!(
        avc.decide(s, t, c)
            .unwrap()
            .allowed
            .contains(AccessVector(1 << b)),
        "the grant is not held"
    );
    avc.set_enforcing(true);
    let misses = avc.cache_stats().misses;
    assert_eq!(avc.decide(s, t, c).unwrap(), g.compute_av(s, t, c).unwrap());
    assert_eq!(
        avc.cache_stats().misses,
        misses,
        "the revoked entry was not recomputed by the switch"
    );
}
