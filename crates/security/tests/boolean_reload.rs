//! A reload keeps the active boolean values, by name, and drops the pending ones: a value set
//! but not committed must not become active because the policy was reloaded (the kernel keeps
//! the active values across a load and selinuxfs recreates its boolean files from them).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_security::SecurityServer;
use seaccess_testkit::*;
use seaccess_types::AccessVector;

/// dom_t's access to on_true (booleans.cil: `single` is allowed there while t1 is true) and the
/// bit of `single`, under the server's current generation.
fn single(s: &SecurityServer) -> (AccessVector, AccessVector) {
    let g = s.snapshot();
    let (dom, obj) = (
        g.context_to_sid("u:r:dom_t:s0").unwrap(),
        g.context_to_sid("u:object_r:on_true:s0").unwrap(),
    );
    let class = g.class("cond").unwrap();
    (
        g.compute_av(dom, obj, class).unwrap().allowed,
        g.perms(class, &["single"]).unwrap(),
    )
}

/// booleans.cil with five booleans declared before t1, so that a reload into it numbers t1
/// differently: values must follow names, not positions.
fn renumbered() -> std::path::PathBuf {
    compile_variant("booleans", "booleans-renumbered", 33, |src| {
        let extra = "(boolean a0 false)\n(boolean a1 false)\n(boolean a2 false)\n(boolean a3 false)\n(boolean a4 false)\n";
        src.replacen("(boolean t1 true)", &format!("{extra}(boolean t1 true)"), 1)
    })
}

#[test]
fn a_reload_keeps_the_active_values_and_drops_the_pending_ones() {
    for image in [compile("booleans", 33), renumbered()] {
        let s = load(&compile("booleans", 33));
        let active = s.snapshot().boolean("t1").unwrap();
        let (before, bit) = single(&s);
        // The premise: t1 switches `single`, so a wrongly taken value shows in the decision.
        assert_eq!(
            before & bit == bit,
            active,
            "{}: t1 does not switch dom_t's single on on_true",
            image.display()
        );

        s.set_boolean("t1", !active).unwrap();
        assert_eq!(s.pending_boolean("t1").unwrap(), !active);
        s.reload(&seaccess_policy::read_file(&image).unwrap())
            .unwrap();
        let what = format!("after a reload into {}", image.display());
        assert_eq!(
            s.snapshot().boolean("t1").unwrap(),
            active,
            "{what}: the pending value became active"
        );
        assert_eq!(
            single(&s).0 & bit,
            before & bit,
            "{what}: decisions follow the pending value"
        );
        assert_eq!(
            s.pending_boolean("t1").unwrap(),
            active,
            "{what}: the pending value outlived the reload"
        );

        // Committed, the other value does take effect: the boolean does decide.
        s.set_boolean("t1", !active).unwrap();
        s.commit_booleans();
        assert_eq!(s.snapshot().boolean("t1").unwrap(), !active);
        assert_ne!(
            single(&s).0 & bit,
            before & bit,
            "{what}: a committed t1 changes nothing"
        );
    }
}
