//! The contexts processes of a session gave themselves with `setcon`, as the supervisor knows
//! them: a kernel keeps a process's context in its credential, which setcon
//! (selinux_lsm_setattr, LSM_ATTR_CURRENT) changes and an exec recomputes; here libseaccess
//! publishes a successful setcon to the session's selinuxfs view (a setxattr of
//! [`CURRENT_XATTR`] on its root, crates/capi/src/publish.rs), the supervisor checks it
//! against what it believes the process is (crate::session_state), and this table keeps it for
//! the checks of that process's later writes.
//!
//! Why it cannot be forged or outlive its process:
//! - the FUSE request names its calling thread (the kernel fills in the thread id), and the
//!   record is that thread's process's: nothing in the value names a process, so no process
//!   publishes for another (the kernel's proc_pid_attr_write refuses another task's too);
//! - a record is the process's as the kernel identifies it: its start time (/proc/PID/stat)
//!   and, where pidfs gives every process an inode number never reused while the system runs,
//!   that number (a start time is in clock ticks, so two processes can share one). Both are
//!   read again at every use, after the rest, so a pid reused by a new process finds no
//!   record;
//! - an exec is seen by the auxiliary vector the kernel built for it (/proc/PID/auxv: the
//!   addresses of the stack's random bytes, the program's headers and entry, the vDSO), which
//!   the process cannot rewrite (prctl PR_SET_MM_AUXV needs CAP_SYS_RESOURCE). After an exec
//!   the record goes when the interposer changed the context variables (`SEACCESS_CONTEXT`,
//!   `SEACCESS_PREVCON`, and `SEACCESS_EXEC`, a value drawn anew at each of its execs): the
//!   exec computed a context from the setcon one, which the environment carries. An exec that
//!   left them as they were at the setcon went around the interposer (a static program, a
//!   raw execve): it changed no context, so the setcon context stays, as on a kernel, and a
//!   process that dropped its context cannot get the old one back by executing with the
//!   environment it started with. A process rewriting its own environment in memory changes
//!   nothing: its auxiliary vector says it did not exec.
//!
//! A process forked after the setcon has the context too (the kernel's fork copies the
//! credential): no fork is seen here, so at its first check a process without a record looks
//! up its parent's (and so on up), and takes it when it started no earlier than the setcon and
//! has not executed through the interposer since (its context variables are its parent's at
//! the setcon).
//!
//! What it cannot do: a child whose parent exited (or executed through the interposer, or
//! called setcon again) before the child's first check cannot be traced to the setcon, and is
//! judged by its environment and the subjects rules; an exec with a forged environment (a raw
//! execve naming `SEACCESS_CONTEXT`) is believed as any exec's environment is. A process the
//! supervisor cannot read (a set-user-ID program run by another user) fails closed.

use std::collections::HashMap;
use std::sync::Mutex;

use seaccess_types::lock;

use super::{libc_errno, Errno};

/// The attribute libseaccess sets on the view's root to publish its process's new context.
pub(crate) const CURRENT_XATTR: &str = "system.seaccess.current";

/// Records one uid may hold (a bound on the supervisor's memory; dead processes' records are
/// dropped before a publication is refused).
const MAX_PER_UID: usize = 4096;

/// pidfs's magic number (include/uapi/linux/magic.h, PID_FS_MAGIC).
const PID_FS_MAGIC: i64 = 0x5049_4446;

/// The environment variables the interposer sets at an exec (crates/capi/preload).
const CONTEXT_VARS: [&[u8]; 3] = [
    b"SEACCESS_CONTEXT=",
    b"SEACCESS_PREVCON=",
    b"SEACCESS_EXEC=",
];

/// One process's setcon context.
struct Record {
    uid: u32,
    who: Identity,
    /// Its auxiliary vector when the record was made (or confirmed after an exec that kept it).
    stamp: Vec<u8>,
    /// Its context variables then.
    env: Vec<Vec<u8>>,
    context: String,
    /// When the setcon was (clock ticks since boot): a process forked before it does not
    /// inherit the context.
    made: u64,
}

/// A process as the kernel tells processes apart.
#[derive(PartialEq, Eq, Clone, Copy, Debug)]
struct Identity {
    start: u64,
    ino: Option<u64>,
}

/// The records, by process id (thread group id).
#[derive(Default)]
pub(crate) struct Procs {
    by_pid: Mutex<HashMap<u32, Record>>,
}

/// The process of thread `tid` (/proc/TID/status), None when it is gone.
pub(crate) fn tgid_of(tid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Tgid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Field `n` (1-based, as proc(5) numbers them) of /proc/PID/stat: counted after the command
/// name's closing parenthesis, which the name itself may contain.
fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(n.checked_sub(3)?)
}

