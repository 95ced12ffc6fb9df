//! The check by names parked between resolving and deciding while a reload lands (the hook
//! runs the reload on the checking thread, at exactly that point).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use super::*;
use seaccess_testkit::compile;

const PROC: &str = "sys_u:sys_r:proc_t";

/// classorder_a and classorder_b differ only in the order of `file` and `process`: `file read`
/// resolved under one is `process fork` under the other, which both allow proc_t on itself
/// while neither allows it `file read` (see testdata/policies/classorder_a.cil). A check that
/// resolved under a and decided under b without resolving again would answer "allowed".
#[test]
fn a_reload_between_resolve_and_decide_is_resolved_again_not_mixed() {
    let a = std::fs::read(compile("classorder_a", 33)).unwrap();
    let b = std::fs::read(compile("classorder_b", 33)).unwrap();
    let log = Arc::new(Mutex::new(Vec::<String>::new()));
    let l = log.clone();
    let engine = Arc::new(
        Engine::builder()
            .audit(move |r| l.lock().unwrap().push(r.to_string()))
            .from_bytes(&a)
            .unwrap(),
    );
    // What each policy says, from the server, before any reload.
    let g = engine.server().snapshot();
    let p = g.context_to_sid(PROC).unwrap();
    let file = g.class("file").unwrap();
    let read = g.perms(file, &["read"]).unwrap();
    assert_eq!(
        g.compute_av(p, p, file).unwrap().allowed & read,
        AccessVector::NONE,
        "classorder_a allows proc_t no file read"
    );
    let before = engine.check(PROC, PROC, "file", &["read"]).unwrap();
    assert!(!before.allowed());
    assert_eq!(before.seqno(), Seqno(1));

    let e = engine.clone();
    *engine.park.lock().unwrap() = Some(Box::new(move || {
        e.reload_bytes(&b).unwrap();
    }));
    let after = engine.check(PROC, PROC, "file", &["read"]).unwrap();
    assert!(
        engine.park.lock().unwrap().is_none(),
        "the hook did not run"
    );
    assert_eq!(after.seqno(), Seqno(2), "answered by the reloaded policy");
    assert!(
        !after.allowed(),
        "file read resolved under one policy and decided under the other: {after:?}"
    );
    assert_eq!(after.denied_names(), ["read"]);
    let g = engine.server().snapshot();
    assert_eq!(
        g.class("file").unwrap(),
        ClassId(file.0 % 2 + 1),
        "classorder_b numbers file otherwise (else this test proves nothing)"
    );
    // The record names what was decided: file read, under the policy that decided.
    assert_eq!(
        after.record(),
        Some("avc:  denied  { read } for  scontext=sys_u:sys_r:proc_t tcontext=sys_u:sys_r:proc_t tclass=file permissive=0")
    );
    assert_eq!(
        log.lock().unwrap().last().map(String::as_str),
        after.record()
    );
}

/// Every reload is a new generation: a check parked by a reload every time it runs gives up
/// after [`RETRIES`] rounds with an error, never an answer of mixed numbers.
#[test]
fn a_policy_that_never_settles_is_an_error() {
    let a = std::fs::read(compile("classorder_a", 33)).unwrap();
    let engine = Arc::new(Engine::from_bytes(&a).unwrap());
    let mut rounds = 0;
    let r = engine.with_generation(|g| {
        rounds += 1;
        let s = g.sid(PROC)?;
        let (c, p) = g.class_perms("file", &["read"])?;
        engine.reload_bytes(&a)?;
        g.check(s, s, c, p)
    });
    assert!(matches!(r, Err(EngineError::Unsettled(RETRIES))), "{r:?}");
    assert_eq!(rounds, RETRIES);
}

/// An object manager made on demand over an engine built without one is the engine's from then
/// on (one, over its cache), and follows the server's reloads as one built with it: its class
/// maps are those of the policy the cache answers from.
#[test]
fn an_object_manager_made_later_is_the_engines_and_follows_reloads() {
    let a = std::fs::read(compile("classorder_a", 33)).unwrap();
    let b = std::fs::read(compile("classorder_b", 33)).unwrap();
    let engine = Engine::from_bytes(&a).unwrap();
    assert!(matches!(
        engine.object_manager(),
        Err(EngineError::NoObjectManager)
    ));
    let om = engine.object_manager_or_new().clone();
    assert!(Arc::ptr_eq(engine.object_manager().unwrap(), &om));
    assert!(
        Arc::ptr_eq(engine.object_manager_or_new(), &om),
        "made once"
    );
    assert!(
        Arc::ptr_eq(om.avc(), engine.avc()),
        "over the engine's cache"
    );
    assert_eq!(om.class_maps().newest().seqno(), Seqno(1));
    let seqno = engine.reload_bytes(&b).unwrap();
    assert_eq!(seqno, Seqno(2));
    assert_eq!(
        om.class_maps().newest().seqno(),
        seqno,
        "the object manager did not remap its classes for the reload"
    );
}
