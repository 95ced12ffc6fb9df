//! The lab: benchmarks that run seaccess side by side with the designs the kernel went through,
//! in one process, on one machine, and report ratios. Nothing here is on a production path, and
//! nothing here is a timed test.

#![forbid(unsafe_code)]

pub mod avc_bench;
pub mod chatroom;
pub mod chatroom_peer;
pub mod designs;
mod error;
pub mod file_service;
pub mod hackbench;
pub mod hit_path;
pub mod mediate;
pub mod objmgr_bench;
pub mod runs;
pub mod stats;

pub use avc_bench::XorShift;
pub use error::LabError;
