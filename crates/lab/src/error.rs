//! The lab's one error type.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// The policy gives no context to build queries from, so there is nothing to measure.
    #[error("{policy}: no valid user context to build queries from")]
    NoQueries { policy: String },
    /// The libselinux AVC peer program could not be run, or printed something else than expected.
    #[error("{}: {what}", program.display())]
    Peer { program: PathBuf, what: String },
}
