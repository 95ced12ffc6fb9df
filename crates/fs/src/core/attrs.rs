//! Attributes: getattr (stat), setattr (chmod, chown, utimes, truncate), the extended
//! attribute calls with relabeling through `security.selinux`, statfs, access. Each acts on
//! the node's own descriptor (see [`crate::backing`]).

use std::os::fd::AsFd;
use std::time::SystemTime;

use rustix::fs::OFlags;
use seaccess_objmgr::hooks::fs::{attr, MAY_ACCESS, MAY_READ, MAY_WRITE, XATTR_NAME_SELINUX};

use super::{Core, Req};
use crate::backing::{self, Stat};
use crate::error::{FsError, Result};
use crate::nodes::name_of;

/// A time to set: the caller's clock now, or a given time.
#[derive(Debug, Clone, Copy)]
pub enum SetTime {
    Now,
    At(SystemTime),
}

/// What a SETATTR asks to change.
#[derive(Debug, Clone, Default)]
pub struct SetAttr {
    pub mode: Option<u32>,
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    pub size: Option<u64>,
    pub atime: Option<SetTime>,
    pub mtime: Option<SetTime>,
    /// The open file it was asked through (ftruncate, futimens).
    pub fh: Option<u64>,
}

impl SetAttr {
    /// The VFS's ia_valid bits for the request (ATTR_*_SET for given times, ATTR_FILE
    /// through an open file).
    fn ia_valid(&self) -> u32 {
        let mut v = 0;
        let t = |x: &Option<SetTime>, base: u32, set: u32| match x {
            Some(SetTime::Now) => base,
            Some(SetTime::At(_)) => base | set,
            None => 0,
        };
        if self.mode.is_some() {
            v |= attr::MODE;
        }
        if self.uid.is_some() {
            v |= attr::UID;
        }
        if self.gid.is_some() {
            v |= attr::GID;
        }
        if self.size.is_some() {
            v |= attr::SIZE;
            if self.fh.is_some() {
                v |= attr::FILE;
            }
        }
        v | t(&self.atime, attr::ATIME, attr::ATIME_SET)
            | t(&self.mtime, attr::MTIME, attr::MTIME_SET)
    }
}

fn timespec(t: Option<SetTime>) -> rustix::fs::Timespec {
    match t {
        None => rustix::fs::Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_OMIT,
        },
        Some(SetTime::Now) => rustix::fs::Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_NOW,
        },
        Some(SetTime::At(at)) => {
            let (s, n) = match at.duration_since(std::time::UNIX_EPOCH) {
                Ok(d) => (d.as_secs() as i64, i64::from(d.subsec_nanos())),
                Err(e) => {
                    let d = e.duration();
                    let (s, n) = (-(d.as_secs() as i64), i64::from(d.subsec_nanos()));
                    if n > 0 {
                        (s - 1, 1_000_000_000 - n)
                    } else {
                        (s, 0)
                    }
                }
            };
            rustix::fs::Timespec {
                tv_sec: s,
                tv_nsec: n as _,
            }
        }
    }
}

/// Where libseaccess keeps a label when security.selinux is refused.
const USER_SELINUX: &str = "user.selinux";

/// The name the label goes by through the mount, whatever attribute stores it.
fn is_label(name: &str) -> bool {
    name == XATTR_NAME_SELINUX
}