fn identity(pid: u32) -> Option<Identity> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let start = stat_field(&stat, 22)?.parse().ok()?;
    Some(Identity {
        start,
        ino: pidfs_ino(pid),
    })
}

/// The pidfs inode of process `pid` (unique while the system runs), None without pidfs.
fn pidfs_ino(pid: u32) -> Option<u64> {
    let p = rustix::process::Pid::from_raw(i32::try_from(pid).ok()?)?;
    let fd = rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok()?;
    let fs = rustix::fs::fstatfs(&fd).ok()?;
    if fs.f_type != PID_FS_MAGIC {
        return None;
    }
    Some(rustix::fs::fstat(&fd).ok()?.st_ino)
}

fn stamp(pid: u32) -> Option<Vec<u8>> {
    std::fs::read(format!("/proc/{pid}/auxv"))
        .ok()
        .filter(|v| !v.is_empty())
}

fn context_env(pid: u32) -> Option<Vec<Vec<u8>>> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let mut v: Vec<Vec<u8>> = env
        .split(|b| *b == 0)
        .filter(|kv| CONTEXT_VARS.iter().any(|p| kv.starts_with(p)))
        .map(<[u8]>::to_vec)
        .collect();
    v.sort();
    Some(v)
}

/// What the table says of a process.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Known {
    /// Its setcon context.
    Set(String),
    /// No record: its last exec (or the subjects rules) gives its context.
    None,
}

impl Procs {
    /// Process `pid`'s setcon context, if it has one still: the record is dropped when the
    /// process is another (a reused pid) or an exec through the interposer replaced it; an exec
    /// around the interposer keeps it. A process that cannot be read is refused (EACCES).
    pub(crate) fn lookup(&self, pid: u32) -> Result<Known, Errno> {
        let mut t = lock(&self.by_pid);
        if t.is_empty() {
            return Ok(Known::None);
        }
        lookup_in(&mut t, pid, 0)
    }

    /// Process `pid`, acting as `uid`, now runs in `context` (already checked). EAGAIN when
    /// `uid` holds too many records of live processes; ESRCH when the process is gone; EACCES
    /// when it cannot be read.
    pub(crate) fn record(&self, pid: u32, uid: u32, context: &str) -> Result<(), Errno> {
        let who = identity(pid).ok_or(libc_errno::ESRCH)?;
        let made = ticks_now().ok_or(libc_errno::EIO)?;
        let (Some(stamp), Some(env)) = (stamp(pid), context_env(pid)) else {
            return Err(libc_errno::EACCES);
        };
        if identity(pid) != Some(who) {
            return Err(libc_errno::ESRCH);
        }
        let mut t = lock(&self.by_pid);
        let count =
            |t: &HashMap<u32, Record>| t.iter().filter(|(p, r)| r.uid == uid && **p != pid).count();
        if count(&t) >= MAX_PER_UID {
            t.retain(|p, r| identity(*p) == Some(r.who));
            if count(&t) >= MAX_PER_UID {
                return Err(libc_errno::EAGAIN);
            }
        }
        t.insert(
            pid,
            Record {
                uid,
                who,
                stamp,
                env,
                context: context.to_string(),
                made,
            },
        );
        Ok(())
    }
}

/// How far up its ancestry a process's inherited context is looked for.
const MAX_DEPTH: usize = 64;

/// [`Procs::lookup`] on the table: process `pid`'s own record, else its parent's, inherited.
fn lookup_in(t: &mut HashMap<u32, Record>, pid: u32, depth: usize) -> Result<Known, Errno> {
    let Some(r) = t.get(&pid) else {
        return inherit(t, pid, depth);
    };
    let who = r.who;
    let (now, env) = (stamp(pid), context_env(pid));
    // Read last: the reads above were of this very process only if it is still there.
    if identity(pid) != Some(who) {
        t.remove(&pid);
        return inherit(t, pid, depth);
    }
    let (Some(now), Some(env)) = (now, env) else {
        return Err(libc_errno::EACCES);
    };
    let Some(r) = t.get_mut(&pid) else {
        return Ok(Known::None);
    };
    if now != r.stamp {
        if env != r.env {
            t.remove(&pid);
            return Ok(Known::None);
        }
        r.stamp = now;
    }
    Ok(Known::Set(r.context.clone()))
}

