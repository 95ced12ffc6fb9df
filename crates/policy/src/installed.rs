//! Where this machine's policy is, found as libselinux finds it (selinux_config.c's
//! init_selinux_config and selinux_current_policy_path): /etc/selinux/config's SELINUXTYPE names
//! the policy root /etc/selinux/TYPE, whose `policy/policy.N` with the highest N this reader
//! supports is the binary policy. The one copy of this lookup: the command line's default
//! `--policy` and file_contexts, and the C library's paths, all use it.

use std::path::{Path, PathBuf};

use crate::read::{VERSION_MAX, VERSION_MIN};

/// The directory that holds the configuration and every policy root (libselinux's SELINUXDIR).
pub const SELINUX_DIR: &str = "/etc/selinux";
/// The policy type when the configuration names none (libselinux's SELINUXDEFAULT).
pub const DEFAULT_TYPE: &str = "targeted";

/// What /etc/selinux/config says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// SELINUXTYPE: the last non-empty value (libselinux reads every line and keeps the last),
    /// [`DEFAULT_TYPE`] when there is none.
    pub kind: String,
    /// SELINUX= as a number: 1 enforcing, 0 permissive, -1 disabled; None when absent or not
    /// one of the three.
    pub mode: Option<i32>,
}

/// Reads a configuration's text. The SELINUXTYPE= tag is matched without regard to case, as
/// libselinux's strncasecmp does; blank lines and `#` comments say nothing.
pub fn parse_config(text: &str) -> Config {
    let mut kind = None;
    let mut mode = None;
    for line in text.lines() {
        let l = line.trim();
        if l.starts_with('#') {
            continue;
        }
        let tag = "SELINUXTYPE=";
        if l.len() >= tag.len() && l.is_char_boundary(tag.len()) {
            let (head, value) = l.split_at(tag.len());
            if head.eq_ignore_ascii_case(tag) {
                let v = value.trim();
                if !v.is_empty() {
                    kind = Some(v.to_string());
                }
                continue;
            }
        }
        if let Some(v) = l.strip_prefix("SELINUX=") {
            mode = match v.trim() {
                v if v.eq_ignore_ascii_case("enforcing") => Some(1),
                v if v.eq_ignore_ascii_case("permissive") => Some(0),
                v if v.eq_ignore_ascii_case("disabled") => Some(-1),
                _ => mode,
            };
        }
    }
    Config {
        kind: kind.unwrap_or_else(|| DEFAULT_TYPE.to_string()),
        mode,
    }
}

/// The configuration under `dir` (its `config` file); an absent or unreadable file says
/// nothing, as for libselinux.
pub fn read_config(dir: &Path) -> Config {
    parse_config(&std::fs::read_to_string(dir.join("config")).unwrap_or_default())
}

/// The policy root of type `kind` under `dir`: `dir/TYPE`, the two put together as text as
/// libselinux's asprintf does (a `kind` starting with `/` does not replace `dir`).
pub fn type_root(dir: &Path, kind: &str) -> PathBuf {
    let mut root = dir.as_os_str().to_owned();
    root.push("/");
    root.push(kind);
    PathBuf::from(root)
}

/// The configured policy root under `dir`.
pub fn policy_root(dir: &Path) -> PathBuf {
    type_root(dir, &read_config(dir).kind)
}

/// The binary policy under a policy root: `policy/policy.N` with the highest N this reader
/// supports that exists (selinux_current_policy_path goes down from the kernel's version; with
/// no kernel policy version, the highest this reader reads is the start).
pub fn binary_policy(root: &Path) -> Option<PathBuf> {
    let dir = root.join("policy");
    (VERSION_MIN..=VERSION_MAX)
        .rev()
        .map(|v| dir.join(format!("policy.{v}")))
        .find(|p| p.exists())
}

/// The installed binary policy of the configuration under `dir`.
pub fn installed_policy(dir: &Path) -> Option<PathBuf> {
    binary_policy(&policy_root(dir))
}

/// The installed policy's file_contexts under `dir` (whether or not it exists).
pub fn file_contexts(dir: &Path) -> PathBuf {
    policy_root(dir).join("contexts/files/file_contexts")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn the_last_non_empty_type_wins_and_the_tag_ignores_case() {
        let c = parse_config("# SELINUXTYPE=commented\nSELINUX=Permissive\nSELINUXTYPE=a\n");
        assert_eq!((c.kind.as_str(), c.mode), ("a", Some(0)));
        let c = parse_config("SELINUXTYPE=a\n  selinuxtype= b \nSELINUXTYPE=\nSELINUX=bogus\n");
        assert_eq!((c.kind.as_str(), c.mode), ("b", None));
        let c = parse_config("SELINUX=disabled\n");
        assert_eq!((c.kind.as_str(), c.mode), (DEFAULT_TYPE, Some(-1)));
    }

    #[test]
    fn the_highest_supported_version_that_exists() {
        let dir = std::env::temp_dir().join(format!("seaccess-installed-p-{}", std::process::id()));
        let pol = dir.join("mine/policy");
        std::fs::create_dir_all(&pol).unwrap();
        std::fs::write(dir.join("config"), "SELINUXTYPE=mine\n").unwrap();
        for v in [
            VERSION_MIN - 1,
            VERSION_MIN,
            VERSION_MAX - 1,
            VERSION_MAX + 1,
        ] {
            std::fs::write(pol.join(format!("policy.{v}")), b"").unwrap();
        }
        assert_eq!(
            installed_policy(&dir),
            Some(pol.join(format!("policy.{}", VERSION_MAX - 1)))
        );
        assert_eq!(
            type_root(&dir, "/x"),
            PathBuf::from(format!("{}//x", dir.display()))
        );
        assert_eq!(
            file_contexts(&dir),
            dir.join("mine/contexts/files/file_contexts")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
