//! The kernel's own log, as a userspace kernel that keeps one (gVisor's, Starnix's dmesg)
//! serves syslog(2) and /proc/kmsg: selinux_syslog.

use crate::audit::AuditData;
use crate::classes::{system, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

/// The kernel's initial SID, the target of the `system` checks.
const SECINITSID_KERNEL: u32 = 1;

/// syslog(2) actions (include/linux/syslog.h) the kernel checks apart from the others.
pub mod syslog_action {
    pub const CLOSE: i32 = 0;
    pub const OPEN: i32 = 1;
    pub const READ: i32 = 2;
    pub const READ_ALL: i32 = 3;
    pub const READ_CLEAR: i32 = 4;
    pub const CLEAR: i32 = 5;
    pub const CONSOLE_OFF: i32 = 6;
    pub const CONSOLE_ON: i32 = 7;
    pub const CONSOLE_LEVEL: i32 = 8;
    pub const SIZE_UNREAD: i32 = 9;
    pub const SIZE_BUFFER: i32 = 10;
}

impl ObjectManager {
    /// syslog(2) action `action` (selinux_syslog): `system {syslog_read}` to read the whole
    /// log or its size (READ_ALL, SIZE_BUFFER), `{syslog_console}` to change console logging
    /// (CONSOLE_OFF, CONSOLE_ON, CONSOLE_LEVEL), `{syslog_mod}` for any other action (reading
    /// and consuming it, clearing it, opening it, an unknown number), from the task to the
    /// kernel's initial SID, no audit data. (The kernel's /proc/kmsg asks the same, as
    /// syslog(2)'s read with the log opened.)
    pub fn syslog(&self, task: &Task, action: i32) -> Result<()> {
        use syslog_action as a;
        let perm = match action {
            a::READ_ALL | a::SIZE_BUFFER => system::SYSLOG_READ,
            a::CONSOLE_OFF | a::CONSOLE_ON | a::CONSOLE_LEVEL => system::SYSLOG_CONSOLE,
            _ => system::SYSLOG_MOD,
        };
        let kernel = self
            .server()
            .initial_sid(SECINITSID_KERNEL)
            .ok_or_else(|| {
                ObjmgrError::Server(seaccess_types::ServerError::Other(
                    "the policy has no kernel initial SID".into(),
                ))
            })?;
        self.check(
            Hook::Syslog,
            task,
            kernel,
            Class::SYSTEM,
            perm,
            &AuditData::None,
        )
        .map(|_| ())
    }
}
