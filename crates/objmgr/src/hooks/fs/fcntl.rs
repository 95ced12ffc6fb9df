//! What is done with an open file beside reading and writing it: fcntl(2), passing it to
//! another task, SIGIO ownership, the 32-bit ioctl commands, and a file's blob made without
//! an open.

use seaccess_types::{Seqno, Sid};

use crate::audit::AuditData;
use crate::blobs::{FileSec, InodeSec};
use crate::classes::{common_file, Class};
use crate::counters::Hook;
use crate::cred::{Task, TaskRef};
use crate::error::Result;
use crate::hooks::process::signal_perm;
use crate::ObjectManager;

use super::{file_to_av, ioctls, oflags};

/// The fcntl(2) commands selinux_file_fcntl tells apart (x86-64 values; the 32-bit
/// F_GETLK64 family does not exist there, so those numbers ask nothing, as in a 64-bit kernel).
pub mod fcntl_cmds {
    pub const F_DUPFD: u32 = 0;
    pub const F_GETFD: u32 = 1;
    pub const F_SETFD: u32 = 2;
    pub const F_GETFL: u32 = 3;
    pub const F_SETFL: u32 = 4;
    pub const F_GETLK: u32 = 5;
    pub const F_SETLK: u32 = 6;
    pub const F_SETLKW: u32 = 7;
    pub const F_SETOWN: u32 = 8;
    pub const F_GETOWN: u32 = 9;
    pub const F_SETSIG: u32 = 10;
    pub const F_GETSIG: u32 = 11;
    pub const F_GETOWNER_UIDS: u32 = 17;
    pub const F_OFD_GETLK: u32 = 36;
    pub const F_OFD_SETLK: u32 = 37;
    pub const F_OFD_SETLKW: u32 = 38;
}

/// The 32-bit forms of the attribute ioctls (FS_IOC32_*), which selinux_file_ioctl_compat
/// reads as their 64-bit forms.
const FS_IOC32_GETFLAGS: u32 = 0x8004_6601;
const FS_IOC32_SETFLAGS: u32 = 0x4004_6602;
const FS_IOC32_GETVERSION: u32 = 0x8004_7601;
const FS_IOC32_SETVERSION: u32 = 0x4004_7602;

/// SIGIO, the signal an owner gets when none was chosen with F_SETSIG.
const SIGIO: i32 = 29;

impl ObjectManager {
    /// fcntl(2) command `cmd` with argument `arg` on an open file (selinux_file_fcntl):
    /// F_SETFL clearing O_APPEND asks `{write}`, as clearing it turns append-only access into
    /// write access; F_SETFL otherwise, F_SETOWN, F_SETSIG, F_GETFL, F_GETOWN, F_GETSIG and
    /// F_GETOWNER_UIDS ask `fd {use}` alone; the lock commands ask `{lock}` (as
    /// [`ObjectManager::file_lock`] does); any other command asks nothing. `fd {use}` comes
    /// first when another SID opened the file (file_has_perm, FILE audit data). The caller
    /// changes `file.flags` after a granted F_SETFL, and calls
    /// [`ObjectManager::file_set_fowner`] after a granted F_SETOWN.
    pub fn file_fcntl(
        &self,
        task: &Task,
        file: &FileSec,
        inode: &InodeSec,
        cmd: u32,
        arg: u64,
        p: &str,
    ) -> Result<()> {
        use fcntl_cmds::*;
        let h = Hook::FileFcntl;
        let append = u64::from(oflags::O_APPEND.unsigned_abs());
        match cmd {
            F_SETFL if file.flags & oflags::O_APPEND != 0 && arg & append == 0 => {
                self.file_has_perm(h, task, file, inode, inode.sid(), common_file::WRITE, p)
            }
            F_SETFL | F_SETOWN | F_SETSIG | F_GETFL | F_GETOWN | F_GETSIG | F_GETOWNER_UIDS => {
                self.file_has_perm(h, task, file, inode, inode.sid(), 0, p)
            }
            F_GETLK | F_SETLK | F_SETLKW | F_OFD_GETLK | F_OFD_SETLK | F_OFD_SETLKW => {
                self.file_has_perm(h, task, file, inode, inode.sid(), common_file::LOCK, p)
            }
            _ => Ok(()),
        }
    }

