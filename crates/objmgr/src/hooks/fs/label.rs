//! Labels of filesystems and inodes: a mount's labeling behaviour and SIDs
//! (selinux_set_mnt_opts, sb_finish_set_opts), an existing inode's SID
//! (inode_doinit_with_dentry) and a new inode's SID (selinux_determine_inode_label).

use std::sync::Arc;

use seaccess_types::{FsUse, PolicyCap, Sid};

use crate::blobs::{InodeSec, Labeling, SuperSec};
use crate::classes::{inode_class, Class};
use crate::cred::Task;
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

/// The kernel's initial SID numbers (flask.h).
pub(crate) const SECINITSID_KERNEL: u32 = 1;
pub(crate) const SECINITSID_UNLABELED: u32 = 3;
pub(crate) const SECINITSID_FILE: u32 = 5;

/// The SELinux mount options, each a context (the kernel's selinux_mnt_opts).
#[derive(Clone, Copy, Debug, Default)]
pub struct MountOpts<'a> {
    /// context=: every inode has this SID, and the filesystem too unless fscontext= is given.
    pub context: Option<&'a str>,
    /// defcontext=: the SID of inodes without a label (xattr filesystems only).
    pub defcontext: Option<&'a str>,
    /// rootcontext=: the root inode's SID.
    pub rootcontext: Option<&'a str>,
    /// fscontext=: the filesystem's SID.
    pub fscontext: Option<&'a str>,
    /// The filesystem keeps labels itself and asks for native labeling (the kernel's
    /// SECURITY_LSM_NATIVE_LABELS mount flag, which labeled NFS passes); ignored with context=.
    pub native_labels: bool,
}

/// Genfs filesystems whose inodes may carry their own labels (selinux_is_genfs_special_handling).
fn genfs_sblabel(fstype: &str, caps: seaccess_types::PolicyCaps) -> bool {
    matches!(
        fstype,
        "sysfs" | "pstore" | "debugfs" | "tracefs" | "rootfs"
    ) || (matches!(fstype, "cgroup" | "cgroup2") && caps.contains(PolicyCap::CgroupSeclabel))
        || (fstype == "functionfs" && caps.contains(PolicyCap::FunctionfsSeclabel))
}

/// Filesystems where genfscon is looked up per path (SE_SBGENFS in selinux_set_mnt_opts).
fn genfs_paths(fstype: &str, caps: seaccess_types::PolicyCaps) -> bool {
    matches!(
        fstype,
        "proc"
            | "sysfs"
            | "cgroup"
            | "cgroup2"
            | "debugfs"
            | "tracefs"
            | "binder"
            | "bpf"
            | "pstore"
            | "securityfs"
    ) || (fstype == "functionfs" && caps.contains(PolicyCap::FunctionfsSeclabel))
}

impl ObjectManager {
    fn initial(&self, n: u32) -> Result<Sid> {
        self.server()
            .initial_sid(n)
            .ok_or_else(|| ObjmgrError::Rejected(format!("the policy defines no initial SID {n}")))
    }

    fn mount_context(&self, what: &str, ctx: &str) -> Result<Sid> {
        self.server()
            .context_to_sid(ctx)
            .map_err(|e| ObjmgrError::InvalidContext {
                context: ctx.to_string(),
                why: format!("{what}: {e}"),
            })
    }

    /// Mounts filesystem `fstype` from `dev` (the name audit records give as `dev=`): its
    /// labeling behaviour and SIDs from the policy's fs_use and genfscon statements and the
    /// mount options (the kernel's selinux_set_mnt_opts with sb_finish_set_opts and
    /// security_fs_use). The options' relabel checks need a mounter: see
    /// [`ObjectManager::mount_as`]. A filesystem is assumed to support extended attributes.
    pub fn mount(&self, dev: &str, fstype: &str, opts: &MountOpts) -> Result<Arc<SuperSec>> {
        self.mount_sb(None, dev, fstype, opts)
    }

