//! `seaccess mount`: an enforcing FUSE passthrough of SOURCE at MOUNTPOINT (crates/fs).
//!
//! Without --foreground the command starts itself again in the foreground, in its own
//! process group, waits until the mount is there, says where it is and how to unmount it,
//! and returns: a threaded process must not fork to go to the background.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use seaccess_fs::{Core, Options};

use crate::background::{restart_in_background, Started};
use crate::notify;
use crate::output::{CliError, Out};

#[derive(Args, Debug, Clone)]
pub(crate) struct MountArgs {
    /// The binary policy to enforce.
    #[arg(long, short = 'p')]
    policy: PathBuf,
    /// file_contexts labelling objects that carry no label in the store attribute (--xattr).
    #[arg(long = "file-contexts", short = 'f')]
    file_contexts: Option<PathBuf>,
    /// What file_contexts is asked for: PREFIX joined with the path inside the mount
    /// (default: SOURCE's absolute path).
    #[arg(long = "path-prefix")]
    path_prefix: Option<PathBuf>,
    /// Which context each caller acts with: exe=, uid=, cgroup=, transition and default
    /// rules, first match wins (without it every caller is unconfined_t).
    #[arg(long)]
    subjects: Option<PathBuf>,
    /// Booleans to set (name=value lines), committed at start and on every SIGHUP.
    #[arg(long)]
    booleans: Option<PathBuf>,
    /// Log denials and allow them (permissive=1).
    #[arg(long)]
    permissive: bool,
    /// Append AVC records (audit.log's format) to FILE instead of standard error; `syslog`
    /// sends them to the system log (journald, rsyslog: `journalctl -t seaccess`), `audit` to
    /// the kernel audit as USER_AVC records (auditd: `ausearch -m USER_AVC`; needs
    /// CAP_AUDIT_WRITE). A file named syslog or audit is ./syslog, ./audit.
    #[arg(long = "audit-log", value_name = "FILE|syslog|audit")]
    audit_log: Option<PathBuf>,
    /// Turn off the object manager's fast paths (every check goes to the cache).
    #[arg(long = "no-fast-paths")]
    no_fast_paths: bool,
    /// Stay in the foreground (Ctrl-C or SIGTERM unmounts; SIGHUP reloads).
    #[arg(long)]
    foreground: bool,
    /// Request threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// The attribute objects' labels are kept in on SOURCE: trusted.selinux (the default;
    /// only CAP_SYS_ADMIN writes it), security.selinux (the default when SOURCE is
    /// MOUNTPOINT, mounted over itself) or user.selinux. Through the mount it is
    /// security.selinux.
    #[arg(long, value_name = "NAME")]
    xattr: Option<String>,
    /// Keep labels in security.selinux or user.selinux on a tree not mounted over itself.
    /// Unsafe: on a kernel without SELinux any file owner can write those attributes outside
    /// the mount (setfattr -n security.selinux on its own file succeeds), and the mount would
    /// enforce the forged label.
    #[arg(long = "unsafe-xattr")]
    unsafe_xattr: bool,
    /// Descriptors of files the server keeps open for the nodes the kernel knows, all mounts
    /// of the process together (default: half the open-file limit). Beyond it the least
    /// recently used nodes close theirs and open their file again by file handle at their
    /// next use; on a file system without file handles the kernel is asked to forget them.
    #[arg(long = "max-node-fds", alias = "max-nodes", value_name = "N")]
    max_node_fds: Option<usize>,
    /// The directory tree to enforce the policy on (reached only through descriptors).
    source: PathBuf,
    /// Where the enforcing view of SOURCE appears (SOURCE itself to mount it over itself).
    mountpoint: PathBuf,
}

fn abs(p: &Path, what: &str) -> Result<PathBuf, CliError> {
    std::fs::canonicalize(p).map_err(|e| CliError::from(format!("{what} {}: {e}", p.display())))
}

/// Whether a seaccess mount is at `mp` (/proc/self/mountinfo, field 5 with octal escapes).
pub(crate) fn mounted(mp: &Path) -> bool {
    let want = mp.to_string_lossy().replace(' ', "\\040");
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .any(|l| {
            l.split(' ').nth(4) == Some(want.as_str())
                && (l.contains(" - fuse seaccess ") || l.contains(" - fuse.seaccess seaccess "))
        })
}

