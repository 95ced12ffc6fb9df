//! A `seaccess run` session: the supervisor's side. The supervisor stays for the session's
//! life, in a mount namespace of its own that the program and its children share:
//!
//! - a session directory (a tmpfs in the namespace) holds the state page, the processes'
//!   cache statistics and the policy image (crate::session_state);
//! - the session's selinuxfs (crate::selinuxfs) is mounted at /sys/fs/selinux (a tmpfs over
//!   /sys/fs carries the directory when the kernel has no SELinux, with /sys/fs's own mounts
//!   bound back under it), so that `selinux_mnt` names it and programs that read selinuxfs's
//!   files read the session's;
//! - /etc/selinux and /var/lib/selinux are a copy (in the session directory, or in
//!   `--policy-root DIR`, kept), bound over the host's: libsemanage, `semanage`, `setsebool -P`
//!   and `semodule` change the copy, never the host;
//! - /usr/sbin/load_policy is a wrapper that runs Debian's own with libseaccess and the
//!   session's environment: libsemanage runs it with an empty environment
//!   (semanage_exec_prog), which without the wrapper runs the system's libselinux, and that
//!   library, finding no SELinux kernel, fails ("Could not open policy file <=
//!   .../policy.33"); with it, the policy libsemanage built is loaded into the session.
//!
//! Root makes the namespace with unshare(CLONE_NEWNS). Another user gets a user namespace too
//! (CLONE_NEWUSER, its own uid and gid mapped to themselves, so that the program runs as that
//! user, without capabilities after its exec); where unprivileged user namespaces are off, the
//! session cannot be made and `seaccess run` says so (`--no-session` runs the program without
//! one, each process with its own state).

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::mount::{self, MountFlags, MountPropagationFlags, UnmountFlags};

use seaccess_engine::{AuditSink, AuditTarget};

use crate::output::CliError;
use crate::selinuxfs::View;
use crate::session_state::SessionState;

/// Where programs look for selinuxfs (libselinux's SELINUXMNT).
pub(crate) const SELINUXMNT: &str = "/sys/fs/selinux";
/// The policy roots the session copies.
const ROOTS: [&str; 2] = ["/etc/selinux", "/var/lib/selinux"];
/// The program libsemanage runs to load the policy it built (semanage.conf's default).
const LOAD_POLICY: &str = "/usr/sbin/load_policy";

/// A running session: dropping it unmounts the view and removes the session directory.
pub(crate) struct Session {
    /// The session directory.
    pub dir: PathBuf,
    fuse: Option<fuser::BackgroundSession>,
    /// Where the session's records go: its losses are said when the session ends, as the
    /// mount and `seaccess enforce` say theirs.
    log: Option<Arc<AuditSink>>,
}

fn io<E: std::fmt::Display>(what: impl std::fmt::Display) -> impl FnOnce(E) -> CliError {
    move |e| CliError::from(format!("seaccess run: {what}: {e}"))
}

