//! The access vector cache in front of the security server: the same decisions, the kernel's
//! audit records, enforcing and permissive modes, bounded memory, resets on policy change.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use seaccess_avc::{Avc, AvcError};
use seaccess_testkit::*;
use seaccess_types::{AccessVector, ClassId, Sid};

#[test]
fn cached_decisions_equal_the_servers() {
    for name in ["booleans", "constraints", "bounds", "permissive"] {
        let (server, avc) = server_with_avc(&compile(name, 33), 1 << 16);
        let g = server.snapshot();
        let qs = sid_triples(&g);
        for pass in 0..2 {
            for &(s, t, c) in &qs {
                assert_eq!(
                    avc.decide(s, t, c).unwrap(),
                    g.compute_av(s, t, c).unwrap(),
                    "{name} pass {pass}"
                );
            }
        }
        let st = avc.cache_stats();
        assert_eq!(st.lookups, 2 * qs.len() as u64);
        assert_eq!(st.lookups, st.hits + st.misses);
        assert!(st.hits >= qs.len() as u64 * 9 / 10, "{name}: {st:?}");
        assert_eq!(st.allocations, st.misses.min(st.allocations));
        assert!(st
            .to_text()
            .starts_with("lookups hits misses allocations reclaims frees\n"));
    }
}

#[test]
fn memory_stays_bounded() {
    let (server, avc) = server_with_avc(&compile("example", 33), 64);
    let g = server.snapshot();
    let qs = sid_triples(&g);
    assert!(qs.len() > 10_000);
    for &(s, t, c) in qs.iter().take(20_000) {
        assert_eq!(avc.decide(s, t, c).unwrap(), g.compute_av(s, t, c).unwrap());
    }
    let h = avc.hash_stats();
    assert!(h.entries <= avc.capacity() && avc.capacity() == 64, "{h:?}");
    assert!(h.longest_chain <= 4);
    let st = avc.cache_stats();
    assert!(st.reclaims > 0, "{st:?}");
    assert!(h.to_text().contains("buckets used"));
}

/// Finds a triple and a permission with the given properties in the policy's decisions.
fn find(
    g: &seaccess_security::Generation,
    pred: impl Fn(&seaccess_types::AvDecision, u32) -> bool,
) -> (Sid, Sid, ClassId, u32) {
    for (s, t, c) in sid_triples(g) {
        let d = g.compute_av(s, t, c).unwrap();
        let n = g.policy().classes[c.0 as usize - 1].perms.len() as u32;
        if let Some(b) = (0..n).find(|&b| pred(&d, b)) {
            return (s, t, c, b);
        }
    }
    panic!("no such triple in the policy");
}

fn record(
    g: &seaccess_security::Generation,
    verdict: &str,
    perm: &str,
    aux: &str,
    (s, t, c): (Sid, Sid, ClassId),
    tail: &str,
) -> String {
    format!(
        "avc:  {verdict}  {{ {perm} }} for  {aux} scontext={} tcontext={} tclass={}{tail}",
        g.sid_to_context(s).unwrap(),
        g.sid_to_context(t).unwrap(),
        g.class_name(c).unwrap()
    )
}

