//! Names: lookup (the walk's search), create, mkdir, mknod, symlink, link, unlink, rmdir,
//! rename, readlink. Each checks, in the kernel's order, before the backing tree is touched.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::Arc;

use seaccess_objmgr::hooks::fs::{MAY_EXEC, MAY_WRITE};

use super::{Core, Req};
use crate::error::{FsError, Result};
use crate::nodes::{name_of, Label, Node, Origin};

/// Renames that replace nothing or swap the two names (renameat2's flags).
pub const RENAME_NOREPLACE: u32 = 1;
pub const RENAME_EXCHANGE: u32 = 2;

/// A name from a request: one component, UTF-8 (labels and audit records need text).
fn component(name: &std::ffi::OsStr) -> Result<&str> {
    let s = name.to_str().ok_or_else(|| FsError::errno_of(libc::EINVAL, format!("{name:?} is not UTF-8")))?;
    if s.is_empty() || s.contains('/') || s == "." || s == ".." {
        return Err(FsError::errno_of(libc::EINVAL, format!("{s:?} is not a file name")));
    }
    Ok(s)
}

impl Core {
    /// LOOKUP: `dir {search}` on the directory looked in (may_lookup, selinux_inode_permission
    /// with MAY_EXEC), then the entry. A name whose label cannot be given is refused.
    pub fn lookup(&self, req: Req, parent: u64, name: &std::ffi::OsStr) -> Result<(Arc<Node>, std::fs::Metadata)> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let dir = self.node(parent)?;
        let name = component(name)?;
        self.gate(|| self.om.inode_permission(t, &dir.sec, MAY_EXEC, Some(name_of(&dir.path()))))?;
        let rel = Core::child(&dir.path(), name);
        let meta = std::fs::symlink_metadata(self.backing(&rel))?;
        let n = self.nodes.get_or_make(&meta, &rel, true, |id| self.label(id, &rel, &meta));
        if let Some(why) = n.closed() {
            self.log(&format!("{}: {why}", self.shown(&rel)));
            return Err(FsError::Closed(why));
        }
        Ok((n, meta))
    }

    /// The checks of creating `name` of `mode` in `dir` (may_create), then `make` on the
    /// backing path; the new object is given the caller's ids and its label. If the label
    /// cannot be written the object is removed again: never an unlabelled object.
    pub(super) fn create_with(
        &self,
        req: Req,
        parent: u64,
        name: &std::ffi::OsStr,
        mode: u32,
        make: impl FnOnce(&std::path::Path) -> std::io::Result<()>,
    ) -> Result<(Arc<Node>, std::fs::Metadata, Arc<crate::callers::Caller>)> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let dir = self.node(parent)?;
        let name = component(name)?;
        self.may_change(t, &dir)?;
        let sid = if self.opts.checks { self.om.inode_create(t, &dir.sec, name, mode)? } else { seaccess_types::Sid::NULL };
        let rel = Core::child(&dir.path(), name);
        let path = self.backing(&rel);
        make(&path)?;
        let finish = || -> Result<std::fs::Metadata> {
            // The directory's set-group-ID bit gives its group, as the kernel's inode_init_owner.
            let dmeta = std::fs::symlink_metadata(self.backing(&dir.path()))?;
            let gid = if dmeta.mode() & libc::S_ISGID != 0 { dmeta.gid() } else { req.gid };
            std::os::unix::fs::lchown(&path, Some(req.uid), Some(gid))?;
            if self.opts.checks {
                self.store_label(&path, sid)?;
            }
            Ok(std::fs::symlink_metadata(&path)?)
        };
        let meta = match finish() {
            Ok(m) => m,
            Err(e) => {
                let _ = if mode & libc::S_IFMT == libc::S_IFDIR { std::fs::remove_dir(&path) } else { std::fs::remove_file(&path) };
                return Err(e);
            }
        };
        let abs = format!("/{rel}");
        let n = self.nodes.get_or_make(&meta, &rel, true, |id| Label {
            sec: self.om.inode_post_create(t, &dir.sec, id, meta.mode(), &abs, sid),
            origin: Origin::Xattr,
            closed: None,
        });
        Ok((n, meta, c))
    }

    /// may_create and may_delete's inode_permission on the directory (MAY_WRITE | MAY_EXEC:
    /// `dir {write search}`), which the VFS asks before the SELinux create, link, unlink and
    /// rename hooks. FUSE's default_permissions runs only its DAC part.
    fn may_change(&self, t: &seaccess_objmgr::Task, dir: &Node) -> Result<()> {
        self.gate(|| self.om.inode_permission(t, &dir.sec, MAY_WRITE | MAY_EXEC, Some(name_of(&dir.path()))))
    }

    /// MKDIR.
    pub fn mkdir(&self, req: Req, parent: u64, name: &std::ffi::OsStr, mode: u32) -> Result<(Arc<Node>, std::fs::Metadata)> {
        let perm = mode & 0o7777;
        let (n, m, _) = self.create_with(req, parent, name, libc::S_IFDIR | perm, |p| {
            std::fs::create_dir(p)?;
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(perm))
        })?;
        Ok((n, m))
    }

    /// MKNOD (regular files, FIFOs, sockets and devices).
    pub fn mknod(&self, req: Req, parent: u64, name: &std::ffi::OsStr, mode: u32, rdev: u32) -> Result<(Arc<Node>, std::fs::Metadata)> {
        let (n, m, _) = self.create_with(req, parent, name, mode, |p| {
            let kind = rustix::fs::FileType::from_raw_mode(mode);
            rustix::fs::mknodat(rustix::fs::CWD, p, kind, rustix::fs::Mode::from_raw_mode(mode & 0o7777), u64::from(rdev))?;
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode & 0o7777))
        })?;
        Ok((n, m))
    }

    /// SYMLINK.
    pub fn symlink(&self, req: Req, parent: u64, name: &std::ffi::OsStr, target: &std::path::Path) -> Result<(Arc<Node>, std::fs::Metadata)> {
        let (n, m, _) = self.create_with(req, parent, name, libc::S_IFLNK | 0o777, |p| std::os::unix::fs::symlink(target, p))?;
        Ok((n, m))
    }

    /// READLINK: `lnk_file {read}` (selinux_inode_readlink).
    pub fn readlink(&self, req: Req, id: u64) -> Result<std::path::PathBuf> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        self.gate(|| self.om.inode_readlink(t, &n.sec, name_of(&n.path())))?;
        Ok(std::fs::read_link(self.backing(&n.path()))?)
    }

    /// LINK: selinux_inode_link (may_link with MAY_LINK).
    pub fn link(&self, req: Req, id: u64, newparent: u64, newname: &std::ffi::OsStr) -> Result<(Arc<Node>, std::fs::Metadata)> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        let dir = self.node(newparent)?;
        let name = component(newname)?;
        self.may_change(t, &dir)?;
        self.gate(|| self.om.inode_link(t, &n.sec, name_of(&n.path()), &dir.sec))?;
        let rel = Core::child(&dir.path(), name);
        std::fs::hard_link(self.backing(&n.path()), self.backing(&rel))?;
        let meta = std::fs::symlink_metadata(self.backing(&rel))?;
        let n = self.nodes.get_or_make(&meta, &rel, true, |id| self.label(id, &rel, &meta));
        Ok((n, meta))
    }

    /// UNLINK: selinux_inode_unlink.
    pub fn unlink(&self, req: Req, parent: u64, name: &std::ffi::OsStr) -> Result<()> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let dir = self.node(parent)?;
        let name = component(name)?;
        let (victim, _) = self.existing(&dir, name)?;
        self.may_change(t, &dir)?;
        self.gate(|| self.om.inode_unlink(t, &dir.sec, &victim.sec, name))?;
        Ok(std::fs::remove_file(self.backing(&Core::child(&dir.path(), name)))?)
    }

    /// RMDIR: selinux_inode_rmdir.
    pub fn rmdir(&self, req: Req, parent: u64, name: &std::ffi::OsStr) -> Result<()> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let dir = self.node(parent)?;
        let name = component(name)?;
        let (victim, _) = self.existing(&dir, name)?;
        self.may_change(t, &dir)?;
        self.gate(|| self.om.inode_rmdir(t, &dir.sec, &victim.sec, name))?;
        Ok(std::fs::remove_dir(self.backing(&Core::child(&dir.path(), name)))?)
    }

    /// RENAME, with renameat2's flags: selinux_inode_rename (may_rename); for an exchange the
    /// LSM layer asks it twice, the new name's move first (security_inode_rename).
    pub fn rename(&self, req: Req, parent: u64, name: &std::ffi::OsStr, newparent: u64, newname: &std::ffi::OsStr, flags: u32) -> Result<()> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        if flags & !(RENAME_NOREPLACE | RENAME_EXCHANGE) != 0 || flags == RENAME_NOREPLACE | RENAME_EXCHANGE {
            return Err(FsError::errno_of(libc::EINVAL, format!("rename flags {flags:#x}")));
        }
        let (od, nd) = (self.node(parent)?, self.node(newparent)?);
        let (oname, nname) = (component(name)?, component(newname)?);
        let (moving, _) = self.existing(&od, oname)?;
        let victim = match self.existing(&nd, nname) {
            Ok((v, _)) => Some(v),
            Err(FsError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        // vfs_rename: may_delete on the old directory, may_create or may_delete on the new
        // one, and a directory changing parent must be writable (its `..` changes).
        self.may_change(t, &od)?;
        self.may_change(t, &nd)?;
        if od.id != nd.id {
            if moving.sec.class() == seaccess_objmgr::Class::DIR {
                self.gate(|| self.om.inode_permission(t, &moving.sec, MAY_WRITE, Some(oname)))?;
            }
            if let Some(v) = victim.as_ref().filter(|v| flags & RENAME_EXCHANGE != 0 && v.sec.class() == seaccess_objmgr::Class::DIR) {
                self.gate(|| self.om.inode_permission(t, &v.sec, MAY_WRITE, Some(nname)))?;
            }
        }
        if flags & RENAME_EXCHANGE != 0 {
            let v = victim.as_ref().ok_or_else(|| FsError::errno_of(libc::ENOENT, format!("{nname}: nothing to exchange with")))?;
            self.gate(|| self.om.inode_rename(t, &nd.sec, &v.sec, nname, &od.sec, oname, Some(&moving.sec)))?;
        }
        if flags & RENAME_NOREPLACE != 0 && victim.is_some() {
            return Err(FsError::errno_of(libc::EEXIST, format!("{nname} exists")));
        }
        self.gate(|| self.om.inode_rename(t, &od.sec, &moving.sec, oname, &nd.sec, nname, victim.as_ref().map(|v| &*v.sec)))?;
        let (from, to) = (Core::child(&od.path(), oname), Core::child(&nd.path(), nname));
        let rflags = rustix::fs::RenameFlags::from_bits_retain(flags);
        rustix::fs::renameat_with(rustix::fs::CWD, self.backing(&from), rustix::fs::CWD, self.backing(&to), rflags)?;
        if flags & RENAME_EXCHANGE != 0 {
            let tmp = format!("{to}\0");
            self.nodes.moved(&to, &tmp);
            self.nodes.moved(&from, &to);
            self.nodes.moved(&tmp, &from);
        } else {
            self.nodes.moved(&from, &to);
        }
        Ok(())
    }
}
