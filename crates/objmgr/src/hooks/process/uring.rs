//! io_uring, for a userspace kernel that implements it: setting a ring up, its polling
//! thread, requests run with another registered credential (a personality), and commands
//! passed to a file's driver: the kernel's selinux_uring_allowed, _sqpoll, _override_creds and
//! _cmd.

use crate::audit::AuditData;
use crate::blobs::InodeSec;
use crate::classes::{io_uring, Class};
use crate::counters::Hook;
use crate::cred::{Cred, Task};
use crate::error::Result;
use crate::ObjectManager;

impl ObjectManager {
    /// io_uring_setup(2) (selinux_uring_allowed): `io_uring {allowed}` from the task to
    /// itself.
    pub fn uring_allowed(&self, task: &Task) -> Result<()> {
        let sid = task.sid();
        self.check(
            Hook::UringAllowed,
            task,
            sid,
            Class::IO_URING,
            io_uring::ALLOWED,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// A ring set up with a kernel polling thread (IORING_SETUP_SQPOLL) (selinux_uring_sqpoll):
    /// `io_uring {sqpoll}` from the task to itself.
    pub fn uring_sqpoll(&self, task: &Task) -> Result<()> {
        let sid = task.sid();
        self.check(
            Hook::UringSqpoll,
            task,
            sid,
            Class::IO_URING,
            io_uring::SQPOLL,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// A request run with the registered credential `new` (a personality) in place of the
    /// task's (selinux_uring_override_creds): `io_uring {override_creds}` from the task to
    /// `new`'s SID. Then run it under [`Task::override_creds`].
    pub fn uring_override_creds(&self, task: &Task, new: &Cred) -> Result<()> {
        self.check(
            Hook::UringOverrideCreds,
            task,
            new.sid(),
            Class::IO_URING,
            io_uring::OVERRIDE_CREDS,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// IORING_OP_URING_CMD on the open file `inode` at `path` (selinux_uring_cmd):
    /// `io_uring {cmd}` from the task to the inode's SID, with the file's `path= dev= ino=`.
    pub fn uring_cmd(&self, task: &Task, inode: &InodeSec, path: &str) -> Result<()> {
        let ad = AuditData::Path {
            path,
            dev: &inode.sb.dev,
            ino: inode.ino,
        };
        self.check(
            Hook::UringCmd,
            task,
            inode.sid(),
            Class::IO_URING,
            io_uring::CMD,
            &ad,
        )
        .map(|_| ())
    }
}
