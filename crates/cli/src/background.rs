//! Going to the background as `seaccess mount` and `seaccess enforce` do: the command starts
//! itself again with --foreground, detached (its own process group, no standard input or
//! output), and waits until the new process says it serves. A threaded process must not fork
//! to go to the background, so it execs itself anew instead.

use std::os::unix::process::CommandExt;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use crate::output::CliError;

/// How the wait for a restarted command ended.
pub(crate) enum Started<T> {
    /// It serves: what `ready` found.
    Ready(T),
    /// It exited first, with this status (its reason is on the shared standard error).
    Exited(ExitStatus),
    /// Neither within the deadline: it was killed.
    TimedOut,
}

/// Starts this program again with its arguments and `--foreground` after `subcommand`, and
/// calls `ready` with the child every `poll` until it returns Some, the child exits, or
/// `deadline` passes. `what` names the child in the error of a failed start.
pub(crate) fn restart_in_background<T>(
    subcommand: &str,
    what: &str,
    deadline: Duration,
    poll: Duration,
    mut ready: impl FnMut(&Child) -> Result<Option<T>, CliError>,
) -> Result<Started<T>, CliError> {
    let exe =
        std::env::current_exe().map_err(|e| CliError::from(format!("this program's path: {e}")))?;
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let at = args
        .iter()
        .position(|x| x == subcommand)
        .map_or(args.len(), |i| i + 1);
    args.insert(at, "--foreground".into());
    let mut child = std::process::Command::new(exe)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| CliError::from(format!("starting {what}: {e}")))?;
    let start = Instant::now();
    while start.elapsed() < deadline {
        if let Ok(Some(st)) = child.try_wait() {
            return Ok(Started::Exited(st));
        }
        if let Some(found) = ready(&child)? {
            return Ok(Started::Ready(found));
        }
        std::thread::sleep(poll);
    }
    let _ = child.kill();
    Ok(Started::TimedOut)
}
