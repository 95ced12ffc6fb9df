//! chatroom and hackbench deliver every message through every mediator, in the shape asked, on
//! Debian's default policy as a domain it lets use its own sockets and pipes; and refuse to run
//! (naming each domain tried and why) on a policy that lets none of them. Functional checks
//! only: the figures are the lab's to print, never asserted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use seaccess_lab::{chatroom, hackbench, mediate, LabError};
use seaccess_security::SecurityServer;

fn load(path: &std::path::Path) -> Arc<SecurityServer> {
    Arc::new(SecurityServer::from_bytes(&std::fs::read(path).unwrap()).unwrap())
}

#[test]
fn chatroom_delivers_every_message_through_every_mediator() {
    let Some(p) = seaccess_testkit::debian_policy("default") else {
        return;
    };
    let shape = chatroom::Shape {
        rooms: vec![1, 3],
        clients: 4,
        messages: 7,
        len: 50,
        rounds: 2,
    };
    let r = chatroom::run(load(&p), "default", &shape, mediate::DOMAINS, None).unwrap();
    assert!(mediate::DOMAINS.contains(&r.domain.as_str()));
    assert_eq!(
        r.rows.iter().map(|x| x.rooms).collect::<Vec<_>>(),
        vec![1, 3]
    );
    for row in &r.rows {
        assert_eq!(row.messages, (row.rooms * 4 * 7 * 3) as u64);
        assert_eq!(row.threads, row.rooms * 4 * 3);
        assert_eq!(
            row.rates.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            mediate::ORDER
        );
        assert!(
            row.rates.iter().all(|x| x.1.is_finite() && x.1 > 0.0),
            "{row:?}"
        );
        assert!(r
            .overhead_pct(row.rooms, "seaccess")
            .is_some_and(f64::is_finite));
        // Every mediator ran once a round, and its ratio to vanilla lies in its interval.
        assert!(row.runs.iter().all(|(_, v)| v.len() == 2), "{:?}", row.runs);
        for ((n, x), (m, (lo, hi))) in row.wall_ratio.iter().zip(&row.wall_ratio_ci) {
            assert_eq!(n, m);
            assert!(lo <= x && x <= hi, "{n}: {lo} {x} {hi}");
        }
        assert_eq!(
            seaccess_lab::runs::Measured::get(&row.wall_ratio, "vanilla"),
            Some(1.0)
        );
        // The hooks ran for every send and receive: a client's send, the relay's receive and
        // its 3 sends per message written, and every delivered message's receive, each one
        // cache lookup (sockets have no fast path): 2 + 2/3 per delivered message.
        let want = 2.0 + 2.0 / 3.0;
        assert!(
            (row.cache.lookups_per_message - want).abs() < 1e-9,
            "{:?}",
            row.cache
        );
        assert_eq!(row.cache.misses + row.cache.hits, row.cache.lookups);
    }
}

#[test]
fn hackbench_delivers_every_message_over_sockets_and_pipes() {
    let Some(p) = seaccess_testkit::debian_policy("default") else {
        return;
    };
    let shape = hackbench::Shape {
        groups: vec![1, 2],
        fds: 3,
        loops: 5,
        len: 40,
        rounds: 1,
    };
    let r = hackbench::run(load(&p), "default", &shape, mediate::DOMAINS).unwrap();
    let kinds: Vec<(&str, usize)> = r
        .rows
        .iter()
        .map(|x| (x.transport.name(), x.groups))
        .collect();
    assert_eq!(
        kinds,
        vec![("sockets", 1), ("sockets", 2), ("pipes", 1), ("pipes", 2)]
    );
    for row in &r.rows {
        assert_eq!(row.messages, (row.groups * 3 * 3 * 5) as u64);
        assert_eq!(
            row.seconds.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            mediate::ORDER
        );
        assert!(
            row.seconds.iter().all(|x| x.1.is_finite() && x.1 > 0.0),
            "{row:?}"
        );
        assert!(row.runs.iter().all(|(_, v)| v.len() == 1), "{:?}", row.runs);
        // Sockets: a lookup for each write and each read. Pipes: none, the 2007 revalidation
        // skip (each end was opened with the permission its reads or writes need).
        let want = if row.transport.name() == "sockets" {
            2.0
        } else {
            0.0
        };
        assert!(
            (row.cache.lookups_per_message - want).abs() < 1e-9,
            "{}: {:?}",
            row.transport.name(),
            row.cache
        );
    }
}

