//! Bad input on seaccess-lab's command line is an error that names the option, with status 2: never a
//! panic, an abort, or a run that measures nothing for minutes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn policy() -> String {
    seaccess_testkit::compile("example", 33)
        .to_string_lossy()
        .into_owned()
}

/// Runs seaccess-lab; a run longer than 30 s is killed and fails the test.
fn run(args: &[&str]) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_seaccess-lab"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if t0.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{args:?}: still running after 30 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_refused(args: &[&str], option: &str) {
    let (code, err) = run(args);
    assert!(!err.contains("panicked"), "{args:?}: panicked: {err}");
    assert_eq!(code, Some(2), "{args:?}: status {code:?}, stderr {err}");
    assert!(
        err.contains(option),
        "{args:?}: the error names {option}: {err}"
    );
}

#[test]
fn bench_avc_refuses_sizes_it_cannot_hold() {
    let p = policy();
    let base = [
        "bench",
        "avc",
        "-p",
        &p,
        "--seconds",
        "0.01",
        "--no-callgrind",
        "--peer",
        "/nonexistent",
    ];
    for (opt, value) in [
        ("--keys", "1000000000000000000"),
        ("--keys", "18446744073709551615"),
        ("--capacity", "1000000000000000000"),
        ("--threads", "100000"),
        ("--threads", "1,2,1000000"),
    ] {
        let mut args = base.to_vec();
        args.extend([opt, value]);
        assert_refused(&args, opt);
    }
}

#[test]
fn bench_engine_refuses_query_counts_it_cannot_hold_or_divide_by() {
    let p = policy();
    for (opt, value) in [
        ("--queries", "0"),
        ("--queries", "1000000000000"),
        ("--batch-queries", "0"),
        ("--batch-queries", "1000000000000"),
    ] {
        assert_refused(
            &[
                "bench",
                "engine",
                "-p",
                &p,
                "--oracle",
                "/nonexistent",
                opt,
                value,
            ],
            opt,
        );
    }
}

// `seaccess-lab lab`: an unknown experiment is named, with the ones there are; a results directory
// that cannot be made is named; both before anything runs.
#[test]
fn lab_refuses_unknown_experiments_and_unwritable_results() {
    let p = policy();
    assert_refused(
        &["lab", "-p", &p, "chatroom", "nosuchexperiment"],
        "nosuchexperiment",
    );
    let (code, err) = run(&[
        "lab",
        "-p",
        &p,
        "--quick",
        "--out",
        "/proc/no/such/dir",
        "chatroom",
    ]);
    assert_eq!(code, Some(2), "status {code:?}, stderr {err}");
    assert!(err.contains("/proc/no/such/dir"), "{err}");
}
