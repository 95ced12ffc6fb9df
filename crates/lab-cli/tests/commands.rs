//! `seaccess-lab` has the commands `seaccess` had (`lab`, and `bench` with each benchmark), and
//! the benchmarks that time a `seaccess` command time the one built beside it, saying so when it
//! is not there instead of timing another or failing obscurely.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

/// The errno of exec on a file open for writing (Linux).
const ETXTBSY: i32 = 26;

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_seaccess-lab"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?} --help: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn commands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

#[test]
fn the_lab_and_every_benchmark_are_here() {
    let top = commands(&help(&[]));
    assert!(
        top.contains(&"lab".into()) && top.contains(&"bench".into()),
        "{top:?}"
    );
    let bench = commands(&help(&["bench"]));
    for b in ["label", "engine", "avc", "objmgr", "mount", "hit-path"] {
        assert!(
            bench.contains(&b.to_string()),
            "bench {b} missing: {bench:?}"
        );
    }
    // The lab's options are the ones `seaccess lab` had.
    let lab = help(&["lab"]);
    for opt in [
        "--quick",
        "--out",
        "--threads",
        "--rounds",
        "--cpus",
        "--callgrind",
        "--json",
    ] {
        assert!(lab.contains(opt), "lab {opt} missing: {lab}");
    }
}

#[test]
fn a_benchmark_without_seaccess_beside_it_says_which_is_missing() {
    // seaccess-lab alone in a directory: `bench engine` times `seaccess info` and `seaccess
    // compute-av`, and there is no seaccess there.
    let dir = std::env::temp_dir().join(format!("seaccess-lab-alone-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lab = dir.join("seaccess-lab");
    std::fs::copy(env!("CARGO_BIN_EXE_seaccess-lab"), &lab).unwrap();
    // The oracle's part runs first: a stand-in that answers at once.
    let oracle = dir.join("oracle");
    std::fs::write(
        &oracle,
        "#!/bin/sh\ncase \"$1\" in\ngen) echo 'system_u:system_r:httpd_t:s0 system_u:object_r:tmp_t:s0 file' ;;\ntime) cat >/dev/null; echo 'load_ms 1.0 queries 1 ns_per_compute_av 1.0' >&2 ;;\n*) cat >/dev/null ;;\nesac\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&oracle, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The program and the stand-in were just written: a child another test forks while they
    // are open makes their exec fail with ETXTBSY for a moment, so such a run is tried again.
    let policy = seaccess_testkit::compile("example", 33);
    let out = (0..50)
        .find_map(|_| {
            let out = Command::new(&lab)
                .args([
                    "bench",
                    "engine",
                    "--queries",
                    "1",
                    "--batch-queries",
                    "1",
                    "-p",
                ])
                .arg(&policy)
                .arg("--oracle")
                .arg(&oracle)
                .output();
            let busy = match &out {
                Err(e) => e.raw_os_error() == Some(ETXTBSY),
                Ok(o) => String::from_utf8_lossy(&o.stderr).contains("Text file busy"),
            };
            if busy {
                std::thread::sleep(std::time::Duration::from_millis(20));
                return None;
            }
            Some(out.unwrap())
        })
        .expect("ETXTBSY 50 times");
    let _ = std::fs::remove_dir_all(&dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    let missing = Path::new(&dir).join("seaccess");
    assert!(
        err.contains(&format!("{} is missing", missing.display())),
        "{err}"
    );
}
