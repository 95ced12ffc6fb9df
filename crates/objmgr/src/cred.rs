//! Credentials and tasks (the kernel's struct cred with its task_security_struct, and the
//! task's two credential pointers).
//!
//! A credential never changes once made: a change (exec, setexeccon) makes a new one and commits
//! it, so a check that read a credential's SID never sees it change under it. A task has two:
//! the objective one, what others see when they act on the task (signal it, trace it), and the
//! subjective one, what the task acts with. They are the same object until a server overrides
//! the subjective one for the length of a request made on a client's behalf
//! ([`Task::override_creds`]), which the guard it returns undoes on every path out.
//!
//! Reading the current subjective SID is one pointer load and one field load: the 2008 split
//! of credentials from the task cost 8.4% on a stat-and-open walk until the extra hop was tuned
//! away, and every hook starts with it.

use std::sync::atomic::{AtomicU32, Ordering::*};
use std::sync::Arc;

use arc_swap::ArcSwap;
use seaccess_types::Sid;

use crate::error::{ObjmgrError, Result};
use crate::fastpath::SearchCache;
use crate::grant::CredEpoch;

/// A credential: the SIDs a task acts with. Immutable (its fields are private; a change is a
/// new credential, from [`Cred::prepare`]); shared by every task holding it. What it remembers
/// (its search decisions, its epoch id for inode grants) is made for its own SID and answers
/// only for that SID, so no credential can use another SID's grants.
///
/// The SID cannot be changed in place, not even through the only `Arc`:
///
/// ```compile_fail,E0616
/// use seaccess_objmgr::Cred;
/// use seaccess_types::Sid;
///
/// let mut cred = Cred::new(Sid(1));
/// if let Some(c) = std::sync::Arc::get_mut(&mut cred) {
///     c.sid = Sid(2);
/// }
/// ```
#[derive(Debug)]
pub struct Cred {
    /// The SID the task acts with (the kernel's tsec->sid).
    sid: Sid,
    /// The SID before the last exec (tsec->osid).
    osid: Sid,
    /// The SID the next exec asks for (setexeccon), if any.
    exec_sid: Option<Sid>,
    /// The SID new files are created with (setfscreatecon), if any.
    create_sid: Option<Sid>,
    /// The SID new sockets are created with (setsockcreatecon), if any.
    sockcreate_sid: Option<Sid>,
    /// The SID new keys are created with (setkeycreatecon), if any.
    keycreate_sid: Option<Sid>,
    /// This credential's directory search decisions (a fast path; empty in a new credential,
    /// so a credential change is seen at once; made for `sid`).
    search: SearchCache,
    /// This credential's epoch id for inode grants (a fast path), with its seqno; made for
    /// `sid`.
    pub(crate) epoch: CredEpoch,
}

impl Cred {
    /// A credential acting as `sid`, with nothing requested for exec or creation.
    pub fn new(sid: Sid) -> Arc<Cred> {
        PreparedCred::new(sid).build()
    }

    /// The SID the task acts with (the kernel's tsec->sid): what the kernel's
    /// (selinux_cred_getsecid, selinux_cred_getlsmprop) read of a credential.
    #[inline(always)]
    pub fn sid(&self) -> Sid {
        self.sid
    }

    /// The SID before the last exec (tsec->osid).
    pub fn osid(&self) -> Sid {
        self.osid
    }

    /// The SID the next exec asks for (setexeccon), if any.
    pub fn exec_sid(&self) -> Option<Sid> {
        self.exec_sid
    }

    /// The SID new files are created with (setfscreatecon), if any.
    pub fn create_sid(&self) -> Option<Sid> {
        self.create_sid
    }

    /// The SID new sockets are created with (setsockcreatecon), if any.
    pub fn sockcreate_sid(&self) -> Option<Sid> {
        self.sockcreate_sid
    }

    /// The SID new keys are created with (setkeycreatecon), if any.
    pub fn keycreate_sid(&self) -> Option<Sid> {
        self.keycreate_sid
    }

