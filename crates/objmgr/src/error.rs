//! The object manager's one error type, and the one place errors become errno values.

use seaccess_types::ServerError;

/// Why a hook refused an operation or could not decide.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ObjmgrError {
    /// The policy denies the operation (and the denial is enforced). `what` names the class
    /// and permissions, as the audit record does.
    #[error("permission denied: {what}")]
    Denied { what: String },
    /// The security server could not answer (an unknown SID, a broken class); the operation is
    /// refused.
    #[error("security server: {0}")]
    Server(#[from] ServerError),
    /// A class number outside the object manager's table.
    #[error("class number {0} is not in the object manager's class table")]
    UnknownClass(u16),
    /// The loaded policy cannot be enforced with the object manager's classes (it lacks one and
    /// rejects unknown classes or permissions): every check fails closed.
    #[error("the policy is refused: {0}")]
    Rejected(String),
    /// A context given by a client (a `security.selinux` value, a requested exec context) that
    /// the policy does not accept.
    #[error("invalid context {context:?}: {why}")]
    InvalidContext { context: String, why: String },
    /// The kernel's hook refuses with EPERM rather than EACCES (a validatetrans constraint, an
    /// ownership rule, exec under no_new_privs, a shared or traced exec's transition).
    #[error("operation not permitted: {0}")]
    NotPermitted(String),
    /// The filesystem cannot do it (no per-file labels: EOPNOTSUPP).
    #[error("not supported: {0}")]
    NotSupported(String),
    /// The socket has no such option (a peer label the socket's class does not keep, or
    /// none yet): the kernel's ENOPROTOOPT.
    #[error("no such protocol option: {0}")]
    NoProtocolOption(String),
    /// An argument the hook cannot use (said in words).
    #[error("invalid argument: {0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, ObjmgrError>;

/// Kernel errno values the hooks return.
pub mod errno {
    pub const EPERM: i32 = 1;
    pub const EACCES: i32 = 13;
    pub const EINVAL: i32 = 22;
    pub const EOPNOTSUPP: i32 = 95;
    pub const ENOPROTOOPT: i32 = 92;
}

impl ObjmgrError {
    /// The errno a kernel hook returns for this error: EACCES for a denial (EPERM where the
    /// kernel's hook says so is the hook's own choice), EINVAL for a bad argument or context.
    pub fn errno(&self) -> i32 {
        match self {
            ObjmgrError::Denied { .. } | ObjmgrError::Rejected(_) => errno::EACCES,
            ObjmgrError::NoProtocolOption(_) => errno::ENOPROTOOPT,
            ObjmgrError::Server(ServerError::InvalidSid(_)) => errno::EINVAL,
            ObjmgrError::Server(_) => errno::EACCES,
            ObjmgrError::NotPermitted(_) => errno::EPERM,
            ObjmgrError::NotSupported(_) => errno::EOPNOTSUPP,
            ObjmgrError::UnknownClass(_)
            | ObjmgrError::InvalidContext { .. }
            | ObjmgrError::Invalid(_) => errno::EINVAL,
        }
    }
}
