//! Attributes: setattr (chmod, chown, utimes, truncate), extended attributes, and relabeling
//! through the `security.selinux` attribute.

use seaccess_types::{PolicyCap, Sid};

use crate::audit::untrusted;
use crate::blobs::InodeSec;
use crate::classes::{common_file, filesystem, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

use super::dentry;

/// The attribute name relabeling goes through.
pub const XATTR_NAME_SELINUX: &str = "security.selinux";

/// The VFS's setattr bits (linux/fs.h ATTR_*).
pub mod attr {
    pub const MODE: u32 = 1;
    pub const UID: u32 = 2;
    pub const GID: u32 = 4;
    pub const SIZE: u32 = 8;
    pub const ATIME: u32 = 16;
    pub const MTIME: u32 = 32;
    pub const CTIME: u32 = 64;
    pub const ATIME_SET: u32 = 128;
    pub const MTIME_SET: u32 = 256;
    pub const FORCE: u32 = 512;
    pub const KILL_SUID: u32 = 2048;
    pub const KILL_SGID: u32 = 4096;
    pub const FILE: u32 = 8192;
    pub const KILL_PRIV: u32 = 16384;
    pub const OPEN: u32 = 32768;
    pub const TIMES_SET: u32 = 65536;
}

impl ObjectManager {
    /// chmod, chown, utimes, truncate (selinux_inode_setattr): `{setattr}` when the mode,
    /// owner or explicit times change; otherwise `{write}`, with `{open}` for a truncate by
    /// path under the open_perms capability. ATTR_FORCE first drops the bits the kernel lets
    /// it force; nothing left asks nothing. DENTRY audit data.
    pub fn inode_setattr(
        &self,
        task: &Task,
        inode: &InodeSec,
        name: &str,
        ia_valid: u32,
    ) -> Result<()> {
        let mut valid = ia_valid;
        if valid & attr::FORCE != 0 {
            valid &= !(attr::KILL_SUID | attr::KILL_SGID | attr::MODE | attr::FORCE);
            if valid == 0 {
                return Ok(());
            }
        }
        let av = if valid
            & (attr::MODE
                | attr::UID
                | attr::GID
                | attr::ATIME_SET
                | attr::MTIME_SET
                | attr::TIMES_SET)
            != 0
        {
            common_file::SETATTR
        } else {
            let mut av = common_file::WRITE;
            // Sockets (sockfs) never get here as inodes of a filesystem this object manager
            // labels, so only the capability and the flags decide.
            if valid & attr::SIZE != 0
                && valid & attr::FILE == 0
                && self.policy_caps().contains(PolicyCap::OpenPerms)
            {
                av |= common_file::OPEN;
            }
            av
        };
        self.check(
            Hook::InodeSetattr,
            task,
            inode.sid(),
            inode.class(),
            av,
            &dentry(inode, name),
        )
        .map(|_| ())
    }

    /// setxattr(2) (selinux_inode_setxattr) by a task without CAP_MAC_ADMIN: see
    /// [`ObjectManager::inode_setxattr_caps`].
    pub fn inode_setxattr(
        &self,
        task: &Task,
        inode: &InodeSec,
        name: &str,
        xattr: &str,
        value: &str,
    ) -> Result<()> {
        self.inode_setxattr_caps(task, inode, name, xattr, value, false)
    }

    /// setxattr(2) (selinux_inode_setxattr): `{setattr}` for any attribute but
    /// `security.selinux`; for that one the relabel checks: `{relabelfrom}` on the current
    /// label; a value the policy does not define as a context is refused (EINVAL and an
    /// `op=setxattr invalid_context=` record) unless the task has CAP_MAC_ADMIN
    /// (`cap_mac_admin`: the POSIX capability in the initial namespace, the caller's to know,
    /// as has_cap_mac_admin's cap_capable) and `capability2 {mac_admin}` (audited), when it is
    /// kept unmapped (security_context_to_sid_force: decided as the unlabeled SID); then
    /// `{relabelto}` on the new label, the policy's validatetrans constraints (EPERM, in
    /// enforcing mode), and the new label `filesystem {associate}` with the filesystem. Only
    /// where inodes carry labels (else EOPNOTSUPP). The owner check before it is the caller's.
    /// Call [`ObjectManager::inode_post_setxattr`] once the value is stored.
    pub fn inode_setxattr_caps(
        &self,
        task: &Task,
        inode: &InodeSec,
        name: &str,
        xattr: &str,
        value: &str,
        cap_mac_admin: bool,
    ) -> Result<()> {
        let ad = dentry(inode, name);
        if xattr != XATTR_NAME_SELINUX {
            return self
                .check(
                    Hook::InodeSetxattr,
                    task,
                    inode.sid(),
                    inode.class(),
                    common_file::SETATTR,
                    &ad,
                )
                .map(|_| ());
        }
        if !inode.sb.sblabel {
            return Err(ObjmgrError::NotSupported(format!(
                "{} does not support per-file labels",
                inode.sb.fstype
            )));
        }
        let old = inode.sid();
        self.check(
            Hook::InodeSetxattr,
            task,
            old,
            inode.class(),
            common_file::RELABELFROM,
            &ad,
        )?;
        let ctx = value.trim_end_matches('\0');
        let new = match self.server().context_to_sid(ctx) {
            Ok(s) => s,
            // has_cap_mac_admin(true): CAP_MAC_ADMIN (capability 33), then its check, audited.
            Err(_) if cap_mac_admin && self.capable_opts(task, 33, true, true).is_ok() => {
                self.server().context_to_sid_force(ctx)?
            }
            Err(e) => {
                // The kernel's AUDIT_SELINUX_ERR record (a task without CAP_MAC_ADMIN).
                let mut line = String::from("op=setxattr");
                untrusted(&mut line, "invalid_context", ctx);
                self.avc().emit_audit_line(line.trim_start());
                return Err(ObjmgrError::InvalidContext {
                    context: ctx.to_string(),
                    why: e.to_string(),
                });
            }
        };
        self.check(
            Hook::InodeSetxattr,
            task,
            new,
            inode.class(),
            common_file::RELABELTO,
            &ad,
        )?;
        let tsid = task.sid();
        let ok = self.with_policy_class(inode.class(), |c| {
            Ok(self.server().validate_transition(old, new, tsid, c)?)
        })?;
        if !ok {
            self.validatetrans_failed(old, new, tsid, inode.class());
            if self.avc().enforcing() {
                return Err(ObjmgrError::NotPermitted(format!(
                    "validatetrans forbids relabeling a {} to {ctx}",
                    inode.class().name()
                )));
            }
        }
        self.check_sid(
            Hook::InodeSetxattr,
            task,
            new,
            inode.sb.sid,
            Class::FILESYSTEM,
            filesystem::ASSOCIATE,
            &ad,
        )
        .map(|_| ())
    }

    /// The kernel's security_validtrans_handle_fail record.
    fn validatetrans_failed(&self, old: Sid, new: Sid, task: Sid, class: Class) {
        let names = self.server().names();
        let ctx = |s: Sid| {
            names
                .sid_to_context(s)
                .unwrap_or_else(|| format!("sid={}", s.0))
        };
        let line = format!(
            "op=security_validate_transition seresult=denied oldcontext={} newcontext={} taskcontext={} tclass={}",
            ctx(old),
            ctx(new),
            ctx(task),
            class.name()
        );
        self.avc().emit_audit_line(&line);
    }

    /// After a `security.selinux` value is stored (selinux_inode_post_setxattr): the inode
    /// takes the new SID (security_context_to_sid_force: a context the policy does not define
    /// is kept unmapped), forgetting every fast-path record made under the old one.
    pub fn inode_post_setxattr(&self, inode: &InodeSec, xattr: &str, value: &str) -> Result<()> {
        if xattr != XATTR_NAME_SELINUX {
            return Ok(());
        }
        let ctx = value.trim_end_matches('\0');
        let sid =
            self.server()
                .context_to_sid_force(ctx)
                .map_err(|e| ObjmgrError::InvalidContext {
                    context: ctx.to_string(),
                    why: e.to_string(),
                })?;
        inode.set_sid(sid);
        Ok(())
    }

    /// getxattr(2), any attribute (selinux_inode_getxattr): `{getattr}`.
    pub fn inode_getxattr(&self, task: &Task, inode: &InodeSec, name: &str) -> Result<()> {
        self.check(
            Hook::InodeGetxattr,
            task,
            inode.sid(),
            inode.class(),
            common_file::GETATTR,
            &dentry(inode, name),
        )
        .map(|_| ())
    }

    /// listxattr(2) (selinux_inode_listxattr): `{getattr}`.
    pub fn inode_listxattr(&self, task: &Task, inode: &InodeSec, name: &str) -> Result<()> {
        self.check(
            Hook::InodeListxattr,
            task,
            inode.sid(),
            inode.class(),
            common_file::GETATTR,
            &dentry(inode, name),
        )
        .map(|_| ())
    }

    /// removexattr(2) (selinux_inode_removexattr): `{setattr}`; `security.selinux` cannot be
    /// removed (EACCES, no check).
    pub fn inode_removexattr(
        &self,
        task: &Task,
        inode: &InodeSec,
        name: &str,
        xattr: &str,
    ) -> Result<()> {
        if xattr == XATTR_NAME_SELINUX {
            return Err(ObjmgrError::Denied {
                what: "removing security.selinux".into(),
            });
        }
        self.check(
            Hook::InodeRemovexattr,
            task,
            inode.sid(),
            inode.class(),
            common_file::SETATTR,
            &dentry(inode, name),
        )
        .map(|_| ())
    }
}
