//! Policy change listeners: they run outside the server's locks, so one may commit booleans or
//! reload; every listener is told of every seqno once, in order; and a registration ends when
//! its handle is dropped (or, for a cache that follows the server, when the cache is dropped).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use seaccess_security::SecurityServer;
use seaccess_testkit::*;
use seaccess_types::Seqno;

/// Runs `f` on another thread; fails if it has not finished in 20 s (a deadlock).
fn within_time<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("deadlocked (or panicked)")
}

fn booleans_server() -> Arc<SecurityServer> {
    Arc::new(load(&compile("booleans", 33)))
}

/// Records the seqnos a listener is told of.
fn recorder(s: &SecurityServer) -> (Arc<Mutex<Vec<u32>>>, seaccess_types::Registration) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let r = {
        let seen = seen.clone();
        s.on_policy_change(move |q| seen.lock().unwrap().push(q.0))
    };
    (seen, r)
}

/// Every seqno after `first` up to the server's current one, once each, in order.
fn assert_every_seqno(seen: &[u32], first: u32, s: &SecurityServer) {
    let want: Vec<u32> = (first + 1..=s.seqno().0).collect();
    assert_eq!(seen, want.as_slice());
}

#[test]
fn a_change_listener_may_commit_booleans_and_reload() {
    let s = booleans_server();
    let image = std::fs::read(compile("booleans", 33)).unwrap();
    let (before, _r0) = recorder(&s);
    let weak = Arc::downgrade(&s);
    // Between the two recorders, so the second is told of a seqno after the nested change
    // was made: it must still be told of them in order.
    let _nested = s.on_policy_change(move |q| {
        let Some(s) = weak.upgrade() else { return };
        if q.0 < 12 {
            if q.0 & 1 == 0 {
                s.commit_booleans();
            } else {
                s.reload(&image).unwrap();
            }
        }
    });
    let (after, _r1) = recorder(&s);
    let first = s.seqno().0;
    let s2 = s.clone();
    within_time(move || s2.commit_booleans());
    assert!(
        s.seqno().0 >= 12,
        "the listener's changes were not made: {}",
        s.seqno()
    );
    assert_every_seqno(&before.lock().unwrap(), first, &s);
    assert_every_seqno(&after.lock().unwrap(), first, &s);
}

#[test]
fn concurrent_changes_with_a_committing_listener_are_each_told_once_in_order() {
    let _deadline = seaccess_testkit::deadline(
        "concurrent_changes_with_a_committing_listener_are_each_told_once_in_order",
        std::time::Duration::from_secs(60),
    );
    let s = booleans_server();
    let (seen, _r) = recorder(&s);
    let weak = Arc::downgrade(&s);
    let _nested = s.on_policy_change(move |q| {
        if q.0 % 5 == 3 {
            if let Some(s) = weak.upgrade() {
                s.commit_booleans();
            }
        }
    });
    let first = s.seqno().0;
    let s2 = s.clone();
    within_time(move || {
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let s = s2.clone();
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        s.commit_booleans();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
    });
    assert!(s.seqno().0 >= first + 200);
    assert_every_seqno(&seen.lock().unwrap(), first, &s);
}

/// A change asked for while a generation is being prepared is made right after it, and
/// prepare listeners see every generation once, in order.
#[test]
fn a_prepare_listener_may_commit_booleans() {
    let s = booleans_server();
    let prepared = Arc::new(Mutex::new(Vec::new()));
    let weak = Arc::downgrade(&s);
    let p2 = prepared.clone();
    let _r = s.on_policy_prepare(move |next| {
        p2.lock().unwrap().push(next.seqno().0);
        if next.seqno().0 < 6 {
            let s = weak.upgrade().unwrap();
            let q = s.commit_booleans();
            assert_eq!(q, Seqno(next.seqno().0 + 1));
        }
    });
    let (seen, _r1) = recorder(&s);
    let s2 = s.clone();
    let q = within_time(move || s2.commit_booleans());
    assert_eq!(q, Seqno(2));
    assert_eq!(s.seqno(), Seqno(6));
    assert_eq!(*prepared.lock().unwrap(), vec![2, 3, 4, 5, 6]);
    assert_every_seqno(&seen.lock().unwrap(), 1, &s);
}

#[test]
fn dropping_the_registration_stops_the_calls() {
    let s = booleans_server();
    assert_eq!(s.listener_count(), (0, 0));
    let (seen, r) = recorder(&s);
    let calls = Arc::new(Mutex::new(0));
    let c2 = calls.clone();
    let p = s.on_policy_prepare(move |_| *c2.lock().unwrap() += 1);
    assert_eq!(s.listener_count(), (1, 1));
    s.commit_booleans();
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert_eq!(*calls.lock().unwrap(), 1);
    drop(r);
    drop(p);
    assert_eq!(s.listener_count(), (0, 0));
    s.commit_booleans();
    assert_eq!(seen.lock().unwrap().len(), 1);
    assert_eq!(*calls.lock().unwrap(), 1);
}

#[test]
fn a_cache_stops_following_when_its_handle_or_itself_is_dropped() {
    let path = compile("booleans", 33);
    // server_with_avc keeps the registration: the listeners live as long as the cache.
    let (s, avc) = server_with_avc(&path, 64);
    assert_eq!(s.listener_count(), (1, 1));
    s.commit_booleans();
    assert_eq!(avc.seqno(), s.seqno());
    drop(avc);
    s.commit_booleans();
    assert_eq!(
        s.listener_count(),
        (0, 0),
        "a dropped cache left listeners behind"
    );
    // Following again, then dropping the handle: unregistered at once, cache alive.
    let (s, avc) = server_with_avc(&path, 64);
    let again = avc.follow(&*s);
    assert_eq!(s.listener_count(), (2, 2));
    drop(again);
    assert_eq!(s.listener_count(), (1, 1));
    drop(avc);
}