impl Session {
    /// Makes the namespace and the session for the policy image `policy`.
    pub(crate) fn start(
        policy: Option<&Path>,
        subjects: Option<&Path>,
        policy_root: Option<&Path>,
        audit_log: Option<&Path>,
    ) -> Result<Session, CliError> {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        enter_namespace(uid, gid)?;
        let dir = make_dir()?;
        // Dropped on an error below: what was made is undone.
        let mut s = Session {
            dir: dir.clone(),
            fuse: None,
            log: None,
        };
        // Not nosuid: the load_policy wrapper bound over /usr/sbin/load_policy lives here, and an
        // exec from a nosuid mount is refused a domain transition (nosuid_transition), which
        // semanage's exec of load_policy makes on the host's root file system.
        mount::mount(
            "seaccess-session",
            &dir,
            "tmpfs",
            MountFlags::NODEV,
            Some(c"mode=0755"),
        )
        .map_err(|e| CliError::from(format!("seaccess run: a tmpfs at {}: {e}", dir.display())))?;
        private_roots(&dir, policy_root)?;
        // Read in the session's view: the installed policy is the copy's (what `setsebool -P`
        // or `semodule` rebuilt in a kept --policy-root).
        let path = policy
            .map(Path::to_path_buf)
            .or_else(crate::installed::installed_policy)
            .ok_or("seaccess run: no policy given and none installed (--policy FILE)")?;
        let policy =
            seaccess_policy::read_file(&path).map_err(|e| CliError::from(e.to_string()))?;
        let policy = &policy[..];
        let rules = match subjects {
            Some(p) => Some(
                seaccess_fs::subjects::Subjects::load(p)
                    .map_err(|e| CliError::from(format!("{}: {e}", p.display())))?,
            ),
            None => None,
        };
        let log = Arc::new(
            AuditSink::open(&AuditTarget::of(audit_log))
                .map_err(|e| CliError::from(format!("seaccess run: {e}")))?,
        );
        s.log = Some(log.clone());
        let state = Arc::new(
            SessionState::create(&dir, policy, rules, log)
                .map_err(|e| CliError::from(format!("seaccess run: {e}")))?,
        );
        selinuxfs_dir(&dir)?;
        let mut config = fuser::Config::default();
        config.mount_options = vec![
            fuser::MountOption::FSName("selinuxfs".into()),
            fuser::MountOption::Subtype("seaccess".into()),
            fuser::MountOption::DefaultPermissions,
        ];
        config.acl = fuser::SessionACL::All;
        config.n_threads = Some(2);
        let fs = fuser::Session::new(View::new(state, uid, gid), SELINUXMNT, &config).map_err(|e| {
            CliError::from(format!(
                "seaccess run: the session's selinuxfs view at {SELINUXMNT} (FUSE): {e}{}; --no-session runs the program without a session",
                if rustix::fs::access("/dev/fuse", rustix::fs::Access::READ_OK | rustix::fs::Access::WRITE_OK).is_err() { " (this user may not open /dev/fuse)" } else { "" }
            ))
        })?;
        s.fuse = Some(fs.spawn().map_err(io("the selinuxfs view's threads"))?);
        Ok(s)
    }

    /// Puts a wrapper over /usr/sbin/load_policy that runs Debian's own with `env` (the
    /// session's environment), which libsemanage's empty environment would lose.
    pub(crate) fn wrap_load_policy(&self, env: &[(&str, OsString)]) -> Result<(), CliError> {
        if !Path::new(LOAD_POLICY).exists() {
            return Ok(());
        }
        let real = self.dir.join("load_policy.real");
        std::fs::write(&real, b"").map_err(io(real.display()))?;
        mount::mount_bind(LOAD_POLICY, &real)
            .map_err(io(format!("{LOAD_POLICY} bound to {}", real.display())))?;
        let mut script = String::from("#!/bin/sh\n# seaccess run: Debian's load_policy on libseaccess, in this session\nexec env");
        for (k, v) in env {
            script.push_str(&format!(" {k}={}", quote(&v.to_string_lossy())));
        }
        script.push_str(&format!(" {} \"$@\"\n", quote(&real.to_string_lossy())));
        let wrapper = self.dir.join("load_policy");
        std::fs::write(&wrapper, script).map_err(io(wrapper.display()))?;
        set_mode(&wrapper, 0o755)?;
        mount::mount_bind(&wrapper, LOAD_POLICY)
            .map_err(io(format!("the wrapper over {LOAD_POLICY}")))?;
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // The view first (its threads end), then the directory (empty on the host: the tmpfs
        // over it is this namespace's).
        drop(self.fuse.take());
        let _ = mount::unmount(&self.dir, UnmountFlags::DETACH);
        let _ = std::fs::remove_dir(&self.dir);
        if let Some(note) = self.log.as_ref().and_then(|l| l.lost_note()) {
            let _ = writeln!(std::io::stderr(), "seaccess run: {note}");
        }
    }
}

/// A shell word.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn set_mode(p: &Path, mode: u32) -> Result<(), CliError> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).map_err(io(p.display()))
}

/// A private mount namespace, whose mounts do not propagate to the host's.
fn enter_namespace(uid: u32, gid: u32) -> Result<(), CliError> {
    use rustix::thread::UnshareFlags;
    let flags = if uid == 0 {
        UnshareFlags::NEWNS
    } else {
        UnshareFlags::NEWNS | UnshareFlags::NEWUSER
    };
    // unshare(2) without CLONE_FILES shares no descriptor table, so rustix's reason for
    // deprecating its safe form (descriptors of an unshared table seen by other threads) does
    // not arise; the process has one thread here (CLONE_NEWUSER requires it).
    #[allow(deprecated)]
    rustix::thread::unshare(flags).map_err(|e| {
        CliError::from(format!(
            "seaccess run: cannot make the session's mount namespace ({e}){}; --no-session runs the program without a session",
            if uid == 0 { "" } else { " as a user: it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone, user.max_user_namespaces)" }
        ))
    })?;
    if uid != 0 {
        std::fs::write("/proc/self/setgroups", "deny").map_err(io("/proc/self/setgroups"))?;
        std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))
            .map_err(io("/proc/self/uid_map"))?;
        std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))
            .map_err(io("/proc/self/gid_map"))?;
    }
    mount::mount_change(
        "/",
        MountPropagationFlags::PRIVATE | MountPropagationFlags::REC,
    )
    .map_err(io("making / private in the session's namespace"))
}

