//! One task acting on another, or on itself, outside exec and signals: fork, process groups and
//! sessions, scheduling, resource limits, capability sets, user namespaces, the memory reserve,
//! and the label of a /proc/PID inode.
//!
//! The kernel checks the acting task's subjective SID (current_sid) against the target's
//! objective SID (task_sid_obj), with no audit data: here `task.sid()` against
//! [`TaskRef::sid`].

use std::sync::Arc;

use crate::audit::AuditData;
use crate::blobs::{InodeSec, SuperSec};
use crate::classes::{capability, inode_class, process, user_namespace, Class};
use crate::counters::Hook;
use crate::cred::{Cred, Task, TaskRef};
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

/// What a prlimit(2) call does with the target's limits (the kernel's LSM_PRLIMIT_*).
pub mod prlimit_flags {
    /// It reads them.
    pub const READ: u32 = 1;
    /// It changes them.
    pub const WRITE: u32 = 2;
}

impl ObjectManager {
    /// One `process` permission from the task's subjective SID to `target`'s objective SID,
    /// no audit data: what most of the task hooks ask.
    fn task_perm(&self, hook: Hook, task: &Task, target: &TaskRef, perm: u32) -> Result<()> {
        self.check(
            hook,
            task,
            target.sid(),
            Class::PROCESS,
            perm,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// fork(2) and clone(2) (selinux_task_alloc): `process {fork}` from the task to itself.
    /// (The kernel also copies the parent's directory decision cache to the child; here that
    /// cache is the credential's, which the child shares until it changes it.)
    pub fn task_alloc(&self, task: &Task) -> Result<()> {
        let sid = task.sid();
        self.check(
            Hook::TaskAlloc,
            task,
            sid,
            Class::PROCESS,
            process::FORK,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// setpgid(2) on `target` (selinux_task_setpgid): `process {setpgid}`.
    pub fn task_setpgid(&self, task: &Task, target: &TaskRef) -> Result<()> {
        self.task_perm(Hook::TaskSetpgid, task, target, process::SETPGID)
    }

    /// getpgid(2) of `target` (selinux_task_getpgid): `process {getpgid}`.
    pub fn task_getpgid(&self, task: &Task, target: &TaskRef) -> Result<()> {
        self.task_perm(Hook::TaskGetpgid, task, target, process::GETPGID)
    }

    /// getsid(2) of `target` (selinux_task_getsid): `process {getsession}`.
    pub fn task_getsid(&self, task: &Task, target: &TaskRef) -> Result<()> {
        self.task_perm(Hook::TaskGetsid, task, target, process::GETSESSION)
    }

    /// setpriority(2) / nice of `target` (selinux_task_setnice): `process {setsched}`,
    /// whatever the value.
    pub fn task_setnice(&self, task: &Task, target: &TaskRef) -> Result<()> {
        self.task_perm(Hook::TaskSetnice, task, target, process::SETSCHED)
    }

    /// ioprio_set(2) on `target` (selinux_task_setioprio): `process {setsched}`, whatever
    /// the priority.
    pub fn task_setioprio(&self, task: &Task, target: &TaskRef) -> Result<()> {
        self.task_perm(Hook::TaskSetioprio, task, target, process::SETSCHED)
    }

    /// ioprio_get(2) of `target` (selinux_task_getioprio): `process {getsched}`.
    pub fn task_getioprio(&self, task: &Task, target: &TaskRef) -> Result<()> {
        self.task_perm(Hook::TaskGetioprio, task, target, process::GETSCHED)
    }

    /// sched_setscheduler(2), sched_setparam(2), sched_setaffinity(2) and the like on `target`
    /// (selinux_task_setscheduler): `process {setsched}`.
    pub fn task_setscheduler(&self, task: &Task, target: &TaskRef) -> Result<()> {
        self.task_perm(Hook::TaskSetscheduler, task, target, process::SETSCHED)
    }

    /// sched_getscheduler(2), sched_getparam(2), sched_getaffinity(2) and the like of `target`
    /// (selinux_task_getscheduler): `process {getsched}`.
    pub fn task_getscheduler(&self, task: &Task, target: &TaskRef) -> Result<()> {
        self.task_perm(Hook::TaskGetscheduler, task, target, process::GETSCHED)
    }

    /// migrate_pages(2) / move_pages(2) on `target`'s memory (selinux_task_movememory):
    /// `process {setsched}`.
    pub fn task_movememory(&self, task: &Task, target: &TaskRef) -> Result<()> {
        self.task_perm(Hook::TaskMovememory, task, target, process::SETSCHED)
    }

    /// prlimit(2) on another task (selinux_task_prlimit): `process {setrlimit}` for a
    /// change, `{getrlimit}` for a read (one check asking both when it does both), from the
    /// caller's credential to the target's objective credential; nothing when `flags`
    /// ([`prlimit_flags`]) is 0, as the kernel asks nothing of a prlimit on oneself.
    pub fn task_prlimit(&self, task: &Task, target: &TaskRef, flags: u32) -> Result<()> {
        if flags & !(prlimit_flags::READ | prlimit_flags::WRITE) != 0 {
            return Err(ObjmgrError::Invalid(format!(
                "prlimit flags {flags:#x} have bits other than READ and WRITE"
            )));
        }
        if flags == 0 {
            return Ok(());
        }
        let mut av = 0;
        if flags & prlimit_flags::WRITE != 0 {
            av |= process::SETRLIMIT;
        }
        if flags & prlimit_flags::READ != 0 {
            av |= process::GETRLIMIT;
        }
        self.task_perm(Hook::TaskPrlimit, task, target, av)
    }

    /// setrlimit(2) / prlimit(2) changing a limit of `target` (selinux_task_setrlimit): only a
    /// change of the hard limit (raising or lowering it) asks `process {setrlimit}`, so that
    /// the hard limit stays a safe point to reset the soft limit to at a transition
    /// (bprm_committing_creds).
    pub fn task_setrlimit(
        &self,
        task: &Task,
        target: &TaskRef,
        old_max: u64,
        new_max: u64,
    ) -> Result<()> {
        if old_max == new_max {
            return Ok(());
        }
        self.task_perm(Hook::TaskSetrlimit, task, target, process::SETRLIMIT)
    }

    /// capget(2) of `target` (selinux_capget): `process {getcap}`.
    pub fn capget(&self, task: &Task, target: &TaskRef) -> Result<()> {
        self.task_perm(Hook::Capget, task, target, process::GETCAP)
    }

    /// capset(2) (selinux_capset): `process {setcap}` from the task's credential before the
    /// change to the one it will commit (`new`, prepared from it: the same SID).
    pub fn capset(&self, task: &Task, new: &Cred) -> Result<()> {
        let old = task.sid();
        self.check_sid(
            Hook::Capset,
            task,
            old,
            new.sid(),
            Class::PROCESS,
            process::SETCAP,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// unshare(CLONE_NEWUSER) or clone(CLONE_NEWUSER) (selinux_userns_create):
    /// `user_namespace {create}` from the task to itself.
    pub fn userns_create(&self, task: &Task) -> Result<()> {
        let sid = task.sid();
        self.check(
            Hook::UsernsCreate,
            task,
            sid,
            Class::USER_NAMESPACE,
            user_namespace::CREATE,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// Whether `task` counts as CAP_SYS_ADMIN when a new mapping is charged against the
    /// overcommit limit (selinux_vm_enough_memory): `capability {sys_admin}` to itself,
    /// never audited (every process that maps memory asks). A refusal is no error: the
    /// mapping is only kept out of the administrator's reserve (the kernel's
    /// security_vm_enough_memory_mm). The capability itself, which the kernel's commoncap
    /// checks first, is the caller's.
    pub fn vm_enough_memory(&self, task: &Task) -> bool {
        let sid = task.sid();
        self.check_noaudit(
            Hook::VmEnoughMemory,
            sid,
            sid,
            Class::CAPABILITY,
            capability::SYS_ADMIN,
        )
        .is_ok_and(|v| v.allowed())
    }

    /// The blob of a /proc/PID inode of `target` (selinux_task_to_inode): the class its mode
    /// gives and the task's objective SID now. Make it again when the task's credential
    /// changes (the kernel relabels at each /proc revalidation).
    pub fn task_to_inode(
        &self,
        target: &TaskRef,
        sb: &Arc<SuperSec>,
        ino: u64,
        mode: u32,
    ) -> InodeSec {
        InodeSec::new(sb.clone(), ino, inode_class(mode), Some(target.sid()))
    }
}
