//! Exec: the new credential (selinux_bprm_creds_for_exec), and what changes when it is
//! committed (selinux_bprm_committing_creds before the commit, selinux_bprm_committed_creds
//! after it).

use std::sync::Arc;

use seaccess_types::{PolicyCap, Sid};

use crate::audit::AuditData;
use crate::blobs::InodeSec;
use crate::classes::{file, process, process2, Class};
use crate::counters::Hook;
use crate::cred::{Cred, Task, TaskRef};
use crate::error::{ObjmgrError, Result};
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
    /// policy capability), else be to a bounded type. The security server's seam answers no
    /// bounds question, so without that permission the transition is refused.
    fn check_nnp_nosuid(&self, task: &Task, old: Sid, new: Sid, opts: &ExecOpts) -> Result<()> {
        if (!opts.nnp && !opts.nosuid) || old == new {
            return Ok(());
        }
        if self.policy_caps().contains(PolicyCap::NnpNosuidTransition) {
            let perms = if opts.nnp { process2::NNP_TRANSITION } else { 0 } | if opts.nosuid { process2::NOSUID_TRANSITION } else { 0 };
            if self.check_sid(Hook::BprmCredsForExec, task, old, new, Class::PROCESS2, perms, &AuditData::None).is_ok() {
                return Ok(());
            }
        }
        let what = format!("{} transition from SID {old} to SID {new}", if opts.nnp { "no_new_privs" } else { "nosuid" });
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
    pub fn bprm_creds_for_exec(&self, task: &Task, inode: &InodeSec, path: &str, opts: &ExecOpts) -> Result<ExecCreds> {
        if inode.class() != Class::FILE {
            return Err(ObjmgrError::Denied { what: format!("exec of a {} ({path})", inode.class().name()) });
        }
        let old = task.cred();
        let osid = old.sid();
        let mut new = old.prepare();
        new.osid = osid;
        new.create_sid = None;
        new.sockcreate_sid = None;
        new.exec_sid = None;
        new.sid = match old.exec_sid().filter(|s| *s != Sid::NULL) {
            Some(exec) => {
                self.check_nnp_nosuid(task, osid, exec, opts)?;
                exec
            }
            None => {
                let t = self.with_policy_class(Class::PROCESS, |c| Ok(self.server().transition_sid(osid, inode.sid(), c, None)?))?;
                // A transition no_new_privs or nosuid forbids silently becomes no transition.
                if self.check_nnp_nosuid(task, osid, t, opts).is_ok() {
                    t
                } else {
                    osid
                }
            }
        };
        let ad = AuditData::Path { path, dev: &inode.sb.dev, ino: inode.ino };
        let hook = Hook::BprmCredsForExec;
        let mut secureexec = false;
        if new.sid == osid {
            self.check(hook, task, inode.sid(), Class::FILE, file::EXECUTE_NO_TRANS, &ad)?;
        } else {
            self.check_sid(hook, task, osid, new.sid, Class::PROCESS, process::TRANSITION, &ad)?;
            self.check_sid(hook, task, new.sid, inode.sid(), Class::FILE, file::ENTRYPOINT, &ad)?;
            let eperm = |e: ObjmgrError| match e {
                ObjmgrError::Denied { what } => ObjmgrError::NotPermitted(what),
                e => e,
            };
            if opts.share {
                self.check_sid(hook, task, osid, new.sid, Class::PROCESS, process::SHARE, &AuditData::None).map_err(eperm)?;
            }
            if let Some(tracer) = &opts.tracer {
                self.check_sid(hook, task, tracer.sid(), new.sid, Class::PROCESS, process::PTRACE, &AuditData::None).map_err(eperm)?;
            }
            // A refusal here is no error: it only turns on AT_SECURE.
            secureexec = self.check_sid(hook, task, osid, new.sid, Class::PROCESS, process::NOATSECURE, &AuditData::None).is_err();
        }
        Ok(ExecCreds { cred: new.build(), secureexec })
    }

    /// Before `task` commits `creds` (selinux_bprm_committing_creds): whether the new
    /// process may inherit the resource limits (`process {rlimitinh}` from the old SID to the
    /// new). Always true without a transition. (The kernel also revokes open files the new
    /// SID may not use; open files are the caller's to revalidate.)
    pub fn bprm_committing_creds(&self, task: &Task, creds: &ExecCreds) -> bool {
        let c = &creds.cred;
        c.sid() == c.osid() || self.check_sid(Hook::BprmCommittingCreds, task, c.osid(), c.sid(), Class::PROCESS, process::RLIMITINH, &AuditData::None).is_ok()
    }

    /// After `task` committed an exec's credential (selinux_bprm_committed_creds): whether
    /// the new process may inherit signal state (`process {siginh}` from the old SID to the
    /// new); false means the caller clears pending signals, handlers and timers. Always true
    /// without a transition.
    pub fn bprm_committed_creds(&self, task: &Task) -> bool {
        let c = task.cred();
        c.sid() == c.osid() || self.check_sid(Hook::BprmCommittingCreds, task, c.osid(), c.sid(), Class::PROCESS, process::SIGINH, &AuditData::None).is_ok()
    }
}
