//! Attributes beside the mode and owner: POSIX ACLs and the file_getattr/file_setattr flags
//! (chattr, the fsxattr project and extent size). Each is one `{getattr}` or `{setattr}` on
//! the inode through dentry_has_perm, with DENTRY audit data.

use crate::blobs::InodeSec;
use crate::classes::common_file;
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::Result;
use crate::ObjectManager;

use super::dentry;

impl ObjectManager {
    /// Setting a POSIX ACL (`system.posix_acl_access` or `_default`) on `inode`, entry `name`
    /// (selinux_inode_set_acl): `{setattr}`.
    pub fn inode_set_acl(&self, task: &Task, inode: &InodeSec, name: &str) -> Result<()> {
        self.check(
            Hook::InodeSetAcl,
            task,
            inode.sid(),
            inode.class(),
            common_file::SETATTR,
            &dentry(inode, name),
        )
        .map(|_| ())
    }

    /// Reading a POSIX ACL (selinux_inode_get_acl): `{getattr}`.
    pub fn inode_get_acl(&self, task: &Task, inode: &InodeSec, name: &str) -> Result<()> {
        self.check(
            Hook::InodeGetAcl,
            task,
            inode.sid(),
            inode.class(),
            common_file::GETATTR,
            &dentry(inode, name),
        )
        .map(|_| ())
    }

    /// Removing a POSIX ACL (selinux_inode_remove_acl): `{setattr}`.
    pub fn inode_remove_acl(&self, task: &Task, inode: &InodeSec, name: &str) -> Result<()> {
        self.check(
            Hook::InodeRemoveAcl,
            task,
            inode.sid(),
            inode.class(),
            common_file::SETATTR,
            &dentry(inode, name),
        )
        .map(|_| ())
    }

    /// Reading the inode flags and fsxattr (FS_IOC_FSGETXATTR, file_getattr(2))
    /// (selinux_inode_file_getattr): `{getattr}`.
    pub fn inode_file_getattr(&self, task: &Task, inode: &InodeSec, name: &str) -> Result<()> {
        self.check(
            Hook::InodeFileGetattr,
            task,
            inode.sid(),
            inode.class(),
            common_file::GETATTR,
            &dentry(inode, name),
        )
        .map(|_| ())
    }

    /// Changing them (FS_IOC_FSSETXATTR, file_setattr(2)) (selinux_inode_file_setattr):
    /// `{setattr}`.
    pub fn inode_file_setattr(&self, task: &Task, inode: &InodeSec, name: &str) -> Result<()> {
        self.check(
            Hook::InodeFileSetattr,
            task,
            inode.sid(),
            inode.class(),
            common_file::SETATTR,
            &dentry(inode, name),
        )
        .map(|_| ())
    }
}
