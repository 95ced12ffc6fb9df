//! The file service's directory entries: create, mkdir, symlink, link, unlink, rmdir and
//! rename, each as the kernel's VFS runs it (fs/namei.c): the path walk, the lookup of the last
//! name (EEXIST or ENOENT before any permission check), the VFS's own may_create / may_delete
//! (inode_permission of the directory with MAY_WRITE|MAY_EXEC, so `dir {write search}`), then
//! the SELinux hook, then the system call; a new inode takes the label the hook computed.

use std::os::unix::fs::MetadataExt;
use std::sync::Arc;

use seaccess_objmgr::hooks::fs::{oflags, MAY_EXEC, MAY_READ, MAY_WRITE};
use seaccess_objmgr::{Class, InodeSec, Task};
use seaccess_types::lock;

use super::{dir_name, refused, FileService};
use crate::LabError;

/// A refusal the VFS itself makes (no hook involved), as `errno`.
fn vfs(what: &str, errno: i32) -> LabError {
    LabError::Refused {
        what: what.to_string(),
        errno,
    }
}

/// A failed system call on the tree: the kernel's answer too (ENOTEMPTY, EXDEV).
fn sys(what: &str, e: std::io::Error) -> LabError {
    LabError::Refused {
        what: format!("{what}: {e}"),
        errno: e.raw_os_error().unwrap_or(libc::EIO),
    }
}

/// The directory part and the last name of `rel`.
fn split(rel: &str) -> (&str, &str) {
    rel.rsplit_once('/').unwrap_or(("", rel))
}