pub(crate) fn run(out: &mut Out, a: &MountArgs) -> Result<bool, CliError> {
    let source = abs(&a.source, "source")?;
    let mountpoint = abs(&a.mountpoint, "mount point")?;
    if !a.foreground {
        return background(out, &mountpoint);
    }
    let opts = Options {
        path_prefix: a.path_prefix.clone().unwrap_or_else(|| source.clone()),
        source: source.clone(),
        mountpoint: mountpoint.clone(),
        policy: a.policy.clone(),
        file_contexts: a.file_contexts.clone(),
        subjects: a.subjects.clone(),
        booleans: a.booleans.clone(),
        permissive: a.permissive,
        audit_log: a.audit_log.clone(),
        fast_paths: !a.no_fast_paths,
        checks: true,
        xattr: a.xattr.clone(),
        unsafe_xattr: a.unsafe_xattr,
        max_node_fds: a.max_node_fds,
    };
    let core = Arc::new(Core::new(opts).map_err(|e| CliError::from(e.to_string()))?);
    let mut signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
    ])
    .map_err(|e| CliError::from(format!("signals: {e}")))?;
    let session = seaccess_fs::fuse::spawn(core.clone(), &mountpoint, a.threads)
        .map_err(|e| CliError::from(format!("mounting {}: {e}", mountpoint.display())))?;
    let mode = if a.permissive {
        "permissive"
    } else {
        "enforcing"
    };
    writeln!(
        out,
        "seaccess mount: {} mounted at {} ({mode}, pid {}); unmount with `fusermount3 -u {}` or `kill {}`; `kill -HUP {}` reloads",
        source.display(),
        mountpoint.display(),
        std::process::id(),
        mountpoint.display(),
        std::process::id(),
        std::process::id()
    )?;
    out.flush()?;
    // Under systemd (Type=notify): started now that the mount is there.
    notify::notify(&format!(
        "READY=1\nMAINPID={}\nSTATUS={mode} at {}",
        std::process::id(),
        mountpoint.display()
    ));
    loop {
        for sig in signals.pending() {
            if sig == signal_hook::consts::SIGHUP {
                notify::notify(&format!(
                    "RELOADING=1\nMONOTONIC_USEC={}",
                    notify::monotonic_usec()
                ));
                match core.reload() {
                    Ok(()) => core.log(&format!(
                        "reloaded (policy seqno {})",
                        core.server().seqno().0
                    )),
                    Err(e) => core.log(&format!(
                        "reload failed, the last good policy keeps enforcing: {e}"
                    )),
                }
                notify::notify("READY=1");
            } else {
                notify::notify("STOPPING=1");
                core.log(&format!("unmounting {}", mountpoint.display()));
                report_lost(&core);
                if let Err(e) = session.umount_and_join() {
                    // Busy: detach it, as `fusermount3 -uz` does.
                    let _ = std::process::Command::new("fusermount3")
                        .arg("-uz")
                        .arg(&mountpoint)
                        .status();
                    return Err(CliError::from(format!(
                        "unmounting {}: {e}",
                        mountpoint.display()
                    )));
                }
                return Ok(true);
            }
        }
        if session.guard.is_finished() {
            core.log(&format!("{} was unmounted", mountpoint.display()));
            report_lost(&core);
            return Ok(true);
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Says how many audit records the system log or the kernel audit did not take, if any.
fn report_lost(core: &Core) {
    if let Some(note) = core.audit_lost_note() {
        core.log(&note);
    }
}

/// Starts this command again with --foreground, detached, and waits for its mount.
fn background(out: &mut Out, mountpoint: &Path) -> Result<bool, CliError> {
    let started = restart_in_background(
        "mount",
        "the mount",
        Duration::from_secs(30),
        Duration::from_millis(20),
        |child| Ok(mounted(mountpoint).then(|| child.id())),
    )?;
    match started {
        Started::Ready(pid) => {
            writeln!(
                out,
                "seaccess mount: mounted at {} (pid {pid}); unmount with `fusermount3 -u {}` or `kill {pid}`; `kill -HUP {pid}` reloads",
                mountpoint.display(),
                mountpoint.display(),
            )?;
            Ok(true)
        }
        Started::Exited(st) => Err(CliError::from(format!("the mount did not start ({st})"))),
        Started::TimedOut => Err(CliError::from(format!(
            "{} did not appear within 30 s",
            mountpoint.display()
        ))),
    }
}
