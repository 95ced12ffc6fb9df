//! `seaccess-lab bench objmgr --json` on a quick configuration: the report has the keys issue 10
//! fixes, its figures are sane for what was run, the generated tree is gone afterwards, and a
//! policy that does not allow the benchmark's operations is refused with a clear message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;
use std::process::{Command, Output};

use seaccess_testkit::debian_policy;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "seaccess-objbench-json-{}-{name}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn bench(args: &[&str], policy: &std::path::Path, dir: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_seaccess-lab"))
        .args(["bench", "objmgr"])
        .args(args)
        .arg("--policy")
        .arg(policy)
        .arg("--dir")
        .arg(dir)
        .output()
        .unwrap()
}

fn num(v: &serde_json::Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

#[test]
fn the_objmgr_report_has_every_experiments_figures() {
    let Some(policy) = debian_policy("default") else {
        return;
    };
    let dir = scratch("report");
    let out = bench(&["--json", "--quick", "--rounds", "1"], &policy, &dir);
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        out.status.success(),
        "status {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        left.is_empty(),
        "the generated tree was left behind: {left:?}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(v["policy"].as_str(), Some(policy.to_str().unwrap()));
    // One round asked: one whole block of the six orders of the variants.
    assert_eq!(v["rounds"], 6);
    assert!(v.get("control").is_none(), "not a control run: {v}");
    // The quick tree: 40 directories, 1,500 files (lab's Shape::QUICK).
    assert_eq!(
        (v["dirs"].as_u64(), v["files"].as_u64()),
        (Some(40), Some(1500))
    );
    for name in ["treewalk", "readwrite", "pathwalk"] {
        let e = &v[name];
        let vanilla = num(e, "vanilla_ns");
        assert!(
            vanilla >= 1.0,
            "{name}: vanilla_ns {vanilla} (no system call takes under 1 ns)"
        );
        for key in [
            "slow_overhead_pct",
            "fast_overhead_pct",
            "slow_best_pct",
            "fast_best_pct",
            "slow_hooks_ns",
            "fast_hooks_ns",
            "fast_hooks_pct",
        ] {
            let x = num(e, key);
            assert!(x.is_finite() && x > -100.0, "{name}: {key} {x}");
        }
        // The six passes, each cut into units, all measured.
        let (ops, unit, units) = (
            num(e, "ops_per_pass"),
            num(e, "ops_per_unit"),
            num(e, "units"),
        );
        assert!(
            unit >= 1.0 && unit <= ops && units == 6.0 * (ops / unit).ceil(),
            "{name}: {ops} ops, {unit} per unit, {units} units"
        );
        // The hooks' own time as a share of the system calls' is what the percentage says. The
        // report rounds both times to 0.1 ns and the share to 0.01, so the share is checked
        // against the range the unrounded times can give (a hook time near 1 ns is 5% off).
        let hooks = num(e, "fast_hooks_ns");
        let (lo, hi) = (
            (hooks - 0.05).max(0.0) / (vanilla + 0.05) * 100.0 - 0.005,
            (hooks + 0.05) / (vanilla - 0.05) * 100.0 + 0.005,
        );
        let pct = num(e, "fast_hooks_pct");
        assert!(
            (lo - 1e-9..=hi + 1e-9).contains(&pct),
            "{name}: fast_hooks_pct {pct} outside {lo}..{hi} ({hooks} ns of {vanilla} ns)"
        );
    }
    // Fast paths off, every check is a cache lookup: one per directory searched (the kernel's
    // may_lookup -> selinux_inode_permission asks search of each directory), one per read or
    // write (selinux_file_permission -> file_has_perm; the opener is the reader, so no fd use
    // check).
    let walk = &v["pathwalk"];
    assert_eq!(num(walk, "lookups_per_component_slow"), 1.0);
    assert_eq!(num(&v["readwrite"], "lookups_per_op_slow"), 1.0);
    // Fast paths on and warm: a directory searched before answers from its "nothing beyond
    // POSIX" mark, and a read or write of a file whose opener, label and policy are unchanged
    // since the open is not checked again (the 2007 revalidation skip): no lookups at all.
    assert_eq!(num(walk, "lookups_per_component_warm"), 0.0);
    assert_eq!(num(&v["readwrite"], "lookups_per_op_fast"), 0.0);
    let (lo, hi) = (num(walk, "min_depth"), num(walk, "max_depth"));
    assert!(
        (8.0..=12.0).contains(&lo) && (8.0..=12.0).contains(&hi) && lo <= hi,
        "depths {lo}..{hi}"
    );
    assert!(num(walk, "deep_paths") >= 100.0);
    // Without any lookup per directory, the warm walk's hooks cost less than with one each.
    assert!(
        num(walk, "fast_hooks_ns") < num(walk, "slow_hooks_ns"),
        "{walk}"
    );
}

#[test]
fn a_policy_without_the_benchmarks_labels_is_refused_with_the_reason() {
    let dir = scratch("refused");
    // The socket test policy has none of the candidate users or file types.
    let out = bench(
        &["--quick", "--rounds", "1"],
        &seaccess_testkit::compile("sockets", 33),
        &dir,
    );
    let _ = std::fs::remove_dir_all(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "accepted: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        err.contains("no subject and file context the policy allows")
            && err.contains("unconfined_t")
            && err.contains("user_t"),
        "{err}"
    );
}

#[test]
fn zero_rounds_are_refused() {
    let Some(policy) = debian_policy("default") else {
        return;
    };
    let dir = scratch("zero");
    let out = bench(&["--rounds", "0"], &policy, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rounds 0"));
}

// A control run says so, in the JSON and in the table, so that its figures are never taken for
// the hooks'.
#[test]
fn a_control_run_says_so() {
    let Some(policy) = debian_policy("default") else {
        return;
    };
    let dir = scratch("control");
    let json = bench(
        &["--json", "--quick", "--rounds", "1", "--control"],
        &policy,
        &dir,
    );
    let table = bench(&["--quick", "--rounds", "1", "--control"], &policy, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        json.status.success() && table.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["control"], true);
    assert!(String::from_utf8_lossy(&table.stdout).contains("CONTROL RUN"));
}
