//! The policy tools' core: what `seaccess explain`, `allow`, `search` and `test` compute and
//! the command line only presents, so that the C library, the Python bindings and any other front
//! end give the same answers. It never depends on the cache or the object manager: a tool asks
//! the security server (or, for rule searches, reads the policy's rules) and nothing else.
//!
//! - [`audit`]: a kernel log or an audit.log read into the AVC records it holds, each with its
//!   line, or an error naming the line (text only, so it fuzzes alone);
//! - [`explain`]: audit2why's verdict for a denial;
//! - [`allow`]: audit2allow's module of allow rules for a log's denials;
//! - [`search`]: sesearch's rule queries;
//! - [`diff`]: what a policy update changes: rules, symbols, decisions, a log's accesses;
//! - [`cases`]: policy unit tests read from TOML and run;
//! - [`suggest`]: the nearest names a policy has, for errors that name one it does not.

#![forbid(unsafe_code)]

pub mod allow;
pub mod audit;
pub mod cases;
pub mod diff;
mod error;
pub mod explain;
mod rule;
pub mod search;

/// The nearest names a policy has, for errors that name one it does not (the policy crate's).
pub use seaccess_policy::suggest;

pub use error::ToolsError;