    /// A file descriptor received from another task, over SCM_RIGHTS or the like
    /// (selinux_file_receive): `fd {use}` when the receiver did not open it, then the
    /// permissions of its open mode on the inode (file_to_av: `{read}`, `{write}` or
    /// `{append}`, `{ioctl}` for access mode 3), FILE audit data. There are no BPF objects
    /// here, so bpf_fd_pass asks nothing.
    pub fn file_receive(
        &self,
        task: &Task,
        file: &FileSec,
        inode: &InodeSec,
        p: &str,
    ) -> Result<()> {
        self.file_has_perm(
            Hook::FileReceive,
            task,
            file,
            inode,
            inode.sid(),
            file_to_av(file.flags),
            p,
        )
    }

    /// F_SETOWN and the like made `task` the file's owner for SIGIO (selinux_file_set_fowner):
    /// the owner's SID is the task's now, and later signals are checked from it.
    pub fn file_set_fowner(&self, task: &Task, file: &mut FileSec) {
        file.fown_sid = task.sid();
    }

    /// SIGIO (or the signal chosen with F_SETSIG, `signum`; 0 for none) sent to `target`
    /// because of the file (selinux_file_send_sigiotask): the signal's `process` permission
    /// from the file owner's SID to the target's objective SID, no audit data. `task` is the
    /// one whose action raised the signal, named in the record. Signal 0 is SIGIO here, not a
    /// probe: `{signal}`, not `{signull}`.
    pub fn file_send_sigiotask(
        &self,
        task: &Task,
        file: &FileSec,
        target: &TaskRef,
        signum: i32,
    ) -> Result<()> {
        let sig = if signum == 0 { SIGIO } else { signum };
        self.check_sid(
            Hook::FileSendSigiotask,
            task,
            file.fown_sid,
            target.sid(),
            Class::PROCESS,
            signal_perm(sig),
            &AuditData::None,
        )
        .map(|_| ())
    }

    /// ioctl(2) from a 32-bit task (selinux_file_ioctl_compat): the 32-bit attribute
    /// commands are read as their 64-bit forms, then everything is as
    /// [`ObjectManager::file_ioctl`] asks it.
    pub fn file_ioctl_compat(
        &self,
        task: &Task,
        file: &FileSec,
        inode: &InodeSec,
        cmd: u32,
        p: &str,
    ) -> Result<()> {
        let cmd = match cmd {
            FS_IOC32_GETFLAGS => ioctls::FS_IOC_GETFLAGS,
            FS_IOC32_SETFLAGS => ioctls::FS_IOC_SETFLAGS,
            FS_IOC32_GETVERSION => ioctls::FS_IOC_GETVERSION,
            FS_IOC32_SETVERSION => ioctls::FS_IOC_SETVERSION,
            c => c,
        };
        self.file_ioctl(task, file, inode, cmd, p)
    }

    /// The blob of a file made by `task` without [`ObjectManager::file_open`] (a pipe, a
    /// socket's file, an anonymous file) with open flags `flags` (selinux_file_alloc_security):
    /// the task is its opener and its SIGIO owner. Nothing was checked at an open, so every
    /// read and write of it is checked (the revalidation skip never covers it).
    pub fn file_alloc_security(&self, task: &Task, inode: &InodeSec, flags: i32) -> FileSec {
        // The kernel's isid and pseqno stay 0 until an open sets them; with nothing granted
        // the skip's test fails whatever they are.
        FileSec::new(task.sid(), inode.class(), Sid::NULL, Seqno(0), 0, flags)
    }
}
