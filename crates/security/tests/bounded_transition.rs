//! security_bounded_transition: a task may go from one type to another only bounded by it,
//! through the chain of typebounds (testdata/policies/bounds_chain.cil: p_t bounds c_t, c_t
//! bounds g_t), or to the same type; never upward or sideways.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_types::LabelServer;

#[test]
fn bounded_transitions_follow_the_typebounds_chain() {
    let s = seaccess_testkit::load(&seaccess_testkit::compile("bounds_chain", 33));
    let sid = |t: &str| LabelServer::context_to_sid(&s, &format!("u:r:{t}:s0")).unwrap();
    let (p, c, g, o) = (
        sid("p_t"),
        sid("c_t"),
        sid("g_t"),
        LabelServer::context_to_sid(&s, "u:object_r:obj_t:s0").unwrap(),
    );
    let ok = |a, b| s.bounded_transition(a, b).unwrap();
    assert!(
        ok(p, c) && ok(c, g) && ok(p, g),
        "down the chain, one or two steps"
    );
    assert!(ok(p, p) && ok(g, g), "the same type");
    assert!(!ok(c, p) && !ok(g, c) && !ok(g, p), "never up the chain");
    assert!(!ok(p, o) && !ok(o, p), "never to or from an unrelated type");
    // Another range of the same type is the same type.
    let p1 = LabelServer::context_to_sid(&s, "u:r:p_t:s0:c0").unwrap();
    assert!(ok(p, p1));
    assert!(
        s.bounded_transition(p, seaccess_types::Sid(99_999))
            .is_err(),
        "an unknown SID is an error"
    );
}
