//! Exec: the new credential (selinux_bprm_creds_for_exec), and what changes when it is
//! committed (selinux_bprm_committing_creds before the commit, selinux_bprm_committed_creds
//! after it).

use std::sync::Arc;

use seaccess_types::{PolicyCap, Sid};

use crate::audit::AuditData;
use crate::blobs::{FileSec, InodeSec};
use crate::classes::{common_file, file, process, process2, Class};
use crate::counters::Hook;
use crate::cred::{Cred, Task, TaskRef};
use crate::error::{ObjmgrError, Result};
use crate::vfs::file_to_av;
use crate::ObjectManager;

/// What the exec is, beyond the file: the kernel's LSM_UNSAFE_* flags and the mount's nosuid.
#[derive(Clone, Debug, Default)]
pub struct ExecOpts {
    /// The task has no_new_privs set (LSM_UNSAFE_NO_NEW_PRIVS).
    pub nnp: bool,
    /// The file's mount is nosuid (!mnt_may_suid).
    pub nosuid: bool,
    /// The task shares its state with another (LSM_UNSAFE_SHARE).
    pub share: bool,
    /// The task's tracer, if it is traced (LSM_UNSAFE_PTRACE with a ptrace parent).
    pub tracer: Option<TaskRef>,
}

/// An open file of a task about to exec, for [`ObjectManager::flush_unauthorized_files`].
#[derive(Clone, Copy, Debug)]
pub struct OpenFile<'a> {
    /// The descriptor number, given back if the file is to be replaced.
    pub fd: u32,
    pub file: &'a FileSec,
    pub inode: &'a InodeSec,
    /// The file's path, for `path=` in audit records.
    pub path: &'a str,
}

/// FILE audit data of an open file.
fn path<'a>(f: &OpenFile<'a>) -> AuditData<'a> {
    AuditData::Path {
        path: f.path,
        dev: &f.inode.sb.dev,
        ino: f.inode.ino,
    }
}

/// What an exec must do to the task's open files before its new credential is committed
/// (flush_unauthorized_files).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flush {
    /// The descriptors to replace with the null device, in the order given.
    pub replace: Vec<u32>,
    /// The new credential may not read and write the controlling tty: the task loses it
    /// (no_tty).
    pub drop_tty: bool,
}

/// The credential an exec computed, to commit with [`Task::commit_creds`].
#[derive(Clone, Debug)]
pub struct ExecCreds {
    pub cred: Arc<Cred>,
    /// The program must run in secure mode (AT_SECURE): `noatsecure` was not granted.
    pub secureexec: bool,
}

impl ExecCreds {
    /// Whether the exec changes the task's SID.
    pub fn transitions(&self) -> bool {
        self.cred.sid() != self.cred.osid()
    }
}

impl ObjectManager {
    /// check_nnp_nosuid: under no_new_privs or a nosuid mount a transition must be allowed
    /// `process2 { nnp_transition nosuid_transition }` (with the nnp_nosuid_transition
    /// policy capability), else be to a type the old one bounds (security_bounded_transition);
    /// refused, EPERM under no_new_privs, EACCES for nosuid alone.
    fn check_nnp_nosuid(&self, task: &Task, old: Sid, new: Sid, opts: &ExecOpts) -> Result<()> {
        if (!opts.nnp && !opts.nosuid) || old == new {
            return Ok(());
        }
        if self.policy_caps().contains(PolicyCap::NnpNosuidTransition) {
            let perms = if opts.nnp {
                process2::NNP_TRANSITION
            } else {
                0
            } | if opts.nosuid {
                process2::NOSUID_TRANSITION
            } else {
                0
            };
            if self
                .check_sid(
                    Hook::BprmCredsForExec,
                    task,
                    old,
                    new,
                    Class::PROCESS2,
                    perms,
                    &AuditData::None,
                )
                .is_ok()
            {
                return Ok(());
            }
        }
        if self.bounded_transition(old, new)? {
            return Ok(());
        }
        let what = format!(
            "{} transition from SID {old} to SID {new}",
            if opts.nnp { "no_new_privs" } else { "nosuid" }
        );
        if opts.nnp {
            Err(ObjmgrError::NotPermitted(what))
        } else {
            Err(ObjmgrError::Denied { what })
        }
    }

