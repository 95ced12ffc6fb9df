//! The kernel's initial SID numbers the tables, the labels and the file systems' defaults use
//! (the policy gives each a context; security/selinux/include/initial_sid_to_string.h).

/// SECINITSID_KERNEL.
pub const SECINITSID_KERNEL: u32 = 1;
/// SECINITSID_UNLABELED.
pub const SECINITSID_UNLABELED: u32 = 3;
/// SECINITSID_FILE: inodes with no label.
pub const SECINITSID_FILE: u32 = 5;
/// SECINITSID_PORT: a port no portcon names.
pub const SECINITSID_PORT: u32 = 9;
/// SECINITSID_NODE: an address no nodecon names.
pub const SECINITSID_NODE: u32 = 12;
