//! Each MLS constraint operator (dom, domby, incomp, eq, neq) on each level pair (l1 l2, l1 h2,
//! h1 l2, h1 h2, l1 h1, l2 h2), on dominating, equal and incomparable levels, as the kernel's
//! constraint_expr_eval answers them. testdata/policies/mls_ops.cil gives permission PAIR_OP of
//! class mlsop exactly when OP holds between PAIR's two levels (its one mlsconstrain), so the
//! expected answer of every permission follows from the contexts' levels alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;

use seaccess_testkit::{compile, load, sid};

/// The subjects of mls_ops.cil's header: each range's low and high level.
const RANGES: [&str; 5] = [
    "s0-s0",
    "s0-s1:c0.c1",
    "s0:c0-s1:c0",
    "s0:c1-s1:c1",
    "s1:c0-s1:c0,c1",
];

/// A level as (sensitivity number, categories), read from its text (`s1:c0,c1`, `s0:c0.c1`).
fn level(text: &str) -> (u32, BTreeSet<u32>) {
    let (sens, cats) = text.split_once(':').unwrap_or((text, ""));
    let mut set = BTreeSet::new();
    for part in cats.split(',').filter(|p| !p.is_empty()) {
        let n = |c: &str| c.trim_start_matches('c').parse::<u32>().unwrap();
        match part.split_once('.') {
            Some((a, b)) => set.extend(n(a)..=n(b)),
            None => {
                set.insert(n(part));
            }
        }
    }
    (sens.trim_start_matches('s').parse().unwrap(), set)
}

/// The kernel's mls_level_dom: sensitivity at least as high and a superset of categories.
fn dom(a: &(u32, BTreeSet<u32>), b: &(u32, BTreeSet<u32>)) -> bool {
    a.0 >= b.0 && a.1.is_superset(&b.1)
}

fn holds(op: &str, a: &(u32, BTreeSet<u32>), b: &(u32, BTreeSet<u32>)) -> bool {
    match op {
        "dom" => dom(a, b),
        "domby" => dom(b, a),
        "incomp" => !dom(a, b) && !dom(b, a),
        "eq" => dom(a, b) && dom(b, a),
        "neq" => !(dom(a, b) && dom(b, a)),
        _ => panic!("operator {op}"),
    }
}

#[test]
fn every_mls_operator_on_every_level_pair() {
    let path = compile("mls_ops", 33);
    let g = load(&path).snapshot();
    let class = g.class("mlsop").unwrap();
    let pairs = ["l1l2", "l1h2", "h1l2", "h1h2", "l1h1", "l2h2"];
    let ops = ["dom", "domby", "incomp", "eq", "neq"];
    let mut seen = BTreeSet::new();
    let mut answers: std::collections::BTreeMap<(&str, &str), Vec<bool>> = Default::default();
    let mut wrong = Vec::new();
    for s in RANGES {
        for t in RANGES {
            let (ssid, tsid) = (
                sid(&g, &format!("sys_u:sys_r:dom_t:{s}")),
                sid(&g, &format!("sys_u:sys_r:dom_t:{t}")),
            );
            let d = g.compute_av(ssid, tsid, class).unwrap();
            let (sl, sh) = s.split_once('-').unwrap();
            let (tl, th) = t.split_once('-').unwrap();
            let (l1, h1, l2, h2) = (level(sl), level(sh), level(tl), level(th));
            for pair in pairs {
                let (a, b) = match pair {
                    "l1l2" => (&l1, &l2),
                    "l1h2" => (&l1, &h2),
                    "h1l2" => (&h1, &l2),
                    "h1h2" => (&h1, &h2),
                    "l1h1" => (&l1, &h1),
                    _ => (&l2, &h2),
                };
                for op in ops {
                    let want = holds(op, a, b);
                    seen.insert((pair, op, want));
                    answers.entry((pair, op)).or_default().push(want);
                    let got = d
                        .allowed
                        .contains(g.perms(class, &[&format!("{pair}_{op}")]).unwrap());
                    if got != want {
                        wrong.push(format!(
                            "{s} -> {t}: {pair}_{op} allowed {got}, the levels say {want}"
                        ));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    // The levels tell the operators apart: across the two contexts every operator holds and
    // fails (dominating either way, equal and incomparable levels), and on a context's own
    // range (low never above high) dom and domby still answer differently somewhere.
    for pair in &pairs[..4] {
        for op in ops {
            assert!(
                seen.contains(&(pair, op, true)) && seen.contains(&(pair, op, false)),
                "{pair}_{op} is never both true and false"
            );
        }
    }
    for pair in pairs {
        assert_ne!(
            answers[&(pair, "dom")],
            answers[&(pair, "domby")],
            "{pair}: dom and domby agree on every context"
        );
    }
}
