//! Names: lookup (the walk's search), create, mkdir, mknod, symlink, link, unlink, rmdir,
//! rename, readlink. Each checks, in the kernel's order, before the backing tree is touched;
//! each acts relative to its directories' descriptors, on one component, the object it
//! checked found by the one resolver ([`crate::backing::resolve`]).

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

use seaccess_objmgr::hooks::fs::{MAY_EXEC, MAY_WRITE};

use super::{Core, Req};
use crate::backing::{self, Stat};
use crate::error::{FsError, Result};
use crate::nodes::{name_of, Label, Node, Origin};

/// Renames that replace nothing or swap the two names (renameat2's flags).
pub const RENAME_NOREPLACE: u32 = 1;
pub const RENAME_EXCHANGE: u32 = 2;

/// A name from a request: one component, UTF-8 (labels and audit records need text).
fn component(name: &std::ffi::OsStr) -> Result<&str> {
    let s = name
        .to_str()
        .ok_or_else(|| FsError::errno_of(libc::EINVAL, format!("{name:?} is not UTF-8")))?;
    if s.is_empty() || s.contains('/') || s == "." || s == ".." {
        return Err(FsError::errno_of(
            libc::EINVAL,
            format!("{s:?} is not a file name"),
        ));
    }
    Ok(s)
}

