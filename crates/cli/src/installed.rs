//! The policy this machine would load, found as libselinux finds it (selinux_binary_policy_path:
//! /etc/selinux/config's SELINUXTYPE, then the highest policy.N), for the commands whose
//! `--policy` is optional, as setools' tools default to the running policy.

use std::path::{Path, PathBuf};

/// /etc/selinux/TYPE/policy/policy.N with the highest N this reader supports (SELINUXTYPE from
/// /etc/selinux/config, `targeted` when unset, as libselinux assumes).
pub(crate) fn installed_policy() -> Option<PathBuf> {
    installed_under(Path::new(seaccess_policy::installed::SELINUX_DIR))
}

fn installed_under(root: &Path) -> Option<PathBuf> {
    seaccess_policy::installed::installed_policy(root)
}

/// The policy named, else the installed one, said on standard error so that an answer is never
/// read as coming from a policy it did not come from.
pub(crate) fn policy_or_installed(given: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    let p = installed_policy().ok_or("no --policy given and no installed policy found (/etc/selinux/config's SELINUXTYPE, /etc/selinux/TYPE/policy/policy.N)")?;
    crate::output::warn(&format!("using the installed policy {}", p.display()));
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highest_supported_version_of_the_configured_type() -> Result<(), std::io::Error> {
        let root = std::env::temp_dir().join(format!("seaccess-installed-{}", std::process::id()));
        let dir = root.join("mine/policy");
        std::fs::create_dir_all(&dir)?;
        std::fs::write(
            root.join("config"),
            "# c\nSELINUX=permissive\nSELINUXTYPE=mine\n",
        )?;
        for v in [30, 33, 99] {
            std::fs::write(dir.join(format!("policy.{v}")), b"")?;
        }
        // policy.99 is past what the reader supports: libselinux would not pick it either.
        assert_eq!(installed_under(&root), Some(dir.join("policy.33")));
        std::fs::write(root.join("config"), "SELINUXTYPE=other\n")?;
        assert_eq!(installed_under(&root), None);
        std::fs::remove_dir_all(&root)?;
        Ok(())
    }
}
