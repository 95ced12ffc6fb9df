use seaccess_types::Sid;

/// Why the security server could not answer.
#[derive(Debug, thiserror::Error, Clone)]
#[non_exhaustive]
pub enum SecurityError {
    #[error("invalid context \"{context}\": {reason}")]
    InvalidContext { context: String, reason: String },
    /// The name, and "; did you mean ...?" naming the policy's nearest (or nothing).
    #[error("unknown class \"{0}\"{1}")]
    UnknownClass(String, String),
    #[error("class {class} has no permission \"{perm}\"{near}")]
    UnknownPermission {
        class: String,
        perm: String,
        near: String,
    },
    #[error("class number {0} is not in the policy")]
    InvalidClass(u32),
    #[error("SID {0} is not in the SID table")]
    InvalidSid(Sid),
    #[error("computed context {0} is not valid in the policy")]
    InvalidComputedContext(String),
    /// The name, and "; did you mean ...?" naming the policy's nearest (or nothing).
    #[error("unknown boolean \"{0}\"{1}")]
    UnknownBoolean(String, String),
    #[error("transition from {old} to {new} by {task} on class {class} denied by validatetrans")]
    TransitionDenied {
        old: String,
        new: String,
        task: String,
        class: String,
    },
    #[error("the policy defines class {0}, which this object manager requires, differently: {1}")]
    Mapping(String, String),
    #[error(transparent)]
    Policy(#[from] std::sync::Arc<seaccess_policy::PolicyError>),
}

pub type Result<T> = std::result::Result<T, SecurityError>;