fn make_dir() -> Result<PathBuf, CliError> {
    let base = std::env::temp_dir();
    for n in 0..100u32 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let d = base.join(format!(
            "seaccess-run.{}.{:x}",
            std::process::id(),
            nanos.wrapping_add(n)
        ));
        match std::fs::create_dir(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io::<std::io::Error>(d.display())(e)),
        }
    }
    Err(format!(
        "seaccess run: no session directory could be made in {}",
        base.display()
    )
    .into())
}

/// The copies of /etc/selinux and /var/lib/selinux bound over them: in `keep` (made there
/// from the host's when it has none yet, reused as it is otherwise), else in the session.
fn private_roots(dir: &Path, keep: Option<&Path>) -> Result<(), CliError> {
    // A user other than root cannot write the host's policy roots (root's, 0755 and 0700) nor
    // read all of /var/lib/selinux: the host is safe from its programs as it is, and semanage
    // fails for it as it does on the host. Only a kept copy is made, and only by root.
    if rustix::process::getuid().as_raw() != 0 {
        if keep.is_some() {
            return Err("seaccess run: --policy-root copies /var/lib/selinux, which only root can read: run the session as root".into());
        }
        return Ok(());
    }
    let base = match keep {
        Some(k) => {
            std::fs::create_dir_all(k).map_err(io(k.display()))?;
            std::fs::canonicalize(k).map_err(io(k.display()))?
        }
        None => dir.join("root"),
    };
    for root in ROOTS {
        if !Path::new(root).is_dir() {
            continue;
        }
        let copy = base.join(root.trim_start_matches('/'));
        if !copy.exists() {
            let parent = copy
                .parent()
                .ok_or("seaccess run: a policy root without a parent")?;
            std::fs::create_dir_all(parent).map_err(io(parent.display()))?;
            // cp -a: the same bytes, modes, times and attributes; the host's tree is only read.
            let st = std::process::Command::new("cp")
                .arg("-a")
                .arg("--")
                .arg(root)
                .arg(parent)
                .status()
                .map_err(io("cp"))?;
            if !st.success() {
                return Err(format!(
                    "seaccess run: copying {root} to {} failed ({st})",
                    parent.display()
                )
                .into());
            }
        }
        mount::mount_bind_recursive(&copy, root)
            .map_err(io(format!("{} bound over {root}", copy.display())))?;
    }
    Ok(())
}

/// /sys/fs/selinux, made where the kernel has none: a tmpfs over /sys/fs with each of its
/// entries (cgroup, fuse, bpf...) bound back, and an empty selinux directory.
fn selinuxfs_dir(dir: &Path) -> Result<(), CliError> {
    if Path::new(SELINUXMNT).is_dir() {
        return Ok(());
    }
    let stash = dir.join("sysfs");
    std::fs::create_dir(&stash).map_err(io(stash.display()))?;
    mount::mount_bind_recursive("/sys/fs", &stash).map_err(io("/sys/fs"))?;
    let names: Vec<OsString> = std::fs::read_dir(&stash)
        .map_err(io("/sys/fs"))?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    mount::mount(
        "seaccess-sysfs",
        "/sys/fs",
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        Some(c"mode=0755"),
    )
    .map_err(io("a tmpfs over /sys/fs"))?;
    for n in names {
        let to = Path::new("/sys/fs").join(&n);
        let from = stash.join(&n);
        if from.is_dir() {
            std::fs::create_dir(&to).map_err(io(to.display()))?;
        } else {
            std::fs::write(&to, b"").map_err(io(to.display()))?;
        }
        // An entry that cannot be bound is left empty (the session does not need it).
        let _ = mount::mount_bind_recursive(&from, &to);
    }
    let _ = mount::unmount(&stash, UnmountFlags::DETACH);
    std::fs::create_dir(SELINUXMNT).map_err(io(SELINUXMNT))
}
