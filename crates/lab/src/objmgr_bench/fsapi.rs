//! STAND-IN until the fshooks branch lands: the part of the file-side hook API (objmgr-api.md)
//! the experiments call, done with plain checks through `ObjectManager::check` and without any
//! fast path. Once the real hooks are merged this file becomes a re-export of
//! `seaccess_objmgr::hooks::fs`, and the inherent methods take over from the trait's.

use std::sync::Arc;

use seaccess_objmgr::classes::{dir, file};
use seaccess_objmgr::{AuditData, Class, FileSec, Hook, InodeSec, Labeling, ObjectManager, Result, SuperSec, Task};
use seaccess_types::Sid;

pub const MAY_WRITE: u32 = 2;
pub const MAY_READ: u32 = 4;

#[derive(Default)]
pub struct MountOpts<'a> {
    pub context: Option<&'a str>,
}

pub trait FsHooks {
    fn mount(&self, dev: &str, fstype: &str, opts: &MountOpts) -> Result<Arc<SuperSec>>;
    fn inode_init(&self, sb: &Arc<SuperSec>, ino: u64, mode: u32, path: &str, xattr: Option<&str>) -> InodeSec;
    fn path_walk(&self, task: &Task, dirs: &[(&InodeSec, &str)]) -> Result<()>;
    fn inode_getattr(&self, task: &Task, inode: &InodeSec, path: &str) -> Result<()>;
    fn file_open(&self, task: &Task, inode: &InodeSec, path: &str, flags: i32) -> Result<FileSec>;
    fn file_permission(&self, task: &Task, file: &FileSec, inode: &InodeSec, mask: u32, path: &str) -> Result<()>;
}

impl FsHooks for ObjectManager {
    fn mount(&self, dev: &str, fstype: &str, _opts: &MountOpts) -> Result<Arc<SuperSec>> {
        let sid = self.server().initial_sid(1).unwrap_or(Sid(1));
        Ok(Arc::new(SuperSec { dev: dev.into(), fstype: fstype.into(), labeling: Labeling::Xattr, sid, def_sid: sid, mntpoint_sid: sid }))
    }
    fn inode_init(&self, sb: &Arc<SuperSec>, ino: u64, mode: u32, _path: &str, xattr: Option<&str>) -> InodeSec {
        let class = if mode & 0o170000 == 0o040000 { Class::DIR } else { Class::FILE };
        let sid = xattr.and_then(|c| self.server().context_to_sid(c).ok());
        InodeSec::new(sb.clone(), ino, class, sid)
    }
    fn path_walk(&self, task: &Task, dirs: &[(&InodeSec, &str)]) -> Result<()> {
        for (d, name) in dirs {
            let ad = AuditData::Inode { name: Some(name), dev: &d.sb.dev, ino: d.ino };
            self.check(Hook::InodePermission, task, d.sid(), d.class(), dir::SEARCH, &ad)?;
        }
        Ok(())
    }
    fn inode_getattr(&self, task: &Task, inode: &InodeSec, path: &str) -> Result<()> {
        let ad = AuditData::Path { path, dev: &inode.sb.dev, ino: inode.ino };
        self.check(Hook::InodeGetattr, task, inode.sid(), inode.class(), file::GETATTR, &ad).map(|_| ())
    }
    fn file_open(&self, task: &Task, inode: &InodeSec, path: &str, flags: i32) -> Result<FileSec> {
        let mut perms = file::OPEN;
        match flags & 3 {
            0 => perms |= file::READ,
            1 => perms |= file::WRITE,
            _ => perms |= file::READ | file::WRITE,
        }
        let ad = AuditData::Path { path, dev: &inode.sb.dev, ino: inode.ino };
        let c = self.check(Hook::FileOpen, task, inode.sid(), inode.class(), perms, &ad)?;
        Ok(FileSec { sid: task.sid(), fown_sid: task.sid(), isid: inode.sid(), pseqno: c.decision.seqno, granted: perms })
    }
    fn file_permission(&self, task: &Task, _file: &FileSec, inode: &InodeSec, mask: u32, path: &str) -> Result<()> {
        let perms = if mask & MAY_WRITE != 0 { file::WRITE } else { file::READ };
        let ad = AuditData::Path { path, dev: &inode.sb.dev, ino: inode.ino };
        self.check(Hook::FilePermission, task, inode.sid(), inode.class(), perms, &ad).map(|_| ())
    }
}