    /// The new credential of `task` executing the file `inode` at `path`
    /// (selinux_bprm_creds_for_exec): the setexeccon SID if one was asked for, else the
    /// process type transition on the file's SID; then {execute_no_trans} when the SID does
    /// not change, or {transition}, {entrypoint}, {share} and the tracer's {ptrace} when it
    /// does, and {noatsecure} deciding secure mode.
    pub fn bprm_creds_for_exec(
        &self,
        task: &Task,
        inode: &InodeSec,
        path: &str,
        opts: &ExecOpts,
    ) -> Result<ExecCreds> {
        if inode.class() != Class::FILE {
            return Err(ObjmgrError::Denied {
                what: format!("exec of a {} ({path})", inode.class().name()),
            });
        }
        let old = task.cred();
        let osid = old.sid();
        let mut new = old.prepare();
        new.osid = osid;
        new.create_sid = None;
        new.sockcreate_sid = None;
        new.keycreate_sid = None;
        new.exec_sid = None;
        new.sid = match old.exec_sid().filter(|s| *s != Sid::NULL) {
            Some(exec) => {
                self.check_nnp_nosuid(task, osid, exec, opts)?;
                exec
            }
            None => {
                let t = self.with_policy_class(Class::PROCESS, |c| {
                    Ok(self.server().transition_sid(osid, inode.sid(), c, None)?)
                })?;
                // A transition no_new_privs or nosuid forbids silently becomes no transition.
                if self.check_nnp_nosuid(task, osid, t, opts).is_ok() {
                    t
                } else {
                    osid
                }
            }
        };
        let ad = AuditData::Path {
            path,
            dev: &inode.sb.dev,
            ino: inode.ino,
        };
        let hook = Hook::BprmCredsForExec;
        let mut secureexec = false;
        if new.sid == osid {
            self.check(
                hook,
                task,
                inode.sid(),
                Class::FILE,
                file::EXECUTE_NO_TRANS,
                &ad,
            )?;
        } else {
            self.check_sid(
                hook,
                task,
                osid,
                new.sid,
                Class::PROCESS,
                process::TRANSITION,
                &ad,
            )?;
            self.check_sid(
                hook,
                task,
                new.sid,
                inode.sid(),
                Class::FILE,
                file::ENTRYPOINT,
                &ad,
            )?;
            let eperm = |e: ObjmgrError| match e {
                ObjmgrError::Denied { what } => ObjmgrError::NotPermitted(what),
                e => e,
            };
            if opts.share {
                self.check_sid(
                    hook,
                    task,
                    osid,
                    new.sid,
                    Class::PROCESS,
                    process::SHARE,
                    &AuditData::None,
                )
                .map_err(eperm)?;
            }
            if let Some(tracer) = &opts.tracer {
                self.check_sid(
                    hook,
                    task,
                    tracer.sid(),
                    new.sid,
                    Class::PROCESS,
                    process::PTRACE,
                    &AuditData::None,
                )
                .map_err(eperm)?;
            }
            // A refusal here is no error: it only turns on AT_SECURE.
            secureexec = self
                .check_sid(
                    hook,
                    task,
                    osid,
                    new.sid,
                    Class::PROCESS,
                    process::NOATSECURE,
                    &AuditData::None,
                )
                .is_err();
        }
        Ok(ExecCreds {
            cred: new.build(),
            secureexec,
        })
    }

    /// Before `task` commits `creds` (selinux_bprm_committing_creds): whether the new
    /// process may inherit the resource limits (`process {rlimitinh}` from the old SID to the
    /// new). Always true without a transition. The open files the new SID may not use, which
    /// the kernel's hook revokes first, are [`ObjectManager::flush_unauthorized_files`]'s.
    pub fn bprm_committing_creds(&self, task: &Task, creds: &ExecCreds) -> bool {
        let c = &creds.cred;
        c.sid() == c.osid()
            || self
                .check_sid(
                    Hook::BprmCommittingCreds,
                    task,
                    c.osid(),
                    c.sid(),
                    Class::PROCESS,
                    process::RLIMITINH,
                    &AuditData::None,
                )
                .is_ok()
    }

    /// Before `task` commits `creds`, with a transition, the open files the new SID may not
    /// use, as selinux_bprm_committing_creds's flush_unauthorized_files finds them (nothing
    /// without a transition): first the controlling tty, `tty` (an open file of it, any
    /// process's, with its inode and path), which the new SID must be allowed `{read write}`
    /// on (file_path_has_perm: the inode check alone, PATH audit data), else the task drops
    /// it; then each of `files` (match_file: file_has_perm with file_to_av, so `fd {use}`
    /// first when another SID opened it, then read/write/append/ioctl as its open flags say),
    /// each refused one to be replaced with the null device. The caller opens that device with
    /// [`ObjectManager::file_open`] under the new credential (`O_RDWR`), as the kernel's
    /// dentry_open does, and closes the descriptors instead if that is refused.
    pub fn flush_unauthorized_files(
        &self,
        task: &Task,
        creds: &ExecCreds,
        tty: Option<OpenFile>,
        files: &[OpenFile],
    ) -> Flush {
        let c = &creds.cred;
        let mut out = Flush::default();
        if c.sid() == c.osid() {
            return out;
        }
        let sid = c.sid();
        let hook = Hook::BprmCommittingCreds;
        if let Some(t) = tty {
            let rw = common_file::READ | common_file::WRITE;
            out.drop_tty = self
                .check_sid(
                    hook,
                    task,
                    sid,
                    t.inode.sid(),
                    t.inode.class(),
                    rw,
                    &path(&t),
                )
                .is_err();
        }
        for f in files {
            let ad = path(f);
            if self
                .file_has_perm_as(
                    hook,
                    task,
                    sid,
                    f.file,
                    f.inode,
                    f.inode.sid(),
                    file_to_av(f.file.flags),
                    &ad,
                )
                .is_err()
            {
                out.replace.push(f.fd);
            }
        }
        out
    }

    /// After `task` committed an exec's credential (selinux_bprm_committed_creds): whether
    /// the new process may inherit signal state (`process {siginh}` from the old SID to the
    /// new); false means the caller clears pending signals, handlers and timers. Always true
    /// without a transition.
    pub fn bprm_committed_creds(&self, task: &Task) -> bool {
        let c = task.cred();
        c.sid() == c.osid()
            || self
                .check_sid(
                    Hook::BprmCommittingCreds,
                    task,
                    c.osid(),
                    c.sid(),
                    Class::PROCESS,
                    process::SIGINH,
                    &AuditData::None,
                )
                .is_ok()
    }
}