/// A process without a record of its own forked by one with a setcon context: the kernel's
/// fork copies the credential, so it has that context if it was forked after the setcon (its
/// start time no earlier than the record's) and has not executed through the interposer
/// since (its context variables are still those its parent had at the setcon). It then gets
/// a record of its own, which outlives its parent. A process whose parent exited before its
/// first check was reparented and is judged by its environment: see the module docs.
fn inherit(t: &mut HashMap<u32, Record>, pid: u32, depth: usize) -> Result<Known, Errno> {
    if depth >= MAX_DEPTH {
        return Ok(Known::None);
    }
    let Some(who) = identity(pid) else {
        return Ok(Known::None);
    };
    let Some(ppid) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| stat_field(&s, 4).and_then(|v| v.parse::<u32>().ok()))
        .filter(|&p| p > 1)
    else {
        return Ok(Known::None);
    };
    let Known::Set(context) = lookup_in(t, ppid, depth + 1)? else {
        return Ok(Known::None);
    };
    let Some(parent) = t.get(&ppid) else {
        return Ok(Known::None);
    };
    let (uid, made, penv) = (parent.uid, parent.made, parent.env.clone());
    let (now, env) = (stamp(pid), context_env(pid));
    if identity(pid) != Some(who) {
        return Ok(Known::None);
    }
    let (Some(now), Some(env)) = (now, env) else {
        return Err(libc_errno::EACCES);
    };
    if who.start < made || env != penv {
        return Ok(Known::None);
    }
    t.insert(
        pid,
        Record {
            uid,
            who,
            stamp: now,
            env,
            context: context.clone(),
            made,
        },
    );
    Ok(Known::Set(context))
}

/// Now, in the unit of a process's start time (clock ticks since boot, USER_HZ: 100).
fn ticks_now() -> Option<u64> {
    let up = std::fs::read_to_string("/proc/uptime").ok()?;
    let (secs, frac) = up.split_whitespace().next()?.split_once('.')?;
    Some(secs.parse::<u64>().ok()? * 100 + frac.get(..2)?.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let s = "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 12345 1000 \n";
        assert_eq!(stat_field(s, 3), Some("S"));
        assert_eq!(stat_field(s, 22), Some("12345"));
    }

    /// Break tried: lookup without the identity check (a record kept for a pid whatever
    /// process holds it): the second assertion fails.
    #[test]
    fn a_record_is_its_process_s_and_no_other_s() {
        let p = Procs::default();
        let me = std::process::id();
        p.record(me, 0, "a_u:a_r:a_t:s0").unwrap();
        assert_eq!(p.lookup(me).unwrap(), Known::Set("a_u:a_r:a_t:s0".into()));
        // The same pid, another process (an earlier start): the record is not its.
        lock(&p.by_pid).get_mut(&me).unwrap().who.start -= 1;
        assert_eq!(p.lookup(me).unwrap(), Known::None);
        assert!(lock(&p.by_pid).is_empty(), "the stale record is dropped");
    }

    /// Break tried: lookup dropping the record at any exec (whether the variables changed or
    /// not): the first assertion fails (the exec around the interposer ends the record).
    #[test]
    fn an_exec_that_changed_the_context_variables_ends_the_record_one_that_kept_them_does_not() {
        let p = Procs::default();
        let me = std::process::id();
        p.record(me, 0, "a_u:a_r:a_t:s0").unwrap();
        // An exec around the interposer: a new auxiliary vector, the same variables.
        lock(&p.by_pid).get_mut(&me).unwrap().stamp = vec![1, 2, 3];
        assert_eq!(p.lookup(me).unwrap(), Known::Set("a_u:a_r:a_t:s0".into()));
        assert_eq!(lock(&p.by_pid)[&me].stamp, stamp(me).unwrap());
        // An exec through it: a new vector and other variables.
        {
            let mut t = lock(&p.by_pid);
            let r = t.get_mut(&me).unwrap();
            r.stamp = vec![1, 2, 3];
            r.env = vec![b"SEACCESS_EXEC=0".to_vec()];
        }
        assert_eq!(p.lookup(me).unwrap(), Known::None);
    }

    /// Break tried: inherit answering None (no fork followed): the first assertion fails.
    #[test]
    fn a_child_forked_after_the_setcon_inherits_it_one_forked_before_does_not() {
        let p = Procs::default();
        let me = std::process::id();
        p.record(me, 0, "a_u:a_r:a_t:s0").unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let c = child.id();
        let got = p.lookup(c);
        // As if forked before the setcon.
        lock(&p.by_pid).remove(&c);
        lock(&p.by_pid).get_mut(&me).unwrap().made = u64::MAX;
        let before = p.lookup(c);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(got.unwrap(), Known::Set("a_u:a_r:a_t:s0".into()));
        assert_eq!(before.unwrap(), Known::None);
    }
}
