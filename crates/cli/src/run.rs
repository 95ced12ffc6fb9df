//! `seaccess run`: a program built for libselinux, run on libseaccess. The program's loader
//! finds target/libselinux/libselinux.so.1 (libseaccess named and versioned as libselinux 3.4,
//! built by `make capi`) first, and the library loads the policy named; the same as setting
//! LD_LIBRARY_PATH, SEACCESS_POLICY and SEACCESS_SUBJECTS by hand, with LD_PRELOAD naming the
//! interposer that applies exec and fscreate contexts (target/libselinux/libseaccess-preload.so).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::output::CliError;

#[derive(Args, Debug, Clone)]
pub(crate) struct RunArgs {
    /// The binary policy (default: the installed policy of /etc/selinux/config's type, its
    /// highest version).
    #[arg(long, short = 'p')]
    policy: Option<PathBuf>,
    /// The rules that give processes their contexts (the same file as `seaccess mount
    /// --subjects`).
    #[arg(long)]
    subjects: Option<PathBuf>,
    /// The directory holding libselinux.so.1 (default: target/libselinux beside this program's
    /// build directory).
    #[arg(long)]
    lib: Option<PathBuf>,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
}

pub(crate) fn run(a: &RunArgs) -> Result<bool, CliError> {
    let lib = match &a.lib {
        Some(l) => l.clone(),
        None => {
            let exe = std::env::current_exe().map_err(|e| CliError::from(format!("this program's path: {e}")))?;
            exe.parent().and_then(Path::parent).map(|t| t.join("libselinux")).ok_or("cannot find target/libselinux beside this program")?
        }
    };
    if !lib.join("libselinux.so.1").exists() {
        return Err(format!("{}: no libselinux.so.1 (build it with `make capi`)", lib.display()).into());
    }
    let policy = a.policy.clone().or_else(crate::installed::installed_policy).ok_or("no policy given and none installed (--policy FILE)")?;
    let lib = std::fs::canonicalize(&lib).map_err(|e| CliError::from(format!("{}: {e}", lib.display())))?;
    let path = match std::env::var_os("LD_LIBRARY_PATH") {
        Some(old) if !old.is_empty() => {
            let mut p = lib.clone().into_os_string();
            p.push(":");
            p.push(old);
            p
        }
        _ => lib.clone().into_os_string(),
    };
    // The interposer that makes setexeccon and setfscreatecon take effect (crates/capi/preload):
    // in front of the C library, for this program and every program it executes.
    let preload = lib.join("libseaccess-preload.so");
    if !preload.exists() {
        return Err(format!("{}: missing (build it with `make capi`)", preload.display()).into());
    }
    let preload = match std::env::var_os("LD_PRELOAD") {
        Some(old) if !old.is_empty() => {
            let mut p = preload.into_os_string();
            p.push(":");
            p.push(old);
            p
        }
        _ => preload.into_os_string(),
    };
    let (prog, args) = a.command.split_first().ok_or("no command")?;
    let mut cmd = std::process::Command::new(prog);
    cmd.args(args).env("LD_LIBRARY_PATH", &path).env("SEACCESS_POLICY", &policy).env("LD_PRELOAD", preload);
    if let Some(s) = &a.subjects {
        cmd.env("SEACCESS_SUBJECTS", s);
    }
    let e = cmd.exec();
    Err(format!("{prog}: {e}").into())
}
