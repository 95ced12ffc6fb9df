//! System V IPC hooks: message queues and their messages, shared memory, semaphores (hooks.c,
//! selinux_msg_*, selinux_shm_*, selinux_sem_*, selinux_ipc_*), with their blobs.
//!
//! POSIX message queues are not here: in Linux they are files on the mqueue filesystem, so
//! mq_open, mq_send and mq_receive are the inode and file hooks (create, open, read, write on
//! the queue's inode), as a userspace kernel's mqueue files should be.
//!
//! Every check is audited with the object's IPC key (LSM_AUDIT_DATA_IPC), as ipc_has_perm
//! does, except the system-wide `ipc_info` query, which has no object.

use std::sync::atomic::{AtomicU32, Ordering::*};

use seaccess_types::Sid;

use crate::audit::AuditData;
use crate::classes::{ipc, msg, msgq, shm, system, Class};
use crate::counters::Hook;
use crate::cred::{Task, TaskRef};
use crate::error::{ObjmgrError, Result};
use crate::hooks::socket::{SECINITSID_KERNEL, SECINITSID_UNLABELED};
use crate::ObjectManager;

/// IPC control commands, as the hooks get them (without the IPC_64 version flag, which the
/// kernel strips before its hook).
pub mod ipc_cmd {
    pub const IPC_RMID: i32 = 0;
    pub const IPC_SET: i32 = 1;
    pub const IPC_STAT: i32 = 2;
    pub const IPC_INFO: i32 = 3;
    pub const MSG_STAT: i32 = 11;
    pub const MSG_INFO: i32 = 12;
    pub const MSG_STAT_ANY: i32 = 13;
    pub const SHM_LOCK: i32 = 11;
    pub const SHM_UNLOCK: i32 = 12;
    pub const SHM_STAT: i32 = 13;
    pub const SHM_INFO: i32 = 14;
    pub const SHM_STAT_ANY: i32 = 15;
    pub const GETPID: i32 = 11;
    pub const GETVAL: i32 = 12;
    pub const GETALL: i32 = 13;
    pub const GETNCNT: i32 = 14;
    pub const GETZCNT: i32 = 15;
    pub const SETVAL: i32 = 16;
    pub const SETALL: i32 = 17;
    pub const SEM_STAT: i32 = 18;
    pub const SEM_INFO: i32 = 19;
    pub const SEM_STAT_ANY: i32 = 20;
}

/// shmat(2)'s read-only flag.
pub const SHM_RDONLY: i32 = 0o10000;

/// A System V IPC object's blob (ipc_security_struct), with the key its records name.
#[derive(Debug, Clone)]
pub struct IpcSec {
    sid: Sid,
    class: Class,
    /// The object's IPC key (kern_ipc_perm's key), for `ipc_key=` in records.
    pub key: i32,
}

impl IpcSec {
    /// An object of `class` (msgq, shm or sem) labelled `sid`, with IPC key `key`.
    pub fn new(sid: Sid, class: Class, key: i32) -> IpcSec {
        IpcSec { sid, class, key }
    }

    pub fn sid(&self) -> Sid {
        self.sid
    }

    pub fn class(&self) -> Class {
        self.class
    }
}

/// A queued message's blob (msg_security_struct): the unlabeled SID until its first send
/// labels it.
#[derive(Debug)]
pub struct MsgSec {
    sid: AtomicU32,
}

impl MsgSec {
    /// The message's SID now.
    pub fn sid(&self) -> Sid {
        Sid(self.sid.load(Acquire))
    }
}

impl ObjectManager {
    /// ipc_has_perm: `perms` of the object's class from the task's SID, audited with its key.
    fn ipc_has_perm(&self, hook: Hook, task: &Task, obj: &IpcSec, perms: u32) -> Result<()> {
        self.check(
            hook,
            task,
            obj.sid,
            obj.class,
            perms,
            &AuditData::Ipc { key: obj.key },
        )
        .map(|_| ())
    }

    /// A new object of `class` made by `task` (ipc_init_security and the alloc hooks): the
    /// task's SID, and `create` of it from the task.
    fn ipc_alloc(&self, hook: Hook, task: &Task, class: Class, key: i32) -> Result<IpcSec> {
        let obj = IpcSec::new(task.sid(), class, key);
        self.ipc_has_perm(hook, task, &obj, ipc::CREATE)?;
        Ok(obj)
    }

