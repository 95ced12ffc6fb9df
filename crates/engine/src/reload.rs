//! Reading a policy, and replacing it in place.
//!
//! A reload goes through the live server once: its SID table, which every generation of the
//! server shares, stays the one SIDs are numbered by. A front end that must check its own files
//! (subjects, booleans) against the new policy before committing to it reads the policy into a
//! [`Candidate`] first: a candidate answers only whether a name or context is acceptable, never
//! with a number, so nothing it resolved can be paired with the live server's SIDs (a mount
//! once took its default caller's SID from such a scratch server's table while checking with
//! the live one's).

use std::path::Path;

use seaccess_security::{SecurityError, SecurityServer};
use seaccess_types::{LabelServer, Seqno};

use crate::error::{EngineError, Result};
use crate::{Engine, Source};

/// What the bytes of a policy given in memory are called in errors.
const IMAGE: &str = "policy image";

/// The bytes of `source` and what errors call them.
fn read(source: &Source<'_>) -> Result<(Vec<u8>, String)> {
    match source {
        Source::Path(p) => Ok((
            seaccess_security::read_policy_file(p)?,
            p.display().to_string(),
        )),
        Source::Bytes(b) => Ok((b.to_vec(), IMAGE.to_string())),
    }
}

/// A security server of the policy `source` names.
pub(crate) fn server_of(source: &Source<'_>) -> Result<SecurityServer> {
    let loaded = |origin: String| move |source| EngineError::Load { origin, source };
    match source {
        Source::Path(p) => {
            let data = seaccess_security::read_policy_file(p)?;
            SecurityServer::from_image(data).map_err(loaded(p.display().to_string()))
        }
        Source::Bytes(b) => SecurityServer::from_bytes(b).map_err(loaded(IMAGE.to_string())),
    }
}

/// What a front end checks its own files with before they are used with a policy: whether the
/// policy accepts a context, whether it has a boolean. Nothing here hands out a number.
pub trait Validate {
    /// Ok if the policy accepts `context` (security_context_to_sid would give it a SID).
    fn check_context(&self, context: &str) -> std::result::Result<(), SecurityError>;
    /// Ok if the policy has the boolean `name`.
    fn check_boolean(&self, name: &str) -> std::result::Result<(), SecurityError>;
    /// Whether the policy gives initial SID `n` (1: kernel) a context.
    fn has_initial_sid(&self, n: u32) -> bool;
}

/// A policy read and parsed but not loaded: what [`Engine::reload_candidate`] will install.
pub struct Candidate {
    data: Vec<u8>,
    origin: String,
    /// Only asked whether names are acceptable: its SID table is never read.
    policy: SecurityServer,
}

impl Candidate {
    /// What errors call the candidate's policy (its path).
    pub fn origin(&self) -> &str {
        &self.origin
    }
}

impl Validate for Candidate {
    fn check_context(&self, context: &str) -> std::result::Result<(), SecurityError> {
        self.policy.snapshot().parse_context(context).map(|_| ())
    }

    fn check_boolean(&self, name: &str) -> std::result::Result<(), SecurityError> {
        self.policy.pending_boolean(name).map(|_| ())
    }

    fn has_initial_sid(&self, n: u32) -> bool {
        LabelServer::initial_sid(&self.policy, n).is_some()
    }
}

impl Validate for Engine {
    fn check_context(&self, context: &str) -> std::result::Result<(), SecurityError> {
        self.server.snapshot().parse_context(context).map(|_| ())
    }

    fn check_boolean(&self, name: &str) -> std::result::Result<(), SecurityError> {
        self.server.pending_boolean(name).map(|_| ())
    }

    fn has_initial_sid(&self, n: u32) -> bool {
        LabelServer::initial_sid(&*self.server, n).is_some()
    }
}

impl Engine {
    /// Replaces the policy with the file at `path`, in place, for every thread at once: the
    /// cache recomputes what it holds before the switch, the object manager remaps its classes,
    /// SIDs keep standing for the same contexts, booleans the new policy shares keep their
    /// values. On error the old policy stays. Returns the new generation's seqno.
    pub fn reload_file(&self, path: impl AsRef<Path>) -> Result<Seqno> {
        let (data, origin) = read(&Source::Path(path.as_ref()))?;
        self.reload_as(&data, origin)
    }

    /// [`Engine::reload_file`] with a policy image in memory.
    pub fn reload_bytes(&self, data: &[u8]) -> Result<Seqno> {
        self.reload_as(data, IMAGE.to_string())
    }

    fn reload_as(&self, data: &[u8], origin: String) -> Result<Seqno> {
        self.server
            .reload(data)
            .map_err(|source| EngineError::Load { origin, source })
    }

    /// Reads and parses the policy file at `path` without loading it, for checking what goes
    /// with it first (see [`Candidate`]); [`Engine::reload_candidate`] loads it.
    pub fn candidate_file(&self, path: impl AsRef<Path>) -> Result<Candidate> {
        let (data, origin) = read(&Source::Path(path.as_ref()))?;
        let policy = SecurityServer::from_bytes(&data).map_err(|source| EngineError::Load {
            origin: origin.clone(),
            source,
        })?;
        Ok(Candidate {
            data,
            origin,
            policy,
        })
    }

    /// Loads a candidate policy through the live server (see [`Engine::reload_file`]). SIDs
    /// wanted under the new policy are asked of the engine after this returns.
    pub fn reload_candidate(&self, c: Candidate) -> Result<Seqno> {
        self.reload_as(&c.data, c.origin)
    }
}
