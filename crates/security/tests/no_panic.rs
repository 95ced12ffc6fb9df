//! No public function of the security server panics, whatever it is given: contexts parsed
//! under another policy or built by hand, SIDs and classes out of range, generations made stale
//! by a reload. Each call runs under catch_unwind; a panic fails the test, and values that are
//! not valid in the generation must be answered with an error.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::panic::{catch_unwind, AssertUnwindSafe};

use seaccess_policy::{Context, Ebitmap, Level, Range, TypeRuleKind};
use seaccess_security::{Generation, SecurityServer, XpermKind};
use seaccess_testkit::*;
use seaccess_types::{ClassId, Sid};

/// Runs every check, collecting panics and wrong answers so that one run reports them all.
#[derive(Default)]
struct Probe {
    failures: Vec<String>,
}

impl Probe {
    /// `f` must not panic.
    fn call<T>(&mut self, what: &str, f: impl FnOnce() -> T) -> Option<T> {
        match catch_unwind(AssertUnwindSafe(f)) {
            Ok(v) => Some(v),
            Err(_) => {
                self.failures.push(format!("panicked: {what}"));
                None
            }
        }
    }

    /// `f` must neither panic nor succeed.
    fn err<T, E>(&mut self, what: &str, f: impl FnOnce() -> Result<T, E>) {
        if let Some(Ok(_)) = self.call(what, f) {
            self.failures.push(format!("no error: {what}"));
        }
    }

