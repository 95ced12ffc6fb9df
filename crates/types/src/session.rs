//! The layout of a `seaccess run` session's state page: the file the session's supervisor
//! writes and every process of the session maps read-only, so that a check sees a change of
//! the enforcing mode or of the booleans with a memory read (as a process on an SELinux kernel
//! reads selinuxfs's `status` page, struct selinux_status_t, instead of making a system call).
//!
//! All fields are native-endian `u32`s at fixed offsets, written by one writer (the supervisor)
//! under the kernel's sequence protocol: `sequence` is odd while a change is being written and
//! advances by two for each change; a reader that sees it odd, or different before and after
//! reading, reads again.

/// The kernel's struct selinux_status_t (selinuxfs `status`): version.
pub const VERSION: usize = 0;
/// Odd while the page is being changed; advances at each enforcing switch and policy load.
pub const SEQUENCE: usize = 4;
/// 1 enforcing, 0 permissive.
pub const ENFORCING: usize = 8;
/// The policy load count: the policy seqno, advanced by a load and by a boolean commit.
pub const POLICYLOAD: usize = 12;
/// 1 when the policy denies unknown classes and permissions.
pub const DENY_UNKNOWN: usize = 16;
/// The kernel's status page version this page speaks.
pub const STATUS_VERSION: u32 = 1;

/// seaccess's own fields, after the kernel's: [`MAGIC`].
pub const MAGIC_AT: usize = 64;
/// "SEAS": the page is a seaccess session's.
pub const MAGIC: u32 = 0x5341_4553;
/// How many boolean entries follow at [`BOOLS_AT`].
pub const NBOOLS: usize = 68;
/// Advances at each change of a pending boolean value (which does not advance `sequence`, as
/// in the kernel: a pending value changes nothing until it is committed).
pub const PENDING_SEQ: usize = 72;
/// Advances at each policy load (not at a boolean commit): the processes reload the session's
/// policy file.
pub const POLICY_GEN: usize = 76;
/// 1 when the policy rejects unknown classes and permissions.
pub const REJECT_UNKNOWN: usize = 80;
/// 1 for an MLS policy.
pub const MLS: usize = 84;

/// Where the boolean entries start.
pub const BOOLS_AT: usize = 4096;
/// One boolean entry: the name, NUL-padded, in [`NAME_LEN`] bytes, then the active value and
/// the pending value (one byte each, 0 or 1).
pub const BOOL_SIZE: usize = 128;
/// The longest boolean name an entry holds, its NUL included.
pub const NAME_LEN: usize = 126;

/// The page's size for `n` booleans.
pub fn size(n: usize) -> usize {
    BOOLS_AT + n * BOOL_SIZE
}

/// The state page's file name in the session directory.
pub const STATE_FILE: &str = "state";
/// The per-process cache statistics' file name in the session directory.
pub const STATS_FILE: &str = "avc_stats";
/// The policy image the session's processes load, in the session directory.
pub const POLICY_FILE: &str = "policy";

/// Lines of the statistics file: one per process slot; a slot is 8 `u64`s: the owner's pid (0:
/// free), then lookups, hits, misses, allocations, reclaims, frees, and a spare.
pub const STATS_SLOTS: usize = 512;
/// The bytes of one statistics slot.
pub const STATS_SLOT_SIZE: usize = 64;
/// Slot 0 is the retired line: the figures of processes that have exited, summed.
pub const STATS_RETIRED: usize = 0;
