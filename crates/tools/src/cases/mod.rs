//! Policy unit tests (`seaccess test`): cases read from a TOML file, run against the security
//! server, and reported as text, JSON or JUnit XML.
//!
//! A file holds tables of six kinds, each case with an optional `name` and `with_booleans`
//! (`{ NAME = true, ... }`: evaluated with those values, the other booleans as the policy has
//! them):
//!
//! - `[[allow]]` / `[[deny]]`: `scontext`, `tcontext`, `class`, `perms`: every permission allowed,
//!   or every one denied, by the security server's decision (constraints and bounds included);
//! - `[[create]]` / `[[relabel]]` / `[[member]]`: `scontext`, `tcontext`, `class`, `expect`: the
//!   context compute_create / compute_relabel / compute_member gives; create takes an optional
//!   `object_name` for filename transitions;
//! - `[[neverallow]]`: `source`, `target` (type or attribute names, one or a list; `-NAME` takes
//!   a name's types out, target `self` is each source type itself), `classes`, `perms` (`*` for
//!   all): no source type's allow rules give it any of the permissions on a target type (the
//!   type-level question checkpolicy's neverallow asks, under the booleans' current values).
//!
//! [`read`] needs no policy; [`run`] resolves every name first, so that a file with an unknown
//! class or permission is an error (with its line and the nearest names) before any case runs.

mod junit;
mod names;
mod neverallow;
mod read;
mod run;

pub use junit::junit;
pub use neverallow::Violation;
pub use read::{read, Case, Kind, Query, Spot, Suite};
pub use run::{run, Outcome};