#[test]
fn audit_records_in_the_kernels_format() {
    let (server, avc) = server_with_avc(&compile("booleans", 33), 4096);
    let g = server.snapshot();
    let log = audit_recorder(&avc);
    let aux = "pid=42 comm=\"test\"";
    // A denial that is audited.
    let (s, t, c, b) = find(&g, |d, b| {
        d.allowed.0 & (1 << b) == 0 && d.auditdeny.0 & (1 << b) != 0 && !d.flags.permissive()
    });
    let perm = g.perm_name(c, b).unwrap().to_string();
    let r = avc.has_perm(s, t, c, AccessVector(1 << b), Some(aux));
    assert_eq!(
        r,
        Err(AvcError::Denied {
            denied: AccessVector(1 << b)
        })
    );
    assert_eq!(
        log.lock().unwrap().last().unwrap(),
        &record(&g, "denied", &perm, aux, (s, t, c), " permissive=0")
    );
    // A denial silenced by dontaudit.
    let (s, t, c, b) = find(&g, |d, b| {
        d.allowed.0 & (1 << b) == 0 && d.auditdeny.0 & (1 << b) == 0
    });
    let before = log.lock().unwrap().len();
    assert!(avc.has_perm(s, t, c, AccessVector(1 << b), None).is_err());
    assert_eq!(
        log.lock().unwrap().len(),
        before,
        "dontaudit'ed denial was logged"
    );
    // A grant that auditallow asks to log.
    let (s, t, c, b) = find(&g, |d, b| {
        d.allowed.0 & (1 << b) != 0 && d.auditallow.0 & (1 << b) != 0
    });
    let perm = g.perm_name(c, b).unwrap().to_string();
    assert!(avc
        .has_perm(s, t, c, AccessVector(1 << b), Some(aux))
        .is_ok());
    assert_eq!(
        log.lock().unwrap().last().unwrap(),
        &record(&g, "granted", &perm, aux, (s, t, c), "")
    );
    // An ordinary grant is silent.
    let (s, t, c, b) = find(&g, |d, b| {
        d.allowed.0 & (1 << b) != 0 && d.auditallow.0 & (1 << b) == 0
    });
    let before = log.lock().unwrap().len();
    assert!(avc.has_perm(s, t, c, AccessVector(1 << b), None).is_ok());
    assert_eq!(log.lock().unwrap().len(), before);
}

#[test]
fn permissive_mode_and_permissive_domains() {
    let (server, avc) = server_with_avc(&compile("booleans", 33), 4096);
    let g = server.snapshot();
    let log = audit_recorder(&avc);
    let (s, t, c, b) = find(&g, |d, b| {
        d.allowed.0 & (1 << b) == 0 && d.auditdeny.0 & (1 << b) != 0
    });
    let perm = g.perm_name(c, b).unwrap().to_string();
    avc.set_enforcing(false);
    assert!(avc.has_perm(s, t, c, AccessVector(1 << b), None).is_ok());
    assert!(log
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .ends_with("permissive=1"));
    assert!(log
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .contains(&format!("{{ {perm} }}")));
    // Granted in the cache: the second time is silent, as in the kernel.
    let n = log.lock().unwrap().len();
    assert!(avc.has_perm(s, t, c, AccessVector(1 << b), None).is_ok());
    assert_eq!(log.lock().unwrap().len(), n);
    avc.set_enforcing(true);

    // A permissive domain is permissive even when enforcing.
    let (server, avc) = server_with_avc(&compile("permissive", 33), 4096);
    let g = server.snapshot();
    let log = audit_recorder(&avc);
    let (s, t, c, b) = find(&g, |d, b| {
        d.flags.permissive() && d.allowed.0 & (1 << b) == 0 && d.auditdeny.0 & (1 << b) != 0
    });
    assert!(avc.has_perm(s, t, c, AccessVector(1 << b), None).is_ok());
    assert!(log
        .lock()
        .unwrap()
        .last()
        .unwrap()
        .ends_with("permissive=1"));
    let (s, t, c, b) = find(&g, |d, b| {
        !d.flags.permissive() && d.allowed.0 & (1 << b) == 0
    });
    assert!(avc.has_perm_noaudit(s, t, c, AccessVector(1 << b)).is_err());
}

/// Every answer of the cache is `now`'s decision, and the change from `before` changed some.
fn assert_answers_changed(
    avc: &Avc,
    qs: &[(Sid, Sid, ClassId)],
    before: &seaccess_security::Generation,
    now: &seaccess_security::Generation,
) {
    let mut changed = 0;
    for &(s, t, c) in qs {
        let d = avc.decide(s, t, c).unwrap();
        assert_eq!(d, now.compute_av(s, t, c).unwrap());
        changed += usize::from(d.allowed != before.compute_av(s, t, c).unwrap().allowed);
    }
    assert!(changed > 0, "the change changed no cached decision");
}

