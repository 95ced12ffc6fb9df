//! Where the lab and the benchmarks look when they are not told: the policy, the file_contexts,
//! and the `seaccess` program some benchmarks time end to end.

use std::path::{Path, PathBuf};

const DEBIAN_DEFAULT: &str = "/etc/selinux/default/policy/policy.33";

/// Debian's default policy where installed, else the repository's compiled example policy
/// (`make policies`) when this program runs from the repository's target/PROFILE.
pub(crate) fn policy() -> Option<PathBuf> {
    if Path::new(DEBIAN_DEFAULT).exists() {
        return Some(PathBuf::from(DEBIAN_DEFAULT));
    }
    let exe = std::env::current_exe().ok()?;
    let root = exe.parent()?.parent()?.parent()?;
    let p = root.join("target/policies/example.33");
    p.exists().then_some(p)
}

/// The installed policy's file_contexts: SELINUXTYPE in /etc/selinux/config, as libselinux
/// reads it (the lookup `seaccess label` uses).
pub(crate) fn file_contexts() -> PathBuf {
    seaccess_policy::installed::file_contexts(Path::new(seaccess_policy::installed::SELINUX_DIR))
}

/// The `seaccess` program beside this one (the same build, or the same installation): the
/// benchmarks that time a `seaccess` command time the build they came with, never another one
/// found on PATH.
pub(crate) fn seaccess_program() -> Result<PathBuf, String> {
    let me = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let p = me.with_file_name("seaccess");
    if p.is_file() {
        Ok(p)
    } else {
        Err(format!(
            "{} is missing: this benchmark times the seaccess program built beside seaccess-lab \
             (cargo build -p seaccess-cli)",
            p.display()
        ))
    }
}
