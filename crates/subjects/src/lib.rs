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
//! - `exe=PATH` matches a caller whose executable is that file: PATH is resolved (links
//!   followed, in the loader's own mount namespace) to a device and inode number when the file
//!   is loaded, and a caller's executable is the inode `/proc/TID/exe` reaches, whatever name
//!   the caller's mount namespace gives it. A PATH that does not exist is an error naming its
//!   line. The file stays held open while the rules stand, so its inode number cannot be
//!   handed to another file.
//! - `uid=N` matches the caller's uid: for the mount the filesystem uid its request carries
//!   (the effective uid unless setfsuid), for libseaccess's getcon the real uid.
//! - `cgroup=PATH` matches a path prefix of the caller's cgroup, whole components.
//! - `transition` matches every caller: the context a process of CONTEXT gets by executing the
//!   caller's executable, labelled by file_contexts for its path (a domain transition). The
//!   path is the one `/proc/TID/exe` names, used only when it reaches the same inode here.
//! - `default` matches every caller.
//!
//! A caller in another user namespace than the loader's never matches `exe=` and is refused by
//! `transition`: there it holds CAP_SYS_ADMIN, with which prctl(PR_SET_MM_MAP) names any file
//! it may open as its executable. Parsing knows nothing of policies: the contexts are checked
//! by whoever loads the file (`seaccess mount`, libseaccess's getcon). The facts a rule matches
//! are read from /proc ([`proc_info`]).

#![forbid(unsafe_code)]

use std::os::fd::OwnedFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Arc;

/// Why a subjects file could not be used. The text says where: the file and line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SubjectsError {
    /// The file cannot be read, or a line of it is not a rule (the same words the object
    /// manager's error used when the parser lived there).
    #[error("invalid argument: {0}")]
    Invalid(String),
}

/// A result with [`SubjectsError`].
pub type Result<T> = std::result::Result<T, SubjectsError>;

/// A file's identity: its device and inode number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId {
    /// st_dev.
    pub dev: u64,
    /// st_ino.
    pub ino: u64,
}

impl FileId {
    /// The identity of the file `meta` describes.
    pub fn of(meta: &std::fs::Metadata) -> FileId {
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
        }
    }
}

/// An `exe=` rule's program: its path as written and the file it named at load.
#[derive(Debug, Clone)]
pub struct Program {
    /// The path as the rule wrote it.
    pub path: String,
    /// The file it named when the rules were loaded.
    pub id: FileId,
    /// An O_PATH descriptor of the file: while it is open the inode lives on, so its number
    /// names no other file of the device, even after the program is replaced or removed.
    _pin: Arc<OwnedFd>,
}

impl PartialEq for Program {
    fn eq(&self, other: &Program) -> bool {
        self.path == other.path && self.id == other.id
    }
}

impl Eq for Program {}

impl Program {
    /// Resolves `path` (links followed) to the file it names now.
    pub fn resolve(path: &str) -> std::io::Result<Program> {
        use rustix::fs::{fstat, open, Mode, OFlags};
        let fd = open(path, OFlags::PATH | OFlags::CLOEXEC, Mode::empty())?;
        let st = fstat(&fd)?;
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
            return Err(std::io::Error::other("not a regular file"));
        }
        Ok(Program {
            path: path.to_string(),
            id: FileId {
                dev: st.st_dev,
                ino: st.st_ino,
            },
            _pin: Arc::new(fd),
        })
    }
}

/// What a rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    Exe(Program),
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
    /// Its executable's identity; None when it cannot be read or cannot be trusted (see the
    /// module docs), and then no `exe=` rule matches.
    pub exe: Option<FileId>,
    /// The uid `uid=` rules match (see the module docs for which).
    pub uid: u32,
    /// Its cgroup path (the unified hierarchy's), for `cgroup=` rules.
    pub cgroup: Option<String>,
}

/// The rule a caller gets, and which of its facts the choice read: what a cache of the
/// answer must watch.
#[derive(Debug, Clone, Copy)]
pub struct Found<'a> {
    /// The first rule that matches, if any.
    pub rule: Option<&'a Rule>,
    /// A `cgroup=` rule was at or before the rule found (or no rule was found and the file
    /// has one): a move to another cgroup can change the answer.
    pub read_cgroup: bool,
}

/// The parsed rules, in file order.
#[derive(Debug, Clone, Default)]
pub struct Subjects {
    /// The rules, in file order.
    pub rules: Vec<Rule>,
}