    /// [`ObjectManager::mount`] by `task`, with the checks selinux_set_mnt_opts makes for each
    /// option (may_context_mount_sb_relabel, may_context_mount_inode_relabel; no audit data).
    pub fn mount_as(
        &self,
        task: &Task,
        dev: &str,
        fstype: &str,
        opts: &MountOpts,
    ) -> Result<Arc<SuperSec>> {
        self.mount_sb(Some(task), dev, fstype, opts)
    }

    fn mount_sb(
        &self,
        task: Option<&Task>,
        dev: &str,
        fstype: &str,
        opts: &MountOpts,
    ) -> Result<Arc<SuperSec>> {
        use crate::classes::filesystem as fs;
        use crate::counters::Hook;
        use crate::AuditData;
        if opts.context.is_some() && opts.defcontext.is_some() {
            return Err(ObjmgrError::Invalid(
                "context= and defcontext= exclude each other".into(),
            ));
        }
        let unlabeled = self.initial(SECINITSID_UNLABELED)?;
        let caps = self.policy_caps();
        let (mut labeling, mut sid) = match self.server().fs_use(fstype) {
            Some((FsUse::Xattr, s)) => (Labeling::Xattr, s),
            Some((FsUse::Trans, s)) => (Labeling::Trans, s),
            Some((FsUse::Task, s)) => (Labeling::Task, s),
            // fs_use statements naming genfs, none or native: inodes take the filesystem's
            // SID, or genfscon's on the filesystems the kernel looks it up for.
            Some((FsUse::Other, s)) => (Labeling::Genfs, s),
            Some((FsUse::Native, s)) => (Labeling::Native, s),
            // No genfscon for "/" either: the kernel's SECURITY_FS_USE_NONE, whose inodes get
            // the filesystem's SID (unlabeled), as genfs ones do.
            None => (
                Labeling::Genfs,
                self.with_policy_class(Class::DIR, |c| {
                    Ok(self.server().genfs_sid(fstype, "/", c))
                })?
                .unwrap_or(unlabeled),
            ),
        };
        let mut def_sid = self.initial(SECINITSID_FILE)?;
        let mut mntpoint_sid = unlabeled;
        let mut root_sid = None;
        let check = |perm: u32, ssid: Sid, tsid: Sid| -> Result<()> {
            match task {
                Some(t) => self
                    .check_sid(
                        Hook::Other,
                        t,
                        ssid,
                        tsid,
                        Class::FILESYSTEM,
                        perm,
                        &AuditData::None,
                    )
                    .map(|_| ()),
                None => Ok(()),
            }
        };
        let me = task.map(Task::sid);
        // may_context_mount_sb_relabel: relabelfrom the current SID, relabelto the new one.
        let sb_relabel = |from: Sid, to: Sid| -> Result<()> {
            match me {
                Some(s) => {
                    check(fs::RELABELFROM, s, from)?;
                    check(fs::RELABELTO, s, to)
                }
                None => Ok(()),
            }
        };
        // may_context_mount_inode_relabel: relabelfrom the filesystem, and the new SID may be
        // associated with it.
        let inode_relabel = |new: Sid, fs_sid: Sid| -> Result<()> {
            match me {
                Some(s) => {
                    check(fs::RELABELFROM, s, fs_sid)?;
                    check(fs::ASSOCIATE, new, fs_sid)
                }
                None => Ok(()),
            }
        };
        if let Some(c) = opts.fscontext {
            let x = self.mount_context("fscontext", c)?;
            sb_relabel(sid, x)?;
            sid = x;
        }
        if opts.native_labels && opts.context.is_none() {
            labeling = Labeling::Native;
        }
        // A context= without rootcontext= is the root's context too, checked as rootcontext=
        // is (selinux_set_mnt_opts sets rootcontext_sid = context_sid).
        let mut rootcontext = match opts.rootcontext {
            Some(c) => Some(self.mount_context("rootcontext", c)?),
            None => None,
        };
        if let Some(c) = opts.context {
            let x = self.mount_context("context", c)?;
            if opts.fscontext.is_some() {
                inode_relabel(x, sid)?;
            } else {
                sb_relabel(sid, x)?;
                sid = x;
            }
            rootcontext = rootcontext.or(Some(x));
            labeling = Labeling::Mountpoint;
            mntpoint_sid = x;
        }
        if let Some(x) = rootcontext {
            inode_relabel(x, sid)?;
            root_sid = Some(x);
        }
        if let Some(c) = opts.defcontext {
            if labeling != Labeling::Xattr && labeling != Labeling::Native {
                return Err(ObjmgrError::Invalid(format!("defcontext= on {fstype}, which neither uses extended attributes nor labels natively")));
            }
            let x = self.mount_context("defcontext", c)?;
            if x != def_sid {
                inode_relabel(x, sid)?;
            }
            def_sid = x;
        }
        let sblabel = match labeling {
            Labeling::Xattr | Labeling::Trans | Labeling::Task | Labeling::Native => true,
            Labeling::Genfs => genfs_sblabel(fstype, caps),
            Labeling::Mountpoint => false,
        };
        Ok(Arc::new(SuperSec {
            dev: dev.into(),
            fstype: fstype.into(),
            labeling,
            sid,
            def_sid,
            mntpoint_sid,
            root_sid,
            sblabel,
            genfs_paths: genfs_paths(fstype, caps),
        }))
    }

