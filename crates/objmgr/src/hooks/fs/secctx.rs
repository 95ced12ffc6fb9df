//! An inode's label as the `security.selinux` attribute's text: reading it, setting it where
//! the filesystem or a network filesystem's server supplies it, listing it; and an overlay
//! copying a lower file up with the lower file's label.

use seaccess_types::Sid;

use crate::blobs::InodeSec;
use crate::classes::{capability2, Class};
use crate::counters::Hook;
use crate::cred::{PreparedCred, Task};
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

use super::XATTR_NAME_SELINUX;

/// The attribute's name inside the `security.` namespace (the kernel's XATTR_SELINUX_SUFFIX).
const XATTR_SELINUX_SUFFIX: &str = "selinux";

impl ObjectManager {
    /// The text of `security.<name>` of `inode` (selinux_inode_getsecurity): for `selinux`,
    /// the inode's context; any other name is not SELinux's (EOPNOTSUPP: the filesystem's
    /// stored value is read instead). The permission check is
    /// [`ObjectManager::inode_getxattr`]'s. A task with CAP_MAC_ADMIN in its capability set
    /// (`cap_mac_admin`, the caller's cap_capable) is also asked `capability2 {mac_admin}`
    /// without an audit record, as the kernel asks it to choose the raw context over the
    /// policy's; both are the security server's one text for the SID here.
    pub fn inode_getsecurity(
        &self,
        task: &Task,
        inode: &InodeSec,
        name: &str,
        cap_mac_admin: bool,
    ) -> Result<String> {
        if name != XATTR_SELINUX_SUFFIX {
            return Err(ObjmgrError::NotSupported(format!(
                "security.{name} is not SELinux's"
            )));
        }
        if cap_mac_admin {
            let sid = task.sid();
            // has_cap_mac_admin(false): a denial only means the in-core context.
            self.check_noaudit(
                Hook::InodeGetsecurity,
                sid,
                sid,
                Class::CAPABILITY2,
                capability2::MAC_ADMIN,
            )?;
        }
        let sid = inode.sid();
        self.context_of(sid)
    }

    /// Sets the label of `inode` from the value of `security.<name>` a filesystem supplies
    /// without a setxattr(2) (selinux_inode_setsecurity): only `selinux` (else EOPNOTSUPP),
    /// only where inodes carry labels (else EOPNOTSUPP), never empty (EACCES), and a valid
    /// context (EINVAL). No permission is asked: the caller is the filesystem, not a task.
    pub fn inode_setsecurity(&self, inode: &InodeSec, name: &str, value: &[u8]) -> Result<()> {
        if name != XATTR_SELINUX_SUFFIX {
            return Err(ObjmgrError::NotSupported(format!(
                "security.{name} is not SELinux's"
            )));
        }
        if !inode.sb.sblabel {
            return Err(ObjmgrError::NotSupported(format!(
                "{} does not support per-file labels",
                inode.sb.fstype
            )));
        }
        if value.is_empty() {
            return Err(ObjmgrError::Denied {
                what: "an empty security.selinux value".into(),
            });
        }
        // The context ends at its first NUL, as the kernel's copy of it does.
        let ctx = value.split(|&b| b == 0).next().unwrap_or_default();
        let ctx = std::str::from_utf8(ctx).map_err(|_| ObjmgrError::InvalidContext {
            context: String::from_utf8_lossy(ctx).into_owned(),
            why: "not UTF-8".into(),
        })?;
        let sid = self
            .server()
            .context_to_sid(ctx)
            .map_err(|e| ObjmgrError::InvalidContext {
                context: ctx.to_string(),
                why: e.to_string(),
            })?;
        inode.set_sid(sid);
        Ok(())
    }

    /// The attribute SELinux adds to every inode's listxattr(2) (selinux_inode_listsecurity):
    /// `security.selinux`.
    pub fn inode_listsecurity(&self) -> &'static str {
        XATTR_NAME_SELINUX
    }

    /// Whether SELinux alone decides who may set or remove the attribute `name`, so that the
    /// capability checks the VFS makes for other `security.` attributes are skipped
    /// (selinux_inode_xattr_skipcap): only `security.selinux`.
    pub fn inode_xattr_skipcap(&self, name: &str) -> bool {
        name == XATTR_NAME_SELINUX
    }

    /// The inode's context for a network filesystem's server to send its client
    /// (selinux_inode_getsecctx): [`ObjectManager::inode_getsecurity`] of `selinux`.
    pub fn inode_getsecctx(
        &self,
        task: &Task,
        inode: &InodeSec,
        cap_mac_admin: bool,
    ) -> Result<String> {
        self.inode_getsecurity(task, inode, XATTR_SELINUX_SUFFIX, cap_mac_admin)
    }

    /// A network filesystem's server labels `inode` (entry `name`) with the context `ctx` a
    /// client sent, as `task` (selinux_inode_setsecctx): a setxattr(2) of `security.selinux`,
    /// with its checks ([`ObjectManager::inode_setxattr`]), then the new label
    /// ([`ObjectManager::inode_post_setxattr`]); the caller stores the value between.
    pub fn inode_setsecctx(
        &self,
        task: &Task,
        inode: &InodeSec,
        name: &str,
        ctx: &str,
    ) -> Result<()> {
        self.inode_setxattr(task, inode, name, XATTR_NAME_SELINUX, ctx)?;
        self.inode_post_setxattr(inode, XATTR_NAME_SELINUX, ctx)
    }

    /// A network filesystem's client learns the label of `inode` from its server
    /// (selinux_inode_notifysecctx): [`ObjectManager::inode_setsecurity`], except that a
    /// filesystem without per-file labels keeps its own label silently.
    pub fn inode_notifysecctx(&self, inode: &InodeSec, ctx: &[u8]) -> Result<()> {
        match self.inode_setsecurity(inode, XATTR_SELINUX_SUFFIX, ctx) {
            Err(ObjmgrError::NotSupported(_)) => Ok(()),
            r => r,
        }
    }

    /// Whether `security.<name>` is the attribute holding the MAC label (selinux_ismaclabel):
    /// `selinux` is, so a network filesystem carries it as the label.
    pub fn ismaclabel(&self, name: &str) -> bool {
        name == XATTR_SELINUX_SUFFIX
    }

    /// The inode's SID, for audit filter rules and the like (selinux_inode_getlsmprop).
    pub fn inode_getlsmprop(&self, inode: &InodeSec) -> Sid {
        inode.sid()
    }

    /// An overlay copies the lower file `src` up (selinux_inode_copy_up): the credential the
    /// copy is made with (`new`, or the task's prepared anew) creates files with the lower
    /// file's SID, so the upper file keeps the label.
    pub fn inode_copy_up(
        &self,
        task: &Task,
        src: &InodeSec,
        new: Option<PreparedCred>,
    ) -> PreparedCred {
        let mut c = new.unwrap_or_else(|| task.cred().prepare());
        c.create_sid = Some(src.sid());
        c
    }

    /// Whether an overlay copying a file up drops the lower file's attribute `name` rather
    /// than copy it (selinux_inode_copy_up_xattr): `security.selinux` is dropped, since the
    /// copy already has its label from [`ObjectManager::inode_copy_up`]; other attributes are
    /// not SELinux's to decide.
    pub fn inode_copy_up_xattr(&self, name: &str) -> bool {
        name == XATTR_NAME_SELINUX
    }
}
