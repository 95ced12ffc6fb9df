//! Directory entries: create, mkdir, mknod, symlink (may_create), link, unlink, rmdir
//! (may_link) and rename (may_rename).

use seaccess_types::Sid;

use crate::audit::AuditData;
use crate::blobs::InodeSec;
use crate::classes::{common_file, dir, filesystem, inode_class, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::Result;
use crate::ObjectManager;

use super::dentry;

impl ObjectManager {
    /// create(2), mkdir(2), mknod(2), symlink(2) of `name` in `dir`, the new inode of `mode`
    /// (its file type picks the class) (selinux_inode_create, selinux_inode_mkdir,
    /// selinux_inode_mknod, selinux_inode_symlink, each the kernel's may_create):
    /// `dir {add_name search}` on the directory, `{create}` on the
    /// new label, and that label `filesystem {associate}` with the filesystem. DENTRY audit
    /// data of the new name (no inode yet: no dev= or ino=). Returns the new inode's SID
    /// (see [`ObjectManager::inode_post_create`]).
    pub fn inode_create(&self, task: &Task, dir: &InodeSec, name: &str, mode: u32) -> Result<Sid> {
        let class = inode_class(mode);
        let ad = AuditData::Dentry { name, inode: None };
        self.check(
            Hook::InodeCreate,
            task,
            dir.sid(),
            Class::DIR,
            dir::ADD_NAME | dir::SEARCH,
            &ad,
        )?;
        let newsid = self.determine_inode_label(task, dir, name, class)?;
        self.check(
            Hook::InodeCreate,
            task,
            newsid,
            class,
            common_file::CREATE,
            &ad,
        )?;
        self.check_sid(
            Hook::InodeCreate,
            task,
            newsid,
            dir.sb.sid,
            Class::FILESYSTEM,
            filesystem::ASSOCIATE,
            &ad,
        )?;
        Ok(newsid)
    }

    /// link(2) of `inode` (entry `name`) into `new_dir` (selinux_inode_link through may_link):
    /// `dir {search add_name}` on the new directory, `{link}` on the inode; DENTRY audit data
    /// of the old entry.
    pub fn inode_link(
        &self,
        task: &Task,
        inode: &InodeSec,
        name: &str,
        new_dir: &InodeSec,
    ) -> Result<()> {
        let ad = dentry(inode, name);
        self.check(
            Hook::InodeLink,
            task,
            new_dir.sid(),
            Class::DIR,
            dir::SEARCH | dir::ADD_NAME,
            &ad,
        )?;
        self.check(
            Hook::InodeLink,
            task,
            inode.sid(),
            inode.class(),
            common_file::LINK,
            &ad,
        )
        .map(|_| ())
    }

    /// unlink(2) of entry `name` (of `inode`) from `dir` (selinux_inode_unlink through
    /// may_link): `dir {search remove_name}`, then `{unlink}` on the inode.
    pub fn inode_unlink(
        &self,
        task: &Task,
        dir: &InodeSec,
        inode: &InodeSec,
        name: &str,
    ) -> Result<()> {
        let ad = dentry(inode, name);
        self.check(
            Hook::InodeUnlink,
            task,
            dir.sid(),
            Class::DIR,
            dir::SEARCH | dir::REMOVE_NAME,
            &ad,
        )?;
        self.check(
            Hook::InodeUnlink,
            task,
            inode.sid(),
            inode.class(),
            common_file::UNLINK,
            &ad,
        )
        .map(|_| ())
    }

    /// rmdir(2) of directory `victim` (entry `name`) from `dir` (selinux_inode_rmdir through
    /// may_link): `dir {search remove_name}`, then `dir {rmdir}` on the victim.
    pub fn inode_rmdir(
        &self,
        task: &Task,
        dir: &InodeSec,
        victim: &InodeSec,
        name: &str,
    ) -> Result<()> {
        let ad = dentry(victim, name);
        self.check(
            Hook::InodeRmdir,
            task,
            dir.sid(),
            Class::DIR,
            dir::SEARCH | dir::REMOVE_NAME,
            &ad,
        )?;
        self.check(
            Hook::InodeRmdir,
            task,
            victim.sid(),
            Class::DIR,
            dir::RMDIR,
            &ad,
        )
        .map(|_| ())
    }

    /// rename(2) of `inode` from `old_dir`/`old_name` to `new_dir`/`new_name`, replacing
    /// `victim` if the new name exists (selinux_inode_rename through may_rename):
    /// `dir {remove_name search}` on the old directory, `{rename}` on the inode, `dir
    /// {reparent}` on it if it is a directory changing parent, `dir {add_name search}` (with
    /// `remove_name` over a victim) on the new directory, then `{unlink}` or `dir {rmdir}` on
    /// the victim. DENTRY audit data of the old entry, then of the new one.
    #[allow(clippy::too_many_arguments)]
    pub fn inode_rename(
        &self,
        task: &Task,
        old_dir: &InodeSec,
        inode: &InodeSec,
        old_name: &str,
        new_dir: &InodeSec,
        new_name: &str,
        victim: Option<&InodeSec>,
    ) -> Result<()> {
        let h = Hook::InodeRename;
        let old_ad = dentry(inode, old_name);
        self.check(
            h,
            task,
            old_dir.sid(),
            Class::DIR,
            dir::REMOVE_NAME | dir::SEARCH,
            &old_ad,
        )?;
        self.check(
            h,
            task,
            inode.sid(),
            inode.class(),
            common_file::RENAME,
            &old_ad,
        )?;
        if inode.class() == Class::DIR && !std::ptr::eq(old_dir, new_dir) {
            self.check(h, task, inode.sid(), Class::DIR, dir::REPARENT, &old_ad)?;
        }
        let new_ad = AuditData::Dentry {
            name: new_name,
            inode: victim.map(|v| (&*v.sb.dev, v.ino)),
        };
        let mut av = dir::ADD_NAME | dir::SEARCH;
        if victim.is_some() {
            av |= dir::REMOVE_NAME;
        }
        self.check(h, task, new_dir.sid(), Class::DIR, av, &new_ad)?;
        if let Some(v) = victim {
            if v.class() == Class::DIR {
                self.check(h, task, v.sid(), Class::DIR, dir::RMDIR, &new_ad)?;
            } else {
                self.check(h, task, v.sid(), v.class(), common_file::UNLINK, &new_ad)?;
            }
        }
        Ok(())
    }
}
