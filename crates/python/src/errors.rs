//! The module's exceptions, and the one place Rust errors become them.

use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError};
use pyo3::{create_exception, PyErr};
use seaccess_engine::EngineError;
use seaccess_security::SecurityError;
use seaccess_types::ServerError;

create_exception!(
    seaccess,
    Error,
    PyValueError,
    "Base of seaccess's errors about what it was given."
);
create_exception!(
    seaccess,
    PolicyError,
    Error,
    "A policy image that cannot be loaded: the message names the section and byte offset."
);
create_exception!(
    seaccess,
    ContextError,
    Error,
    "A security context that is not valid in the policy."
);
create_exception!(
    seaccess,
    UnknownNameError,
    Error,
    "A class, permission or boolean the policy does not define."
);

/// The exception for a security server error; `at` says where (a file, a query number), or is
/// empty.
pub(crate) fn security(e: &SecurityError, at: &str) -> PyErr {
    let msg = if at.is_empty() {
        e.to_string()
    } else {
        format!("{at}: {e}")
    };
    match e {
        SecurityError::Policy(_) => PolicyError::new_err(msg),
        SecurityError::InvalidContext { .. }
        | SecurityError::InvalidSid(_)
        | SecurityError::InvalidComputedContext(_) => ContextError::new_err(msg),
        SecurityError::UnknownClass(..)
        | SecurityError::UnknownPermission { .. }
        | SecurityError::InvalidClass(_)
        | SecurityError::UnknownBoolean(..) => UnknownNameError::new_err(msg),
        _ => Error::new_err(msg),
    }
}

/// What stopped a query: the security server's error, or the cache's in words.
pub(crate) enum Problem {
    Security(SecurityError),
    Other(String),
}

impl From<SecurityError> for Problem {
    fn from(e: SecurityError) -> Self {
        Problem::Security(e)
    }
}

impl From<EngineError> for Problem {
    /// The cache's errors about a SID or class number as the security server's own (the
    /// exception a caller gets for an unknown SID is the same from `Policy` and `Avc`).
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Name(e) => Problem::Security(e),
            EngineError::Server(ServerError::InvalidSid(sid)) => {
                Problem::Security(SecurityError::InvalidSid(sid))
            }
            EngineError::Server(ServerError::InvalidClass(c)) => {
                Problem::Security(SecurityError::InvalidClass(c.0.into()))
            }
            e => Problem::Other(e.to_string()),
        }
    }
}

/// The exception for a policy that could not be opened or reloaded: the OS error or
/// [`PolicyError`] for a file that cannot be read ([`policy_file`]), [`PolicyError`] naming
/// `path` (or "policy image") for bytes that are not a policy.
pub(crate) fn open(e: EngineError, path: &str) -> PyErr {
    match e {
        EngineError::Read(e) => policy_file(&e, path),
        EngineError::Load { origin, source } => security(&source, &origin),
        e => Problem::from(e).into_py(path),
    }
}

impl Problem {
    pub(crate) fn into_py(self, at: &str) -> PyErr {
        match self {
            Problem::Security(e) => security(&e, at),
            Problem::Other(s) if at.is_empty() => Error::new_err(s),
            Problem::Other(s) => Error::new_err(format!("{at}: {s}")),
        }
    }
}

/// The error for a policy file that cannot be read: the OS error when opening or reading it
/// failed, [`PolicyError`] when it is not a regular file or too large to be a policy.
pub(crate) fn policy_file(e: &seaccess_security::PolicyError, path: &str) -> PyErr {
    match e {
        seaccess_security::PolicyError::Io { source, .. } => io(source, path),
        e => PolicyError::new_err(e.to_string()),
    }
}

/// The OS error for a file that cannot be read, naming the file (Python's own errors do).
pub(crate) fn io(e: &std::io::Error, path: &str) -> PyErr {
    let msg = format!("{path}: {e}");
    match e.kind() {
        std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
        std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(msg),
        _ => PyOSError::new_err(msg),
    }
}
