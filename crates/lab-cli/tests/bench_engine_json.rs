//! `seaccess-lab bench engine --json` prints one JSON object whatever the policy's path and whatever
//! was measured. libsepol's side is played by a stand-in oracle script here: the test is about
//! the report, not the numbers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A stand-in for sepol-oracle: `gen` prints one query of the example policy N times, `time`
/// reports fixed libsepol figures, `av` reads its input.
const FAKE_ORACLE: &str = r#"#!/bin/sh
case "$1" in
gen) i=0; while [ "$i" -lt "$4" ]; do echo "system_u:system_r:httpd_t:s0 system_u:object_r:tmp_t:s0 file"; i=$((i+1)); done ;;
time) cat > /dev/null; echo "load_ms 1.50 queries 10 ns_per_compute_av 300.0 (sink 0)" >&2 ;;
av) cat > /dev/null ;;
esac
"#;

fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("seaccess-bench-json-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fake_oracle(dir: &Path) -> PathBuf {
    let p = dir.join("sepol-oracle");
    std::fs::write(&p, FAKE_ORACLE).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

#[test]
fn the_engine_report_is_json_whatever_the_policy_path() {
    // The benchmark times the `seaccess` built beside it (its memory and batch figures), which
    // `cargo test --workspace` builds and `cargo test -p seaccess-lab-cli` alone may not.
    let lab = Path::new(env!("CARGO_BIN_EXE_seaccess-lab"));
    if !lab.with_file_name("seaccess").is_file() {
        eprintln!(
            "SKIP: no seaccess beside {} (cargo build -p seaccess-cli)",
            lab.display()
        );
        return;
    }
    let dir = scratch("quoted");
    // A path with characters JSON must escape.
    let policy = dir.join("odd \"name\" \\ .33");
    std::fs::copy(seaccess_testkit::compile("example", 33), &policy).unwrap();
    let oracle = fake_oracle(&dir);
    let out = Command::new(env!("CARGO_BIN_EXE_seaccess-lab"))
        .args([
            "bench",
            "engine",
            "--json",
            "--queries",
            "10",
            "--batch-queries",
            "10",
            "--policy",
        ])
        .arg(&policy)
        .arg("--oracle")
        .arg(&oracle)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "status {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    assert_eq!(v["policy"].as_str(), Some(policy.to_str().unwrap()));
    assert_eq!(v["sepol_load_ms"].as_f64(), Some(1.5));
    assert_eq!(v["sepol_compute_av_ns"].as_f64(), Some(300.0));
    assert_eq!(v["queries"], 10);
    let ns = v["compute_av_ns"].as_f64().unwrap();
    let speedup = v["compute_av_speedup"].as_f64().unwrap();
    // The report rounds the speed-up to 2 decimals and the time to 1: allowed for, or a run
    // slowed by a busy machine (a large time, a speed-up near 0.01) fails on the rounding alone.
    let rounding = 0.005 + 300.0 * 0.05 / (ns * ns);
    assert!(
        ns > 0.0 && (speedup - 300.0 / ns).abs() <= 0.01 * speedup + rounding,
        "speed-up {speedup} for {ns} ns"
    );
}