    /// This credential's directory search decisions.
    pub fn search_cache(&self) -> &SearchCache {
        &self.search
    }

    /// This credential's SIDs, to change and build a new credential from (the kernel's
    /// prepare_creds, whose (selinux_cred_prepare, selinux_cred_transfer) copy every SID of
    /// the security blob: so does this). Nothing it remembers goes with them.
    pub fn prepare(&self) -> PreparedCred {
        let Cred {
            sid,
            osid,
            exec_sid,
            create_sid,
            sockcreate_sid,
            keycreate_sid,
            ..
        } = *self;
        PreparedCred {
            sid,
            osid,
            exec_sid,
            create_sid,
            sockcreate_sid,
            keycreate_sid,
        }
    }
}

/// The SIDs of a credential being prepared (from [`Cred::prepare`] or [`PreparedCred::new`]):
/// plain values, free to change, with nothing remembered; [`PreparedCred::build`] makes the
/// credential, whose fast paths start empty and are made for its SID.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreparedCred {
    /// The SID the task acts with (the kernel's tsec->sid).
    pub sid: Sid,
    /// The SID before the last exec (tsec->osid).
    pub osid: Sid,
    /// The SID the next exec asks for (setexeccon), if any.
    pub exec_sid: Option<Sid>,
    /// The SID new files are created with (setfscreatecon), if any.
    pub create_sid: Option<Sid>,
    /// The SID new sockets are created with (setsockcreatecon), if any.
    pub sockcreate_sid: Option<Sid>,
    /// The SID new keys are created with (setkeycreatecon), if any.
    pub keycreate_sid: Option<Sid>,
}

impl PreparedCred {
    /// Acting as `sid` (before the last exec too), with nothing requested for exec or
    /// creation.
    pub fn new(sid: Sid) -> PreparedCred {
        PreparedCred {
            sid,
            osid: sid,
            exec_sid: None,
            create_sid: None,
            sockcreate_sid: None,
            keycreate_sid: None,
        }
    }

    /// The credential, ready to commit or override with.
    pub fn build(self) -> Arc<Cred> {
        let PreparedCred {
            sid,
            osid,
            exec_sid,
            create_sid,
            sockcreate_sid,
            keycreate_sid,
        } = self;
        Arc::new(Cred {
            sid,
            osid,
            exec_sid,
            create_sid,
            sockcreate_sid,
            keycreate_sid,
            search: SearchCache::new(sid),
            epoch: CredEpoch::new(sid),
        })
    }
}

/// What other tasks see of a task: its objective credential. Cheap to clone.
#[derive(Clone, Debug)]
pub struct TaskRef {
    pub pid: u32,
    pub comm: Arc<str>,
    objective: Arc<Objective>,
}

/// A task's objective credential, and its SID apart so that a hook acting on the task (a
/// signal, a trace) reads it in one load, without taking a reference to the credential.
#[derive(Debug)]
struct Objective {
    cred: ArcSwap<Cred>,
    sid: AtomicU32,
}

impl TaskRef {
    /// The task's objective credential now.
    pub fn objective(&self) -> Arc<Cred> {
        self.objective.cred.load_full()
    }

    /// The task's objective SID now (the kernel's task_sid_obj, which its
    /// (selinux_task_getlsmprop_obj) reads).
    #[inline(always)]
    pub fn sid(&self) -> Sid {
        Sid(self.objective.sid.load(Acquire))
    }

    /// Whether `other` is a handle on the same task (the kernel's `p == current`).
    pub fn same_task(&self, other: &TaskRef) -> bool {
        Arc::ptr_eq(&self.objective, &other.objective)
    }
}

/// A task: one client thread of work, with its objective and subjective credentials. Owned by
/// the thread that acts as it; other tasks hold a [`TaskRef`].
#[derive(Debug)]
pub struct Task {
    shared: TaskRef,
    subjective: Arc<Cred>,
    /// Whether the subjective credential is overridden (commit is refused meanwhile).
    overridden: bool,
}

