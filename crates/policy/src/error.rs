use std::fmt;

/// The part of a policy file being read when something went wrong.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Section {
    Header,
    PolicyCapabilities,
    PermissiveTypes,
    Commons,
    Classes,
    Roles,
    Types,
    Users,
    Booleans,
    Sensitivities,
    Categories,
    AccessVectorTable,
    Conditionals,
    RoleTransitions,
    RoleAllows,
    FilenameTransitions,
    ObjectContexts,
    Genfs,
    RangeTransitions,
    TypeAttributeMap,
    Trailer,
    /// The file itself, before any of its bytes are read as a policy (see [`crate::read_file`]).
    File,
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Section::Header => "header",
            Section::PolicyCapabilities => "policy capabilities",
            Section::PermissiveTypes => "permissive types",
            Section::Commons => "commons",
            Section::Classes => "classes",
            Section::Roles => "roles",
            Section::Types => "types",
            Section::Users => "users",
            Section::Booleans => "booleans",
            Section::Sensitivities => "sensitivities",
            Section::Categories => "categories",
            Section::AccessVectorTable => "access vector table",
            Section::Conditionals => "conditional rules",
            Section::RoleTransitions => "role transitions",
            Section::RoleAllows => "role allows",
            Section::FilenameTransitions => "filename transitions",
            Section::ObjectContexts => "object contexts",
            Section::Genfs => "genfs contexts",
            Section::RangeTransitions => "range transitions",
            Section::TypeAttributeMap => "type attribute map",
            Section::Trailer => "end of policy",
            Section::File => "file",
        };
        f.write_str(s)
    }
}

/// Why a policy file could not be read. Every variant says where: the section and the byte
/// offset from the start of the file, or the file's path when the file itself is the problem.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    #[error("{section}, byte {offset}: truncated: {need} bytes needed, {left} left")]
    Truncated {
        section: Section,
        offset: usize,
        need: usize,
        left: usize,
    },
    #[error("{section}, byte {offset}: {what}")]
    Invalid {
        section: Section,
        offset: usize,
        what: String,
    },
    #[error("header, byte {offset}: policy version {version} is not supported (supported: {min} to {max})")]
    UnsupportedVersion {
        offset: usize,
        version: u32,
        min: u32,
        max: u32,
    },
    /// The policy file could not be opened or read.
    #[error("{}: {source}", path.display())]
    Io {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
    /// The policy path names a directory, FIFO, device or socket: a policy is a regular file.
    #[error("{}: not a regular file but a {kind}: a policy is read from a regular file", path.display())]
    NotRegularFile {
        path: std::path::PathBuf,
        kind: &'static str,
    },
    /// The policy file is larger than [`crate::MAX_POLICY_FILE`] (or grew past it while read).
    #[error("{}: {size} bytes or more, larger than a policy may be ({max} bytes at most)", path.display())]
    TooLarge {
        path: std::path::PathBuf,
        size: u64,
        max: u64,
    },
}

impl PolicyError {
    /// The part of the file in which the problem was found.
    pub fn section(&self) -> Section {
        match self {
            PolicyError::Truncated { section, .. } | PolicyError::Invalid { section, .. } => {
                *section
            }
            PolicyError::UnsupportedVersion { .. } => Section::Header,
            PolicyError::Io { .. }
            | PolicyError::NotRegularFile { .. }
            | PolicyError::TooLarge { .. } => Section::File,
        }
    }

    /// The byte offset at which the problem was found (0 for the file's own problems, the
    /// bound for one too large).
    pub fn offset(&self) -> usize {
        match self {
            PolicyError::Truncated { offset, .. }
            | PolicyError::Invalid { offset, .. }
            | PolicyError::UnsupportedVersion { offset, .. } => *offset,
            PolicyError::Io { .. } | PolicyError::NotRegularFile { .. } => 0,
            PolicyError::TooLarge { max, .. } => usize::try_from(*max).unwrap_or(usize::MAX),
        }
    }
}

pub type Result<T> = std::result::Result<T, PolicyError>;