impl Core {
    /// GETATTR: `{getattr}` (selinux_inode_getattr), then the backing file's attributes.
    pub fn getattr(&self, req: Req, id: u64, fh: Option<u64>) -> Result<Stat> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        self.gate(|| self.om.inode_getattr(t, &n.sec, &self.shown(&n.path())))?;
        if let Some(h) = fh.and_then(|f| self.handle(f).ok()) {
            return Ok(backing::stat(h.file.as_fd())?);
        }
        Ok(backing::stat(n.fd()?.as_fd())?)
    }

    /// SETATTR: selinux_inode_setattr with the request's ia_valid, then the changes in the
    /// order chown(2) and chmod(2) make them (owner first, so that a mode is not cleared
    /// after it is set), the size, the times.
    pub fn setattr(&self, req: Req, id: u64, a: &SetAttr) -> Result<Stat> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        if a.size.is_some() && a.fh.is_none() {
            // truncate(2) by path: do_sys_truncate's path_permission(MAY_WRITE) first.
            self.gate(|| {
                self.om
                    .inode_permission(t, &n.sec, MAY_WRITE, Some(name_of(&n.path())))
            })?;
        }
        self.gate(|| {
            self.om
                .inode_setattr(t, &n.sec, name_of(&n.path()), a.ia_valid())
        })?;
        let fd = n.fd()?;
        if a.uid.is_some() || a.gid.is_some() {
            backing::chown(fd.as_fd(), a.uid, a.gid)?;
        }
        if let Some(m) = a.mode {
            self.backing.chmod(fd.as_fd(), m)?;
        }
        if let Some(size) = a.size {
            match a.fh.and_then(|f| self.handle(f).ok()) {
                Some(h) => h.file.set_len(size)?,
                // truncate(2)'s answers for what is not a regular file (do_sys_truncate), then
                // our own inode reopened for writing.
                None if n.kind == libc::S_IFDIR => {
                    return Err(FsError::errno_of(libc::EISDIR, "truncating a directory"))
                }
                None if n.kind != libc::S_IFREG => {
                    return Err(FsError::errno_of(
                        libc::EINVAL,
                        "truncating what is not a regular file",
                    ))
                }
                None => self
                    .backing
                    .reopen(fd.as_fd(), n.kind, OFlags::WRONLY)?
                    .set_len(size)?,
            }
        }
        if a.atime.is_some() || a.mtime.is_some() {
            let ts = rustix::fs::Timestamps {
                last_access: timespec(a.atime),
                last_modification: timespec(a.mtime),
            };
            backing::utimens(fd.as_fd(), &ts)?;
        }
        Ok(backing::stat(fd.as_fd())?)
    }

    /// GETXATTR: `{getattr}` (selinux_inode_getxattr). `security.selinux` is the node's
    /// label as the checks see it (selinux_inode_getsecurity: the context with its NUL); the
    /// store under its own name is absent.
    pub fn getxattr(&self, req: Req, id: u64, name: &str) -> Result<Vec<u8>> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        self.xattr_permission(t, &n, name, MAY_READ)?;
        self.gate(|| self.om.inode_getxattr(t, &n.sec, name_of(&n.path())))?;
        if is_label(name) {
            let mut v = self
                .server
                .sid_to_context(n.sec.sid())
                .map_err(|e| FsError::Closed(e.to_string()))?
                .into_bytes();
            v.push(0);
            return Ok(v);
        }
        if self.store.hidden(name) {
            return Err(FsError::errno_of(
                libc::ENODATA,
                format!("{name} holds labels and is shown as {XATTR_NAME_SELINUX}"),
            ));
        }
        Ok(self.backing.get_xattr(n.fd()?.as_fd(), name)?)
    }

    /// LISTXATTR: `{getattr}` (selinux_inode_listxattr); `security.selinux` once, always (the
    /// label, whichever attribute stores it), never the store under its own name.
    pub fn listxattr(&self, req: Req, id: u64) -> Result<Vec<u8>> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        self.gate(|| self.om.inode_listxattr(t, &n.sec, name_of(&n.path())))?;
        let mut out = Vec::new();
        for a in self
            .backing
            .list_xattr(n.fd()?.as_fd())?
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
        {
            let s = String::from_utf8_lossy(a);
            if is_label(&s) || self.store.hidden(&s) {
                continue;
            }
            out.extend_from_slice(a);
            out.push(0);
        }
        out.extend_from_slice(XATTR_NAME_SELINUX.as_bytes());
        out.push(0);
        Ok(out)
    }

    /// SETXATTR: selinux_inode_setxattr (for `security.selinux`, after the owner check the
    /// VFS leaves to it: relabelfrom, the context's validity (EINVAL), relabelto, validatetrans
    /// and associate), the store attribute, then selinux_inode_post_setxattr. The store under
    /// its own name is refused (EPERM): labels change only through the checks.
    /// [`crate::published::FSCREATE_XATTR`], on any node, is the caller's fscreate context
    /// (see [`crate::published`]), never an attribute of the node; `user.selinux` is refused
    /// (EPERM), so that a relabel refused here is not written there instead.
    pub fn setxattr(&self, req: Req, id: u64, name: &str, value: &[u8], flags: i32) -> Result<()> {
        if name == crate::published::FSCREATE_XATTR {
            return self.publish_fscreate(req, value);
        }
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        if self.store.hidden(name) {
            return Err(FsError::errno_of(
                libc::EPERM,
                format!("{name} holds labels: set {XATTR_NAME_SELINUX}"),
            ));
        }
        // Not a label here either: a library that takes a refused relabel (EACCES) for a
        // kernel without SELinux and writes its label there instead (libseaccess does) must
        // see the refusal, not a success that changed nothing the mount enforces.
        if name == USER_SELINUX {
            return Err(FsError::errno_of(
                libc::EPERM,
                format!("{USER_SELINUX} is not a label on this mount: set {XATTR_NAME_SELINUX}"),
            ));
        }
        if is_label(name) {
            // inode_owner_or_capable (the capability itself is the caller's kernel's).
            let owner = backing::stat(n.fd()?.as_fd())?.stx_uid;
            if req.uid != 0 && req.uid != owner {
                return Err(FsError::errno_of(libc::EPERM, "only the owner relabels"));
            }
            let mut v = value;
            while let [rest @ .., 0] = v {
                v = rest;
            }
            let ctx = std::str::from_utf8(v)
                .map_err(|_| FsError::errno_of(libc::EINVAL, "a context is text"))?;
            self.gate(|| {
                self.om
                    .inode_setxattr(t, &n.sec, name_of(&n.path()), name, ctx)
            })?;
            let sid = self
                .server
                .context_to_sid(ctx)
                .map_err(|e| FsError::errno_of(libc::EINVAL, e.to_string()))?;
            self.store_label(n.fd()?.as_fd(), sid)?;
            self.om.inode_post_setxattr(&n.sec, name, ctx)?;
            n.set_origin(crate::nodes::Origin::Xattr);
            return Ok(());
        }
        self.xattr_permission(t, &n, name, MAY_WRITE)?;
        self.gate(|| {
            self.om
                .inode_setxattr(t, &n.sec, name_of(&n.path()), name, "")
        })?;
        Ok(self
            .backing
            .set_xattr(n.fd()?.as_fd(), name, value, flags as u32)?)
    }

    /// REMOVEXATTR: selinux_inode_removexattr (`security.selinux` is never removed, checks
    /// or not; nor is the store under its own name: EPERM).
    pub fn removexattr(&self, req: Req, id: u64, name: &str) -> Result<()> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        if self.store.hidden(name) {
            return Err(FsError::errno_of(
                libc::EPERM,
                format!("{name} holds labels"),
            ));
        }
        self.xattr_permission(t, &n, name, MAY_WRITE)?;
        self.gate(|| {
            self.om
                .inode_removexattr(t, &n.sec, name_of(&n.path()), name)
        })?;
        if is_label(name) {
            return Err(FsError::errno_of(
                libc::EACCES,
                "the label is never removed",
            ));
        }
        Ok(self.backing.remove_xattr(n.fd()?.as_fd(), name)?)
    }

    /// The VFS's xattr_permission: security.*, system.* and trusted.* names are left to the
    /// security module (and trusted.* to a capability the caller's kernel checks); any other
    /// (user.*) asks inode_permission, so `{read}` or `{write}` on the file first.
    fn xattr_permission(
        &self,
        t: &seaccess_objmgr::Task,
        n: &crate::nodes::Node,
        name: &str,
        mask: u32,
    ) -> Result<()> {
        if ["security.", "system.", "trusted."]
            .iter()
            .any(|p| name.starts_with(p))
        {
            return Ok(());
        }
        self.gate(|| {
            self.om
                .inode_permission(t, &n.sec, mask, Some(name_of(&n.path())))
        })
    }

    /// STATFS: `filesystem {getattr}` (selinux_sb_statfs).
    pub fn statfs(&self, req: Req) -> Result<rustix::fs::StatVfs> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let root = self.node(1)?;
        self.gate(|| self.om.sb_statfs(t, &root.sec))?;
        Ok(backing::statfs(root.fd()?.as_fd())?)
    }

    /// ACCESS (sent only without default_permissions): selinux_inode_permission with
    /// MAY_ACCESS, which changes only what is audited.
    pub fn access(&self, req: Req, id: u64, mask: u32) -> Result<()> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        self.gate(|| {
            self.om
                .inode_permission(t, &n.sec, (mask & 7) | MAY_ACCESS, Some(name_of(&n.path())))
        })?;
        Ok(())
    }
}