#[test]
fn commits_and_reloads_reset_the_cache() {
    let (server, avc) = server_with_avc(&compile("booleans", 33), 4096);
    let resets = Arc::new(Mutex::new(Vec::new()));
    let r = resets.clone();
    avc.on_reset(move |s| r.lock().unwrap().push(s));
    let g0 = server.snapshot();
    let qs = sid_triples(&g0);
    for &(s, t, c) in &qs {
        avc.decide(s, t, c).unwrap();
    }
    for (name, v) in g0.booleans() {
        server.set_boolean(&name, !v).unwrap();
    }
    let seq = server.commit_booleans();
    assert_eq!(avc.seqno(), seq);
    let g1 = server.snapshot();
    assert_answers_changed(&avc, &qs, &g0, &g1);
    let seq2 = server
        .reload(&std::fs::read(compile("booleans", 30)).unwrap())
        .unwrap();
    assert_eq!(avc.seqno(), seq2);
    assert_eq!(*resets.lock().unwrap(), vec![seq, seq2]);
    let g2 = server.snapshot();
    // Booleans survive the reload by name.
    assert_eq!(g2.booleans(), g1.booleans());
    for &(s, t, c) in &qs {
        assert_eq!(
            avc.decide(s, t, c).unwrap(),
            g2.compute_av(s, t, c).unwrap()
        );
    }
    // A bad image leaves the policy in place.
    assert!(server.reload(b"not a policy").is_err());
    assert_eq!(server.seqno(), seq2);
}

#[test]
fn ioctl_through_the_cache() {
    let (server, avc) = server_with_avc(&compile("xperms", 33), 4096);
    let log = audit_recorder(&avc);
    let g = server.snapshot();
    let chr = g.class("chr_file").unwrap();
    let ioctl = g.perms(chr, &["ioctl"]).unwrap();
    let dom = subject(&g, "dom_t");
    let obj = |t: &str| sid(&g, &format!("u:object_r:{t}:s0"));
    for t in ["dev_t", "plain_t", "noperm_t", "quiet_t", "loud_t"] {
        let tsid = obj(t);
        for cmd in [
            0x5401u16, 0x5402, 0x8910, 0x7700, 0x0001, 0x2042, 0x2041, 0x6600, 0xffff,
        ] {
            let (allowed, audited) = g.check_ioctl(dom, tsid, chr, cmd).unwrap();
            // Twice: the second answer comes from the cache.
            for pass in 0..2 {
                let before = log.lock().unwrap().len();
                assert_eq!(
                    avc.has_ioctl(dom, tsid, chr, ioctl, cmd, None).is_ok(),
                    allowed,
                    "{t} {cmd:#x} pass {pass}"
                );
                let after = log.lock().unwrap();
                assert_eq!(
                    after.len() - before,
                    usize::from(audited),
                    "{t} {cmd:#x} pass {pass}: audit record"
                );
                if audited {
                    assert!(
                        after
                            .last()
                            .unwrap()
                            .contains(&format!("ioctlcmd={cmd:#x} ")),
                        "{}",
                        after.last().unwrap()
                    );
                }
            }
        }
    }
    let (triples, decisions) = avc.xperm_entries();
    assert!(
        triples > 0 && decisions > 0 && triples <= avc.capacity() && decisions <= avc.capacity()
    );

    // Permissive: a denied command of a driver that has a decision is granted in the cache and
    // reported once; a command of a driver with no rule is reported every time (the kernel has
    // no xperms node to hold the grant).
    avc.set_enforcing(false);
    let dev = obj("dev_t");
    let audits = |cmd: u16| {
        let before = log.lock().unwrap().len();
        assert!(avc.has_ioctl(dom, dev, chr, ioctl, cmd, None).is_ok());
        let l = log.lock().unwrap();
        if l.len() > before {
            assert!(
                l.last().unwrap().ends_with("permissive=1"),
                "{}",
                l.last().unwrap()
            );
        }
        l.len() - before
    };
    assert_eq!((audits(0x5402), audits(0x5402)), (1, 0));
    assert_eq!((audits(0x0001), audits(0x0001)), (1, 1));
    // A policy change drops the grants with everything else.
    avc.set_enforcing(true);
    server.commit_booleans();
    assert_eq!(avc.xperm_entries(), (0, 0));
    assert!(avc.has_ioctl(dom, dev, chr, ioctl, 0x5402, None).is_err());
}

