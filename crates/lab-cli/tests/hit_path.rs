//! `seaccess-lab bench hit-path`'s rows. Apart from tests/commands.rs: the processes spawned
//! here would race that file's test, which writes a program and then runs it (a child forked
//! while the file is open for writing makes its exec fail with ETXTBSY).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

/// Every row `bench hit-path` counts runs its checks on Debian's policy and each is allowed (a
/// refused one would count the denial's path), and an unknown row is refused naming the rows.
#[test]
fn every_hit_path_row_checks_and_an_unknown_one_is_refused() {
    let debian = "/etc/selinux/default/policy/policy.33";
    if !Path::new(debian).exists() {
        println!("SKIP: {debian} is not installed (make deps installs it)");
        return;
    }
    let lab = env!("CARGO_BIN_EXE_seaccess-lab");
    for row in seaccess_lab::hit_path::ROWS.iter().map(|r| r.0) {
        let out = Command::new(lab)
            .args([
                "bench", "hit-loop", "--row", row, "--count", "2000", "--policy", debian,
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{row}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = Command::new(lab)
        .args([
            "bench", "hit-loop", "--row", "nope", "--count", "1", "--policy", debian,
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("no row nope") && err.contains("avc_check_at"),
        "{err}"
    );
}
