//! A reader that stops reading early (`seaccess info -p POLICY | head -3`) must end the command
//! quietly with the status a shell reports for a command killed by SIGPIPE (141), never with a
//! panic. Each test gives the command a standard output whose reader has already gone, so its
//! first write meets a closed pipe.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::{Mutex, MutexGuard};

/// 128 + SIGPIPE, as a shell reports a coreutils program that wrote to a closed pipe.
const CLOSED: i32 = 141;

const QUERY: &str = "system_u:system_r:httpd_t:s0 system_u:object_r:tmp_t:s0 file\n";

/// Held while a test spawns anything: a process another test thread forks keeps a copy of every
/// open descriptor until it execs, and a copy of a read end would keep a pipe open.
static SPAWN: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SPAWN.lock().unwrap_or_else(|e| e.into_inner())
}

fn policy() -> String {
    let p: PathBuf = seaccess_testkit::compile("example", 33);
    p.to_string_lossy().into_owned()
}

/// The write end of a pipe whose read end is already closed: the standard input of a process
/// that has exited without reading it. Closing a read end after spawning the command would race
/// with the command's first write.
fn closed_pipe() -> Stdio {
    let mut reader = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
    let end = reader.stdin.take().unwrap();
    assert!(reader.wait().unwrap().success());
    Stdio::from(end)
}

/// Runs seaccess with its standard output a pipe no one reads (its standard error too if
/// `close_stderr`), then writes `input` to its standard input. Returns the status and what it
/// wrote on standard error (nothing when that was closed).
fn run_closed(args: &[&str], input: Option<&str>, close_stderr: bool) -> (ExitStatus, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_seaccess"))
        .args(args)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(closed_pipe())
        .stderr(if close_stderr {
            closed_pipe()
        } else {
            Stdio::piped()
        })
        .spawn()
        .unwrap();
    if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
        // The command may stop reading once its output is gone: a failed write here is fine.
        let _ = stdin.write_all(text.as_bytes());
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_quiet(status: ExitStatus, err: &str, what: &str) {
    assert!(!err.contains("panicked"), "{what}: panicked: {err}");
    assert_eq!(
        status.code(),
        Some(CLOSED),
        "{what}: status {status:?}, stderr {err}"
    );
}

#[test]
fn info_on_a_closed_stdout_ends_quietly() {
    let _serial = serial();
    let p = policy();
    let (status, err) = run_closed(&["info", "-p", &p], None, false);
    assert_quiet(status, &err, "info");
    assert_eq!(err, "", "info: nothing to say on standard error");
}

#[test]
fn check_on_a_closed_stdout_ends_quietly() {
    let _serial = serial();
    let p = policy();
    let args = [
        "check",
        "-p",
        &p,
        "system_u:system_r:httpd_t:s0",
        "system_u:object_r:tmp_t:s0",
        "file",
        "read",
    ];
    let (status, err) = run_closed(&args, None, false);
    assert_quiet(status, &err, "check");
}

#[test]
fn tour_on_a_closed_stdout_ends_quietly() {
    let _serial = serial();
    let p = policy();
    let (status, err) = run_closed(&["tour", "-p", &p], None, false);
    assert_quiet(status, &err, "tour");
}

#[test]
fn batch_on_a_closed_stdout_ends_quietly() {
    let _serial = serial();
    let p = policy();
    let lines = QUERY.repeat(20_000);
    for mode in [
        "compute-av",
        "compute-create",
        "compute-relabel",
        "compute-member",
    ] {
        let (status, err) = run_closed(&[mode, "-p", &p], Some(&lines), false);
        assert_quiet(status, &err, mode);
    }
}

/// `seaccess compute-av ... 2>&1 | head`: the explanations of bad lines meet a closed pipe too.
#[test]
fn batch_with_stdout_and_stderr_closed_ends_quietly() {
    let _serial = serial();
    let p = policy();
    let lines = "not a query\n".repeat(20_000);
    let (status, _) = run_closed(&["compute-av", "-p", &p], Some(&lines), true);
    assert_eq!(status.code(), Some(CLOSED), "status {status:?}");
}

/// The command still reports real failures as before: a missing policy is status 2.
#[test]
fn a_missing_policy_is_still_an_error() {
    let _serial = serial();
    let (status, err) = run_closed(&["info", "-p", "/nonexistent/policy.33"], None, false);
    assert_eq!(status.code(), Some(2), "status {status:?}");
    assert!(
        err.contains("/nonexistent/policy.33"),
        "stderr names the file: {err}"
    );
}
