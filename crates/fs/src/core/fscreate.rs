//! The fscreate context on the mount: a thread publishes it ([`crate::published`] says how and
//! what keeps the channel honest), and each create by that thread is checked and labelled
//! with it, as the kernel's may_create and selinux_inode_init_security use the creating
//! credential's create SID (selinux_determine_inode_label).

use seaccess_objmgr::hooks::process::SetAttrOpts;
use seaccess_objmgr::Task;

use super::{Core, Req};
use crate::error::{FsError, Result};
use crate::published::{self, Attr};

impl Core {
    /// SETXATTR of [`published::FSCREATE_XATTR`]: the caller's write of its own
    /// /proc/thread-self/attr/fscreate (selinux_setprocattr): `process {setfscreate}` on
    /// itself, then the value a context of the policy (EINVAL and the kernel's `op=fscreate
    /// invalid_context=` record; the CAP_MAC_ADMIN exception is not made: the mount cannot see
    /// the caller's capabilities, so it fails closed), an empty value clearing it. Then kept
    /// for the calling thread. On a mount without checks nothing is kept (nothing is labelled).
    pub(super) fn publish_fscreate(&self, req: Req, value: &[u8]) -> Result<()> {
        if !self.opts.checks {
            return Ok(());
        }
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let value = std::str::from_utf8(value)
            .map_err(|_| FsError::errno_of(libc::EINVAL, "a context is text"))?;
        // The thread is held in the kernel until we answer: its group cannot change meanwhile.
        let tgid = published::tgid_of(req.pid)
            .ok_or_else(|| FsError::Closed(format!("thread {} has no /proc entry", req.pid)))?;
        let mut task = Task::new(t.pid(), t.comm(), t.cred().clone());
        self.om
            .setprocattr(&mut task, "fscreate", value, &SetAttrOpts::default())?;
        self.callers
            .publish(req, tgid, task.cred().create_sid())
            .inspect_err(|e| {
                self.log(&format!(
                    "thread {} ({}): fscreate not kept: {e}",
                    req.pid,
                    t.comm()
                ))
            })
    }

    /// The task a create by `req` (acting as `caller`) runs its hooks with: a credential of
    /// the caller's SID with the thread's published fscreate SID as its create SID, or None
    /// when it published none. A thread whose context the mount cannot know is refused (EIO,
    /// logged): creating with the policy's label could give a file a label its program did
    /// not ask for, and a looser one.
    pub(super) fn creating_task(&self, req: Req, caller: &Task) -> Result<Option<Task>> {
        if !self.opts.checks {
            return Ok(None);
        }
        match self.callers.published(req.pid) {
            None => Ok(None),
            Some(Attr::Set(sid)) => Ok(Some(Task::new(
                caller.pid(),
                caller.comm(),
                self.callers.cred_creating(caller.sid(), Some(sid)),
            ))),
            Some(Attr::Unknown(why)) => {
                let msg = format!("thread {} ({}): its fscreate context is not known ({why}); it must set or clear it again", req.pid, caller.comm());
                self.log(&msg);
                Err(FsError::errno_of(libc::EIO, msg))
            }
        }
    }
}
