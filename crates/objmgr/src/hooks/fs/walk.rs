//! Lookups: the permission check of path walks, access(2) and opens
//! (selinux_inode_permission, with the directory search cache and the "nothing beyond POSIX
//! here" mark), getattr, symlinks, statfs.

use crate::audit::AuditData;
use crate::blobs::InodeSec;
use crate::classes::{common_file, filesystem, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::Result;
use crate::fastpath::SearchCache;
use crate::grant::{self, compact};
use crate::walkmemo::{self, WalkMemo};
use crate::ObjectManager;

use super::{dentry, file_mask_to_av, path, MAY_ACCESS, MAY_APPEND, MAY_EXEC, MAY_READ, MAY_WRITE};

/// The directories a path walk searches, in order, as the object manager holds them. The walk
/// reads only their blobs; a name is read only for an audit record. So an object manager may
/// keep the blobs of a walk in a list of their own (a list of pointers, one cache line for a
/// dozen directories) and find names elsewhere, as the kernel's walk reads the dentry's name
/// only when it audits.
pub trait WalkDirs {
    /// How many directories the walk searches.
    fn count(&self) -> usize;
    /// The blob of the `i`th directory from the start of the walk.
    fn dir(&self, i: usize) -> Option<&InodeSec>;
    /// The `i`th directory's own last component, for `name=` in an audit record.
    fn name(&self, i: usize) -> &str;
    /// The walk's memo, if it keeps one (an object manager that walks the same directories
    /// again and again: see [`WalkMemo`]); a warm walk with one costs the same at any depth.
    #[inline(always)]
    fn memo(&self) -> Option<&WalkMemo> {
        None
    }
}

/// The simplest walk: each directory with its name.
impl WalkDirs for [(&InodeSec, &str)] {
    #[inline(always)]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn dir(&self, i: usize) -> Option<&InodeSec> {
        self.get(i).map(|(d, _)| *d)
    }
    fn name(&self, i: usize) -> &str {
        self.get(i).map_or("", |(_, n)| n)
    }
}

impl<const N: usize> WalkDirs for [(&InodeSec, &str); N] {
    #[inline(always)]
    fn count(&self) -> usize {
        N
    }
    #[inline(always)]
    fn dir(&self, i: usize) -> Option<&InodeSec> {
        self.as_slice().dir(i)
    }
    fn name(&self, i: usize) -> &str {
        self.as_slice().name(i)
    }
}

impl WalkDirs for Vec<(&InodeSec, &str)> {
    #[inline(always)]
    fn count(&self) -> usize {
        self.len()
    }
    #[inline(always)]
    fn dir(&self, i: usize) -> Option<&InodeSec> {
        self.as_slice().dir(i)
    }
    fn name(&self, i: usize) -> &str {
        self.as_slice().name(i)
    }
}

impl ObjectManager {
    /// The kernel's selinux_inode_permission: `mask` (MAY_* bits; MAY_OPEN and MAY_ACCESS
    /// alone ask nothing) on `inode`, whose entry is named `name` in the audit record if known
    /// (INODE audit data). A clean grant is remembered by the inode (and, on a directory, by
    /// the credential's search cache); a denial always goes to the cache and is audited, but
    /// for access(2) (MAY_ACCESS in `mask`) only if the policy does not dontaudit the class's
    /// `audit_access` (avc_audit_required with FILE__AUDIT_ACCESS).
    #[inline]
    pub fn inode_permission(
        &self,
        task: &Task,
        inode: &InodeSec,
        mask: u32,
        name: Option<&str>,
    ) -> Result<()> {
        let access = mask & MAY_ACCESS != 0;
        let mask = mask & (MAY_READ | MAY_WRITE | MAY_EXEC | MAY_APPEND);
        if mask == 0 {
            return Ok(());
        }
        let perms = file_mask_to_av(inode.class(), mask);
        if let Some(need) = compact(perms) {
            if self.granted(task.cred(), inode, need) {
                return Ok(());
            }
        }
        self.inode_permission_slow(task, inode, perms, name, access)
    }

