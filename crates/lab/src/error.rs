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
    /// The object manager benchmark's labels: no candidate pair the policy allows silently.
    #[error("no subject and file context the policy allows the object manager benchmark's operations to, without audit: {what}")]
    Labels { what: String },
    /// A hook refused an operation of the object manager benchmark, or could not be set up.
    #[error("object manager: {what}")]
    Objmgr { what: String },
    /// A hook refused an operation of the file service (`errno`: what the system call returns).
    #[error("{what} (errno {errno})")]
    Refused { what: String, errno: i32 },
    /// chatroom and hackbench: no candidate domain the policy lets use its own Unix sockets and
    /// pipes without audit.
    #[error("no domain the policy lets use its own sockets and pipes without audit: {what}")]
    Domains { what: String },
    /// A socket, pipe or thread of chatroom or hackbench failed.
    #[error("{what}: {source}")]
    Sys {
        what: String,
        source: std::io::Error,
    },
    /// A benchmark was asked for something it does not measure, or its workload is empty.
    #[error("{what}")]
    Setup { what: String },
    /// A system call on the object manager benchmark's tree failed.
    #[error("{}: {what}", path.display())]
    Io { path: PathBuf, what: String },
}
