//! `seaccess enforce`: the SELinux policy enforced by the Linux kernel through the BPF LSM, on
//! kernels without SELinux. A BPF object (`bpf/`) on the LSM hooks keeps task labels in task
//! storage and file labels in inode storage, and decides from maps keyed by (source SID,
//! target SID, class) that this crate fills from the engine before any task can meet a SID;
//! a reload builds the next generation of maps and switches in one store.
//!
//! This crate must never be below the engine: it is a front end like the mount or the C
//! library, and asks the policy only through `seaccess_engine`.
//!
//! unsafe_code is denied, not forbidden: the one 64-bit store that switches generations goes
//! through a shared mapping of the `current` map (bpf.rs, each block with its SAFETY).
#![deny(unsafe_code)]

pub mod bpf;
pub mod control;
pub mod daemon;
mod error;
pub mod event;
pub mod filesystems;
mod initial;
pub mod label;
pub mod layout;
pub mod tables;
mod trees;

pub use error::{EnforceError, Result};