    fn finish(self) {
        assert!(
            self.failures.is_empty(),
            "{} failures:\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
    }
}

fn level(sens: u32, cats: &[u32]) -> Level {
    let mut c = Ebitmap::new();
    for b in cats {
        c.set(*b);
    }
    Level { sens, cats: c }
}

/// Contexts no policy here makes valid: values out of every table, or of the wrong shape.
fn hand_built(valid: &Context) -> Vec<(String, Context)> {
    let with = |f: &dyn Fn(&mut Context)| {
        let mut c = valid.clone();
        f(&mut c);
        c
    };
    let r = |low: Level, high: Level| Some(Range { low, high });
    vec![
        ("type 60000".into(), with(&|c| c.ty = 60000)),
        ("type 0".into(), with(&|c| c.ty = 0)),
        ("type u32::MAX".into(), with(&|c| c.ty = u32::MAX)),
        ("role 0".into(), with(&|c| c.role = 0)),
        ("role 9999".into(), with(&|c| c.role = 9999)),
        ("user 0".into(), with(&|c| c.user = 0)),
        ("user 60000".into(), with(&|c| c.user = 60000)),
        (
            "sens 99".into(),
            with(&|c| c.range = r(level(99, &[]), level(99, &[]))),
        ),
        (
            "sens 0".into(),
            with(&|c| c.range = r(level(0, &[]), level(0, &[]))),
        ),
        (
            "category 5000".into(),
            with(&|c| c.range = r(level(1, &[5000]), level(1, &[5000]))),
        ),
        (
            "high below low".into(),
            with(&|c| c.range = r(level(99, &[]), level(1, &[]))),
        ),
        ("no range".into(), with(&|c| c.range = None)),
        (
            "everything out of range".into(),
            Context {
                user: 60000,
                role: 0,
                ty: 60000,
                range: r(level(99, &[7000]), level(0, &[])),
            },
        ),
    ]
}

/// Every public entry point of a generation, fed `ctxs` (contexts that must be refused),
/// `sids` and `classes` (values that must be refused), plus `foreign` contexts from another
/// policy, which must be refused unless they happen to be valid here.
fn probe_generation(
    p: &mut Probe,
    g: &Generation,
    label: &str,
    ctxs: &[(String, Context)],
    foreign: &[Context],
    sids: &[Sid],
    classes: &[ClassId],
) {
    let good_sid = Sid(1);
    let good_class = g.class("file").unwrap();
    let good_ctx = g.sid_context(good_sid).unwrap().clone();
    for (what, c) in ctxs {
        let w = |f: &str| format!("{label}: {f} with {what}");
        p.err(&w("context_struct_to_sid"), || {
            g.context_struct_to_sid(c.clone())
        });
        p.err(&w("compute_av_contexts source"), || {
            g.compute_av_contexts(c, &good_ctx, good_class)
        });
        p.err(&w("compute_av_contexts target"), || {
            g.compute_av_contexts(&good_ctx, c, good_class)
        });
        // A kind other than these three is unrepresentable.
        for kind in [
            TypeRuleKind::Transition,
            TypeRuleKind::Member,
            TypeRuleKind::Change,
        ] {
            p.err(&w(&format!("compute_context source {kind:?}")), || {
                g.compute_context(c, &good_ctx, good_class, kind, Some("x"))
            });
            p.err(&w(&format!("compute_context target {kind:?}")), || {
                g.compute_context(&good_ctx, c, good_class, kind, None)
            });
        }
        p.call(&w("context_string"), || g.context_string(c));
    }
    for c in foreign {
        let valid = g.policy().context_is_valid(c);
        let w = |f: &str| format!("{label}: {f} with foreign context {c:?}");
        let r = p.call(&w("context_struct_to_sid"), || {
            g.context_struct_to_sid(c.clone()).is_ok()
        });
        let r2 = p.call(&w("compute_av_contexts"), || {
            g.compute_av_contexts(c, c, good_class).is_ok()
        });
        let r3 = p.call(&w("compute_context"), || {
            g.compute_context(c, c, good_class, TypeRuleKind::Transition, None)
                .is_ok()
        });
        p.call(&w("context_string"), || g.context_string(c));
        for ok in [r, r2, r3].into_iter().flatten() {
            if ok && !valid {
                p.failures.push(w("accepted although invalid here"));
            }
        }
    }
    for &s in sids {
        let w = |f: &str| format!("{label}: {f} with SID {s}");
        p.err(&w("sid_context"), || g.sid_context(s));
        p.err(&w("sid_to_context"), || g.sid_to_context(s));
        for (a, b) in [(s, good_sid), (good_sid, s)] {
            p.err(&w("compute_av"), || g.compute_av(a, b, good_class));
            p.err(&w("explain"), || g.explain(a, b, good_class));
            p.err(&w("compute_create"), || {
                g.compute_create(a, b, good_class, Some("name"))
            });
            p.err(&w("compute_relabel"), || {
                g.compute_relabel(a, b, good_class)
            });
            p.err(&w("compute_member"), || g.compute_member(a, b, good_class));
            p.err(&w("xperm_drivers"), || {
                g.xperm_drivers(a, b, good_class, XpermKind::Ioctl)
            });
            p.err(&w("compute_xperms"), || {
                g.compute_xperms(a, b, good_class, XpermKind::Ioctl, 0xff)
            });
            p.err(&w("ioctl_drivers"), || g.ioctl_drivers(a, b, good_class));
            p.err(&w("check_ioctl"), || {
                g.check_ioctl(a, b, good_class, 0xffff)
            });
        }
        p.err(&w("validate_transition old"), || {
            g.validate_transition(s, good_sid, good_sid, good_class)
        });
        p.err(&w("validate_transition new"), || {
            g.validate_transition(good_sid, s, good_sid, good_class)
        });
        p.err(&w("validate_transition task"), || {
            g.validate_transition(good_sid, good_sid, s, good_class)
        });
        if let Ok(map) = g.map_classes(&[("file", &["read"][..])]) {
            p.err(&w("compute_av_mapped"), || {
                g.compute_av_mapped(s, good_sid, &map, 0)
            });
        }
        p.call(&w("initial_sid"), || g.initial_sid(s.0));
    }
    for &c in classes {
        let w = |f: &str| format!("{label}: {f} with class {}", c.0);
        p.err(&w("class_name"), || g.class_name(c));
        p.err(&w("perms"), || g.perms(c, &["read"]));
        p.call(&w("perm_name"), || g.perm_name(c, 99));
        p.err(&w("compute_av"), || g.compute_av(good_sid, good_sid, c));
        p.err(&w("compute_av_contexts"), || {
            g.compute_av_contexts(&good_ctx, &good_ctx, c)
        });
        p.err(&w("explain"), || g.explain(good_sid, good_sid, c));
        // The kernel's security_compute_sid answers for a class the policy lacks (with no class
        // datum, so object defaults): an answer or an error, never a panic.
        p.call(&w("compute_create"), || {
            g.compute_create(good_sid, good_sid, c, Some("name")).ok()
        });
        p.call(&w("compute_relabel"), || {
            g.compute_relabel(good_sid, good_sid, c).ok()
        });
        p.call(&w("compute_member"), || {
            g.compute_member(good_sid, good_sid, c).ok()
        });
        p.call(&w("compute_context"), || {
            g.compute_context(&good_ctx, &good_ctx, c, TypeRuleKind::Transition, None)
                .ok()
        });
        p.err(&w("validate_transition"), || {
            g.validate_transition(good_sid, good_sid, good_sid, c)
        });
        p.err(&w("xperm_drivers"), || {
            g.xperm_drivers(good_sid, good_sid, c, XpermKind::Ioctl)
        });
        p.err(&w("compute_xperms"), || {
            g.compute_xperms(good_sid, good_sid, c, XpermKind::Ioctl, 0)
        });
        p.err(&w("ioctl_drivers"), || {
            g.ioctl_drivers(good_sid, good_sid, c)
        });
        p.err(&w("check_ioctl"), || {
            g.check_ioctl(good_sid, good_sid, c, 0)
        });
        p.call(&w("genfs_sid"), || g.genfs_sid("proc", "/", c));
    }
    p.call(&format!("{label}: perm_name bit 99"), || {
        g.perm_name(good_class, 99)
    });
    p.call(&format!("{label}: perm_name bit u32::MAX"), || {
        g.perm_name(good_class, u32::MAX)
    });
    if let Ok(map) = g.map_classes(&[("file", &["read"][..])]) {
        for i in [1usize, 2, usize::MAX] {
            p.err(
                &format!("{label}: compute_av_mapped class index {i}"),
                || g.compute_av_mapped(good_sid, good_sid, &map, i),
            );
        }
    }
    for n in [0u32, 257, u32::MAX] {
        p.call(&format!("{label}: initial_sid {n}"), || g.initial_sid(n));
    }
    for s in [
        "",
        ":",
        "a:b",
        "a:b:c:d:e",
        "\0",
        "system_u:object_r:etc_t:s99",
        "system_u:object_r:etc_t:s0:c9999",
        "system_u:object_r:etc_t:s0-s0:c0.c0",
    ] {
        p.err(&format!("{label}: context_to_sid {s:?}"), || {
            g.context_to_sid(s)
        });
    }
}

fn bad_sids() -> Vec<Sid> {
    // 256: a number reserved for initial SIDs that no policy here names.
    vec![
        Sid(0),
        Sid(256),
        Sid(999_999),
        Sid(u32::MAX - 1),
        Sid(u32::MAX),
    ]
}

fn bad_classes(g: &Generation) -> Vec<ClassId> {
    let n = g.policy().classes.len() as u16;
    vec![ClassId(0), ClassId(n + 1), ClassId(9999), ClassId(u16::MAX)]
}

#[test]
fn no_entry_point_panics_on_foreign_or_hand_built_values() {
    let mut p = Probe::default();
    let example = load(&compile("example", 33));
    let mls = load(&compile("mls", 33));
    let nonmls = load(&compile("nonmls", 33));
    let foreign_mls: Vec<Context> = contexts(mls.snapshot().policy())
        .iter()
        .map(|c| mls.snapshot().parse_context(c).unwrap())
        .collect();
    let foreign_nonmls: Vec<Context> = contexts(nonmls.snapshot().policy())
        .iter()
        .map(|c| nonmls.snapshot().parse_context(c).unwrap())
        .collect();
    for (label, s, foreign) in [
        ("example", &example, &foreign_mls),
        ("example/nonmls", &example, &foreign_nonmls),
        ("nonmls", &nonmls, &foreign_mls),
        ("mls", &mls, &foreign_nonmls),
    ] {
        let g = s.snapshot();
        let valid = g.sid_context(Sid(1)).unwrap().clone();
        let mut ctxs = hand_built(&valid);
        if !g.policy().mls {
            ctxs.retain(|(w, _)| w != "no range");
            ctxs.push((
                "a range in a policy without MLS".into(),
                Context {
                    range: Some(Range {
                        low: level(1, &[]),
                        high: level(1, &[]),
                    }),
                    ..valid
                },
            ));
        }
        probe_generation(
            &mut p,
            &g,
            label,
            &ctxs,
            foreign,
            &bad_sids(),
            &bad_classes(&g),
        );
    }
    p.finish();
}

/// A generation kept past a reload to another policy, given SIDs and contexts of the new one
/// (and the new generation given the old one's).
#[test]
fn stale_generations_never_panic() {
    let mut p = Probe::default();
    let s = load(&compile("example", 33));
    let old = s.snapshot();
    let old_ctx: Vec<Context> = contexts(old.policy())
        .iter()
        .take(200)
        .map(|c| old.parse_context(c).unwrap())
        .collect();
    let old_sids: Vec<Sid> = contexts(old.policy())
        .iter()
        .take(200)
        .map(|c| sid(&old, c))
        .collect();
    s.reload(&std::fs::read(compile("mls", 33)).unwrap())
        .unwrap();
    let new = s.snapshot();
    let new_ctx: Vec<Context> = contexts(new.policy())
        .iter()
        .map(|c| new.parse_context(c).unwrap())
        .collect();
    let new_sids: Vec<Sid> = contexts(new.policy())
        .iter()
        .map(|c| sid(&new, c))
        .collect();
    probe_generation(
        &mut p,
        &old,
        "stale example",
        &[],
        &new_ctx,
        &bad_sids(),
        &bad_classes(&old),
    );
    probe_generation(
        &mut p,
        &new,
        "mls after reload",
        &[],
        &old_ctx,
        &bad_sids(),
        &bad_classes(&new),
    );
    // SIDs persist across reloads: any answer is fine, a panic is not.
    let file_old = old.class("file").unwrap();
    for &a in new_sids.iter().chain(&old_sids).step_by(5) {
        p.call("stale compute_av", || {
            old.compute_av(a, Sid(1), file_old).ok()
        });
        p.call("stale compute_create", || {
            old.compute_create(a, a, file_old, None).ok()
        });
        p.call("new compute_av", || {
            new.compute_av(a, Sid(1), file_old).ok()
        });
        p.call("server compute_av", || {
            s.snapshot().compute_av(a, a, ClassId(9999)).ok()
        });
        p.call("server sid_to_context", || s.sid_to_context(a).ok());
    }
    for sid in bad_sids() {
        p.err("server sid_to_context", || s.sid_to_context(sid));
        p.err("server compute_av", || {
            s.snapshot().compute_av(sid, Sid(1), file_old)
        });
    }
    p.err("server compute_av class 0", || {
        s.snapshot().compute_av(Sid(1), Sid(1), ClassId(0))
    });
    p.err("server reload garbage", || s.reload(b"garbage"));
    p.err("server from_bytes garbage", || {
        SecurityServer::from_bytes(&[0xff; 64])
    });
    p.err("set_boolean unknown", || {
        s.set_boolean("no_such_boolean", true)
    });
    p.err("pending_boolean unknown", || {
        s.pending_boolean("no_such_boolean")
    });
    p.finish();
}

/// The error for a hand-built context names the context, not an empty string.
#[test]
fn context_struct_to_sid_quotes_the_context() {
    let s = load(&compile("example", 33));
    let g = s.snapshot();
    let mut c = g.sid_context(Sid(1)).unwrap().clone();
    c.ty = g.policy().type_names.value("etc_t").unwrap();
    let e = g.context_struct_to_sid(c).unwrap_err().to_string();
    assert!(e.contains("system_u:system_r:etc_t"), "{e}");
}
