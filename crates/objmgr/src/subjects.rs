//! The subjects file: which context a caller of the mount acts with, one rule a line, the first
//! rule that matches wins (`#` starts a comment):
//!
//! ```text
//! exe=/usr/sbin/nginx        system_u:system_r:httpd_t:s0
//! uid=1001                   user_u:user_r:user_t:s0
//! cgroup=/system.slice/nginx.service  system_u:system_r:httpd_t:s0
//! transition                 system_u:system_r:initrc_t:s0
//! default                    unconfined_u:unconfined_r:unconfined_t:s0
//! ```
//!
//! `exe=` matches the caller's executable (`/proc/PID/exe`), `uid=` its real uid, `cgroup=` a
//! path prefix of its cgroup (whole components), `transition` every caller: the context a
//! process of CONTEXT gets by executing the caller's executable, labelled by file_contexts (a
//! domain transition), `default` every caller. Parsing knows nothing of policies: the contexts
//! are checked by whoever loads the file (`seaccess mount`, libseaccess's getcon). The
//! facts a rule matches are read from /proc ([`proc_info`]).

use std::path::Path;

use crate::error::{ObjmgrError, Result};

/// What a rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    Exe(String),
    Uid(u32),
    Cgroup(String),
    Transition,
    Default,
}

/// One line of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub matches: Match,
    pub context: String,
    /// The line it came from (1-based), for messages.
    pub line: usize,
}

/// A caller as the rules see it.
#[derive(Debug, Clone, Default)]
pub struct CallerInfo {
    pub exe: Option<String>,
    pub uid: u32,
    pub cgroup: Option<String>,
}

/// The parsed rules, in file order.
#[derive(Debug, Clone, Default)]
pub struct Subjects {
    pub rules: Vec<Rule>,
}

fn bad(file: &str, line: usize, what: impl Into<String>) -> ObjmgrError {
    ObjmgrError::Invalid(format!("{file}:{line}: {}", what.into()))
}

/// A cgroup prefix matches whole components: `/a/b` matches `/a/b` and `/a/b/c`, not `/a/bc`.
fn cgroup_under(cgroup: &str, prefix: &str) -> bool {
    let p = prefix.trim_end_matches('/');
    if p.is_empty() {
        return cgroup.starts_with('/');
    }
    cgroup == p || cgroup.strip_prefix(p).is_some_and(|rest| rest.starts_with('/'))
}

impl Subjects {
    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<Subjects> {
        let text = std::fs::read(path).map_err(|e| ObjmgrError::Invalid(format!("{}: {e}", path.display())))?;
        Subjects::parse(&path.display().to_string(), &text)
    }

    /// Parses the text of a subjects file named `file` (for messages).
    pub fn parse(file: &str, text: &[u8]) -> Result<Subjects> {
        let text = std::str::from_utf8(text).map_err(|e| bad(file, 1 + text[..e.valid_up_to()].iter().filter(|&&b| b == b'\n').count(), "not UTF-8"))?;
        let mut rules = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let mut words = body.split_whitespace();
            let (Some(m), Some(ctx)) = (words.next(), words.next()) else {
                return Err(bad(file, line, format!("{body:?}: expected a match and a context")));
            };
            if let Some(extra) = words.next() {
                return Err(bad(file, line, format!("unexpected {extra:?} after the context")));
            }
            if ctx.split(':').count() < 3 || ctx.split(':').take(3).any(str::is_empty) || ctx.bytes().any(|b| b.is_ascii_control()) {
                return Err(bad(file, line, format!("{ctx:?} is not a context (user:role:type[:range])")));
            }
            let matches = if let Some(v) = m.strip_prefix("exe=") {
                if !v.starts_with('/') {
                    return Err(bad(file, line, format!("exe={v:?}: an absolute path is needed")));
                }
                Match::Exe(v.to_string())
            } else if let Some(v) = m.strip_prefix("uid=") {
                Match::Uid(v.parse().map_err(|_| bad(file, line, format!("uid={v:?}: not a number")))?)
            } else if let Some(v) = m.strip_prefix("cgroup=") {
                if !v.starts_with('/') {
                    return Err(bad(file, line, format!("cgroup={v:?}: an absolute cgroup path is needed")));
                }
                Match::Cgroup(v.to_string())
            } else if m == "transition" {
                Match::Transition
            } else if m == "default" {
                Match::Default
            } else {
                return Err(bad(file, line, format!("{m:?}: expected exe=, uid=, cgroup=, transition or default")));
            };
            rules.push(Rule { matches, context: ctx.to_string(), line });
        }
        Ok(Subjects { rules })
    }

    /// The first rule that matches `caller`, if any.
    pub fn find(&self, caller: &CallerInfo) -> Option<&Rule> {
        self.rules.iter().find(|r| match &r.matches {
            Match::Exe(p) => caller.exe.as_deref() == Some(p.as_str()),
            Match::Uid(u) => caller.uid == *u,
            Match::Cgroup(p) => caller.cgroup.as_deref().is_some_and(|c| cgroup_under(c, p)),
            Match::Transition | Match::Default => true,
        })
    }
}

