//! The lab and the benchmarks are `seaccess-lab`'s: `seaccess --help` does not list them, and
//! `seaccess bench ...` / `seaccess lab ...` are clap's unknown-command error (status 2) with one
//! tip naming where they went.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Output};

fn seaccess(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_seaccess"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn help_lists_neither_bench_nor_lab() {
    let out = seaccess(&["--help"]);
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    // The list was read: the commands that stay are in it.
    assert!(
        commands.contains(&"check") && commands.contains(&"tour"),
        "{help}"
    );
    for gone in ["bench", "lab"] {
        assert!(!commands.contains(&gone), "{gone} listed: {help}");
    }
}

#[test]
fn bench_and_lab_are_unknown_with_a_tip_naming_seaccess_lab() {
    for args in [
        &["bench", "avc", "-p", "/nonexistent"][..],
        &["lab", "--quick"][..],
    ] {
        let out = seaccess(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!("unrecognized subcommand '{}'", args[0])),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("tip: ") && err.contains(&format!("seaccess-lab {}", args[0])),
            "{args:?}: no tip naming seaccess-lab: {err}"
        );
    }
    // Another unknown command gets clap's error without the tip.
    let out = seaccess(&["benchmark"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!err.contains("seaccess-lab"), "{err}");
}
