//! The engine's one error type.

use seaccess_security::{PolicyError, SecurityError};
use seaccess_types::{Seqno, ServerError};

/// Why the engine could not open, reload or answer. Each says what failed and where: the
/// policy's path, the name the policy does not know, the generation that changed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The policy file cannot be used: it cannot be opened or read, is not a regular file (a
    /// directory, FIFO, device or socket), or is larger than
    /// [`seaccess_security::MAX_POLICY_FILE`]. The text names the path.
    #[error(transparent)]
    Read(#[from] PolicyError),
    /// The policy's bytes are not a policy this engine can load (truncated, corrupt, an
    /// unsupported version): `origin` is the path, or "policy image" for bytes.
    #[error("{origin}: {source}")]
    Load {
        /// Where the bytes came from.
        origin: String,
        /// What is wrong with them (a truncated policy says at which byte).
        source: SecurityError,
    },
    /// A name the policy generation does not know or a context it does not accept (the text
    /// names it): a context, class, permission or boolean.
    #[error(transparent)]
    Name(#[from] SecurityError),
    /// The cache or the security server could not answer (an unknown SID or class number).
    #[error(transparent)]
    Server(#[from] ServerError),
    /// A check was asked of generation `asked` and the cache answered from `answered`: the
    /// policy changed between resolving the names and deciding. Inside
    /// [`crate::Engine::with_generation`] the closure runs again on the new generation.
    #[error("the policy changed during the check: resolved under generation {}, answered by {}", .asked.0, .answered.0)]
    Stale {
        /// The generation the numbers were resolved under.
        asked: Seqno,
        /// The generation that answered.
        answered: Seqno,
    },
    /// The policy changed this many times during one check: it gave up, refusing (an
    /// enforcing path fails closed).
    #[error("the policy changed {0} times during one check")]
    Unsettled(usize),
    /// Something a caller checks against a policy before it is loaded was refused (see
    /// [`crate::Engine::reload_candidate`]); the policy was not loaded.
    #[error("{0}")]
    Rejected(String),
    /// The engine was built without an object manager (see
    /// [`crate::Builder::object_manager`]).
    #[error("this engine has no object manager")]
    NoObjectManager,
    /// An audit destination cannot be written to: the file cannot be opened for appending,
    /// or the kernel audit refuses this process (the text names which and why).
    #[error("the audit log: {0}")]
    Audit(String),
}

/// A result with [`EngineError`].
pub type Result<T> = std::result::Result<T, EngineError>;
