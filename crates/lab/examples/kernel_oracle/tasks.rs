//! The oracle's operations on processes: signals (selinux_task_kill) and ptrace attach
//! (selinux_ptrace_access_check) from the probe's domain to targets the guest left running in
//! known domains (its `T <pid> <context>` lines).

use std::collections::BTreeMap;

use seaccess_lab::file_service::FileService;
use seaccess_lab::LabError;
use seaccess_objmgr::hooks::process::ptrace_mode;
use seaccess_objmgr::{ObjmgrError, Task};

/// The signal the probe names (tests/kernel/probe.c's signal_number).
fn signal_number(name: &str) -> Option<i32> {
    Some(match name {
        "0" => 0,
        "USR1" => libc::SIGUSR1,
        "CHLD" => libc::SIGCHLD,
        "STOP" => libc::SIGSTOP,
        "CONT" => libc::SIGCONT,
        "KILL" => libc::SIGKILL,
        _ => return None,
    })
}

fn refused(what: &str, e: ObjmgrError) -> LabError {
    LabError::Refused {
        what: format!("{what}: {e}"),
        errno: e.errno(),
    }
}

/// The targets by pid, and the operations on them.
pub struct Targets<'a> {
    svc: &'a FileService,
    /// Each target's context by pid.
    pub contexts: BTreeMap<u32, String>,
}

impl<'a> Targets<'a> {
    pub fn new(svc: &'a FileService, contexts: BTreeMap<u32, String>) -> Targets<'a> {
        Targets { svc, contexts }
    }

    fn target(&self, pid: &str) -> Result<Task, String> {
        let n: u32 = pid.parse().map_err(|_| format!("{pid}: not a pid"))?;
        let ctx = self
            .contexts
            .get(&n)
            .ok_or_else(|| format!("{pid}: no target line for it"))?;
        self.svc
            .task(n, "probe", ctx)
            .map_err(|e| format!("{pid}: {e}"))
    }

    /// kill(2) of `arg` ("PID,SIG"): check_kill_permission passes for root on root's task
    /// (kill_ok_by_cred), then selinux_task_kill.
    pub fn kill(&self, task: &Task, arg: &str) -> Result<Result<(), LabError>, String> {
        let (pid, name) = arg
            .split_once(',')
            .ok_or_else(|| format!("{arg}: not PID,SIG"))?;
        let sig = signal_number(name).ok_or_else(|| format!("{arg}: unknown signal"))?;
        let target = self.target(pid)?;
        Ok(self
            .svc
            .om()
            .task_kill(task, target.handle(), sig)
            .map_err(|e| refused(&format!("kill {arg}"), e)))
    }

    /// ptrace(PTRACE_ATTACH) of `pid`: __ptrace_may_access passes the uid and dumpable checks
    /// for root on root's task (and commoncap's, the caps being a subset), then
    /// security_ptrace_access_check with PTRACE_MODE_ATTACH (Yama's scope is 0 in the guest).
    pub fn ptrace(&self, task: &Task, pid: &str) -> Result<Result<(), LabError>, String> {
        let target = self.target(pid)?;
        Ok(self
            .svc
            .om()
            .ptrace_access_check(task, target.handle(), ptrace_mode::ATTACH)
            .map_err(|e| refused(&format!("ptrace {pid}"), e)))
    }
}
