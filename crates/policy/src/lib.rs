//! A strict reader for compiled SELinux policies: the kernel binary format (magic 0xf97cff8c),
//! versions 24 to 34, MLS and non-MLS.
//!
//! It takes bytes and returns a validated [`Policy`], or an error naming the section and byte
//! offset of the first problem. Every count is checked against the bytes left before anything is
//! allocated, and every symbol index against its table before it is stored, so a hostile file
//! costs at most memory proportional to its size.
//!
//! This crate makes no access decisions: that is the security server's job. Its I/O is
//! [`read_file`], the bounded reader every program uses to read a policy from a path, and
//! [`installed`], which finds the policy this machine would load. It must
//! never depend on any seaccess crate but `types`.

#![forbid(unsafe_code)]

mod ebitmap;
mod error;
mod file;
pub mod installed;
mod model;
mod read;
mod reader;
mod rules;
mod validate;

pub mod suggest;

pub use ebitmap::Ebitmap;
pub use error::{PolicyError, Result, Section};
pub use file::{read_file, MAX_POLICY_FILE};
pub use model::*;
pub use read::{
    read_policy, section_starts, sort_avtab, sort_by_source_class_target, version, MAGIC,
    MAX_INITIAL_SID, VERSION_MAX, VERSION_MIN,
};
pub use rules::*;
pub use validate::{level_dom, range_contains, OBJECT_R};
