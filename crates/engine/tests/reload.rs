//! A reload is made once, in place, through the live server: SIDs asked after it are the live
//! server's, and a candidate policy checked before it hands out no number.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_engine::{Engine, EngineError, Validate};
use seaccess_testkit::compile;
use seaccess_types::Seqno;

const PROC: &str = "sys_u:sys_r:proc_t";
const DATA: &str = "sys_u:object_r:data_t";
const GONE: &str = "sys_u:object_r:gone_t";
/// A context no initial SID has, so the first one a server numbers.
const OBJ: &str = "sys_u:object_r:proc_t";

/// classorder_gone has a type (gone_t) the other policies lack. The live server numbered
/// another context first; a scratch server of the new policy, asked for gone_t first, gives it
/// the number the live server gave that context. The SID the engine hands out after the reload is
/// the live server's, naming gone_t there.
#[test]
fn a_sid_asked_after_a_reload_is_the_live_servers() {
    let engine = Engine::open(compile("classorder_a", 33)).unwrap();
    let p = engine.sid(PROC).unwrap();
    let d = engine.sid(DATA).unwrap();
    let o = engine.sid(OBJ).unwrap();
    assert!(
        matches!(engine.sid(GONE), Err(EngineError::Name(_))),
        "classorder_a has no gone_t"
    );
    let gone = compile("classorder_gone", 33);
    // What a scratch server of the same file numbers gone_t as: a number the live server has
    // already given to another context.
    let scratch = Engine::open(&gone).unwrap();
    let scratch_gone = scratch.sid(GONE).unwrap();
    assert!(
        scratch_gone == o,
        "this test needs the scratch number to collide with a live one ({scratch_gone:?})"
    );
    let c = engine.candidate_file(&gone).unwrap();
    c.check_context(GONE).unwrap();
    assert!(c.check_context("sys_u:object_r:nope_t").is_err());
    assert_eq!(engine.seqno(), Seqno(1), "a candidate loads nothing");
    assert_eq!(engine.reload_candidate(c).unwrap(), Seqno(2));
    let g = engine.sid(GONE).unwrap();
    assert_eq!(engine.server().sid_to_context(g).unwrap(), GONE);
    assert_ne!(g, scratch_gone, "the scratch server's number leaked");
    // The contexts resolved before keep their SIDs.
    assert_eq!(engine.sid(PROC).unwrap(), p);
    assert_eq!(engine.sid(DATA).unwrap(), d);
    assert_eq!(engine.sid(OBJ).unwrap(), o);
}

#[test]
fn the_memo_follows_the_generation() {
    let engine = Engine::open(compile("classorder_gone", 33)).unwrap();
    engine.sid(GONE).unwrap();
    engine.sid(PROC).unwrap();
    assert_eq!(engine.memo_size(), (Seqno(1), 2));
    // classorder_a does not define gone_t: a memo kept across the reload would still answer.
    engine.reload_file(compile("classorder_a", 33)).unwrap();
    assert!(
        matches!(engine.sid(GONE), Err(EngineError::Name(_))),
        "a context the new policy refuses was answered from the memo"
    );
    engine.sid(PROC).unwrap();
    assert_eq!(engine.memo_size(), (Seqno(2), 1));
}

#[test]
fn a_failed_reload_leaves_the_policy() {
    let engine = Engine::open(compile("classorder_a", 33)).unwrap();
    let full = std::fs::read(compile("classorder_b", 33)).unwrap();
    let e = engine.reload_bytes(&full[..full.len() / 3]).unwrap_err();
    assert!(e.to_string().starts_with("policy image: "), "{e}");
    let e = engine.reload_file("/nonexistent/policy.33").unwrap_err();
    assert!(e.to_string().contains("/nonexistent/policy.33"), "{e}");
    assert_eq!(engine.seqno(), Seqno(1));
    assert!(!engine
        .check(PROC, PROC, "file", &["read"])
        .unwrap()
        .allowed());
}

#[test]
fn the_cache_and_the_object_manager_follow_a_reload() {
    let engine = Engine::builder()
        .object_manager(true)
        .open(compile("classorder_a", 33))
        .unwrap();
    let om = engine.object_manager().unwrap().clone();
    assert!(engine
        .check(PROC, PROC, "process", &["fork"])
        .unwrap()
        .allowed());
    engine.reload_file(compile("classorder_b", 33)).unwrap();
    assert_eq!(engine.avc().seqno(), Seqno(2));
    assert_eq!(om.class_maps().newest().seqno(), Seqno(2));
    let a = engine.check(PROC, PROC, "process", &["fork"]).unwrap();
    assert!(a.allowed() && a.seqno() == Seqno(2), "{a:?}");
    assert!(matches!(
        Engine::open(compile("classorder_a", 33))
            .unwrap()
            .object_manager(),
        Err(EngineError::NoObjectManager)
    ));
}

/// An engine over another shares its policy and memo but keeps its own cache and mode: a reload
/// through either is both engines' next generation, and each cache follows it.
#[test]
fn an_engine_over_another_shares_its_policy_not_its_cache() {
    let base = Engine::open(compile("classorder_gone", 33)).unwrap();
    let over = Engine::builder().capacity(64).over(&base);
    assert!(std::sync::Arc::ptr_eq(base.server(), over.server()));
    assert!(!std::sync::Arc::ptr_eq(base.avc(), over.avc()));
    assert_eq!(over.avc().capacity(), 64);
    over.sid(GONE).unwrap();
    assert_eq!(base.memo_size(), (Seqno(1), 1), "the memo is not shared");
    over.set_enforcing(false);
    assert!(base.enforcing(), "the mode is shared");
    let a = over.check(PROC, PROC, "file", &["read"]).unwrap();
    assert!(
        a.allowed() && !a.granted_by_policy(),
        "permissive over: {a:?}"
    );
    assert!(!base.check(PROC, PROC, "file", &["read"]).unwrap().allowed());
    base.reload_file(compile("classorder_b", 33)).unwrap();
    assert_eq!(
        over.avc().seqno(),
        Seqno(2),
        "the cache over did not follow"
    );
    let a = over.check(PROC, PROC, "process", &["fork"]).unwrap();
    assert!(a.allowed() && a.seqno() == Seqno(2), "{a:?}");
    assert!(
        matches!(over.sid(GONE), Err(EngineError::Name(_))),
        "classorder_b has no gone_t"
    );
}
