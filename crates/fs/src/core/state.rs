//! What the mount is started with, and the files it reloads on SIGHUP.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seaccess_engine::{Engine, Validate};
use seaccess_label::FileContexts;
use seaccess_security::SecurityServer;

use crate::error::{FsError, Result};
use crate::request::Labels;
use crate::subjects::Subjects;

/// `seaccess mount`'s options.
#[derive(Debug, Clone)]
pub struct Options {
    /// The backing tree (absolute).
    pub source: PathBuf,
    /// Where it is mounted (absolute): audit records name paths under it.
    pub mountpoint: PathBuf,
    pub policy: PathBuf,
    pub file_contexts: Option<PathBuf>,
    /// What file_contexts is asked for: PREFIX joined with the path inside the mount
    /// (default: the source's absolute path).
    pub path_prefix: PathBuf,
    pub subjects: Option<PathBuf>,
    /// `name=value` lines (booleans.local's format), committed at start and on each reload.
    pub booleans: Option<PathBuf>,
    pub permissive: bool,
    /// Where AVC records go (None: standard error), as [`seaccess_engine::AuditTarget::parse`]
    /// reads it: `syslog` the system log, `audit` the kernel audit, anything else a file.
    pub audit_log: Option<PathBuf>,
    pub fast_paths: bool,
    /// Run the hooks (always, but for a benchmark's baseline: the same passthrough serving
    /// every request unchecked).
    pub checks: bool,
    /// The attribute labels are kept in: `trusted.selinux`, `security.selinux` or
    /// `user.selinux` (None: `trusted.selinux`, or `security.selinux` when `source` is
    /// `mountpoint`). See [`crate::core::store`].
    pub xattr: Option<String>,
    /// Accept `security.selinux` or `user.selinux` on a tree not mounted over itself, where
    /// any file owner can write them around the mount.
    pub unsafe_xattr: bool,
    /// Node descriptors the process keeps at most, all its mounts together (None: half the
    /// descriptor limit). Beyond it the least recently used nodes give theirs up and open
    /// their inode again by file handle at their next use; where the file system gives no
    /// handles, the kernel is asked to forget them instead (see [`crate::hot`]).
    pub max_node_fds: Option<usize>,
}

/// The unconfined context callers get without a subjects file, where the policy has it.
pub const UNCONFINED: &str = "unconfined_u:unconfined_r:unconfined_t:s0";

fn config(path: &Path, e: impl std::fmt::Display) -> FsError {
    FsError::Config {
        what: format!("{}: {e}", path.display()),
    }
}

/// file_contexts and subjects read, each context checked against a policy, and the booleans
/// file checked (not applied): everything a reload needs before it may replace the policy.
/// No SID is taken here: [`Files::labels`] resolves them through the live server once the
/// policy they go with is loaded.
pub struct Files {
    file_contexts: Option<Arc<FileContexts>>,
    subjects: Option<Subjects>,
}

/// Reads file_contexts and subjects, each context checked against `policy` (the one in force,
/// or the candidate of a reload), and the booleans file (checked, not applied); and checks that
/// the policy gives callers without a subjects rule a context.
pub fn read(opts: &Options, policy: &impl Validate) -> Result<Files> {
    let file_contexts = match &opts.file_contexts {
        Some(p) => Some(Arc::new(FileContexts::open(p).map_err(|e| config(p, e))?)),
        None => None,
    };
    let subjects = match &opts.subjects {
        Some(p) => {
            let s = Subjects::load(p).map_err(|e| FsError::Config {
                what: e.to_string(),
            })?;
            for r in &s.rules {
                policy
                    .check_context(&r.context)
                    .map_err(|e| config(p, format!("line {}: {}: {e}", r.line, r.context)))?;
            }
            Some(s)
        }
        None => None,
    };
    if policy.check_context(UNCONFINED).is_err() && !policy.has_initial_sid(1) {
        return Err(no_default(opts));
    }
    if let Some(p) = &opts.booleans {
        booleans(p, policy)?;
    }
    Ok(Files {
        file_contexts,
        subjects,
    })
}

fn no_default(opts: &Options) -> FsError {
    config(
        &opts.policy,
        "the policy has neither unconfined_t nor a kernel initial SID",
    )
}

impl Files {
    /// The labels, with the default caller's SID taken from `server`, the live one whose SIDs
    /// every check uses.
    pub fn labels(self, opts: &Options, server: &SecurityServer) -> Result<Labels> {
        let default_sid = match server.context_to_sid(UNCONFINED) {
            Ok(s) => s,
            Err(_) => seaccess_types::LabelServer::initial_sid(server, 1)
                .ok_or_else(|| no_default(opts))?,
        };
        let reads_exe = self.subjects.as_ref().is_some_and(Subjects::reads_exe);
        Ok(Labels {
            file_contexts: self.file_contexts,
            subjects: self.subjects,
            default_sid,
            reads_exe,
        })
    }
}

/// The booleans file's settings, each name checked against `policy`.
fn booleans(path: &Path, policy: &impl Validate) -> Result<Vec<(String, bool)>> {
    let text = std::fs::read_to_string(path).map_err(|e| config(path, e))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let Some((name, value)) = body.split_once('=') else {
            return Err(config(path, format!("line {}: expected name=value", i + 1)));
        };
        let (name, value) = (name.trim(), value.trim());
        let v = match value {
            "1" | "true" | "on" => true,
            "0" | "false" | "off" => false,
            _ => {
                return Err(config(
                    path,
                    format!("line {}: {value:?} is not a boolean value", i + 1),
                ))
            }
        };
        policy
            .check_boolean(name)
            .map_err(|e| config(path, format!("line {}: {e}", i + 1)))?;
        out.push((name.to_string(), v));
    }
    Ok(out)
}

/// Sets and commits the booleans file's values (one commit: one policy change).
pub fn apply_booleans(opts: &Options, engine: &Engine) -> Result<()> {
    let Some(p) = &opts.booleans else {
        return Ok(());
    };
    let server = engine.server();
    let values = booleans(p, engine)?;
    for (name, v) in &values {
        server.set_boolean(name, *v).map_err(|e| config(p, e))?;
    }
    if !values.is_empty() {
        server.commit_booleans();
    }
    Ok(())
}