    /// inode_permission with no remembered grant: the credential's search cache for a
    /// directory, else the cache. Only grants are remembered, and MAY_ACCESS changes only
    /// whether a denial is audited, so the fast paths answer an access(2) check as any other.
    #[inline(never)]
    fn inode_permission_slow(
        &self,
        task: &Task,
        inode: &InodeSec,
        perms: u32,
        name: Option<&str>,
        access: bool,
    ) -> Result<()> {
        let class = inode.class();
        let fast = self.fast_paths();
        let bits = if class == Class::DIR {
            SearchCache::bits(perms)
        } else {
            None
        };
        let cache = task.cred().search_cache();
        if let Some(b) = bits {
            if fast.search_cache() {
                // The relabels are seen before the SID is read (see check_inode_noaudit).
                let seen = inode.grant.seen();
                let (id, seqno) = self.epoch(task.cred());
                if cache.lookup(task.sid(), inode.sid(), seqno, b) {
                    if fast.posix() {
                        if let Some(c) = compact(perms) {
                            inode.grant.record(seen, id, c);
                        }
                    }
                    return Ok(());
                }
            }
        }
        let w = self.window();
        let (mut v, isid) = self.check_inode_noaudit(Hook::InodePermission, task, inode, perms)?;
        if access {
            self.dontaudit_access(class, &mut v);
        }
        if let Some(b) = bits {
            if fast.search_cache() && self.may_remember(w, &v) {
                cache.insert(task.sid(), isid, v.decision.seqno, b);
            }
        }
        let ad = AuditData::Inode {
            name,
            dev: &inode.sb.dev,
            ino: inode.ino,
        };
        self.audit(task, task.sid(), isid, class, &v, &ad);
        self.outcome(class, &v).map(|_| ())
    }

    /// A path walk: search on each directory of `dirs` in turn, each named by its own last
    /// component in the audit record (selinux_inode_permission with MAY_EXEC, as may_lookup
    /// asks it). A directory that remembers the task's search costs one load and one
    /// comparison; the credential's epoch is read once for the whole walk, which is one
    /// operation. A walk with a memo that every directory held the search (all three under
    /// the "nothing beyond POSIX" switch) costs two loads and a comparison.
    #[inline]
    pub fn path_walk<D: WalkDirs + ?Sized>(&self, task: &Task, dirs: &D) -> Result<()> {
        // The warm walk, inlined in the caller: no call, and no result written back.
        if self.fast_paths().posix() {
            let id = self.epoch(task.cred()).0;
            // Loaded before any grant is (see walkmemo).
            let generation = walkmemo::generation();
            let memo = dirs.memo();
            if memo.is_some_and(|m| m.holds(id, generation)) {
                return Ok(());
            }
            for i in 0..dirs.count() {
                match dirs.dir(i) {
                    Some(d) if d.grant.holds(id, grant::SEARCH) => {}
                    _ => return self.path_walk_from(task, dirs, i, id),
                }
            }
            if let Some(m) = memo {
                m.record(id, generation);
            }
            return Ok(());
        }
        self.path_walk_from(task, dirs, 0, 0)
    }

    /// The walk from directory `from` on, checking each that does not remember epoch `id`'s
    /// search (every one when `id` is 0, the fast path off).
    #[inline(never)]
    fn path_walk_from<D: WalkDirs + ?Sized>(
        &self,
        task: &Task,
        dirs: &D,
        from: usize,
        id: u32,
    ) -> Result<()> {
        for i in from..dirs.count() {
            let Some(d) = dirs.dir(i) else { continue };
            if id != 0 && d.grant.holds(id, grant::SEARCH) {
                continue;
            }
            self.inode_permission_slow(
                task,
                d,
                file_mask_to_av(d.class(), MAY_EXEC),
                Some(dirs.name(i)),
                false,
            )?;
        }
        Ok(())
    }

    /// stat(2) and the like: `{getattr}` on the inode (selinux_inode_getattr through
    /// path_has_perm, PATH audit data).
    #[inline]
    pub fn inode_getattr(&self, task: &Task, inode: &InodeSec, p: &str) -> Result<()> {
        if self.granted(task.cred(), inode, grant::GETATTR) {
            return Ok(());
        }
        self.check_inode(
            Hook::InodeGetattr,
            task,
            inode,
            common_file::GETATTR,
            &path(inode, p),
        )
        .map(|_| ())
    }

    /// Following a symlink during a walk: `{read}` on the link (selinux_inode_follow_link,
    /// DENTRY audit data).
    pub fn inode_follow_link(&self, task: &Task, link: &InodeSec, name: &str) -> Result<()> {
        self.check(
            Hook::InodeFollowLink,
            task,
            link.sid(),
            link.class(),
            common_file::READ,
            &dentry(link, name),
        )
        .map(|_| ())
    }

    /// readlink(2): `{read}` on the link (selinux_inode_readlink through dentry_has_perm).
    pub fn inode_readlink(&self, task: &Task, link: &InodeSec, name: &str) -> Result<()> {
        self.check(
            Hook::InodeReadlink,
            task,
            link.sid(),
            link.class(),
            common_file::READ,
            &dentry(link, name),
        )
        .map(|_| ())
    }

    /// statfs(2): `filesystem {getattr}` on the filesystem of `root`, its root inode
    /// (selinux_sb_statfs through superblock_has_perm; DENTRY audit data of the root, `name="/"`).
    pub fn sb_statfs(&self, task: &Task, root: &InodeSec) -> Result<()> {
        self.check(
            Hook::SbStatfs,
            task,
            root.sb.sid,
            Class::FILESYSTEM,
            filesystem::GETATTR,
            &dentry(root, "/"),
        )
        .map(|_| ())
    }
}
