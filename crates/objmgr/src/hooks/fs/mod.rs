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
use crate::classes::{common_file, dir, fd, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::Result;
use crate::ObjectManager;

/// The VFS's permission mask bits (linux/fs.h).
pub const MAY_EXEC: u32 = 1;
pub const MAY_WRITE: u32 = 2;
pub const MAY_READ: u32 = 4;
pub const MAY_APPEND: u32 = 8;
pub const MAY_ACCESS: u32 = 16;
pub const MAY_OPEN: u32 = 32;

/// Open flags, as the C library's (x86-64 and most architectures).
pub mod oflags {
    pub const O_RDONLY: i32 = 0;
    pub const O_WRONLY: i32 = 1;
    pub const O_RDWR: i32 = 2;
    pub const O_ACCMODE: i32 = 3;
    pub const O_CREAT: i32 = 0o100;
    pub const O_TRUNC: i32 = 0o1000;
    pub const O_APPEND: i32 = 0o2000;
}

/// The kernel's file_mask_to_av: the permissions a VFS mask asks of an inode of `class`
/// (on a directory, exec is search and append is not asked; elsewhere append replaces write).
pub(crate) fn file_mask_to_av(class: Class, mask: u32) -> u32 {
    let mut av = 0;
    if class == Class::DIR {
        if mask & MAY_EXEC != 0 {
            av |= dir::SEARCH;
        }
        if mask & MAY_WRITE != 0 {
            av |= dir::WRITE;
        }
        if mask & MAY_READ != 0 {
            av |= dir::READ;
        }
        return av;
    }
    if mask & MAY_EXEC != 0 {
        av |= common_file::EXECUTE;
    }
    if mask & MAY_READ != 0 {
        av |= common_file::READ;
    }
    if mask & MAY_APPEND != 0 {
        av |= common_file::APPEND;
    } else if mask & MAY_WRITE != 0 {
        av |= common_file::WRITE;
    }
    av
}

/// The kernel's file_to_av from the open flags: read for a readable file; append (with
/// O_APPEND) or write for a writable one; ioctl for one opened with access mode 3.
pub(crate) fn file_to_av(flags: i32) -> u32 {
    let acc = flags & oflags::O_ACCMODE;
    let (read, write) = match acc {
        oflags::O_RDONLY => (true, false),
        oflags::O_WRONLY => (false, true),
        oflags::O_RDWR => (true, true),
        _ => (false, false),
    };
    let mut av = 0;
    if read {
        av |= common_file::READ;
    }
    if write {
        av |= if flags & oflags::O_APPEND != 0 {
            common_file::APPEND
        } else {
            common_file::WRITE
        };
    }
    if av == 0 {
        av = common_file::IOCTL;
    }
    av
}

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
