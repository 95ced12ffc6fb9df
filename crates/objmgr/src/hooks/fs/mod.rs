//! File and directory hooks: path walk, getattr, open, read and write, ioctl, create, link,
//! unlink, rename, setattr, extended attributes and relabeling, statfs; and the labeling of
//! inodes and filesystems.
//!
//! Each hook asks what the kernel's SELinux hook of the same name asks (hooks.c, cited in each
//! comment) and nothing else: the discretionary checks (owner, mode bits, capabilities) that the
//! VFS makes before calling the kernel's hook are the caller's job, as is the order of the
//! calls a system call makes (for `open(2)`: [`ObjectManager::path_walk`], then
//! [`ObjectManager::inode_permission`] with the access mode, then
//! [`ObjectManager::file_open`]).

mod acl;
mod fcntl;
mod file;
mod label;
mod mmap;
mod mntopts;
mod mount;
mod names;
mod notify;
mod secctx;
mod walk;
mod xattr;

pub use crate::walkmemo::WalkMemo;
pub use fcntl::fcntl_cmds;
pub use file::ioctls;
pub use label::MountOpts;
pub use mmap::{mman, MappedFile, Vma, VmaKind, LSM_MMAP_MIN_ADDR};
pub use mntopts::MntOpts;
pub use mount::{quota_cmds, MS_REMOUNT};
pub use notify::{fsnotify, WatchObject};
pub use walk::WalkDirs;
pub use xattr::{attr, XATTR_NAME_SELINUX};

use seaccess_types::Sid;

use crate::audit::AuditData;
use crate::blobs::{FileSec, InodeSec};
use crate::classes::{fd, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::Result;
use crate::ObjectManager;

pub(crate) use crate::vfs::{file_mask_to_av, file_to_av};
/// The VFS's mask bits and open flags, defined below the hooks (the blobs use them too).
pub use crate::vfs::{oflags, MAY_ACCESS, MAY_APPEND, MAY_EXEC, MAY_OPEN, MAY_READ, MAY_WRITE};

/// DENTRY audit data for an existing entry `name` of `inode`.
pub(crate) fn dentry<'a>(inode: &'a InodeSec, name: &'a str) -> AuditData<'a> {
    AuditData::Dentry {
        name,
        inode: Some((&inode.sb.dev, inode.ino)),
    }
}

/// PATH / FILE audit data.
pub(crate) fn path<'a>(inode: &'a InodeSec, path: &'a str) -> AuditData<'a> {
    AuditData::Path {
        path,
        dev: &inode.sb.dev,
        ino: inode.ino,
    }
}

impl ObjectManager {
    /// The kernel's file_has_perm: `fd {use}` when the task is not the opener, then `av` on
    /// the inode (labelled `isid`) unless it is empty, both with FILE audit data.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn file_has_perm(
        &self,
        hook: Hook,
        task: &Task,
        file: &FileSec,
        inode: &InodeSec,
        isid: Sid,
        av: u32,
        p: &str,
    ) -> Result<()> {
        self.file_has_perm_as(
            hook,
            task,
            task.sid(),
            file,
            inode,
            isid,
            av,
            &path(inode, p),
        )
    }

    /// The kernel's __file_has_perm with the credential's SID `ssid` (the task's own, a binder
    /// receiver's, an exec's new one): `fd {use}` from it when it is not the opener's, then `av`
    /// on the inode (labelled `isid`) unless it is empty, both audited with `ad`; `task` is
    /// named in the records.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn file_has_perm_as(
        &self,
        hook: Hook,
        task: &Task,
        ssid: Sid,
        file: &FileSec,
        inode: &InodeSec,
        isid: Sid,
        av: u32,
        ad: &AuditData,
    ) -> Result<()> {
        if ssid != file.sid {
            self.check_sid(hook, task, ssid, file.sid, Class::FD, fd::USE, ad)?;
        }
        if av != 0 {
            self.check_sid(hook, task, ssid, isid, inode.class(), av, ad)?;
        }
        Ok(())
    }
}
