//! The socket's remembered grant (the sockets fast path, on by default): a warm send or receive
//! answers without the cache, and the grant never outlives what it relied on: a reload that
//! revokes the permission, another credential, a grant made only because the mode was
//! permissive, one the policy auditallows. Each case is checked against the same sequence with
//! the fast path off, so that the only difference is the lookups skipped; expected answers come
//! from variants of testdata/policies/objmgr-net.cil made here (its allow lines kept, its
//! auditallow lines dropped: every check silent).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::mpsc::channel;
use std::sync::OnceLock;

use seaccess_objmgr::hooks::socket::{family, sock_type, SocketSec};
use seaccess_objmgr::{errno, Cred, Hook, Task};

mod fs_support;
mod net_support;
use fs_support::parking::{parking_env, Trap, DEADLINE};
use net_support::{env_at, net_variant, Env};

/// objmgr-net.cil without its auditallow lines: every grant is the policy's, silent.
fn quiet() -> std::path::PathBuf {
    static P: OnceLock<std::path::PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        net_variant("objmgr-net-quiet", |l| {
            (!l.starts_with("(auditallow")).then(|| l.to_string())
        })
    })
    .clone()
}

/// The quiet variant with unix_stream_socket's `write` (a send) no longer allowed.
fn no_write() -> Vec<u8> {
    let p = net_variant("objmgr-net-quiet-nowrite", |l| {
        if l.starts_with("(auditallow") {
            return None;
        }
        Some(l.replace(
            "(allow everything everything (unix_stream_socket (all)))",
            "(allow everything everything (unix_stream_socket (ioctl read create getattr setattr lock relabelfrom relabelto append map bind connect listen accept getopt setopt shutdown recvfrom sendto name_bind connectto)))",
        ))
    });
    std::fs::read(p).unwrap()
}

/// The quiet variant with unix_stream_socket's `write` auditallow'ed.
fn audited() -> std::path::PathBuf {
    net_variant("objmgr-net-quiet-audited", |l| {
        if l.starts_with("(auditallow") {
            return None;
        }
        Some(l.replace(
            "(allow everything everything (unix_stream_socket (all)))",
            "(allow everything everything (unix_stream_socket (all)))\n(auditallow everything everything (unix_stream_socket (write)))",
        ))
    })
}

const APP: &str = "u:app_r:app_t:s0";
const PEER: &str = "u:app_r:peer_t:s0";

fn task(e: &Env, ctx: &str) -> Task {
    Task::new(4242, "app", Cred::new(e.sid(ctx)))
}

fn socket(e: &Env, t: &Task) -> SocketSec {
    e.om.socket_create(t, family::UNIX, sock_type::STREAM, 0, false)
        .unwrap()
}

/// The cache lookups sendmsg has made.
fn lookups(e: &Env) -> u64 {
    e.om.counters().get(Hook::SocketSendmsg)
}

/// With the fast path on and off: `f` runs on a fresh environment over `policy`.
fn both(policy: &std::path::Path, f: impl Fn(&Env, bool)) {
    for on in [true, false] {
        let e = env_at(policy);
        e.om.fast_paths().set_sockets(on);
        f(&e, on);
    }
}

#[test]
fn a_warm_send_skips_the_cache_only_with_the_fast_path_on() {
    both(&quiet(), |e, on| {
        let t = task(e, APP);
        let s = socket(e, &t);
        for _ in 0..5 {
            e.om.socket_sendmsg(&t, &s).unwrap();
            e.om.socket_recvmsg(&t, &s).unwrap();
        }
        // On: the first send and the first receive ask the cache, then the socket answers.
        assert_eq!(lookups(e), if on { 1 } else { 5 }, "on: {on}");
        assert_eq!(
            e.om.counters().get(Hook::SocketRecvmsg),
            if on { 1 } else { 5 },
            "on: {on}"
        );
        assert!(e.take().is_empty(), "silent grants write nothing");
    });
}

