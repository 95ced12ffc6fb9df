//! Credentials made for acting on someone else's behalf, as the kernel's
//! selinux_kernel_act_as, selinux_kernel_create_files_as and selinux_dentry_create_files_as
//! make them: a service acting as another SID, creating files with an inode's label, or with
//! the label a file would get from another credential (as overlayfs creates upper files as its
//! mounter). And the label of a file about to be created, for a server that must send it with
//! the create (as FUSE's and NFS's labelled creates do with selinux_dentry_init_security).
//!
//! The credential hooks that only copy or read the blob are [`crate::Cred`]'s own functions:
//! [`crate::Cred::prepare`] copies every SID (cred_prepare, cred_transfer), [`crate::Cred::sid`]
//! reads it (cred_getsecid, cred_getlsmprop).

use std::sync::Arc;

use seaccess_types::Sid;

use crate::audit::AuditData;
use crate::blobs::InodeSec;
use crate::classes::{inode_class, kernel_service, Class};
use crate::counters::Hook;
use crate::cred::{Cred, PreparedCred, Task};
use crate::error::Result;
use crate::ObjectManager;

impl ObjectManager {
    /// `task` makes a credential acting as `secid` from `base` (selinux_kernel_act_as):
    /// `kernel_service {use_as_override}` from the task to `secid`; the credential has that
    /// SID and no fscreate, keycreate or sockcreate SID (so what it creates is labelled from
    /// `secid`). Use it with [`Task::override_creds`].
    pub fn kernel_act_as(&self, task: &Task, base: PreparedCred, secid: Sid) -> Result<Arc<Cred>> {
        self.check(
            Hook::KernelActAs,
            task,
            secid,
            Class::KERNEL_SERVICE,
            kernel_service::USE_AS_OVERRIDE,
            &AuditData::None,
        )?;
        let mut new = base;
        new.sid = secid;
        new.create_sid = None;
        new.keycreate_sid = None;
        new.sockcreate_sid = None;
        Ok(new.build())
    }

    /// `task` makes a credential from `base` that creates files labelled as `inode` is
    /// (selinux_kernel_create_files_as): `kernel_service {create_files_as}` from the task to
    /// the inode's SID; the credential's fscreate SID is that SID.
    pub fn kernel_create_files_as(
        &self,
        task: &Task,
        base: PreparedCred,
        inode: &InodeSec,
    ) -> Result<Arc<Cred>> {
        let isid = inode.sid();
        self.check(
            Hook::KernelCreateFilesAs,
            task,
            isid,
            Class::KERNEL_SERVICE,
            kernel_service::CREATE_FILES_AS,
            &AuditData::None,
        )?;
        let mut new = base;
        new.create_sid = Some(isid);
        Ok(new.build())
    }

    /// A credential from `new` whose fscreate SID is the label a file of `mode` named `name`
    /// in `dir` would get if `task` created it (selinux_dentry_create_files_as): the file is
    /// then created with `new` (the mounter's, say) but labelled for `task`. No check.
    pub fn dentry_create_files_as(
        &self,
        task: &Task,
        dir: &InodeSec,
        name: &str,
        mode: u32,
        new: PreparedCred,
    ) -> Result<Arc<Cred>> {
        let sid = self.determine_inode_label(task, dir, name, inode_class(mode))?;
        let mut new = new;
        new.create_sid = Some(sid);
        Ok(new.build())
    }

    /// The label a file of `mode` named `name` in `dir` gets when `task` creates it, before
    /// it exists (selinux_dentry_init_security): its SID and context, the value of
    /// `security.selinux` ([`crate::hooks::fs::XATTR_NAME_SELINUX`]). No check.
    pub fn dentry_init_security(
        &self,
        task: &Task,
        dir: &InodeSec,
        name: &str,
        mode: u32,
    ) -> Result<(Sid, String)> {
        let sid = self.determine_inode_label(task, dir, name, inode_class(mode))?;
        let ctx = self.context_of(sid)?;
        Ok((sid, ctx))
    }
}
