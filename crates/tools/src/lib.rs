//! The policy tools' core: what `seaccess explain`, `allow`, `search` and `test` share and
//! the command line only presents. Today: the audit record reader ([`audit`]), which turns a
//! kernel log or an audit.log into the AVC records it holds, each with its line, or an error
//! naming the line. It reads text only: it never depends on the security server, the cache or
//! the object manager, so that it can be fuzzed alone and used by any front end.

pub mod audit;
mod error;

pub use error::ToolsError;
