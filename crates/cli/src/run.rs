//! `seaccess run`: a program built for libselinux, run on libseaccess. The program's loader
//! finds the drop-in libselinux.so.1 (libseaccess named and versioned as libselinux 3.4:
//! LIBDIR/seaccess where installed, target/libselinux from `make capi` in a build tree) first,
//! and the library loads the policy named; LD_PRELOAD names the interposer beside it that
//! applies exec and fscreate contexts (libseaccess-preload.so).
//!
//! By default the program runs in a session (crate::session): this process stays as its
//! supervisor, and every process the program starts shares one enforcing mode, one set of
//! booleans and one policy, sees the session's selinuxfs at /sys/fs/selinux, and a private copy
//! of /etc/selinux and /var/lib/selinux. `--no-session` only sets the environment and execs
//! (each process then keeps its own state, as before sessions).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use clap::Args;
use seaccess_engine::AuditTarget;

use crate::output::CliError;
use crate::session::{Session, SELINUXMNT};

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
    /// The directory holding the libselinux.so.1 drop-in (default: LIBDIR/seaccess where
    /// seaccess is installed, target/libselinux in a build tree).
    #[arg(long)]
    lib: Option<PathBuf>,
    /// Keep the session's copy of /etc/selinux and /var/lib/selinux in DIR (DIR/etc/selinux,
    /// DIR/var/lib/selinux: copied from the host's the first time, used as they are after), so
    /// that what `semanage` and `setsebool -P` changed outlives the session. Without it the
    /// copy is the session's and goes with it.
    #[arg(long, value_name = "DIR", conflicts_with = "no_session")]
    policy_root: Option<PathBuf>,
    /// Append the session's records (AVC denials of `setenforce`/`setsebool`, MAC_STATUS,
    /// MAC_CONFIG_CHANGE) to FILE, in audit.log's format, instead of standard error. `syslog`
    /// sends them to the system log (`journalctl -t seaccess`) and `audit` to the kernel audit
    /// (USER_AVC, `ausearch -m USER_AVC`), and the program's library sends its denials there
    /// too (SEACCESS_AUDIT); with a FILE the program's denials stay on its standard error, as
    /// libselinux writes them. A file named syslog or audit is ./syslog, ./audit.
    #[arg(
        long = "audit-log",
        value_name = "FILE|syslog|audit",
        conflicts_with = "no_session"
    )]
    audit_log: Option<PathBuf>,
    /// No session: set the environment and exec the program; each of its processes keeps its
    /// own mode and booleans, and nothing keeps libsemanage off the host's /etc/selinux.
    #[arg(long)]
    no_session: bool,
    /// The program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
}

/// The session's part of the programs' environment.
struct SessionEnv<'a> {
    dir: &'a Path,
    /// `--audit-log`'s destination, passed down when it is the system log or the kernel audit.
    audit: Option<&'a AuditTarget>,
}

/// Every variable `seaccess run` gives the program (and the session's load_policy wrapper).
/// The interposer beside libselinux.so.1.
const PRELOAD: &str = "libseaccess-preload.so";

fn environment(
    lib: &Path,
    policy: &Path,
    subjects: Option<&Path>,
    session: Option<&SessionEnv>,
) -> Vec<(&'static str, OsString)> {
    let path = match std::env::var_os("LD_LIBRARY_PATH") {
        Some(old) if !old.is_empty() => {
            let mut p = lib.as_os_str().to_os_string();
            p.push(":");
            p.push(old);
            p
        }
        _ => lib.as_os_str().to_os_string(),
    };
    // The interposer that makes setexeccon and setfscreatecon take effect (crates/capi/preload):
    // in front of the C library, for this program and every program it executes.
    let preload = match std::env::var_os("LD_PRELOAD") {
        Some(old) if !old.is_empty() => {
            let mut p = lib.join(PRELOAD).into_os_string();
            p.push(":");
            p.push(old);
            p
        }
        _ => lib.join(PRELOAD).into_os_string(),
    };
    let mut env = vec![
        ("LD_LIBRARY_PATH", path),
        ("SEACCESS_POLICY", policy.as_os_str().to_os_string()),
        ("LD_PRELOAD", preload),
    ];
    if let Some(s) = subjects {
        env.push(("SEACCESS_SUBJECTS", s.as_os_str().to_os_string()));
    }
    if let Some(s) = session {
        env.push(("SEACCESS_SESSION", s.dir.as_os_str().to_os_string()));
        env.push(("SEACCESS_SELINUXFS", OsString::from(SELINUXMNT)));
        if let Some(t) = s
            .audit
            .filter(|t| matches!(t, AuditTarget::Syslog | AuditTarget::Kernel))
        {
            env.extend(t.value().map(|v| ("SEACCESS_AUDIT", v)));
        }
    }
    env
}

