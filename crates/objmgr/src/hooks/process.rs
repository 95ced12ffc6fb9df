//! Process hooks: exec (the new credential, in [`exec`]), signals, ptrace-like access,
//! capabilities. Each names the kernel function (hooks.c) it follows.

pub mod cred_hooks;
pub mod exec;
pub mod kernel;
pub mod procattr;
pub mod task;
pub mod uring;

use seaccess_types::Sid;

use crate::audit::AuditData;
use crate::classes::{file, process, Class};
use crate::counters::Hook;
use crate::cred::{Task, TaskRef};
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

pub use exec::{ExecCreds, ExecOpts, Flush, OpenFile};
pub use kernel::syslog_action;
pub use procattr::{ProcAttr, SetAttrOpts};
pub use task::prlimit_flags;

/// Signal numbers with permissions of their own (signal_to_av).
pub mod sig {
    pub const SIGKILL: i32 = 9;
    pub const SIGTERM: i32 = 15;
    pub const SIGCHLD: i32 = 17;
    pub const SIGCONT: i32 = 18;
    pub const SIGSTOP: i32 = 19;
}

/// ptrace access modes (PTRACE_MODE_*).
pub mod ptrace_mode {
    pub const READ: u32 = 0x01;
    pub const ATTACH: u32 = 0x02;
}

/// The `process` permission a signal asks (signal_to_av; signal 0, a probe, is `signull`).
pub fn signal_perm(sig: i32) -> u32 {
    match sig {
        0 => process::SIGNULL,
        sig::SIGCHLD => process::SIGCHLD,
        sig::SIGKILL => process::SIGKILL,
        sig::SIGSTOP => process::SIGSTOP,
        _ => process::SIGNAL,
    }
}

impl ObjectManager {
    /// Whether `new`'s type is `old`'s or bounded by it (security_bounded_transition, asked of
    /// the server), writing on a refusal the AUDIT_SELINUX_ERR record the kernel's security
    /// server writes there, for exec under nnp/nosuid and a multithreaded setcon alike.
    pub(crate) fn bounded_transition(&self, old: Sid, new: Sid) -> Result<bool> {
        let ok = self.server().bounded_transition(old, new)?;
        if !ok {
            let names = self.server().names();
            if let (Some(o), Some(n)) = (names.sid_to_context(old), names.sid_to_context(new)) {
                self.avc().emit_audit_line(&format!(
                    "op=security_bounded_transition seresult=denied oldcontext={o} newcontext={n}"
                ));
            }
        }
        Ok(ok)
    }

    /// `task` sends signal `sig` to `target` (selinux_task_kill): the signal's `process`
    /// permission to the target's objective SID.
    pub fn task_kill(&self, task: &Task, target: &TaskRef, sig: i32) -> Result<()> {
        self.check(
            Hook::TaskKill,
            task,
            target.sid(),
            Class::PROCESS,
            signal_perm(sig),
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// `task` reads or traces `target` (selinux_ptrace_access_check): a read-mode access
    /// (/proc/PID, process_vm_readv) asks `file {read}` of the target's objective SID, any
    /// other `process {ptrace}`.
    pub fn ptrace_access_check(&self, task: &Task, target: &TaskRef, mode: u32) -> Result<()> {
        let (class, perm) = if mode & ptrace_mode::READ != 0 {
            (Class::FILE, file::READ)
        } else {
            (Class::PROCESS, process::PTRACE)
        };
        self.check(
            Hook::PtraceAccessCheck,
            task,
            target.sid(),
            class,
            perm,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// `task` asks `parent` to trace it (selinux_ptrace_traceme): `process {ptrace}` from the
    /// parent's objective SID to the task's.
    pub fn ptrace_traceme(&self, task: &Task, parent: &TaskRef) -> Result<()> {
        self.check_sid(
            Hook::PtraceAccessCheck,
            task,
            parent.sid(),
            task.handle().sid(),
            Class::PROCESS,
            process::PTRACE,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// `task` uses capability `cap` in the initial user namespace (selinux_capable).
    pub fn capable(&self, task: &Task, cap: u32) -> Result<()> {
        self.capable_opts(task, cap, true, true)
    }

    /// cred_has_capability: the capability's bit in `capability` (0 to 31) or `capability2`
    /// (32 to 63), `cap_userns` / `cap2_userns` outside the initial namespace, from the task's
    /// SID to itself; audited with `capability=` unless `audit` is false (CAP_OPT_NOAUDIT).
    pub fn capable_opts(&self, task: &Task, cap: u32, audit: bool, initns: bool) -> Result<()> {
        let class = match (cap / 32, initns) {
            (0, true) => Class::CAPABILITY,
            (0, false) => Class::CAP_USERNS,
            (1, true) => Class::CAPABILITY2,
            (1, false) => Class::CAP2_USERNS,
            _ => {
                return Err(ObjmgrError::Invalid(format!(
                    "capability {cap} is out of range"
                )))
            }
        };
        let perm = 1u32 << (cap % 32);
        let sid = task.sid();
        let v = self.check_noaudit(Hook::Capable, sid, sid, class, perm)?;
        if audit {
            self.audit(task, sid, sid, class, &v, &AuditData::Cap(cap));
        }
        if v.allowed() {
            Ok(())
        } else {
            Err(ObjmgrError::Denied {
                what: format!("{} {cap}", class.name()),
            })
        }
    }
}