/// A commit with the cache wired to the server's prepare listeners: the cache's decisions are
/// recomputed under the new policy while readers still get the old one, and afterwards every
/// cached triple is a hit with the new policy's decision.
#[test]
fn a_change_is_prepared_before_it_is_published() {
    let (server, avc) = server_with_avc(&compile("booleans", 33), 1 << 16);
    let g0 = server.snapshot();
    let qs = sid_triples(&g0);
    for &(s, t, c) in &qs {
        avc.decide(s, t, c).unwrap();
    }
    assert_eq!(
        avc.hash_stats().entries,
        qs.len(),
        "the cache should hold every triple"
    );
    // Runs after the cache's own prepare listener, before the new policy is published.
    let seen = Arc::new(Mutex::new(None));
    {
        let (avc, seen, qs) = (avc.clone(), seen.clone(), qs.clone());
        server
            .on_policy_prepare(move |next| {
                let before = avc.cache_stats().misses;
                let old = qs
                    .iter()
                    .all(|&(s, t, c)| avc.decide(s, t, c).unwrap().seqno < next.seqno());
                *seen.lock().unwrap() = Some((old, avc.cache_stats().misses - before));
            })
            .keep();
    }
    for (name, v) in g0.booleans() {
        server.set_boolean(&name, !v).unwrap();
    }
    let misses = avc.cache_stats().misses;
    server.commit_booleans();
    assert_eq!(
        *seen.lock().unwrap(),
        Some((true, 0)),
        "readers were answered from the new policy, or missed, before it was published"
    );
    let g1 = server.snapshot();
    assert_answers_changed(&avc, &qs, &g0, &g1);
    assert_eq!(
        avc.cache_stats().misses,
        misses,
        "a cached triple missed after the change"
    );
}

/// A reader whose miss meets the new policy before the cache is told of it switches the cache
/// early; the prepared decisions are there for it.
#[test]
fn a_switch_by_a_miss_finds_the_prepared_decisions() {
    let server = Arc::new(load(&compile("booleans", 33)));
    let dynserver: Arc<dyn seaccess_types::AccessServer> = server.clone();
    let avc = Arc::new(Avc::new(dynserver, 1 << 16));
    let weak = Arc::downgrade(&avc);
    server
        .on_policy_prepare(move |next| {
            if let Some(a) = weak.upgrade() {
                a.prepare(next);
            }
        })
        .keep();
    // No announcement is wired: only a miss can tell the cache of the change.
    let g0 = server.snapshot();
    let qs = sid_triples(&g0);
    let (cached, rest) = qs.split_at(qs.len() / 2);
    for &(s, t, c) in cached {
        avc.decide(s, t, c).unwrap();
    }
    assert_eq!(
        avc.hash_stats().entries,
        cached.len(),
        "the cache should hold every triple asked"
    );
    for (name, v) in g0.booleans() {
        server.set_boolean(&name, !v).unwrap();
    }
    let seq = server.commit_booleans();
    let (s, t, c) = *rest.iter().find(|&&k| !cached.contains(&k)).unwrap();
    assert_eq!(avc.decide(s, t, c).unwrap().seqno, seq);
    assert_eq!(avc.seqno(), seq);
    let misses = avc.cache_stats().misses;
    let g1 = server.snapshot();
    for &(s, t, c) in cached {
        assert_eq!(
            avc.decide(s, t, c).unwrap(),
            g1.compute_av(s, t, c).unwrap()
        );
    }
    assert_eq!(
        avc.cache_stats().misses,
        misses,
        "the prepared decisions were not there"
    );
}