#[test]
fn a_reload_that_revokes_write_is_seen_at_the_next_send() {
    let revoked = no_write();
    both(&quiet(), |e, on| {
        let t = task(e, APP);
        let s = socket(e, &t);
        for _ in 0..3 {
            e.om.socket_sendmsg(&t, &s).unwrap();
        }
        e.server.reload(&revoked).unwrap();
        let err = e.om.socket_sendmsg(&t, &s).unwrap_err();
        assert_eq!(err.errno(), errno::EACCES, "on: {on}");
        let recs = e.take();
        assert!(
            recs.len() == 1 && recs[0].contains("denied  { write }"),
            "on: {on}: {recs:?}"
        );
        // The receive, still allowed, is answered (and remembered again under the new policy).
        e.om.socket_recvmsg(&t, &s).unwrap();
        e.om.socket_recvmsg(&t, &s).unwrap();
    });
}

#[test]
fn a_grant_is_never_answered_for_another_credential() {
    let revoked = no_write();
    both(&quiet(), |e, on| {
        let mut app = task(e, APP);
        let s = socket(e, &app);
        e.om.socket_sendmsg(&app, &s).unwrap();
        let before = lookups(e);
        // Another SID on the same socket asks the cache, whatever app_t's grant.
        let peer = task(e, PEER);
        e.om.socket_sendmsg(&peer, &s).unwrap();
        assert_eq!(lookups(e), before + 1, "on: {on}");
        // A credential committed to another SID: its own check, and under a policy that
        // refuses it the refusal, not app_t's remembered grant.
        e.server.reload(&revoked).unwrap();
        app.commit_creds(Cred::new(e.sid(PEER))).unwrap();
        assert_eq!(
            e.om.socket_sendmsg(&app, &s).unwrap_err().errno(),
            errno::EACCES,
            "on: {on}"
        );
    });
}

#[test]
fn a_grant_made_in_permissive_mode_is_never_remembered() {
    let revoked = no_write();
    both(&quiet(), |e, on| {
        e.server.reload(&revoked).unwrap();
        let t = task(e, APP);
        let s = socket(e, &t);
        e.avc.set_enforcing(false);
        for _ in 0..3 {
            e.om.socket_sendmsg(&t, &s).unwrap();
        }
        let recs = e.take();
        assert_eq!(
            recs.len(),
            1,
            "the permissive denial reported once: {recs:?}"
        );
        e.avc.set_enforcing(true);
        assert_eq!(
            e.om.socket_sendmsg(&t, &s).unwrap_err().errno(),
            errno::EACCES,
            "on: {on}: enforcing again, the send is refused"
        );
    });
}

#[test]
fn an_auditallowed_grant_is_recorded_at_every_send() {
    both(&audited(), |e, on| {
        let t = task(e, APP);
        let s = socket(e, &t);
        for _ in 0..3 {
            e.om.socket_sendmsg(&t, &s).unwrap();
        }
        let recs = e.take();
        assert_eq!(
            recs.iter()
                .filter(|r| r.contains("granted  { write }"))
                .count(),
            3,
            "on: {on}: {recs:?}"
        );
    });
}

/// A send parked inside compute_av while a reload revokes `write`: whatever the parked check
/// answers, no grant of it answers after the reload; the next send, the fast path on, is
/// refused exactly as with it off.
#[test]
fn a_send_parked_across_a_reload_that_revokes_write_leaves_no_grant() {
    let revoked = no_write();
    let (e, parking) = parking_env(&quiet());
    let t = task(&e, APP);
    let s = socket(&e, &t);
    // The cache empty, so that the send asks the server (socket_create filled it).
    e.avc.flush();
    let (parked_tx, parked) = channel();
    let (go, go_rx) = channel();
    *parking.trap.lock().unwrap() = Some(Trap {
        ssid: e.sid(APP),
        tsid: s.sid(),
        parked: parked_tx,
        go: go_rx,
    });
    std::thread::scope(|sc| {
        let checker = sc.spawn(|| {
            let t = Task::new(43, "chk", t.cred().clone());
            e.om.socket_sendmsg(&t, &s).map_err(|x| x.errno())
        });
        parked
            .recv_timeout(DEADLINE)
            .expect("the send never reached compute_av");
        e.server.reload(&revoked).unwrap();
        go.send(()).unwrap();
        let _ = checker.join().unwrap();
    });
    let fast = e.om.socket_sendmsg(&t, &s).map_err(|x| x.errno());
    e.om.fast_paths().set_sockets(false);
    let uncached = e.om.socket_sendmsg(&t, &s).map_err(|x| x.errno());
    assert_eq!(
        uncached,
        Err(errno::EACCES),
        "the revoked policy refuses the send"
    );
    assert_eq!(fast, uncached, "the fast path answers as the cache does");
}
