use seaccess_types::Sid;

/// Why the security server could not answer.
#[derive(Debug, thiserror::Error, Clone)]
#[non_exhaustive]
pub enum SecurityError {
    #[error("invalid context \"{context}\": {reason}")]
    InvalidContext { context: String, reason: String },
    #[error("unknown class \"{0}\"")]
    UnknownClass(String),
    #[error("class {class} has no permission \"{perm}\"")]
    UnknownPermission { class: String, perm: String },
    #[error("class number {0} is not in the policy")]
    InvalidClass(u32),
    #[error("SID {0} is not in the SID table")]
    InvalidSid(Sid),
    #[error("computed context {0} is not valid in the policy")]
    InvalidComputedContext(String),
    #[error("unknown boolean \"{0}\"")]
    UnknownBoolean(String),
    #[error("transition from {old} to {new} by {task} on class {class} denied by validatetrans")]
    TransitionDenied { old: String, new: String, task: String, class: String },
    #[error("the policy defines class {0}, which this object manager requires, differently: {1}")]
    Mapping(String, String),
    #[error(transparent)]
    Policy(#[from] std::sync::Arc<seaccess_policy::PolicyError>),
}

pub type Result<T> = std::result::Result<T, SecurityError>;
