//! `seaccess enforce`: the policy enforced by the kernel through the BPF LSM
//! (crates/enforce's daemon core), and its clients: `run`, `context`, `label`, `status`.
//!
//! Without --foreground the daemon starts itself again in the foreground, in its own process
//! group, waits until it serves, says its pid and how to stop or reload it, and returns, as
//! `seaccess mount` does.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Subcommand};
use seaccess_enforce::control::{self, RUN_DIR};
use seaccess_enforce::daemon::{Daemon, Options};

use crate::background::{restart_in_background, Started};
use crate::output::{CliError, Out};

#[derive(Args, Debug, Clone)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct EnforceArgs {
    #[command(subcommand)]
    cmd: Option<EnforceCmd>,
    #[command(flatten)]
    daemon: DaemonArgs,
}

#[derive(Args, Debug, Clone)]
struct DaemonArgs {
    /// The binary policy to enforce.
    #[arg(long, short = 'p', required = true)]
    policy: Option<PathBuf>,
    /// file_contexts, labeling the --root and --tree directories.
    #[arg(long = "file-contexts", short = 'f')]
    file_contexts: Option<PathBuf>,
    /// A tree labeled as file_contexts labels the same paths under / (as `setfiles -r DIR`);
    /// repeatable.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// A tree labeled as its own absolute path; repeatable.
    #[arg(long = "tree", value_name = "DIR")]
    trees: Vec<PathBuf>,
    /// A context confined tasks start in, decided from the start (`enforce run` adds more);
    /// repeatable.
    #[arg(long = "context", value_name = "CONTEXT")]
    contexts: Vec<String>,
    /// Log denials and allow them (permissive=1).
    #[arg(long)]
    permissive: bool,
    /// Append AVC records (audit.log's format) to FILE instead of standard error; `syslog`
    /// sends them to the system log (`journalctl -t seaccess`), `audit` to the kernel audit as
    /// USER_AVC records (`ausearch -m USER_AVC`). A file named syslog or audit is ./syslog,
    /// ./audit.
    #[arg(long = "audit-log", value_name = "FILE|syslog|audit")]
    audit_log: Option<PathBuf>,
    /// Where the BPF maps are pinned.
    #[arg(long = "pin-dir", value_name = "DIR", default_value = seaccess_enforce::bpf::PIN_DIR)]
    pin_dir: PathBuf,
    /// Stay in the foreground (SIGTERM or Ctrl-C stops enforcing; SIGHUP reloads).
    #[arg(long)]
    foreground: bool,
}

#[derive(Subcommand, Debug, Clone)]
enum EnforceCmd {
    /// Run CMD confined in CONTEXT: the daemon decides CONTEXT first, then this process labels
    /// itself and execs CMD (an exec then follows the policy's transitions).
    Run {
        /// The context to start in, e.g. system_u:system_r:initrc_t:s0.
        #[arg(long, value_name = "CONTEXT")]
        context: String,
        /// The program and its arguments.
        #[arg(required = true, last = true, value_name = "CMD")]
        cmd: Vec<std::ffi::OsString>,
    },
    /// The context of process PID (default: this one's parent, the shell), or `unconfined`.
    Context {
        /// The process.
        pid: Option<i32>,
    },
    /// The context the inode at PATH (itself, a link not followed) is decided with: its label,
    /// else its file system's default (said on stderr), or `unchecked: WHY`.
    Label {
        /// The object.
        path: PathBuf,
    },
    /// Whether a daemon runs, and its generation, mode and policy.
    Status,
}