fn bad(file: &str, line: usize, what: impl Into<String>) -> SubjectsError {
    SubjectsError::Invalid(format!("{file}:{line}: {}", what.into()))
}

/// A cgroup prefix matches whole components: `/a/b` matches `/a/b` and `/a/b/c`, not `/a/bc`.
fn cgroup_under(cgroup: &str, prefix: &str) -> bool {
    let p = prefix.trim_end_matches('/');
    if p.is_empty() {
        return cgroup.starts_with('/');
    }
    cgroup == p
        || cgroup
            .strip_prefix(p)
            .is_some_and(|rest| rest.starts_with('/'))
}

impl Subjects {
    /// Reads and parses the file at `path`.
    pub fn load(path: &Path) -> Result<Subjects> {
        let text = std::fs::read(path)
            .map_err(|e| SubjectsError::Invalid(format!("{}: {e}", path.display())))?;
        Subjects::parse(&path.display().to_string(), &text)
    }

    /// Parses the text of a subjects file named `file` (for messages), each `exe=` path
    /// resolved to its file now.
    pub fn parse(file: &str, text: &[u8]) -> Result<Subjects> {
        let text = std::str::from_utf8(text).map_err(|e| {
            bad(
                file,
                1 + text[..e.valid_up_to()]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count(),
                "not UTF-8",
            )
        })?;
        let mut rules = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let body = raw.split('#').next().unwrap_or("").trim();
            if body.is_empty() {
                continue;
            }
            let mut words = body.split_whitespace();
            let (Some(m), Some(ctx)) = (words.next(), words.next()) else {
                return Err(bad(
                    file,
                    line,
                    format!("{body:?}: expected a match and a context"),
                ));
            };
            if let Some(extra) = words.next() {
                return Err(bad(
                    file,
                    line,
                    format!("unexpected {extra:?} after the context"),
                ));
            }
            if ctx.split(':').count() < 3
                || ctx.split(':').take(3).any(str::is_empty)
                || ctx.bytes().any(|b| b.is_ascii_control())
            {
                return Err(bad(
                    file,
                    line,
                    format!("{ctx:?} is not a context (user:role:type[:range])"),
                ));
            }
            let matches = if let Some(v) = m.strip_prefix("exe=") {
                if !v.starts_with('/') {
                    return Err(bad(
                        file,
                        line,
                        format!("exe={v:?}: an absolute path is needed"),
                    ));
                }
                Match::Exe(
                    Program::resolve(v).map_err(|e| bad(file, line, format!("exe={v}: {e}")))?,
                )
            } else if let Some(v) = m.strip_prefix("uid=") {
                Match::Uid(
                    v.parse()
                        .map_err(|_| bad(file, line, format!("uid={v:?}: not a number")))?,
                )
            } else if let Some(v) = m.strip_prefix("cgroup=") {
                if !v.starts_with('/') {
                    return Err(bad(
                        file,
                        line,
                        format!("cgroup={v:?}: an absolute cgroup path is needed"),
                    ));
                }
                Match::Cgroup(v.to_string())
            } else if m == "transition" {
                Match::Transition
            } else if m == "default" {
                Match::Default
            } else {
                return Err(bad(
                    file,
                    line,
                    format!("{m:?}: expected exe=, uid=, cgroup=, transition or default"),
                ));
            };
            rules.push(Rule {
                matches,
                context: ctx.to_string(),
                line,
            });
        }
        Ok(Subjects { rules })
    }

    /// The first rule that matches `caller`, if any.
    pub fn find(&self, caller: &CallerInfo) -> Option<&Rule> {
        self.decide(caller).rule
    }

    /// The first rule that matches `caller`, and what the choice read.
    pub fn decide(&self, caller: &CallerInfo) -> Found<'_> {
        let mut read_cgroup = false;
        for r in &self.rules {
            let hit = match &r.matches {
                Match::Exe(p) => caller.exe == Some(p.id),
                Match::Uid(u) => caller.uid == *u,
                Match::Cgroup(p) => {
                    read_cgroup = true;
                    caller.cgroup.as_deref().is_some_and(|c| cgroup_under(c, p))
                }
                Match::Transition | Match::Default => true,
            };
            if hit {
                return Found {
                    rule: Some(r),
                    read_cgroup,
                };
            }
        }
        Found {
            rule: None,
            read_cgroup,
        }
    }

    /// Whether a rule reads the caller's executable (`exe=`, `transition`).
    pub fn reads_exe(&self) -> bool {
        self.rules
            .iter()
            .any(|r| matches!(r.matches, Match::Exe(_) | Match::Transition))
    }
}

