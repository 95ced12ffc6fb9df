//! Lookups: the permission check of path walks, access(2) and opens
//! (selinux_inode_permission, with the directory search cache and the "nothing beyond POSIX
//! here" mark), getattr, symlinks, statfs.

use crate::audit::AuditData;
use crate::blobs::InodeSec;
use crate::classes::{common_file, dir, filesystem, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::Result;
use crate::fastpath::SearchCache;
use crate::ObjectManager;

use super::{dentry, file_mask_to_av, path, MAY_APPEND, MAY_EXEC, MAY_READ, MAY_WRITE};

impl ObjectManager {
    /// The kernel's selinux_inode_permission: `mask` (MAY_* bits; MAY_OPEN and MAY_ACCESS
    /// alone ask nothing) on `inode`, whose entry is named `name` in the audit record if known
    /// (INODE audit data). On a directory a clean search grant is remembered by the two walk
    /// fast paths; a denial always goes to the cache and is audited.
    pub fn inode_permission(&self, task: &Task, inode: &InodeSec, mask: u32, name: Option<&str>) -> Result<()> {
        let mask = mask & (MAY_READ | MAY_WRITE | MAY_EXEC | MAY_APPEND);
        if mask == 0 {
            return Ok(());
        }
        let class = inode.class();
        let perms = file_mask_to_av(class, mask);
        let fast = self.fast_paths();
        let search_only = class == Class::DIR && perms == dir::SEARCH;
        // The mark is read before the inode's SID, so that a relabel between the two leaves a
        // mark our record cannot overwrite (PosixMark::record).
        let seen = inode.posix.load();
        let sid = task.sid();
        if search_only && fast.posix() && inode.posix.holds(sid, self.avc().seqno()) {
            return Ok(());
        }
        let isid = inode.sid();
        let bits = if class == Class::DIR { SearchCache::bits(perms) } else { None };
        let cache = task.cred().search_cache();
        if let Some(b) = bits {
            if fast.search_cache() && cache.lookup(isid, self.avc().seqno(), b) {
                if search_only && fast.posix() {
                    inode.posix.record(seen, sid, self.avc().seqno());
                }
                return Ok(());
            }
        }
        let w = self.window();
        let v = self.check_noaudit(Hook::InodePermission, sid, isid, class, perms)?;
        if self.may_remember(w, &v) {
            if let Some(b) = bits {
                if fast.search_cache() {
                    cache.insert(isid, v.decision.seqno, b);
                }
                if search_only && fast.posix() {
                    inode.posix.record(seen, sid, v.decision.seqno);
                }
            }
        }
        let ad = AuditData::Inode { name, dev: &inode.sb.dev, ino: inode.ino };
        self.audit(task, sid, isid, class, &v, &ad);
        Self::outcome(class, &v).map(|_| ())
    }

    /// A path walk: search on each directory in turn, each named by its own last component
    /// in the audit record (selinux_inode_permission with MAY_EXEC, as may_lookup asks it).
    pub fn path_walk(&self, task: &Task, dirs: &[(&InodeSec, &str)]) -> Result<()> {
        for (d, name) in dirs {
            self.inode_permission(task, d, MAY_EXEC, Some(name))?;
        }
        Ok(())
    }

    /// stat(2) and the like: `{getattr}` on the inode (selinux_inode_getattr through
    /// path_has_perm, PATH audit data).
    pub fn inode_getattr(&self, task: &Task, inode: &InodeSec, p: &str) -> Result<()> {
        self.check(Hook::InodeGetattr, task, inode.sid(), inode.class(), common_file::GETATTR, &path(inode, p)).map(|_| ())
    }

    /// Following a symlink during a walk: `{read}` on the link (selinux_inode_follow_link,
    /// DENTRY audit data).
    pub fn inode_follow_link(&self, task: &Task, link: &InodeSec, name: &str) -> Result<()> {
        self.check(Hook::InodeFollowLink, task, link.sid(), link.class(), common_file::READ, &dentry(link, name)).map(|_| ())
    }

    /// readlink(2): `{read}` on the link (selinux_inode_readlink through dentry_has_perm).
    pub fn inode_readlink(&self, task: &Task, link: &InodeSec, name: &str) -> Result<()> {
        self.check(Hook::InodeReadlink, task, link.sid(), link.class(), common_file::READ, &dentry(link, name)).map(|_| ())
    }

    /// statfs(2): `filesystem {getattr}` on the filesystem of `root`, its root inode
    /// (selinux_sb_statfs through superblock_has_perm; DENTRY audit data of the root, `name="/"`).
    pub fn sb_statfs(&self, task: &Task, root: &InodeSec) -> Result<()> {
        self.check(Hook::SbStatfs, task, root.sb.sid, Class::FILESYSTEM, filesystem::GETATTR, &dentry(root, "/")).map(|_| ())
    }
}
