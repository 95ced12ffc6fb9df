//! Engines over one shared security server (what the lab's measurements build, a fresh cache
//! each): each has its own cache, all follow the one server, and SIDs are the server's.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use seaccess_engine::Engine;
use seaccess_testkit::compile;
use seaccess_types::{AccessVector, Seqno};

const PROC: &str = "sys_u:sys_r:proc_t";

/// classorder_a and classorder_b swap the numbers of `file` and `process` (see
/// testdata/policies/classorder_a.cil): the numbers of `file read` under a ask `process fork`
/// under b, which b allows proc_t on itself while a allows it no `file read`. A cache of the
/// second engine that did not follow the server would answer from a's decision after the
/// reload made through the first.
#[test]
fn engines_over_one_server_have_their_own_caches_and_follow_its_reloads() {
    let a = std::fs::read(compile("classorder_a", 33)).unwrap();
    let b = std::fs::read(compile("classorder_b", 33)).unwrap();
    let first = Engine::builder().capacity(64).from_bytes(&a).unwrap();
    let second = Engine::builder()
        .capacity(32)
        .over_server(first.server().clone());
    assert!(Arc::ptr_eq(first.server(), second.server()));
    assert!(!Arc::ptr_eq(first.avc(), second.avc()), "a fresh cache");
    assert!(
        second.avc().capacity() < first.avc().capacity(),
        "the builder's capacity"
    );
    let p = first.sid(PROC).unwrap();
    assert_eq!(second.sid(PROC).unwrap(), p, "the server's one SID table");

    let g = first.server().snapshot();
    let file = g.class("file").unwrap();
    let read = g.perms(file, &["read"]).unwrap();
    let before = second.avc().decide(p, p, file).unwrap();
    assert_eq!(before.allowed & read, AccessVector::NONE);
    assert_eq!(before.seqno, Seqno(1));

    assert_eq!(first.reload_bytes(&b).unwrap(), Seqno(2));
    let after = second.avc().decide(p, p, file).unwrap();
    assert_eq!(
        after.seqno,
        Seqno(2),
        "the second cache followed the reload"
    );
    assert_eq!(
        after.allowed & read,
        read,
        "the same numbers are process fork under classorder_b, which it allows"
    );
    let by_names = second.check(PROC, PROC, "process", &["fork"]).unwrap();
    assert!(by_names.allowed());
    assert_eq!(by_names.seqno(), Seqno(2));
}