/// What /proc says about a thread.
#[derive(Debug, Clone, Default)]
pub struct ProcInfo {
    /// Its executable, real uid (from /proc: the mount puts the request's uid in its place)
    /// and cgroup.
    pub info: CallerInfo,
    /// The thread's command name (audit records show it).
    pub comm: String,
    /// Its thread group (the process).
    pub tgid: u32,
    /// Why `info.exe` is None, for messages.
    pub no_exe: Option<String>,
}

/// The identity of a namespace link such as /proc/self/ns/user.
fn ns_id(path: &str) -> Option<FileId> {
    std::fs::metadata(path).ok().map(|m| FileId::of(&m))
}

/// Reads /proc/`tid` (a thread id; /proc serves threads that are not group leaders too):
/// executable identity, real uid, thread group, cgroup, comm. `None` when the thread is gone.
///
/// The executable is `stat("/proc/TID/exe")`: the magic link reaches the inode the process
/// maps, whatever its mount namespace calls it. A thread in another user namespace than ours
/// gets none (see the module docs).
pub fn proc_info(tid: u32) -> Option<ProcInfo> {
    let base = format!("/proc/{tid}");
    let status = std::fs::read_to_string(format!("{base}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
    };
    let uid = field("Uid:")?;
    let tgid = field("Tgid:")?;
    let (exe, no_exe) = match (
        ns_id(&format!("{base}/ns/user")),
        ns_id("/proc/self/ns/user"),
    ) {
        (Some(theirs), Some(ours)) if theirs == ours => {
            match std::fs::metadata(format!("{base}/exe")) {
                Ok(m) => (Some(FileId::of(&m)), None),
                Err(e) => (None, Some(format!("its executable cannot be read: {e}"))),
            }
        }
        (Some(_), Some(_)) => (
            None,
            Some(
                "it runs in another user namespace, where it may rename its executable".to_string(),
            ),
        ),
        _ => (None, Some("its user namespace cannot be read".to_string())),
    };
    let cgroup = proc_cgroup(tid);
    let comm = std::fs::read_to_string(format!("{base}/comm"))
        .unwrap_or_default()
        .trim_end_matches('\n')
        .to_string();
    Some(ProcInfo {
        info: CallerInfo { exe, uid, cgroup },
        comm,
        tgid,
        no_exe,
    })
}

/// The cgroup of thread `tid`: the unified hierarchy's, else the first listed.
pub fn proc_cgroup(tid: u32) -> Option<String> {
    let cgroups = std::fs::read_to_string(format!("/proc/{tid}/cgroup")).ok()?;
    cgroups
        .lines()
        .find_map(|l| l.strip_prefix("0::"))
        .or_else(|| cgroups.lines().next().and_then(|l| l.splitn(3, ':').nth(2)))
        .map(str::to_string)
}

/// The path of thread `tid`'s executable, for file_contexts: the name `/proc/TID/exe` gives,
/// made canonical here and used only if it reaches `id` (the inode the caller runs, as
/// [`proc_info`] read it). Otherwise why not: the caller runs a file that has no such name in
/// our mount namespace (deleted, replaced, or named by a mount the caller made).
pub fn exe_path(tid: u32, id: FileId) -> std::result::Result<String, String> {
    let shown = std::fs::read_link(format!("/proc/{tid}/exe"))
        .map_err(|e| format!("its executable cannot be read: {e}"))?;
    let real = std::fs::canonicalize(&shown)
        .map_err(|e| format!("its executable {} is not a file here: {e}", shown.display()))?;
    let meta = std::fs::metadata(&real).map_err(|e| format!("{}: {e}", real.display()))?;
    if FileId::of(&meta) != id {
        return Err(format!(
            "its executable is not the file {} names here",
            shown.display()
        ));
    }
    real.into_os_string()
        .into_string()
        .map_err(|p| format!("{}: not UTF-8", Path::new(&p).display()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn id(path: &str) -> FileId {
        FileId::of(&std::fs::metadata(path).unwrap())
    }

    #[test]
    fn rules_match_in_file_order_and_bad_lines_are_named() {
        let s = Subjects::parse(
            "subjects",
            b"# web\nexe=/bin/sh system_u:system_r:httpd_t:s0\nuid=1001 user_u:user_r:user_t:s0 # a user\ncgroup=/system.slice/a.service system_u:system_r:a_t:s0\n\ndefault unconfined_u:unconfined_r:unconfined_t:s0\n",
        )
        .unwrap();
        assert_eq!(s.rules.len(), 4);
        let (sh, cat) = (id("/bin/sh"), id("/bin/cat"));
        assert_ne!(sh, cat);
        let who = |exe, uid, cg: &str| {
            s.find(&CallerInfo {
                exe: Some(exe),
                uid,
                cgroup: Some(cg.into()),
            })
            .map(|r| r.line)
        };
        assert_eq!(who(sh, 1001, "/"), Some(2));
        assert_eq!(who(cat, 1001, "/"), Some(3));
        assert_eq!(who(cat, 0, "/system.slice/a.service/sub"), Some(4));
        assert_eq!(who(cat, 0, "/system.slice/a.serviceX"), Some(6));
        // No executable known: exe= never matches.
        assert_eq!(
            s.find(&CallerInfo {
                exe: None,
                uid: 5,
                cgroup: None
            })
            .map(|r| r.line),
            Some(6)
        );
        for (text, want) in [
            (&b"exe=nginx a:b:c\n"[..], "subjects:1: exe=\"nginx\""),
            (
                b"\n\nexe=/no/such/program a:b:c",
                "subjects:3: exe=/no/such/program: No such file",
            ),
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

    #[test]
    fn exe_is_the_file_not_its_name() {
        // A link to the program is the program; a copy of it is not.
        let dir = std::env::temp_dir().join(format!("seaccess-subjects-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let link = dir.join("sh-link");
        let copy = dir.join("sh-copy");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("/bin/sh", &link).unwrap();
        std::fs::copy("/bin/sh", &copy).unwrap();
        let text = format!("exe={} a:b:c\ndefault d:e:f\n", link.display());
        let s = Subjects::parse("subjects", text.as_bytes()).unwrap();
        let ctx = |exe| {
            s.find(&CallerInfo {
                exe: Some(exe),
                uid: 0,
                cgroup: None,
            })
            .map(|r| r.context.clone())
        };
        assert_eq!(ctx(id("/bin/sh")).as_deref(), Some("a:b:c"));
        assert_eq!(ctx(id(copy.to_str().unwrap())).as_deref(), Some("d:e:f"));
        // Pinned: the rule's inode stays while the rules stand, even with its name gone.
        let Match::Exe(p) = &s.rules[0].matches else {
            panic!()
        };
        assert_eq!(p.id, id("/bin/sh"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn what_a_decision_read() {
        let s = Subjects::parse(
            "s",
            b"uid=7 a:b:c\ncgroup=/x d:e:f\nuid=8 g:h:i\ndefault j:k:l\n",
        )
        .unwrap();
        let d = |uid| {
            let f = s.decide(&CallerInfo {
                exe: None,
                uid,
                cgroup: Some("/y".into()),
            });
            (f.rule.map(|r| r.line), f.read_cgroup)
        };
        assert_eq!(
            d(7),
            (Some(1), false),
            "the cgroup rule comes after: a move cannot change it"
        );
        assert_eq!(d(8), (Some(3), true));
        assert_eq!(d(9), (Some(4), true));
        let none = Subjects::parse("s", b"uid=7 a:b:c\ncgroup=/x d:e:f\n").unwrap();
        let f = none.decide(&CallerInfo {
            exe: None,
            uid: 1,
            cgroup: None,
        });
        assert!(
            f.rule.is_none() && f.read_cgroup,
            "no rule now; a move into /x would give one"
        );
    }

    /// The mount drains process events before each lookup only where this says so: a rule
    /// that reads the executable left out lets an exec'd caller keep its old credential.
    #[test]
    fn which_files_read_the_executable() {
        let reads = |t: &str| Subjects::parse("s", t.as_bytes()).unwrap().reads_exe();
        assert!(!reads("uid=7 a:b:c\ncgroup=/x d:e:f\ndefault j:k:l\n"));
        assert!(reads("uid=7 a:b:c\ntransition a:b:c\n"));
        assert!(reads("exe=/bin/sh a:b:c\n"));
    }

    #[test]
    fn this_process_as_proc_shows_it() {
        let me = proc_info(std::process::id()).unwrap();
        assert_eq!(me.tgid, std::process::id());
        assert_eq!(me.info.exe, Some(id("/proc/self/exe")));
        let path = exe_path(std::process::id(), me.info.exe.unwrap()).unwrap();
        assert_eq!(
            path,
            std::fs::canonicalize(std::env::current_exe().unwrap())
                .unwrap()
                .to_str()
                .unwrap()
        );
        assert!(exe_path(std::process::id(), id("/bin/sh"))
            .unwrap_err()
            .contains("is not the file"));
    }
}