impl Core {
    /// LOOKUP: `dir {search}` on the directory looked in (may_lookup, selinux_inode_permission
    /// with MAY_EXEC), then the entry. A name whose label cannot be given is refused.
    pub fn lookup(
        &self,
        req: Req,
        parent: u64,
        name: &std::ffi::OsStr,
    ) -> Result<(Arc<Node>, Stat)> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let dir = self.node(parent)?;
        let name = component(name)?;
        self.gate(|| {
            self.om
                .inode_permission(t, &dir.sec, MAY_EXEC, Some(name_of(&dir.path())))
        })?;
        let (n, st) = self.resolve_child(&dir, name, true)?;
        if let Some(why) = n.closed() {
            self.log(&format!("{}: {why}", self.shown(&n.path())));
            return Err(FsError::Closed(why));
        }
        Ok((n, st))
    }

    /// The checks of creating `name` of `mode` in `dir` (may_create, with the thread's
    /// published fscreate context: [`Core::creating_task`]), then `make` in the
    /// directory's descriptor, which gives the new object's O_PATH descriptor; the object is
    /// given the caller's ids, its permissions and its label through that descriptor. If any
    /// of that fails the object is removed again: never an unlabelled object.
    pub(super) fn create_with(
        &self,
        req: Req,
        parent: u64,
        name: &std::ffi::OsStr,
        mode: u32,
        make: impl FnOnce(BorrowedFd<'_>, &str) -> std::io::Result<OwnedFd>,
    ) -> Result<(Arc<Node>, Stat, Arc<crate::callers::Caller>)> {
        let c = self.caller(req)?;
        let caller = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        // With the thread's published fscreate context as its create SID, if it has one.
        let creating = self.creating_task(req, caller)?;
        let t = creating.as_ref().unwrap_or(caller);
        let dir = self.node(parent)?;
        let name = component(name)?;
        self.may_change(t, &dir)?;
        let sid = if self.opts.checks {
            self.om.inode_create(t, &dir.sec, name, mode)?
        } else {
            seaccess_types::Sid::NULL
        };
        let dfd = dir.fd()?;
        let fd = make(dfd.as_fd(), name)?;
        let kind = mode & libc::S_IFMT;
        let finish = || -> Result<Stat> {
            // inode_init_owner: the directory's set-group-ID bit gives its group, and a new
            // directory keeps the bit.
            let d = backing::stat(dfd.as_fd())?;
            let sgid = u32::from(d.stx_mode) & libc::S_ISGID != 0;
            backing::chown(
                fd.as_fd(),
                Some(req.uid),
                Some(if sgid { d.stx_gid } else { req.gid }),
            )?;
            // After the owner (a chown clears set-user-ID), and whatever this process's umask
            // took away. A symbolic link's permissions are not its own.
            if kind != libc::S_IFLNK {
                let dir_sgid = if kind == libc::S_IFDIR && sgid {
                    libc::S_ISGID
                } else {
                    0
                };
                self.backing.chmod(fd.as_fd(), (mode & 0o7777) | dir_sgid)?;
            }
            if self.opts.checks {
                self.store_label(fd.as_fd(), sid)?;
            }
            Ok(backing::stat(fd.as_fd())?)
        };
        let st = match finish() {
            Ok(st) => st,
            Err(e) => {
                self.remove_made(dfd.as_fd(), name, fd.as_fd(), kind == libc::S_IFDIR);
                return Err(e);
            }
        };
        let rel = Core::child(&dir.path(), name);
        let abs = format!("/{rel}");
        let smode = u32::from(st.stx_mode);
        let n = self.nodes.get_or_make(fd, &st, &rel, true, |id, _| Label {
            sec: self.om.inode_post_create(t, &dir.sec, id, smode, &abs, sid),
            origin: Origin::Xattr,
            closed: None,
        });
        Ok((n, st, c))
    }

    /// Removes `name` from `dir` if it still names the object `fd` holds (one made by a
    /// create that failed after it).
    fn remove_made(&self, dir: BorrowedFd<'_>, name: &str, fd: BorrowedFd<'_>, is_dir: bool) {
        let same = match (
            backing::resolve(dir, name).and_then(|f| backing::stat(f.as_fd())),
            backing::stat(fd),
        ) {
            (Ok(a), Ok(b)) => backing::key(&a) == backing::key(&b),
            _ => false,
        };
        if !same || backing::unlink(dir, name, is_dir).is_err() {
            self.log(&format!(
                "{name}: a new object whose label could not be written could not be removed"
            ));
        }
    }

    /// may_create and may_delete's inode_permission on the directory (MAY_WRITE | MAY_EXEC:
    /// `dir {write search}`), which the VFS asks before the SELinux create, link, unlink and
    /// rename hooks. FUSE's default_permissions runs only its DAC part.
    fn may_change(&self, t: &seaccess_objmgr::Task, dir: &Node) -> Result<()> {
        self.gate(|| {
            self.om.inode_permission(
                t,
                &dir.sec,
                MAY_WRITE | MAY_EXEC,
                Some(name_of(&dir.path())),
            )
        })
    }

    /// MKDIR.
    pub fn mkdir(
        &self,
        req: Req,
        parent: u64,
        name: &std::ffi::OsStr,
        mode: u32,
    ) -> Result<(Arc<Node>, Stat)> {
        let perm = mode & 0o7777;
        let (n, st, _) = self.create_with(req, parent, name, libc::S_IFDIR | perm, |d, name| {
            backing::mkdir(d, name, perm)?;
            backing::made(d, name, libc::S_IFDIR)
        })?;
        Ok((n, st))
    }

    /// MKNOD (regular files, FIFOs, sockets and devices).
    pub fn mknod(
        &self,
        req: Req,
        parent: u64,
        name: &std::ffi::OsStr,
        mode: u32,
        rdev: u32,
    ) -> Result<(Arc<Node>, Stat)> {
        let (n, st, _) = self.create_with(req, parent, name, mode, |d, name| {
            backing::mknod(d, name, mode, u64::from(rdev))?;
            backing::made(d, name, mode & libc::S_IFMT)
        })?;
        Ok((n, st))
    }

    /// SYMLINK.
    pub fn symlink(
        &self,
        req: Req,
        parent: u64,
        name: &std::ffi::OsStr,
        target: &std::path::Path,
    ) -> Result<(Arc<Node>, Stat)> {
        let (n, st, _) =
            self.create_with(req, parent, name, libc::S_IFLNK | 0o777, |d, name| {
                backing::symlink(d, name, target)?;
                backing::made(d, name, libc::S_IFLNK)
            })?;
        Ok((n, st))
    }

    /// READLINK: `lnk_file {read}` (selinux_inode_readlink).
    pub fn readlink(&self, req: Req, id: u64) -> Result<std::path::PathBuf> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        self.gate(|| self.om.inode_readlink(t, &n.sec, name_of(&n.path())))?;
        Ok(backing::readlink(n.fd()?.as_fd())?)
    }

    /// LINK: selinux_inode_link (may_link with MAY_LINK).
    pub fn link(
        &self,
        req: Req,
        id: u64,
        newparent: u64,
        newname: &std::ffi::OsStr,
    ) -> Result<(Arc<Node>, Stat)> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        let dir = self.node(newparent)?;
        let name = component(newname)?;
        self.may_change(t, &dir)?;
        self.gate(|| self.om.inode_link(t, &n.sec, name_of(&n.path()), &dir.sec))?;
        // The node's own inode (an unlinked one has no name left to link: ENOENT).
        let fd = n.fd()?;
        backing::link(fd.as_fd(), dir.fd()?.as_fd(), name)?;
        let st = backing::stat(fd.as_fd())?;
        let rel = Core::child(&dir.path(), name);
        let n = self
            .nodes
            .get_or_make(fd.try_clone()?, &st, &rel, true, |id, fd| {
                self.label(id, &rel, fd, &st)
            });
        Ok((n, st))
    }

    /// UNLINK: selinux_inode_unlink. The victim is found by the resolver first, for its
    /// label; the name is then removed relative to the same directory's descriptor (the
    /// caller's kernel holds that directory locked, so it is the name checked).
    pub fn unlink(&self, req: Req, parent: u64, name: &std::ffi::OsStr) -> Result<()> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let dir = self.node(parent)?;
        let name = component(name)?;
        let (victim, _) = self.existing(&dir, name)?;
        self.may_change(t, &dir)?;
        self.gate(|| self.om.inode_unlink(t, &dir.sec, &victim.sec, name))?;
        Ok(backing::unlink(dir.fd()?.as_fd(), name, false)?)
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
        Ok(backing::unlink(dir.fd()?.as_fd(), name, true)?)
    }

    /// RENAME, with renameat2's flags: selinux_inode_rename (may_rename); for an exchange the
    /// LSM layer asks it twice, the new name's move first (security_inode_rename).
    pub fn rename(
        &self,
        req: Req,
        parent: u64,
        name: &std::ffi::OsStr,
        newparent: u64,
        newname: &std::ffi::OsStr,
        flags: u32,
    ) -> Result<()> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        if flags & !(RENAME_NOREPLACE | RENAME_EXCHANGE) != 0
            || flags == RENAME_NOREPLACE | RENAME_EXCHANGE
        {
            return Err(FsError::errno_of(
                libc::EINVAL,
                format!("rename flags {flags:#x}"),
            ));
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
                self.gate(|| {
                    self.om
                        .inode_permission(t, &moving.sec, MAY_WRITE, Some(oname))
                })?;
            }
            if let Some(v) = victim.as_ref().filter(|v| {
                flags & RENAME_EXCHANGE != 0 && v.sec.class() == seaccess_objmgr::Class::DIR
            }) {
                self.gate(|| self.om.inode_permission(t, &v.sec, MAY_WRITE, Some(nname)))?;
            }
        }
        if flags & RENAME_EXCHANGE != 0 {
            let v = victim.as_ref().ok_or_else(|| {
                FsError::errno_of(libc::ENOENT, format!("{nname}: nothing to exchange with"))
            })?;
            self.gate(|| {
                self.om
                    .inode_rename(t, &nd.sec, &v.sec, nname, &od.sec, oname, Some(&moving.sec))
            })?;
        }
        if flags & RENAME_NOREPLACE != 0 && victim.is_some() {
            return Err(FsError::errno_of(libc::EEXIST, format!("{nname} exists")));
        }
        self.gate(|| {
            self.om.inode_rename(
                t,
                &od.sec,
                &moving.sec,
                oname,
                &nd.sec,
                nname,
                victim.as_ref().map(|v| &*v.sec),
            )
        })?;
        backing::rename(od.fd()?.as_fd(), oname, nd.fd()?.as_fd(), nname, flags)?;
        let (from, to) = (
            Core::child(&od.path(), oname),
            Core::child(&nd.path(), nname),
        );
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