    /// Labels an existing inode of `sb` as it comes into use (selinux_d_instantiate, which is
    /// the kernel's inode_doinit_with_dentry): `path` is its
    /// path inside the filesystem (for genfscon), `xattr` its `security.selinux` value if it has
    /// one. Inodes of task- and transition-labelled filesystems are labelled as allocated by
    /// the kernel (its initial SID); [`ObjectManager::inode_init_as`] names the allocating task.
    pub fn inode_init(
        &self,
        sb: &Arc<SuperSec>,
        ino: u64,
        mode: u32,
        path: &str,
        xattr: Option<&str>,
    ) -> InodeSec {
        let kernel = self
            .server()
            .initial_sid(SECINITSID_KERNEL)
            .unwrap_or(Sid::NULL);
        self.inode_init_sid(kernel, sb, ino, mode, path, xattr)
    }

    /// [`ObjectManager::inode_init`] for an inode `task` allocated.
    pub fn inode_init_as(
        &self,
        task: &Task,
        sb: &Arc<SuperSec>,
        ino: u64,
        mode: u32,
        path: &str,
        xattr: Option<&str>,
    ) -> InodeSec {
        self.inode_init_sid(task.sid(), sb, ino, mode, path, xattr)
    }

    fn inode_init_sid(
        &self,
        task_sid: Sid,
        sb: &Arc<SuperSec>,
        ino: u64,
        mode: u32,
        path: &str,
        xattr: Option<&str>,
    ) -> InodeSec {
        let class = inode_class(mode);
        let sid = self.inode_label(task_sid, sb, class, path, xattr);
        InodeSec::new(sb.clone(), ino, class, Some(sid))
    }