// A policy none of whose candidate domains may use its sockets and pipes silently: the run is
// refused, each domain named with the reason, rather than measured with checks that fail.
#[test]
fn no_allowed_domain_is_refused_with_the_reasons() {
    let p = seaccess_testkit::root().join("target/policies/example.33");
    if !p.exists() {
        assert!(
            !seaccess_testkit::required(),
            "{} (make policies)",
            p.display()
        );
        return;
    }
    let shape = chatroom::Shape {
        rooms: vec![1],
        clients: 2,
        messages: 1,
        len: 10,
        rounds: 1,
    };
    match chatroom::run(
        load(&p),
        "example",
        &shape,
        &["system_u:system_r:no_such_t:s0", "user_u:user_r:user_t:s0"],
        None,
    ) {
        Err(LabError::Domains { what }) => {
            assert!(
                what.contains("no_such_t") && what.contains("user_t"),
                "{what}"
            );
        }
        other => panic!("expected a refusal, got {:?}", other.map(|r| r.domain)),
    }
}

fn peer() -> Option<std::path::PathBuf> {
    let p = seaccess_testkit::root().join("target/peers/libselinux-avc-peer");
    if p.exists() {
        return Some(p);
    }
    assert!(
        !seaccess_testkit::required(),
        "{} (make peers)",
        p.display()
    );
    eprintln!("SKIP: {} not built (make peers)", p.display());
    None
}

// With the peer built, chatroom gains libselinux's AVC: a column after seaccess's mediators,
// a run a round, every check granted (the peer fails the run on a refusal, below).
#[test]
fn chatroom_runs_libselinux_avc_in_the_peer() {
    let (Some(p), Some(peer)) = (seaccess_testkit::debian_policy("default"), peer()) else {
        return;
    };
    let shape = chatroom::Shape {
        rooms: vec![1, 2],
        clients: 3,
        messages: 4,
        len: 30,
        rounds: 3,
    };
    let r = chatroom::run(load(&p), "default", &shape, mediate::DOMAINS, Some(&peer)).unwrap();
    let mut want: Vec<&str> = mediate::ORDER.to_vec();
    want.push("libselinux");
    for row in &r.rows {
        assert_eq!(
            row.rates.iter().map(|x| x.0.as_str()).collect::<Vec<_>>(),
            want
        );
        assert_eq!(row.overhead_pct.len(), want.len());
        let runs = row.runs.iter().find(|x| x.0 == "libselinux").unwrap();
        assert_eq!(runs.1.len(), 3);
        assert!(
            runs.1.iter().all(|(w, c)| *w > 0.0 && *c >= 0.0),
            "{runs:?}"
        );
    }
}

// A domain the policy does not let use its own sockets: the peer's checks are refused, and the
// run fails saying so rather than timing denials.
#[test]
fn the_peer_refuses_a_chatroom_whose_checks_fail() {
    let (Some(p), Some(peer)) = (seaccess_testkit::debian_policy("default"), peer()) else {
        return;
    };
    let server = load(&p);
    let sid = server
        .snapshot()
        .context_to_sid("system_u:object_r:etc_t:s0")
        .unwrap();
    let shape = chatroom::Shape {
        rooms: vec![1],
        clients: 2,
        messages: 1,
        len: 10,
        rounds: 1,
    };
    match seaccess_lab::chatroom_peer::run(&peer, &server, sid, &shape) {
        Err(LabError::Peer { what, .. }) => assert!(what.contains("checks refused"), "{what}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}
