//! The seaccess security server: contexts, SIDs and access decisions on a loaded policy, with
//! the answers the Linux kernel's security server gives.
//!
//! A [`SecurityServer`] holds an immutable policy generation that many threads share; a load or a
//! boolean commit publishes a whole new generation atomically, with the next seqno. Queries take
//! SIDs, class numbers and permission bits, and answer in the same terms (see `seaccess-types`).
//!
//! A process that forks while other threads use a server holds [`SecurityServer::fork_guard`]
//! across the fork (from `pthread_atfork` handlers), so that its child inherits no held lock.
//!
//! # One generation
//!
//! A name, number or SID resolved under one policy generation is never used for an answer, a
//! label or an audit record of another: a reload may renumber every class and permission and
//! invalidate contexts. So the server itself takes no class or permission number: resolve and
//! ask through one [`Generation`] ([`SecurityServer::snapshot`]), whose answers are all of its
//! policy. Through the cache's seam ([`seaccess_types::AccessServer`]) numbers come only from
//! `names()`, one generation's [`seaccess_types::PolicyNames`] with its seqno, and a decision
//! (which carries its seqno) answers a request only if the seqnos agree. A
//! [`Generation::map_classes`] map is answered only by generations of the policy load it was
//! made from.
//!
//! This crate reads policies through `seaccess-policy` and must never depend on the cache, the
//! object manager or any interface crate.

#![forbid(unsafe_code)]

mod av;
mod bool_values;
mod booleans;
mod bounds;
mod compiled;
mod cond;
mod constraint;
mod context;
mod error;
mod explain;
mod generation;
mod listeners;
mod mapping;
mod mls;
mod ocontext;
mod policycaps;
mod seam;
mod server;
mod sidtab;
mod sockets;
mod transition;
mod type_access;
mod users;
mod validatetrans;
mod xperms;

pub use context::{context_to_string, parse_context, range_to_string};
pub use error::{Result, SecurityError};
pub use explain::{DenialReason, Explanation};
pub use generation::Generation;
pub use mapping::ClassMap;
pub use seaccess_policy::FsUseBehavior;
/// The bounded reader of a policy file (a regular file of at most [`MAX_POLICY_FILE`] bytes) and
/// the policy reader's error (which [`SecurityError::Policy`] carries),
/// for the crates that read a policy from a path without depending on the policy crate.
pub use seaccess_policy::{read_file as read_policy_file, PolicyError, MAX_POLICY_FILE};
pub use server::{ForkGuard, SecurityServer};
pub use sidtab::{SidTable, INITIAL_SID_NAMES};
pub use sockets::{is_kernel_socket_class, KERNEL_SOCKET_CLASSES};
pub use xperms::XpermKind;
