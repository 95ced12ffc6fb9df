//! `seaccess info` counts the policy's rules as the file holds them, though the server has
//! moved them into its indexes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

#[test]
fn info_counts_the_rules_the_file_holds() {
    for name in ["example", "booleans", "xperms"] {
        let path = seaccess_testkit::compile(name, 33);
        let p = seaccess_policy::read_policy(&std::fs::read(&path).unwrap()).unwrap();
        let rules = p.rules();
        let conditional: usize = rules
            .conds()
            .iter()
            .map(|c| c.true_list.len() + c.false_list.len())
            .sum();
        assert!(!rules.avtab().is_empty());
        let out = Command::new(env!("CARGO_BIN_EXE_seaccess"))
            .args(["info", "-p"])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let want = format!(
            "rules {} unconditional, {conditional} conditional\n",
            rules.avtab().len()
        );
        assert!(text.contains(&want), "{name}: want {want:?} in\n{text}");
        let want = format!("conditionals {}\n", rules.conds().len());
        assert!(text.contains(&want), "{name}: want {want:?} in\n{text}");
        if name == "booleans" {
            assert!(
                conditional > 0 && !rules.conds().is_empty(),
                "booleans.cil has conditional rules"
            );
        }
    }
}