/// What /proc says about a thread.
#[derive(Debug, Clone, Default)]
pub struct ProcInfo {
    pub info: CallerInfo,
    pub comm: String,
    /// Its start time (jiffies since boot, /proc/PID/stat field 22).
    pub start: u64,
}

/// Reads /proc/`pid`: executable, real uid, cgroup (the unified hierarchy's, else the first
/// listed), comm and start time. `None` when the thread is gone.
pub fn proc_info(pid: u32) -> Option<ProcInfo> {
    let base = format!("/proc/{pid}");
    let stat = std::fs::read_to_string(format!("{base}/stat")).ok()?;
    // The fields after the command name, which may itself hold spaces and parentheses.
    let after = stat.rsplit_once(')')?.1;
    let start = after.split_whitespace().nth(19)?.parse().ok()?;
    let status = std::fs::read_to_string(format!("{base}/status")).ok()?;
    let uid = status.lines().find_map(|l| l.strip_prefix("Uid:")).and_then(|v| v.split_whitespace().next()).and_then(|v| v.parse().ok())?;
    let exe = std::fs::read_link(format!("{base}/exe")).ok().map(|p| p.to_string_lossy().trim_end_matches(" (deleted)").to_string());
    let cgroups = std::fs::read_to_string(format!("{base}/cgroup")).unwrap_or_default();
    let cgroup = cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .or_else(|| cgroups.lines().next().and_then(|l| l.splitn(3, ':').nth(2)))
        .map(str::to_string);
    let comm = std::fs::read_to_string(format!("{base}/comm")).unwrap_or_default().trim_end_matches('\n').to_string();
    Some(ProcInfo { info: CallerInfo { exe, uid, cgroup }, comm, start })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    #[test]
    fn rules_match_in_file_order_and_bad_lines_are_named() {
        let s = Subjects::parse(
            "subjects",
            b"# web\nexe=/usr/sbin/nginx system_u:system_r:httpd_t:s0\nuid=1001 user_u:user_r:user_t:s0 # a user\ncgroup=/system.slice/a.service system_u:system_r:a_t:s0\n\ndefault unconfined_u:unconfined_r:unconfined_t:s0\n",
        )
        .unwrap();
        assert_eq!(s.rules.len(), 4);
        let who = |exe: &str, uid, cg: &str| s.find(&CallerInfo { exe: Some(exe.into()), uid, cgroup: Some(cg.into()) }).map(|r| r.line);
        assert_eq!(who("/usr/sbin/nginx", 1001, "/"), Some(2));
        assert_eq!(who("/bin/cat", 1001, "/"), Some(3));
        assert_eq!(who("/bin/cat", 0, "/system.slice/a.service/sub"), Some(4));
        assert_eq!(who("/bin/cat", 0, "/system.slice/a.serviceX"), Some(6));
        for (text, want) in [
            (&b"exe=nginx a:b:c\n"[..], "subjects:1: exe=\"nginx\""),
            (b"\n\nuid=x a:b:c", "subjects:3: uid=\"x\""),
            (b"default", "subjects:1: \"default\": expected"),
            (b"default a:b", "subjects:1: \"a:b\" is not a context"),
            (b"default a:b:c extra", "subjects:1: unexpected \"extra\""),
            (b"who=1 a:b:c", "subjects:1: \"who=1\": expected"),
            (b"default a:b:c\n\xff", "subjects:2: not UTF-8"),
        ] {
            let e = Subjects::parse("subjects", text).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
        }
    }
}