impl Task {
    /// A task with process id `pid` and command name `comm` (both for audit records), acting
    /// with `cred`.
    pub fn new(pid: u32, comm: &str, cred: Arc<Cred>) -> Task {
        let objective = Objective {
            sid: AtomicU32::new(cred.sid().0),
            cred: ArcSwap::new(cred.clone()),
        };
        let shared = TaskRef {
            pid,
            comm: comm.into(),
            objective: Arc::new(objective),
        };
        Task {
            shared,
            subjective: cred,
            overridden: false,
        }
    }

    /// The subjective credential: what the task acts with now.
    #[inline(always)]
    pub fn cred(&self) -> &Arc<Cred> {
        &self.subjective
    }

    /// The subjective SID (the kernel's current_sid, which its
    /// (selinux_current_getlsmprop_subj) reads): one pointer load.
    #[inline(always)]
    pub fn sid(&self) -> Sid {
        self.subjective.sid()
    }

    /// What other tasks see of this one.
    pub fn handle(&self) -> &TaskRef {
        &self.shared
    }

    pub fn pid(&self) -> u32 {
        self.shared.pid
    }

    pub fn comm(&self) -> &str {
        &self.shared.comm
    }

    /// Whether the subjective credential is overridden now (a commit would be refused).
    pub fn overridden(&self) -> bool {
        self.overridden
    }

    /// Acts with `cred` until the guard is dropped (the kernel's override_creds and
    /// revert_creds): for a server doing one request on a client's behalf. The objective
    /// credential does not change, so others still see the server as itself. Overrides nest.
    pub fn override_creds(&mut self, cred: Arc<Cred>) -> OverrideGuard<'_> {
        let saved = std::mem::replace(&mut self.subjective, cred);
        let was = std::mem::replace(&mut self.overridden, true);
        OverrideGuard {
            task: self,
            saved: Some(saved),
            was_overridden: was,
        }
    }

    /// Makes `cred` the task's credential, objective and subjective (the kernel's commit_creds,
    /// as after an exec). Refused while the subjective credential is overridden, where the
    /// kernel would BUG.
    pub fn commit_creds(&mut self, cred: Arc<Cred>) -> Result<()> {
        if self.overridden {
            return Err(ObjmgrError::Invalid(
                "commit_creds while the credentials are overridden".into(),
            ));
        }
        self.shared.objective.cred.store(cred.clone());
        self.shared.objective.sid.store(cred.sid().0, Release);
        self.subjective = cred;
        Ok(())
    }
}

/// An override of a task's subjective credential, undone when dropped (on every path out of
/// the request, an early return or a panic's unwinding included).
pub struct OverrideGuard<'a> {
    task: &'a mut Task,
    saved: Option<Arc<Cred>>,
    was_overridden: bool,
}

impl std::ops::Deref for OverrideGuard<'_> {
    type Target = Task;
    fn deref(&self) -> &Task {
        self.task
    }
}

impl std::ops::DerefMut for OverrideGuard<'_> {
    fn deref_mut(&mut self) -> &mut Task {
        self.task
    }
}