impl FileService {
    /// The walk to the directory that holds `rel` (search on it too: link_path_walk's
    /// may_lookup before the last name); that directory's path and inode, and the last name.
    fn parent<'a>(
        &self,
        task: &Task,
        rel: &'a str,
    ) -> Result<(&'a str, Arc<InodeSec>, &'a str), LabError> {
        let (p, name) = split(rel);
        let dir = self.walk(task, p)?;
        self.om
            .inode_permission(task, &dir, MAY_EXEC, Some(dir_name(p)))
            .map_err(|e| refused(&format!("search /{p}"), e))?;
        Ok((p, dir, name))
    }

    fn exists(&self, rel: &str) -> bool {
        lock(&self.inodes).contains_key(rel)
    }

    /// The VFS's may_create and may_delete: `inode_permission(dir, MAY_WRITE | MAY_EXEC)`.
    fn may_modify(&self, task: &Task, p: &str, dir: &InodeSec, what: &str) -> Result<(), LabError> {
        self.om
            .inode_permission(task, dir, MAY_WRITE | MAY_EXEC, Some(dir_name(p)))
            .map_err(|e| refused(what, e))
    }

    /// Creates `rel` of `mode` by `make` once the checks passed (may_o_create or
    /// filename_create then may_create, then selinux_inode_create, _mkdir or _symlink); the
    /// new inode gets the SID the hook computed (selinux_inode_init_security).
    fn make(
        &self,
        task: &Task,
        rel: &str,
        mode: u32,
        what: &str,
        make: impl FnOnce(&std::path::Path) -> std::io::Result<()>,
    ) -> Result<Arc<InodeSec>, LabError> {
        let (p, dir, name) = self.parent(task, rel)?;
        if self.exists(rel) {
            return Err(vfs(what, libc::EEXIST));
        }
        self.may_modify(task, p, &dir, what)?;
        let sid = self
            .om
            .inode_create(task, &dir, name, mode)
            .map_err(|e| refused(what, e))?;
        let at = self.root.join(rel);
        make(&at).map_err(|e| sys(what, e))?;
        let meta = std::fs::symlink_metadata(&at).map_err(|e| sys(what, e))?;
        let inode = Arc::new(self.om.inode_post_create(
            task,
            &dir,
            meta.ino(),
            meta.mode(),
            &format!("/{rel}"),
            sid,
        ));
        lock(&self.inodes).insert(rel.to_string(), inode.clone());
        Ok(inode)
    }

    /// open(2) with O_CREAT|O_EXCL|O_WRONLY: [`FileService::make`] of a regular file, then the
    /// open of the new file (may_open asks nothing of a file the open created; file_open asks
    /// `{write open}`).
    pub fn create(&self, task: &Task, rel: &str) -> Result<(), LabError> {
        let what = format!("create /{rel}");
        let inode = self.make(task, rel, libc::S_IFREG | 0o644, &what, |at| {
            std::fs::File::create_new(at).map(|_| ())
        })?;
        let ps = self.root.join(rel);
        self.om
            .file_open(
                task,
                &inode,
                &ps.to_string_lossy(),
                oflags::O_WRONLY | oflags::O_CREAT,
            )
            .map(|_| ())
            .map_err(|e| refused(&what, e))
    }

    /// mkdir(2) with mode 0755 (do_mkdirat: filename_create, vfs_mkdir).
    pub fn mkdir(&self, task: &Task, rel: &str) -> Result<(), LabError> {
        let what = format!("mkdir /{rel}");
        self.make(task, rel, libc::S_IFDIR | 0o755, &what, |at| {
            std::fs::create_dir(at)
        })
        .map(|_| ())
    }

    /// symlink(2) of `target` at `rel` (do_symlinkat: filename_create, vfs_symlink).
    pub fn symlink(&self, task: &Task, target: &str, rel: &str) -> Result<(), LabError> {
        let what = format!("symlink /{rel}");
        self.make(task, rel, libc::S_IFLNK | 0o777, &what, |at| {
            std::os::unix::fs::symlink(target, at)
        })
        .map(|_| ())
    }

    /// link(2) of `old` as `new` (do_linkat: the walk to `old`, filename_create of `new`,
    /// then vfs_link: may_create, EPERM for a directory, selinux_inode_link).
    pub fn link(&self, task: &Task, old: &str, new: &str) -> Result<(), LabError> {
        let what = format!("link /{old} as /{new}");
        let inode = self.walk(task, old)?;
        let (p, dir, _) = self.parent(task, new)?;
        if self.exists(new) {
            return Err(vfs(&what, libc::EEXIST));
        }
        // may_linkat under fs.protected_hardlinks (Debian's default): safe_hardlink_source
        // asks MAY_READ|MAY_WRITE of a plain file (so `{read write}`, audited), whose refusal
        // is forgiven by inode_owner_or_capable (the tree's owner links here).
        let meta = std::fs::symlink_metadata(self.root.join(old)).map_err(|e| sys(&what, e))?;
        let mode = meta.mode();
        let setgid_exec = libc::S_ISGID | libc::S_IXGRP;
        if mode & libc::S_IFMT == libc::S_IFREG
            && mode & libc::S_ISUID == 0
            && mode & setgid_exec != setgid_exec
        {
            let _ =
                self.om
                    .inode_permission(task, &inode, MAY_READ | MAY_WRITE, Some(split(old).1));
        }
        self.may_modify(task, p, &dir, &what)?;
        if inode.class() == Class::DIR {
            return Err(vfs(&what, libc::EPERM));
        }
        self.om
            .inode_link(task, &inode, split(old).1, &dir)
            .map_err(|e| refused(&what, e))?;
        std::fs::hard_link(self.root.join(old), self.root.join(new)).map_err(|e| sys(&what, e))?;
        lock(&self.inodes).insert(new.to_string(), inode);
        Ok(())
    }

    /// may_delete on `victim` in `dir`: ENOENT if there is none, then may_modify, then the
    /// file-type checks (EISDIR, ENOTDIR).
    fn may_delete(
        &self,
        task: &Task,
        p: &str,
        dir: &InodeSec,
        victim: &str,
        isdir: bool,
        what: &str,
    ) -> Result<Arc<InodeSec>, LabError> {
        let v = self.inode(victim)?;
        self.may_modify(task, p, dir, what)?;
        match (isdir, v.class() == Class::DIR) {
            (true, false) => Err(vfs(what, libc::ENOTDIR)),
            (false, true) => Err(vfs(what, libc::EISDIR)),
            _ => Ok(v),
        }
    }

    /// unlink(2) (do_unlinkat, vfs_unlink: may_delete, selinux_inode_unlink).
    pub fn unlink(&self, task: &Task, rel: &str) -> Result<(), LabError> {
        let what = format!("unlink /{rel}");
        let (p, dir, name) = self.parent(task, rel)?;
        let v = self.may_delete(task, p, &dir, rel, false, &what)?;
        self.om
            .inode_unlink(task, &dir, &v, name)
            .map_err(|e| refused(&what, e))?;
        std::fs::remove_file(self.root.join(rel)).map_err(|e| sys(&what, e))?;
        lock(&self.inodes).remove(rel);
        Ok(())
    }

    /// rmdir(2) (do_rmdir, vfs_rmdir: may_delete, selinux_inode_rmdir, then the filesystem's
    /// ENOTEMPTY).
    pub fn rmdir(&self, task: &Task, rel: &str) -> Result<(), LabError> {
        let what = format!("rmdir /{rel}");
        let (p, dir, name) = self.parent(task, rel)?;
        let v = self.may_delete(task, p, &dir, rel, true, &what)?;
        self.om
            .inode_rmdir(task, &dir, &v, name)
            .map_err(|e| refused(&what, e))?;
        std::fs::remove_dir(self.root.join(rel)).map_err(|e| sys(&what, e))?;
        lock(&self.inodes).remove(rel);
        Ok(())
    }

    /// rename(2) of `old` to `new` (do_renameat2: both walks, the lookups, then vfs_rename:
    /// may_delete on the old directory, may_delete or may_create on the new one, MAY_WRITE on
    /// a directory changing parent (its ".." changes), selinux_inode_rename, then the
    /// filesystem's own refusals).
    pub fn rename(&self, task: &Task, old: &str, new: &str) -> Result<(), LabError> {
        let what = format!("rename /{old} to /{new}");
        let (op, odir, oname) = self.parent(task, old)?;
        let (np, ndir, nname) = self.parent(task, new)?;
        let src = self.inode(old)?;
        let isdir = src.class() == Class::DIR;
        let target = lock(&self.inodes).get(new).cloned();
        if let Some(t) = &target {
            if Arc::ptr_eq(t, &src) {
                return Ok(());
            }
        }
        self.may_delete(task, op, &odir, old, isdir, &what)?;
        match &target {
            Some(_) => self
                .may_delete(task, np, &ndir, new, isdir, &what)
                .map(|_| ())?,
            None => self.may_modify(task, np, &ndir, &what)?,
        }
        if isdir && op != np {
            self.om
                .inode_permission(task, &src, MAY_WRITE, Some(oname))
                .map_err(|e| refused(&what, e))?;
        }
        self.om
            .inode_rename(task, &odir, &src, oname, &ndir, nname, target.as_deref())
            .map_err(|e| refused(&what, e))?;
        std::fs::rename(self.root.join(old), self.root.join(new)).map_err(|e| sys(&what, e))?;
        let mut inodes = lock(&self.inodes);
        let under = |k: &str, at: &str| k == at || k.starts_with(&format!("{at}/"));
        inodes.retain(|k, _| !under(k, new));
        let moved: Vec<String> = inodes.keys().filter(|k| under(k, old)).cloned().collect();
        for k in moved {
            if let Some(i) = inodes.remove(&k) {
                inodes.insert(format!("{new}{}", k.get(old.len()..).unwrap_or("")), i);
            }
        }
        Ok(())
    }
}
