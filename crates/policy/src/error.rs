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
        };
        f.write_str(s)
    }
}

/// Why a policy file could not be read. Every variant says where: the section and the byte
/// offset from the start of the file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    #[error("{section}, byte {offset}: truncated: {need} bytes needed, {left} left")]
    Truncated { section: Section, offset: usize, need: usize, left: usize },
    #[error("{section}, byte {offset}: {what}")]
    Invalid { section: Section, offset: usize, what: String },
    #[error("header, byte {offset}: policy version {version} is not supported (supported: {min} to {max})")]
    UnsupportedVersion { offset: usize, version: u32, min: u32, max: u32 },
}

impl PolicyError {
    /// The part of the file in which the problem was found.
    pub fn section(&self) -> Section {
        match self {
            PolicyError::Truncated { section, .. } | PolicyError::Invalid { section, .. } => *section,
            PolicyError::UnsupportedVersion { .. } => Section::Header,
        }
    }

    /// The byte offset at which the problem was found.
    pub fn offset(&self) -> usize {
        match self {
            PolicyError::Truncated { offset, .. }
            | PolicyError::Invalid { offset, .. }
            | PolicyError::UnsupportedVersion { offset, .. } => *offset,
        }
    }
}

pub type Result<T> = std::result::Result<T, PolicyError>;