pub(crate) fn run(out: &mut Out, a: &EnforceArgs) -> Result<bool, CliError> {
    let dir = Path::new(RUN_DIR);
    let err = |e: seaccess_enforce::EnforceError| CliError::from(e.to_string());
    match &a.cmd {
        None => daemon(out, &a.daemon),
        Some(EnforceCmd::Run { context, cmd }) => {
            let (prog, args) = cmd
                .split_first()
                .ok_or_else(|| CliError::from("enforce run: no command"))?;
            control::confine_self(dir, context).map_err(err)?;
            let e = std::process::Command::new(prog).args(args).exec();
            Err(CliError::from(format!(
                "enforce run: executing {}: {e}",
                Path::new(prog).display()
            )))
        }
        Some(EnforceCmd::Context { pid }) => {
            let pid = pid
                .unwrap_or_else(|| i32::try_from(std::os::unix::process::parent_id()).unwrap_or(0));
            let ctx = control::task_context(dir, pid).map_err(err)?;
            writeln!(out, "{}", ctx.as_deref().unwrap_or("unconfined"))?;
            Ok(true)
        }
        Some(EnforceCmd::Label { path }) => {
            // The context alone on stdout, as for a labeled inode; where it comes from, on
            // stderr.
            match control::inode_context(dir, path).map_err(err)? {
                control::InodeLabel::Labeled(ctx) => writeln!(out, "{ctx}")?,
                control::InodeLabel::Default { context, fstype } => {
                    writeln!(out, "{context}")?;
                    eprintln!("seaccess enforce label: nobody labeled it: {fstype}'s default");
                }
                control::InodeLabel::Unchecked(why) => writeln!(out, "unchecked: {why}")?,
            }
            Ok(true)
        }
        Some(EnforceCmd::Status) => {
            let st = control::status(dir).map_err(err)?;
            let get = |k: &str| st.get(k).map_or("?", String::as_str);
            writeln!(
                out,
                "seaccess enforce: running (pid {}), {}, generation {}, {} SIDs, policy {}",
                get("pid"),
                get("mode"),
                get("generation"),
                get("sids"),
                get("policy")
            )?;
            Ok(true)
        }
    }
}

fn daemon(out: &mut Out, a: &DaemonArgs) -> Result<bool, CliError> {
    let policy = a
        .policy
        .clone()
        .ok_or_else(|| CliError::from("enforce: --policy is required"))?;
    if !a.foreground {
        return background(out);
    }
    let opts = Options {
        policy,
        file_contexts: a.file_contexts.clone(),
        roots: a.roots.clone(),
        trees: a.trees.clone(),
        contexts: a.contexts.clone(),
        permissive: a.permissive,
        audit_log: a.audit_log.clone(),
        pin_dir: a.pin_dir.clone(),
        run_dir: PathBuf::from(RUN_DIR),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let reload = Arc::new(AtomicBool::new(false));
    for (sig, flag) in [
        (signal_hook::consts::SIGTERM, &stop),
        (signal_hook::consts::SIGINT, &stop),
        (signal_hook::consts::SIGHUP, &reload),
    ] {
        signal_hook::flag::register(sig, Arc::clone(flag))
            .map_err(|e| CliError::from(format!("signals: {e}")))?;
    }
    let mut d = Daemon::start(opts).map_err(|e| CliError::from(format!("enforce: {e}")))?;
    let pid = std::process::id();
    let mode = if a.permissive {
        "permissive"
    } else {
        "enforcing"
    };
    d.log(&format!(
        "{mode} (pid {pid}), generation {}, {} SIDs; stop with `kill {pid}`, reload with `kill -HUP {pid}`",
        d.generation(),
        d.sids()
    ));
    let r = d.serve(&stop, &reload);
    d.log("stopping: the programs are detached, the machine runs unconfined again");
    d.stop();
    r.map_err(|e| CliError::from(format!("enforce: {e}")))?;
    Ok(true)
}

/// Starts this command again with --foreground, detached, and waits until it serves (its pid
/// in the status file).
fn background(out: &mut Out) -> Result<bool, CliError> {
    let dir = Path::new(RUN_DIR);
    // Loading the object and building the first generation take seconds under emulation.
    let started = restart_in_background(
        "enforce",
        "the daemon",
        Duration::from_secs(300),
        Duration::from_millis(50),
        |child| {
            Ok(control::status(dir)
                .ok()
                .filter(|st| st.get("pid").map(String::as_str) == Some(&child.id().to_string()))
                .map(|st| (child.id(), st)))
        },
    )?;
    match started {
        Started::Ready((pid, st)) => {
            writeln!(
                out,
                "seaccess enforce: {} (pid {pid}, generation {}, {} SIDs); stop with `kill {pid}`, reload with `kill -HUP {pid}`",
                st.get("mode").map_or("?", String::as_str),
                st.get("generation").map_or("?", String::as_str),
                st.get("sids").map_or("?", String::as_str),
            )?;
            Ok(true)
        }
        Started::Exited(st) => Err(CliError::from(format!(
            "the daemon did not start ({st}; its reason is above)"
        ))),
        Started::TimedOut => Err(CliError::from("the daemon did not start within 300 s")),
    }
}