/// Where the drop-in may be, beside a `seaccess` at `exe`: installed, LIBDIR/seaccess with
/// LIBDIR PREFIX/lib (`make install`) or PREFIX/lib/MULTIARCH (the Debian package); in a build
/// tree, target/libselinux beside target/release (`make capi`). The first holding
/// libselinux.so.1 is used.
fn lib_candidates(exe: &Path) -> Vec<PathBuf> {
    let Some(up) = exe.parent().and_then(Path::parent) else {
        return Vec::new();
    };
    let multiarch = format!("{}-linux-gnu", std::env::consts::ARCH);
    vec![
        up.join("lib/seaccess"),
        up.join("lib").join(multiarch).join("seaccess"),
        up.join("libselinux"),
    ]
}

fn lib_dir(a: &RunArgs) -> Result<PathBuf, CliError> {
    let lib = match &a.lib {
        Some(l) => l.clone(),
        None => {
            let exe = std::env::current_exe()
                .map_err(|e| CliError::from(format!("this program's path: {e}")))?;
            let places = lib_candidates(&exe);
            match places.iter().find(|d| d.join("libselinux.so.1").exists()) {
                Some(d) => d.clone(),
                None => {
                    let names: Vec<String> =
                        places.iter().map(|p| p.display().to_string()).collect();
                    return Err(format!(
                        "no libselinux.so.1 drop-in in {} (install seaccess with `make install`, \
                         build it with `make capi`, or name its directory with --lib)",
                        names.join(", ")
                    )
                    .into());
                }
            }
        }
    };
    if !lib.join("libselinux.so.1").exists() {
        return Err(format!(
            "{}: no libselinux.so.1 (build it with `make capi`)",
            lib.display()
        )
        .into());
    }
    if !lib.join(PRELOAD).exists() {
        return Err(format!(
            "{}: no {PRELOAD} (build it with `make capi`)",
            lib.display()
        )
        .into());
    }
    std::fs::canonicalize(&lib).map_err(|e| CliError::from(format!("{}: {e}", lib.display())))
}

fn absolute(p: &Path) -> Result<PathBuf, CliError> {
    std::fs::canonicalize(p).map_err(|e| CliError::from(format!("{}: {e}", p.display())))
}

pub(crate) fn run(a: &RunArgs) -> Result<bool, CliError> {
    let lib = lib_dir(a)?;
    let (prog, args) = a.command.split_first().ok_or("no command")?;
    if a.no_session {
        let policy = a
            .policy
            .clone()
            .or_else(crate::installed::installed_policy)
            .ok_or("no policy given and none installed (--policy FILE)")?;
        let mut cmd = std::process::Command::new(prog);
        cmd.args(args)
            .envs(environment(&lib, &policy, a.subjects.as_deref(), None));
        let e = cmd.exec();
        return Err(format!("{prog}: {e}").into());
    }
    let subjects = a.subjects.as_deref().map(absolute).transpose()?;
    let policy = a.policy.as_deref().map(absolute).transpose()?;
    let audit = a.audit_log.as_deref().map(AuditTarget::parse);
    let session = Session::start(
        policy.as_deref(),
        subjects.as_deref(),
        a.policy_root.as_deref(),
        a.audit_log.as_deref(),
    )?;
    let env = environment(
        &lib,
        &session.dir.join(seaccess_types::session::POLICY_FILE),
        subjects.as_deref(),
        Some(&SessionEnv {
            dir: &session.dir,
            audit: audit.as_ref(),
        }),
    );
    session.wrap_load_policy(&env)?;
    let code = supervise(prog, args, &env);
    drop(session);
    match code {
        Ok(c) => std::process::exit(c),
        Err(e) => Err(e),
    }
}

/// Runs the program and waits for it: its exit status (128 + the signal that ended it). The
/// terminal's interrupt reaches the program itself; a TERM or HUP sent to the supervisor is
/// passed on.
fn supervise(prog: &str, args: &[String], env: &[(&str, OsString)]) -> Result<i32, CliError> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut child = std::process::Command::new(prog)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .spawn()
        .map_err(|e| CliError::from(format!("{prog}: {e}")))?;
    let pid = child.id();
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGQUIT, SIGTERM, SIGHUP])
        .map_err(|e| CliError::from(format!("seaccess run: signals: {e}")))?;
    let handle = signals.handle();
    let forward = std::thread::spawn(move || {
        for s in signals.forever() {
            if s == SIGTERM || s == SIGHUP {
                if let (Some(p), Some(sig)) = (
                    rustix::process::Pid::from_raw(pid as i32),
                    rustix::process::Signal::from_named_raw(s),
                ) {
                    let _ = rustix::process::kill_process(p, sig);
                }
            }
        }
    });
    let st = child
        .wait()
        .map_err(|e| CliError::from(format!("{prog}: {e}")))?;
    handle.close();
    let _ = forward.join();
    use std::os::unix::process::ExitStatusExt;
    Ok(st.code().unwrap_or_else(|| 128 + st.signal().unwrap_or(0)))
}
