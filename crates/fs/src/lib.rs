//! `seaccess mount`: SELinux enforced on a real directory tree for real processes, as a FUSE
//! passthrough. Each request becomes the hooks the kernel's SELinux module runs for the system
//! call behind it ([`seaccess_objmgr`]'s, which ask the cache), then the system call on the
//! backing tree; a refusal returns the kernel's errno and writes the kernel's AVC record.
//!
//! [`core`] knows nothing of FUSE; [`fuse`] is the adapter, a few lines per request, and the
//! only module that names the `fuser` crate. [`backing`] holds every system call on the
//! backing tree, all on descriptors. Errors become errno values in one place
//! ([`FsError::errno`]). This crate must never decide an access itself: every decision is a
//! hook's.

#[allow(unsafe_code)] // the system calls std has no wrapper for (openat2, *at, handles)
pub mod backing;
pub mod budget;
pub mod callers;
pub mod connector;
pub mod core;
mod error;
pub mod fuse;
pub mod hot;
#[allow(unsafe_code)] // fcntl record locks on the backing file
pub mod locks;
pub mod nodes;
pub mod published;
pub mod request;
/// The subjects file (shared with libseaccess's getcon): see [`seaccess_subjects`].
pub use seaccess_subjects as subjects;
pub mod who;

pub use crate::core::{Core, Options, Req};
pub use error::{FsError, Result};

/// The poison-tolerant RwLock guards, under the names this crate's modules use.
pub(crate) use seaccess_types::lock::{read as lock_read, write as lock_write};

#[cfg(test)]
mod tests;