    /// The system-wide IPC_INFO and *_INFO queries: `system {ipc_info}` of the kernel initial
    /// SID, with no audit data.
    fn ipc_info(&self, hook: Hook, task: &Task) -> Result<()> {
        let kernel = self.initial_or_null(SECINITSID_KERNEL);
        self.check(
            hook,
            task,
            kernel,
            Class::SYSTEM,
            system::IPC_INFO,
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// An access to an IPC object by its mode bits (selinux_ipc_permission): `unix_read` for
    /// any read bit (0o444) of `flag`, `unix_write` for any write bit (0o222), both in one
    /// check; nothing is asked when `flag` has neither.
    pub fn ipc_permission(&self, task: &Task, obj: &IpcSec, flag: u32) -> Result<()> {
        let mut av = 0;
        if flag & 0o444 != 0 {
            av |= ipc::UNIX_READ;
        }
        if flag & 0o222 != 0 {
            av |= ipc::UNIX_WRITE;
        }
        if av == 0 {
            return Ok(());
        }
        self.ipc_has_perm(Hook::IpcPermission, task, obj, av)
    }

    /// The object's SID, for an audit rule or a peer query (selinux_ipc_getlsmprop).
    pub fn ipc_getlsmprop(&self, obj: &IpcSec) -> Sid {
        obj.sid
    }

    /// A new message's blob (selinux_msg_msg_alloc_security): the unlabeled initial SID, which
    /// [`ObjectManager::msg_queue_msgsnd`] replaces on the first send.
    pub fn msg_msg_alloc_security(&self) -> MsgSec {
        MsgSec {
            sid: AtomicU32::new(self.initial_or_null(SECINITSID_UNLABELED).0),
        }
    }

    /// msgget(2) creating a queue with key `key` (selinux_msg_queue_alloc_security): the queue
    /// takes the task's SID; `msgq {create}` of it.
    pub fn msg_queue_alloc_security(&self, task: &Task, key: i32) -> Result<IpcSec> {
        self.ipc_alloc(Hook::MsgQueueAllocSecurity, task, Class::MSGQ, key)
    }

    /// msgget(2) of an existing queue (selinux_msg_queue_associate): `msgq {associate}`.
    pub fn msg_queue_associate(&self, task: &Task, msq: &IpcSec) -> Result<()> {
        self.ipc_has_perm(Hook::MsgQueueAssociate, task, msq, msgq::ASSOCIATE)
    }

    /// msgctl(2) with `cmd` (selinux_msg_queue_msgctl): IPC_INFO and MSG_INFO ask `system
    /// {ipc_info}` of the kernel; IPC_STAT, MSG_STAT and MSG_STAT_ANY `msgq {getattr
    /// associate}`; IPC_SET `setattr`; IPC_RMID `destroy`. Any other command is refused
    /// (EINVAL), as msgctl(2) refuses it; the kernel's hook passes it unchecked.
    pub fn msg_queue_msgctl(&self, task: &Task, msq: &IpcSec, cmd: i32) -> Result<()> {
        use ipc_cmd::*;
        let perms = match cmd {
            IPC_INFO | MSG_INFO => return self.ipc_info(Hook::MsgQueueMsgctl, task),
            IPC_STAT | MSG_STAT | MSG_STAT_ANY => msgq::GETATTR | msgq::ASSOCIATE,
            IPC_SET => msgq::SETATTR,
            IPC_RMID => msgq::DESTROY,
            _ => return Err(ObjmgrError::Invalid(format!("msgctl command {cmd}"))),
        };
        self.ipc_has_perm(Hook::MsgQueueMsgctl, task, msq, perms)
    }

    /// msgsnd(2) of `msg` to `msq` (selinux_msg_queue_msgsnd): a message not yet labelled
    /// takes the type transition from the task on the queue (class `msg`), kept even if a check
    /// then fails; then `msgq {write}` of the queue, `msg {send}` of the message, and `msgq
    /// {enqueue}` from the message to the queue.
    pub fn msg_queue_msgsnd(&self, task: &Task, msq: &IpcSec, msg: &MsgSec) -> Result<()> {
        let hook = Hook::MsgQueueMsgsnd;
        let sid = task.sid();
        if msg.sid() == self.initial_or_null(SECINITSID_UNLABELED) {
            let label = self.with_policy_class(Class::MSG, |c| {
                Ok(self.server().transition_sid(sid, msq.sid, c, None)?)
            })?;
            msg.sid.store(label.0, Release);
        }
        let ad = AuditData::Ipc { key: msq.key };
        self.check(hook, task, msq.sid, Class::MSGQ, msgq::WRITE, &ad)?;
        self.check(hook, task, msg.sid(), Class::MSG, msg::SEND, &ad)?;
        self.check_sid(
            hook,
            task,
            msg.sid(),
            msq.sid,
            Class::MSGQ,
            msgq::ENQUEUE,
            &ad,
        )
        .map(|_| ())
    }

    /// `target` receiving `msg` from `msq` (selinux_msg_queue_msgrcv): `msgq {read}` of the
    /// queue and `msg {receive}` of the message, both from the receiver's objective SID. The
    /// caller `task` is the receiver, or a sender handing the message straight to a waiting
    /// receiver; records name it.
    pub fn msg_queue_msgrcv(
        &self,
        task: &Task,
        msq: &IpcSec,
        msg: &MsgSec,
        target: &TaskRef,
    ) -> Result<()> {
        let hook = Hook::MsgQueueMsgrcv;
        let sid = target.sid();
        let ad = AuditData::Ipc { key: msq.key };
        self.check_sid(hook, task, sid, msq.sid, Class::MSGQ, msgq::READ, &ad)?;
        self.check_sid(hook, task, sid, msg.sid(), Class::MSG, msg::RECEIVE, &ad)
            .map(|_| ())
    }

    /// shmget(2) creating a segment (selinux_shm_alloc_security): the task's SID; `shm
    /// {create}`.
    pub fn shm_alloc_security(&self, task: &Task, key: i32) -> Result<IpcSec> {
        self.ipc_alloc(Hook::ShmAllocSecurity, task, Class::SHM, key)
    }

    /// shmget(2) of an existing segment (selinux_shm_associate): `shm {associate}`.
    pub fn shm_associate(&self, task: &Task, shp: &IpcSec) -> Result<()> {
        self.ipc_has_perm(Hook::ShmAssociate, task, shp, shm::ASSOCIATE)
    }

    /// shmctl(2) with `cmd` (selinux_shm_shmctl): IPC_INFO and SHM_INFO ask `system
    /// {ipc_info}`; IPC_STAT, SHM_STAT and SHM_STAT_ANY `shm {getattr associate}`; IPC_SET
    /// `setattr`; SHM_LOCK and SHM_UNLOCK `lock`; IPC_RMID `destroy`. Any other command is
    /// refused (EINVAL), as shmctl(2) refuses it.
    pub fn shm_shmctl(&self, task: &Task, shp: &IpcSec, cmd: i32) -> Result<()> {
        use ipc_cmd::*;
        let perms = match cmd {
            IPC_INFO | SHM_INFO => return self.ipc_info(Hook::ShmShmctl, task),
            IPC_STAT | SHM_STAT | SHM_STAT_ANY => shm::GETATTR | shm::ASSOCIATE,
            IPC_SET => shm::SETATTR,
            SHM_LOCK | SHM_UNLOCK => shm::LOCK,
            IPC_RMID => shm::DESTROY,
            _ => return Err(ObjmgrError::Invalid(format!("shmctl command {cmd}"))),
        };
        self.ipc_has_perm(Hook::ShmShmctl, task, shp, perms)
    }

    /// shmat(2) with `shmflg` (selinux_shm_shmat): `shm {read}` with SHM_RDONLY, else `shm
    /// {read write}`.
    pub fn shm_shmat(&self, task: &Task, shp: &IpcSec, shmflg: i32) -> Result<()> {
        let perms = if shmflg & SHM_RDONLY != 0 {
            shm::READ
        } else {
            shm::READ | shm::WRITE
        };
        self.ipc_has_perm(Hook::ShmShmat, task, shp, perms)
    }

    /// semget(2) creating a set (selinux_sem_alloc_security): the task's SID; `sem {create}`.
    pub fn sem_alloc_security(&self, task: &Task, key: i32) -> Result<IpcSec> {
        self.ipc_alloc(Hook::SemAllocSecurity, task, Class::SEM, key)
    }

    /// semget(2) of an existing set (selinux_sem_associate): `sem {associate}`.
    pub fn sem_associate(&self, task: &Task, sma: &IpcSec) -> Result<()> {
        self.ipc_has_perm(Hook::SemAssociate, task, sma, ipc::ASSOCIATE)
    }

    /// semctl(2) with `cmd` (selinux_sem_semctl): IPC_INFO and SEM_INFO ask `system
    /// {ipc_info}`; GETPID, GETNCNT and GETZCNT `sem {getattr}`; GETVAL and GETALL `read`;
    /// SETVAL and SETALL `write`; IPC_RMID `destroy`; IPC_SET `setattr`; IPC_STAT, SEM_STAT
    /// and SEM_STAT_ANY `getattr associate`. Any other command is refused (EINVAL), as
    /// semctl(2) refuses it.
    pub fn sem_semctl(&self, task: &Task, sma: &IpcSec, cmd: i32) -> Result<()> {
        use ipc_cmd::*;
        let perms = match cmd {
            IPC_INFO | SEM_INFO => return self.ipc_info(Hook::SemSemctl, task),
            GETPID | GETNCNT | GETZCNT => ipc::GETATTR,
            GETVAL | GETALL => ipc::READ,
            SETVAL | SETALL => ipc::WRITE,
            IPC_RMID => ipc::DESTROY,
            IPC_SET => ipc::SETATTR,
            IPC_STAT | SEM_STAT | SEM_STAT_ANY => ipc::GETATTR | ipc::ASSOCIATE,
            _ => return Err(ObjmgrError::Invalid(format!("semctl command {cmd}"))),
        };
        self.ipc_has_perm(Hook::SemSemctl, task, sma, perms)
    }

    /// semop(2) (selinux_sem_semop): `sem {read write}` when an operation alters a value,
    /// else `sem {read}` (waiting for zero).
    pub fn sem_semop(&self, task: &Task, sma: &IpcSec, alter: bool) -> Result<()> {
        let perms = if alter {
            ipc::READ | ipc::WRITE
        } else {
            ipc::READ
        };
        self.ipc_has_perm(Hook::SemSemop, task, sma, perms)
    }
}
