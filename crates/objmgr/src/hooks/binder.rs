//! Binder hooks (hooks.c, selinux_binder_*): a userspace binder driver (as Starnix has) asks
//! these with the credentials of the processes at each end of a transaction.

use crate::audit::AuditData;
use crate::blobs::{FileSec, InodeSec};
use crate::classes::{binder, Class};
use crate::counters::Hook;
use crate::cred::{Cred, Task};
use crate::error::Result;
use crate::vfs::file_to_av;
use crate::ObjectManager;

impl ObjectManager {
    /// `task` becoming the context manager for `mgr` (selinux_binder_set_context_mgr):
    /// `binder {set_context_mgr}` from the task's SID to the manager credential's.
    pub fn binder_set_context_mgr(&self, task: &Task, mgr: &Cred) -> Result<()> {
        self.check(
            Hook::BinderSetContextMgr,
            task,
            mgr.sid(),
            Class::BINDER,
            binder::SET_CONTEXT_MGR,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// A transaction from `from` to `to` (selinux_binder_transaction): when the caller `task`
    /// is not the sender, `binder {impersonate}` from the task to the sender; then `binder
    /// {call}` from the sender to the receiver.
    pub fn binder_transaction(&self, task: &Task, from: &Cred, to: &Cred) -> Result<()> {
        let hook = Hook::BinderTransaction;
        if task.sid() != from.sid() {
            self.check(
                hook,
                task,
                from.sid(),
                Class::BINDER,
                binder::IMPERSONATE,
                &AuditData::None,
            )?;
        }
        self.check_sid(
            hook,
            task,
            from.sid(),
            to.sid(),
            Class::BINDER,
            binder::CALL,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// A binder reference passed from `from` to `to` (selinux_binder_transfer_binder):
    /// `binder {transfer}` from the sender to the receiver.
    pub fn binder_transfer_binder(&self, task: &Task, from: &Cred, to: &Cred) -> Result<()> {
        self.check_sid(
            Hook::BinderTransferBinder,
            task,
            from.sid(),
            to.sid(),
            Class::BINDER,
            binder::TRANSFER,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// An open file (`file` on `inode`, reached as `path`) passed to `to`
    /// (selinux_binder_transfer_file): `fd {use}` from the receiver to the file's opener when
    /// they differ, then the permissions the file was opened for (file_to_av: read, write or
    /// append, or ioctl) from the receiver to the inode, both audited with the file's path.
    /// The kernel's other cases have no object here: a BPF map or program passed as a file
    /// (bpf_fd_pass) and a kernel-private inode, which it passes after the fd check.
    pub fn binder_transfer_file(
        &self,
        task: &Task,
        from: &Cred,
        to: &Cred,
        file: &FileSec,
        inode: &InodeSec,
        path: &str,
    ) -> Result<()> {
        let _ = from;
        let hook = Hook::BinderTransferFile;
        let sid = to.sid();
        let ad = AuditData::Path {
            path,
            dev: &inode.sb.dev,
            ino: inode.ino,
        };
        self.file_has_perm_as(
            hook,
            task,
            sid,
            file,
            inode,
            inode.sid(),
            file_to_av(file.flags),
            &ad,
        )
    }
}