impl Drop for OverrideGuard<'_> {
    fn drop(&mut self) {
        if let Some(saved) = self.saved.take() {
            self.task.subjective = saved;
            self.task.overridden = self.was_overridden;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_override_is_undone_on_every_path_and_others_see_the_objective_credential() {
        let server = Cred::new(Sid(10));
        let client = Cred::new(Sid(20));
        let mut task = Task::new(1, "srv", server);
        let other = task.handle().clone();
        {
            let mut g = task.override_creds(client.clone());
            assert_eq!(g.sid(), Sid(20));
            assert_eq!(other.sid(), Sid(10));
            assert!(g.commit_creds(Cred::new(Sid(30))).is_err());
            {
                let g2 = g.override_creds(Cred::new(Sid(40)));
                assert_eq!(g2.sid(), Sid(40));
            }
            assert_eq!(g.sid(), Sid(20));
            assert!(g.commit_creds(Cred::new(Sid(30))).is_err());
        }
        assert_eq!(task.sid(), Sid(10));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _g = task.override_creds(client.clone());
            std::panic::resume_unwind(Box::new("request failed"));
        }));
        assert!(r.is_err());
        assert_eq!(task.sid(), Sid(10));
        assert!(task.commit_creds(Cred::new(Sid(30))).is_ok());
        assert_eq!((task.sid(), other.sid()), (Sid(30), Sid(30)));
    }

    /// A credential for `sid` holding `warm`'s remembered state (its search cache and epoch),
    /// as a change that copied a credential's state into one for another SID would make it.
    fn with_state_of(sid: Sid, warm: Cred) -> Cred {
        Cred {
            sid,
            osid: sid,
            exec_sid: None,
            create_sid: None,
            sockcreate_sid: None,
            keycreate_sid: None,
            search: warm.search,
            epoch: warm.epoch,
        }
    }

    /// Issue 19, item 3: whatever a credential remembers answers only for the SID it was made
    /// for. quiet_t may search a_t directories and getattr, read and open b_t files
    /// (objmgr-files.cil), deny_t may do nothing (both checked against the server below).
    #[test]
    #[allow(clippy::unwrap_used)]
    fn remembered_grants_never_answer_for_another_sid() {
        use crate::hooks::fs::{oflags::O_RDONLY, MountOpts, MAY_EXEC, MAY_READ};
        use crate::{errno, ObjectManager};
        let (server, avc) =
            seaccess_testkit::server_with_avc(&seaccess_testkit::compile("objmgr-files", 33), 512);
        let om = ObjectManager::new(server.clone(), &*server, avc.clone());
        let sb = om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
        let d = om.inode_init(&sb, 10, 0o040755, "/d", Some("u:object_r:a_t:s0"));
        let f = om.inode_init(&sb, 13, 0o100644, "/d/f", Some("u:object_r:b_t:s0"));
        let sid = |c: &str| server.context_to_sid(c).unwrap();
        let (quiet, deny, a, b) = (
            sid("u:r:quiet_t:s0"),
            sid("u:r:deny_t:s0"),
            sid("u:object_r:a_t:s0"),
            sid("u:object_r:b_t:s0"),
        );
        let asked = [
            (a, "dir", "search"),
            (b, "file", "getattr"),
            (b, "file", "read"),
            (b, "file", "open"),
        ];
        for (t, class, perm) in asked {
            assert!(
                seaccess_testkit::passes(&server, quiet, t, class, perm),
                "quiet_t {class} {perm}"
            );
            assert!(
                !seaccess_testkit::passes(&server, deny, t, class, perm),
                "deny_t {class} {perm}"
            );
        }
        let ops = |task: &Task| {
            [
                om.path_walk(task, &[(&d, "d")]),
                om.inode_permission(task, &d, MAY_EXEC, Some("d")),
                om.inode_getattr(task, &f, "/d/f"),
                om.inode_permission(task, &f, MAY_READ, Some("f")),
                om.file_open(task, &f, "/d/f", O_RDONLY).map(|_| ()),
            ]
            .map(|r| r.map_err(|e| e.errno()))
        };
        // Each fast path that remembers something in the credential: all of them, and the
        // search cache alone.
        let got = [true, false].map(|posix| {
            om.fast_paths().set_posix(posix);
            let cred = Cred::new(quiet);
            {
                let task = Task::new(1, "q", cred.clone());
                for _ in 0..3 {
                    assert_eq!(ops(&task), [Ok(()); 5], "quiet_t, posix {posix}");
                }
            }
            let warm = Arc::try_unwrap(cred).unwrap();
            let task = Task::new(2, "d", Arc::new(with_state_of(deny, warm)));
            (posix, ops(&task))
        });
        assert_eq!(
            got,
            [true, false].map(|posix| (posix, [Err(errno::EACCES); 5])),
            "deny_t with quiet_t's remembered state (posix on, off)"
        );
    }
}
