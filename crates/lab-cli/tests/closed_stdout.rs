//! `seaccess-lab bench avc --json | head -c0`: a reader that has gone ends the command quietly
//! with the status a shell reports for a command killed by SIGPIPE (141), never with a panic, as
//! `seaccess` does (the two programs share crates/cli/src/output.rs).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::{Command, Stdio};

/// 128 + SIGPIPE, as a shell reports a coreutils program that wrote to a closed pipe.
const CLOSED: i32 = 141;

/// The write end of a pipe whose read end is already closed: the standard input of a process
/// that has exited without reading it (closing a read end after spawning would race with the
/// command's first write).
fn closed_pipe() -> Stdio {
    let mut reader = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
    let end = reader.stdin.take().unwrap();
    assert!(reader.wait().unwrap().success());
    Stdio::from(end)
}

#[test]
fn bench_avc_on_a_closed_stdout_ends_quietly() {
    let p = seaccess_testkit::compile("example", 33);
    let out = Command::new(env!("CARGO_BIN_EXE_seaccess-lab"))
        .args(["bench", "avc", "-p"])
        .arg(&p)
        .args([
            "--json",
            "--seconds",
            "0.01",
            "--threads",
            "1",
            "--keys",
            "16",
            "--no-callgrind",
            "--peer",
            "/nonexistent",
        ])
        .stdin(Stdio::null())
        .stdout(closed_pipe())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "bench avc: panicked: {err}");
    assert_eq!(
        out.status.code(),
        Some(CLOSED),
        "bench avc: status {:?}, stderr {err}",
        out.status
    );
}
