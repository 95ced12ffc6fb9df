//! Mounts and quotas: mount(2) and its remount, bind and move forms, the new mount API's
//! move_mount(2), umount(2), a filesystem instance's mount, quotactl(2) and quotaon.

use crate::audit::AuditData;
use crate::blobs::{InodeSec, SuperSec};
use crate::classes::{common_file, filesystem, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::Result;
use crate::ObjectManager;

use super::{dentry, path};

/// mount(2)'s remount flag (linux/mount.h).
pub const MS_REMOUNT: u64 = 32;

/// The quotactl(2) subcommands selinux_quotactl tells apart (linux/quota.h and dqblk_xfs.h);
/// any other asks nothing.
pub mod quota_cmds {
    pub const Q_SYNC: u32 = 0x80_0001;
    pub const Q_QUOTAON: u32 = 0x80_0002;
    pub const Q_QUOTAOFF: u32 = 0x80_0003;
    pub const Q_GETFMT: u32 = 0x80_0004;
    pub const Q_GETINFO: u32 = 0x80_0005;
    pub const Q_SETINFO: u32 = 0x80_0006;
    pub const Q_GETQUOTA: u32 = 0x80_0007;
    pub const Q_SETQUOTA: u32 = 0x80_0008;
    pub const Q_GETNEXTQUOTA: u32 = 0x80_0009;
    pub const Q_XQUOTAON: u32 = 0x5801;
    pub const Q_XQUOTAOFF: u32 = 0x5802;
    pub const Q_XGETQUOTA: u32 = 0x5803;
    pub const Q_XSETQLIM: u32 = 0x5804;
    pub const Q_XGETQSTAT: u32 = 0x5805;
    pub const Q_XQUOTARM: u32 = 0x5806;
    pub const Q_XQUOTASYNC: u32 = 0x5807;
    pub const Q_XGETQSTATV: u32 = 0x5808;
    pub const Q_XGETNEXTQUOTA: u32 = 0x5809;
}

impl ObjectManager {
    /// mount(2) on the path `p` whose inode is `target`, with mount flags `flags`
    /// (selinux_mount): a remount asks `filesystem {remount}` of the filesystem mounted
    /// there (no audit data); every other mount (a new filesystem, a bind, a move, a change of
    /// propagation) asks `{mounton}` of the mount point (PATH audit data). The new
    /// filesystem's own `filesystem {mount}` is [`ObjectManager::sb_kern_mount`]'s.
    pub fn sb_mount(&self, task: &Task, target: &InodeSec, p: &str, flags: u64) -> Result<()> {
        if flags & MS_REMOUNT != 0 {
            return self
                .check(
                    Hook::SbMount,
                    task,
                    target.sb.sid,
                    Class::FILESYSTEM,
                    filesystem::REMOUNT,
                    &AuditData::None,
                )
                .map(|_| ());
        }
        self.check(
            Hook::SbMount,
            task,
            target.sid(),
            target.class(),
            common_file::MOUNTON,
            &path(target, p),
        )
        .map(|_| ())
    }

    /// move_mount(2) of a mount onto the path `to_path` whose inode is `to`
    /// (selinux_move_mount): `{mounton}` of the new mount point (PATH audit data); where the
    /// mount comes from asks nothing.
    pub fn move_mount(&self, task: &Task, to: &InodeSec, to_path: &str) -> Result<()> {
        self.check(
            Hook::MoveMount,
            task,
            to.sid(),
            to.class(),
            common_file::MOUNTON,
            &path(to, to_path),
        )
        .map(|_| ())
    }

    /// umount(2) of a mount of `sb` (selinux_umount): `filesystem {unmount}`, no audit data.
    pub fn sb_umount(&self, task: &Task, sb: &SuperSec) -> Result<()> {
        self.check(
            Hook::SbUmount,
            task,
            sb.sid,
            Class::FILESYSTEM,
            filesystem::UNMOUNT,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// A filesystem instance just set up with its options (by [`ObjectManager::mount_as`]),
    /// about to be mounted, `root` being its root inode (selinux_sb_kern_mount): `filesystem
    /// {mount}` of its SID, the one its options gave, with DENTRY audit data of the root
    /// (`name="/"`).
    pub fn sb_kern_mount(&self, task: &Task, root: &InodeSec) -> Result<()> {
        self.check(
            Hook::SbKernMount,
            task,
            root.sb.sid,
            Class::FILESYSTEM,
            filesystem::MOUNT,
            &dentry(root, "/"),
        )
        .map(|_| ())
    }

    /// quotactl(2) subcommand `cmd` on `sb` (None for a Q_SYNC of every filesystem)
    /// (selinux_quotactl): `filesystem {quotamod}` for the commands that change quotas
    /// (Q_SYNC, Q_QUOTAON, Q_QUOTAOFF, Q_SETINFO, Q_SETQUOTA, Q_XQUOTAOFF, Q_XQUOTAON,
    /// Q_XSETQLIM), `filesystem {quotaget}` for those that read them (Q_GETFMT, Q_GETINFO,
    /// Q_GETQUOTA, Q_XGETQUOTA, Q_XGETQSTAT, Q_XGETQSTATV, Q_XGETNEXTQUOTA); no audit data.
    /// Any other command (Q_GETNEXTQUOTA, Q_XQUOTARM, an unknown one) asks nothing, as there:
    /// the quota code refuses what it does not know. The `CAP_SYS_ADMIN` check before it is
    /// the caller's.
    pub fn quotactl(&self, task: &Task, cmd: u32, sb: Option<&SuperSec>) -> Result<()> {
        use quota_cmds::*;
        let Some(sb) = sb else { return Ok(()) };
        let perm = match cmd {
            Q_SYNC | Q_QUOTAON | Q_QUOTAOFF | Q_SETINFO | Q_SETQUOTA | Q_XQUOTAOFF | Q_XQUOTAON
            | Q_XSETQLIM => filesystem::QUOTAMOD,
            Q_GETFMT | Q_GETINFO | Q_GETQUOTA | Q_XGETQUOTA | Q_XGETQSTAT | Q_XGETQSTATV
            | Q_XGETNEXTQUOTA => filesystem::QUOTAGET,
            _ => return Ok(()),
        };
        self.check(
            Hook::Quotactl,
            task,
            sb.sid,
            Class::FILESYSTEM,
            perm,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// Turning quotas on with `inode` (entry `name`) as the quota file (selinux_quota_on):
    /// `{quotaon}` on it, DENTRY audit data.
    pub fn quota_on(&self, task: &Task, inode: &InodeSec, name: &str) -> Result<()> {
        self.check(
            Hook::QuotaOn,
            task,
            inode.sid(),
            inode.class(),
            common_file::QUOTAON,
            &dentry(inode, name),
        )
        .map(|_| ())
    }
}
