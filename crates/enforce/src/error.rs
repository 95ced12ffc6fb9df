//! The enforce crate's one error type.

use seaccess_engine::EngineError;

/// Why the tables of a generation, the labels of a tree or the BPF side could not be made. Each says what
/// and where: the limit passed, the SID or context the policy refused, the object of the tree.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EnforceError {
    /// The engine could not answer (an unknown SID, a context the policy refuses, a policy
    /// that kept changing).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// The object manager cannot enforce the policy with its classes (it lacks one and rejects
    /// unknown classes or permissions): nothing is installed, as the kernel refuses such a
    /// policy.
    #[error("the policy is refused: {0}")]
    Rejected(String),
    /// A generation would pass a bound: the SID universe's closure grew past `limit` SIDs
    /// (`what` = "SIDs"), or the maps past their sizes in layout.h (`what` = "decisions" or
    /// "transitions"). The bound is reported, never an endless loop or a map that overflows
    /// when loaded.
    #[error("the generation has more {what} than the limit of {limit} ({detail})")]
    TooLarge {
        /// What passed its bound.
        what: &'static str,
        /// The bound.
        limit: usize,
        /// Where it was passed.
        detail: String,
    },
    /// A generation was extended with a policy that is not the one it was built from: build
    /// the next generation instead.
    #[error("generation {built} cannot be extended under policy generation {now}")]
    Stale {
        /// The seqno the generation was built from.
        built: u32,
        /// The seqno the engine has now.
        now: u32,
    },
    /// A file_contexts lookup failed for an object of a tree (its path as file_contexts sees
    /// it).
    #[error("{path}: {source}")]
    Label {
        /// The object's path under the tree's key.
        path: String,
        /// What the lookup said.
        source: seaccess_label::LabelError,
    },
    /// A system call on a tree failed: `what` was being done to `path`.
    #[error("{path}: {what}: {source}")]
    Io {
        /// The object, as shown.
        path: String,
        /// What was being done.
        what: &'static str,
        /// Why it failed.
        source: std::io::Error,
    },
    /// libbpf or the bpf() system call refused `what` (loading, attaching, a map update).
    #[error("{what}: {source}")]
    Bpf {
        /// What was being done.
        what: String,
        /// What libbpf said (the kernel's errno, with the verifier's log on stderr).
        source: libbpf_rs::Error,
    },
    /// A system call of the BPF side other than bpf() failed.
    #[error("{what}: {source}")]
    System {
        /// What was being done.
        what: String,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The daemon or its control socket: no daemon runs, a request was refused (an invalid
    /// context, a peer that is not root), the options cannot work together.
    #[error("{0}")]
    Daemon(String),
    /// The object lacks a map or program the loader needs (a build out of step with the loader).
    #[error("the BPF object has no {0}")]
    Missing(String),
}

/// A result with [`EnforceError`].
pub type Result<T> = std::result::Result<T, EnforceError>;

/// An I/O error of the system call described by `what`, for `map_err`.
pub(crate) fn sys(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> EnforceError {
    let what = what.into();
    move |source| EnforceError::System { what, source }
}
