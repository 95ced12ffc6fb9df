//! Symbol values with no entry ("holes"): checkpolicy gives role attributes and sensitivity and
//! category aliases values of their own and writes no entry for them. The kernel loads such
//! policies; so must seaccess, with decisions equal to libsepol's, and no hole may ever be named
//! or be valid in a context. The same policy compiled by secilc (no holes) must agree too.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_policy::{read_policy, Context, Level, PolicyTables, Range};
use seaccess_testkit::*;

const VERSIONS: [u32; 3] = [24, 30, 33];

/// Contexts written with alias names (holes.conf / holes.cil): each must resolve to the
/// primary's value, as libsepol resolves it.
const ALIAS_CONTEXTS: [&str; 6] = [
    "sys_u:sys_r:init_alias_t:unclassified-restricted:red,blue",
    "sys_u:object_r:file_alias_t:confidential:c0.c3",
    "sys_u:object_r:old_file_t:s1:red.green",
    "staff_u:user_r:init_alias_t:restricted-s1:c1,green",
    "sys_u:staff_r:doc_t:s0-confidential:red",
    // The role attribute is not a role: an error for both.
    "staff_u:staff_roles:init_t:s1",
];

fn queries(p: &PolicyTables) -> Vec<String> {
    let mut q = all_triples(p);
    let base = [
        "sys_u:sys_r:kernel_t:s0",
        "sys_u:object_r:doc_t:s0",
        "staff_u:staff_r:init_t:s1",
    ];
    for a in ALIAS_CONTEXTS {
        for b in base {
            for c in ["file", "process", "dir"] {
                q.push(format!("{a} {b} {c}"));
                q.push(format!("{b} {a} {c}"));
            }
        }
    }
    q
}

fn differential(path: &std::path::Path, label: &str) {
    let Some(oracle) = oracle() else { return };
    let server = load(path);
    let g = server.snapshot();
    let q = queries(g.policy());
    // Error-vs-error would agree vacuously: the alias contexts must be valid, the last not.
    let (valid, invalid) = ALIAS_CONTEXTS.split_at(ALIAS_CONTEXTS.len() - 1);
    for c in valid {
        assert!(g.context_to_sid(c).is_ok(), "{label}: {c} refused");
    }
    assert!(
        g.context_to_sid(invalid[0]).is_err(),
        "{label}: a role attribute named in a context"
    );
    // Queries naming the role attribute are refused by both sides, and only those (for
    // compute_av; a computed context may also be refused for its own reasons).
    let with_invalid = q
        .iter()
        .filter(|l| l.split(' ').any(|f| f == invalid[0]))
        .count();
    assert!(with_invalid > 0);
    for mode in ["av", "create", "relabel", "member"] {
        let c = compare_expecting_errors(&g, &oracle, path, mode, &q, 10);
        assert_eq!(
            c.differ,
            0,
            "{label} {mode}: {} of {} answers differ:\n{}",
            c.differ,
            q.len(),
            c.shown.join("\n")
        );
        if mode == "av" {
            assert_eq!(c.both_errors, with_invalid, "{label}: refused queries");
        } else {
            assert!(
                c.both_errors >= with_invalid,
                "{label} {mode}: refused queries"
            );
        }
    }
}

fn named(n: &seaccess_policy::Names) -> usize {
    (1..=n.len() as u32).filter(|v| n.is_defined(*v)).count()
}

#[test]
fn checkpolicy_holes_load_with_the_declared_counts() {
    for v in VERSIONS {
        let path = compile_conf("holes", v);
        let p = read_policy(&std::fs::read(&path).unwrap())
            .unwrap_or_else(|e| panic!("holes-conf.{v}: {e}"));
        // From holes.conf: object_r, staff_r, user_r, sys_r and the role attribute staff_roles;
        // s0 s1 s2 and three sensitivity aliases; c0..c3 and three category aliases.
        assert_eq!(
            (p.role_names.len(), named(&p.role_names)),
            (5, 4),
            "roles at {v}"
        );
        assert_eq!(
            (p.sens_names.len(), named(&p.sens_names)),
            (6, 3),
            "sensitivities at {v}"
        );
        assert_eq!(
            (p.cat_names.len(), named(&p.cat_names)),
            (7, 4),
            "categories at {v}"
        );
        assert_eq!(p.roles.len(), 5, "the role table stays indexable by value");
        assert_eq!(
            p.sens.len(),
            6,
            "the sensitivity table stays indexable by value"
        );
        // Aliases resolve to their primaries.
        assert_eq!(p.sens_names.value("restricted"), p.sens_names.value("s1"));
        assert_eq!(p.cat_names.value("green"), p.cat_names.value("c2"));
        assert_eq!(
            p.type_names.value("old_file_t"),
            p.type_names.value("file_t")
        );
    }
}

#[test]
fn checkpolicy_holes_decisions_match_libsepol() {
    for v in VERSIONS {
        differential(&compile_conf("holes", v), &format!("holes-conf.{v}"));
    }
}

#[test]
fn secilc_aliases_decisions_match_libsepol() {
    for v in versions("holes") {
        differential(&compile("holes", v), &format!("holes.{v}"));
    }
}

#[test]
fn holes_are_never_named_nor_valid_in_a_context() {
    let p = read_policy(&std::fs::read(compile_conf("holes", 33)).unwrap()).unwrap();
    let holes = |n: &seaccess_policy::Names| {
        (1..=n.len() as u32)
            .filter(|v| !n.is_defined(*v))
            .collect::<Vec<_>>()
    };
    let (role_holes, sens_holes, cat_holes) = (
        holes(&p.role_names),
        holes(&p.sens_names),
        holes(&p.cat_names),
    );
    assert_eq!(
        (role_holes.len(), sens_holes.len(), cat_holes.len()),
        (1, 3, 3)
    );
    for n in [&p.role_names, &p.sens_names, &p.cat_names] {
        for h in holes(n) {
            assert!(n.name(h).is_none());
            assert!(
                n.by_name.values().all(|v| *v != h),
                "a name maps to hole {h}"
            );
        }
    }
    // A valid subject context to start from: sys_u:sys_r:kernel_t:s0.
    let ctx = |user: &str, role: &str, ty: &str| Context {
        user: p.user_names.value(user).unwrap(),
        role: p.role_names.value(role).unwrap(),
        ty: p.type_names.value(ty).unwrap(),
        range: Some(Range {
            low: Level {
                sens: 1,
                cats: Default::default(),
            },
            high: Level {
                sens: 1,
                cats: Default::default(),
            },
        }),
    };
    let good = ctx("sys_u", "sys_r", "kernel_t");
    assert!(p.context_is_valid(&good));
    assert!(p.context_is_valid(&ctx("sys_u", "object_r", "file_t")));
    for r in &role_holes {
        assert!(
            !p.context_is_valid(&Context {
                role: *r,
                ..good.clone()
            }),
            "role hole {r} valid"
        );
    }
    for s in &sens_holes {
        let l = Level {
            sens: *s,
            cats: Default::default(),
        };
        assert!(!p.level_is_valid(&l), "sensitivity hole {s} valid");
        let obj = ctx("sys_u", "object_r", "file_t");
        assert!(!p.context_is_valid(&Context {
            range: Some(Range {
                low: l.clone(),
                high: l
            }),
            ..obj
        }));
    }
    for c in &cat_holes {
        let l = Level {
            sens: 3,
            cats: seaccess_policy::Ebitmap::from_bits([c - 1]),
        };
        assert!(!p.level_is_valid(&l), "category hole {c} valid at s2");
    }
}