    /// The label inode_doinit_with_dentry gives, by the filesystem's behaviour. A label that
    /// cannot be computed is the unlabeled SID (the kernel leaves such an inode unlabelled,
    /// which its checks treat alike).
    fn inode_label(
        &self,
        task_sid: Sid,
        sb: &SuperSec,
        class: Class,
        path: &str,
        xattr: Option<&str>,
    ) -> Sid {
        let unlabeled = self
            .server()
            .initial_sid(SECINITSID_UNLABELED)
            .unwrap_or(Sid::NULL);
        if path == "/" {
            if let Some(s) = sb.root_sid {
                return s;
            }
        }
        match sb.labeling {
            Labeling::Xattr => match xattr {
                None => sb.def_sid,
                // security_context_to_sid_default: an invalid context is kept as an unmapped
                // SID, decided as the unlabeled SID until a policy defines it.
                Some(ctx) => self
                    .server()
                    .context_to_sid_force(ctx.trim_end_matches('\0'))
                    .unwrap_or(unlabeled),
            },
            Labeling::Task => task_sid,
            Labeling::Trans => self
                .with_policy_class(class, |c| {
                    Ok(self.server().transition_sid(task_sid, sb.sid, c, None)?)
                })
                .unwrap_or(unlabeled),
            Labeling::Mountpoint => sb.mntpoint_sid,
            // The label the filesystem reports, set as selinux_inode_setsecurity sets it (a
            // context the policy does not define is refused, leaving the inode unlabeled).
            Labeling::Native => xattr
                .and_then(|ctx| {
                    self.server()
                        .context_to_sid(ctx.trim_end_matches('\0'))
                        .ok()
                })
                .unwrap_or(unlabeled),
            Labeling::Genfs => {
                let symlinks = self
                    .policy_caps()
                    .contains(PolicyCap::GenfsSeclabelSymlinks);
                if !sb.genfs_paths || (class == Class::LNK_FILE && !symlinks) {
                    return sb.sid;
                }
                let p = if &*sb.fstype == "proc" {
                    strip_pid(path)
                } else {
                    path.into()
                };
                self.with_policy_class(class, |c| Ok(self.server().genfs_sid(&sb.fstype, &p, c)))
                    .ok()
                    .flatten()
                    .unwrap_or(unlabeled)
            }
        }
    }

    /// The SID a new inode of `class` named `name` in `dir` gets when `task` creates it (the
    /// kernel's selinux_determine_inode_label): the mount's context=, else the creator's
    /// setfscreatecon SID where inodes carry labels, else the type transition from the
    /// creator to the directory with the name.
    pub fn determine_inode_label(
        &self,
        task: &Task,
        dir: &InodeSec,
        name: &str,
        class: Class,
    ) -> Result<Sid> {
        let sb = &dir.sb;
        if sb.labeling == Labeling::Mountpoint {
            return Ok(sb.mntpoint_sid);
        }
        if sb.sblabel {
            if let Some(s) = task.cred().create_sid() {
                return Ok(s);
            }
        }
        let (ssid, tsid) = (task.sid(), dir.sid());
        self.with_policy_class(class, |c| {
            Ok(self.server().transition_sid(ssid, tsid, c, Some(name))?)
        })
    }

    /// The blob of an inode just created in `dir` with SID `sid` from
    /// [`ObjectManager::inode_create`] (selinux_inode_init_security, where inodes carry
    /// labels; elsewhere the label inode_doinit_with_dentry gives, `path` being the new
    /// inode's path inside the filesystem).
    pub fn inode_post_create(
        &self,
        task: &Task,
        dir: &InodeSec,
        ino: u64,
        mode: u32,
        path: &str,
        sid: Sid,
    ) -> InodeSec {
        let class = inode_class(mode);
        if dir.sb.sblabel {
            return InodeSec::new(dir.sb.clone(), ino, class, Some(sid));
        }
        let s = self.inode_label(task.sid(), &dir.sb, class, path, None);
        InodeSec::new(dir.sb.clone(), ino, class, Some(s))
    }
}

/// A /proc path with its leading `/<pid>` digits turned into slashes, as the kernel's
/// selinux_genfs_get_sid does for proc (it overwrites each digit with `/` and moves the start
/// past it, so `/1/net` becomes `//net`).
fn strip_pid(path: &str) -> std::borrow::Cow<'_, str> {
    let digits = path.bytes().skip(1).take_while(u8::is_ascii_digit).count();
    if digits == 0 || !path.starts_with('/') {
        return path.into();
    }
    format!("/{}", path.get(digits + 1..).unwrap_or("")).into()
}
