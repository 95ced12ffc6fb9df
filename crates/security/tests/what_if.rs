//! `Generation::with_booleans` answers as a committed boolean change would, without changing the
//! server; `Generation::type_allowed` is the allow rules' share of a decision, as compute_av has
//! it where no constraint applies.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_testkit::*;

#[test]
fn with_booleans_answers_as_a_commit_would() {
    let path = compile("booleans", 33);
    let server = load(&path);
    let g = server.snapshot();
    let triples = all_triples(g.policy());
    for (name, value) in g.booleans() {
        let committed = load(&path);
        committed.set_boolean(&name, !value).unwrap();
        committed.commit_booleans();
        let c = committed.snapshot();
        let w = g.with_booleans(&[(&name, !value)]).unwrap();
        let mut differs = 0;
        for mode in ["av", "create", "relabel", "member"] {
            for t in &triples {
                let want = answer(&c, mode, t);
                assert_eq!(answer(&w, mode, t), want, "{name}={} {mode} {t}", !value);
                differs += usize::from(answer(&g, mode, t) != want);
            }
        }
        // Each of booleans.cil's booleans switches some rule: a with_booleans that changed
        // nothing would pass the comparison above only if the commit changed nothing too.
        assert!(differs > 0, "flipping {name} changed no answer");
        assert_eq!(
            server.snapshot().boolean(&name).unwrap(),
            value,
            "the server's value must stay"
        );
    }
    assert!(g.with_booleans(&[("t9", true)]).is_err());
}

#[test]
fn type_allowed_is_the_rules_share() {
    let server = load(&compile("booleans", 33));
    let g = server.snapshot();
    let p = g.policy();
    let mut nonzero = 0;
    for (si, s) in p.types.iter().enumerate().filter(|(_, t)| !t.attribute) {
        for (ti, t) in p.types.iter().enumerate().filter(|(_, t)| !t.attribute) {
            for (ci, c) in p.classes.iter().enumerate() {
                let class = g.class(&c.name).unwrap();
                let got = g.type_allowed(si as u32 + 1, ti as u32 + 1, class).unwrap();
                // booleans.cil has no constraints, and with one role on both sides no role check
                // applies: u:R:S to u:R:T decides by the rules alone.
                let (sn, tn) = (s.name.as_deref().unwrap(), t.name.as_deref().unwrap());
                let Some((ss, ts)) = ["r", "object_r"].iter().find_map(|r| {
                    Some((
                        g.context_to_sid(&format!("u:{r}:{sn}:s0")).ok()?,
                        g.context_to_sid(&format!("u:{r}:{tn}:s0")).ok()?,
                    ))
                }) else {
                    continue;
                };
                let want = g.compute_av(ss, ts, class).unwrap().allowed;
                assert_eq!(got, want, "{sn} {tn} {}", ci + 1);
                nonzero += usize::from(want.0 != 0);
            }
        }
    }
    assert!(nonzero > 0);
    let dom = p.type_names.value("dom_t").unwrap();
    let file = g.class("file").unwrap();
    assert!(g.type_allowed(dom, 0, file).is_none());
    assert!(g
        .type_allowed(dom, p.types.len() as u32 + 1, file)
        .is_none());
    // secilc leaves booleans.cil's attributes out of the binary; attributes.cil keeps its.
    let server = load(&compile("attributes", 33));
    let g = server.snapshot();
    let p = g.policy();
    let attr = p.type_names.value("even").unwrap();
    let ty = p.type_names.value("d2").unwrap();
    let class = g.class(&p.classes[0].name).unwrap();
    assert!(g.type_allowed(ty, ty, class).is_some());
    assert!(
        g.type_allowed(attr, ty, class).is_none(),
        "an attribute is not a type"
    );
    assert!(
        g.type_allowed(ty, attr, class).is_none(),
        "an attribute is not a type"
    );
}
