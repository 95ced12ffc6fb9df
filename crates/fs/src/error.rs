//! The mount's one error type, and the one place an error becomes the errno a caller sees.

use seaccess_objmgr::ObjmgrError;

/// Why an operation on the mount failed, or why the mount could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FsError {
    /// A hook refused (a denial, an invalid context, EPERM where the kernel's hook says so).
    #[error(transparent)]
    Hook(#[from] ObjmgrError),
    /// The system call on the backing tree failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// A plain errno with its reason (no such node, a name that is not UTF-8...).
    #[error("{what} (errno {errno})")]
    Errno { errno: i32, what: String },
    /// Fail closed: the object's label cannot be read or is not a context of the policy, or
    /// the caller has no context; every operation on it is refused.
    #[error("refused: {0}")]
    Closed(String),
    /// A policy, file_contexts or subjects file, or an option, that cannot be used.
    #[error("{what}")]
    Config { what: String },
}

pub type Result<T> = std::result::Result<T, FsError>;

impl FsError {
    /// The errno the caller's system call returns.
    pub fn errno(&self) -> i32 {
        match self {
            FsError::Hook(e) => e.errno(),
            FsError::Io(e) => e.raw_os_error().unwrap_or(libc::EIO),
            FsError::Errno { errno, .. } => *errno,
            FsError::Closed(_) => libc::EACCES,
            FsError::Config { .. } => libc::EIO,
        }
    }

    /// A plain errno error.
    pub fn errno_of(errno: i32, what: impl Into<String>) -> FsError {
        FsError::Errno {
            errno,
            what: what.into(),
        }
    }

    /// Whether this is the policy's refusal (written to the log as such).
    pub fn is_refusal(&self) -> bool {
        matches!(self, FsError::Hook(_) | FsError::Closed(_))
    }
}

impl From<rustix::io::Errno> for FsError {
    fn from(e: rustix::io::Errno) -> FsError {
        FsError::Io(e.into())
    }
}
