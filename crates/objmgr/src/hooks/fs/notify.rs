//! Watches: inotify, fanotify and dnotify marks on an inode, a mount or a whole filesystem
//! (selinux_path_notify).

use crate::blobs::InodeSec;
use crate::classes::{common_file, filesystem, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

use super::path;

/// The event bits of a watch's mask that change what it asks (linux/fsnotify_backend.h; the
/// FAN_* and IN_* values are the same bits).
pub mod fsnotify {
    pub const FS_ACCESS: u64 = 0x0000_0001;
    pub const FS_MODIFY: u64 = 0x0000_0002;
    pub const FS_CLOSE_NOWRITE: u64 = 0x0000_0010;
    pub const FS_OPEN: u64 = 0x0000_0020;
    pub const FS_OPEN_PERM: u64 = 0x0001_0000;
    pub const FS_ACCESS_PERM: u64 = 0x0002_0000;
    pub const FS_OPEN_EXEC_PERM: u64 = 0x0004_0000;
    pub const FS_PRE_ACCESS: u64 = 0x0010_0000;
    /// Events whose listener decides whether the operation goes on (ALL_FSNOTIFY_PERM_EVENTS:
    /// the content permission events and the pre-content one).
    pub const ALL_FSNOTIFY_PERM_EVENTS: u64 =
        FS_OPEN_PERM | FS_ACCESS_PERM | FS_OPEN_EXEC_PERM | FS_PRE_ACCESS;
}

/// What a watch is set on (the kernel's fsnotify_obj_type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchObject {
    /// The inode itself (FSNOTIFY_OBJ_TYPE_INODE): `watch`.
    Inode,
    /// The mount the path is on (FSNOTIFY_OBJ_TYPE_VFSMOUNT): `watch_mount`.
    Mount,
    /// The whole filesystem (FSNOTIFY_OBJ_TYPE_SB): `filesystem {watch}`, then `watch_sb`.
    Filesystem,
    /// A mount namespace (FSNOTIFY_OBJ_TYPE_MNTNS), whose permission, `watch_mountns`, the
    /// object manager's file classes do not have: refused as not supported.
    MountNamespace,
}

impl ObjectManager {
    /// A watch with event mask `mask` set on `obj` through `inode` at path `p`
    /// (selinux_path_notify): `watch`, `watch_mount` or `watch_sb` by the kind of object
    /// (`filesystem {watch}` on the filesystem first for a whole filesystem), with
    /// `watch_with_perm` when the mask holds a permission event and `watch_reads` when it
    /// holds a read-like event (access, access or pre-access permission, close without
    /// writing), in one check on the inode; PATH audit data for both checks.
    pub fn path_notify(
        &self,
        task: &Task,
        inode: &InodeSec,
        p: &str,
        mask: u64,
        obj: WatchObject,
    ) -> Result<()> {
        use fsnotify::*;
        let ad = path(inode, p);
        let mut perm = match obj {
            WatchObject::Inode => common_file::WATCH,
            WatchObject::Mount => common_file::WATCH_MOUNT,
            WatchObject::Filesystem => {
                self.check(
                    Hook::PathNotify,
                    task,
                    inode.sb.sid,
                    Class::FILESYSTEM,
                    filesystem::WATCH,
                    &ad,
                )?;
                common_file::WATCH_SB
            }
            WatchObject::MountNamespace => {
                return Err(ObjmgrError::NotSupported("a mount namespace watch asks file {watch_mountns}, which the object manager's classes lack".into()));
            }
        };
        if mask & ALL_FSNOTIFY_PERM_EVENTS != 0 {
            perm |= common_file::WATCH_WITH_PERM;
        }
        if mask & (FS_ACCESS | FS_ACCESS_PERM | FS_PRE_ACCESS | FS_CLOSE_NOWRITE) != 0 {
            perm |= common_file::WATCH_READS;
        }
        self.check(
            Hook::PathNotify,
            task,
            inode.sid(),
            inode.class(),
            perm,
            &ad,
        )
        .map(|_| ())
    }
}
