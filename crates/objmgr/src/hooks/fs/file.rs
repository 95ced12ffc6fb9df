//! Open files: open (selinux_file_open), read and write (selinux_file_permission with the
//! revalidation skip) and ioctl (selinux_file_ioctl).

use seaccess_types::PolicyCap;

use crate::audit::AuditData;
use crate::blobs::{FileSec, InodeSec};
use crate::classes::{capability, common_file, fd, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::Result;
use crate::grant::compact;
use crate::ObjectManager;

use super::{file_mask_to_av, file_to_av, oflags, path, MAY_APPEND, MAY_EXEC, MAY_READ, MAY_WRITE};

/// The ioctl commands selinux_file_ioctl treats specially (x86-64 values).
pub mod ioctls {
    pub const FIBMAP: u32 = 1;
    pub const FIGETBSZ: u32 = 2;
    pub const FIONREAD: u32 = 0x541b;
    pub const FIONBIO: u32 = 0x5421;
    pub const FIONCLEX: u32 = 0x5450;
    pub const FIOCLEX: u32 = 0x5451;
    pub const FIOASYNC: u32 = 0x5452;
    pub const KDSKBENT: u32 = 0x4b47;
    pub const KDSKBSENT: u32 = 0x4b49;
    pub const FS_IOC_GETFLAGS: u32 = 0x8008_6601;
    pub const FS_IOC_SETFLAGS: u32 = 0x4008_6602;
    pub const FS_IOC_GETVERSION: u32 = 0x8008_7601;
    pub const FS_IOC_SETVERSION: u32 = 0x4008_7602;
}

impl ObjectManager {
    /// The open check (selinux_file_open): the opener's `{read}`/`{write}`/`{append}` as the
    /// access mode says (`{ioctl}` for access mode 3), with `{open}` under the open_perms
    /// policy capability, in one check on the inode (FILE audit data). The returned blob keeps
    /// the inode's SID and the policy seqno the check was made with, and what it granted
    /// cleanly, for the revalidation skip. The VFS's inode_permission with the access mode
    /// comes before this, as in the kernel (see the module docs).
    pub fn file_open(&self, task: &Task, inode: &InodeSec, p: &str, flags: i32) -> Result<FileSec> {
        let sid = task.sid();
        let mut av = file_to_av(flags);
        // Every file class has `open` at the same bit.
        if self.policy_caps().contains(PolicyCap::OpenPerms) {
            av |= common_file::OPEN;
        }
        if self.fast_paths().posix() {
            if let Some(need) = compact(av) {
                // The SID is read before the grant: a grant read after a relabel's new SID is
                // the new SID's (InodeSec::set_sid), so the blob never pairs the new SID with
                // the old SID's grant.
                let isid = inode.sid();
                let (id, seqno) = self.epoch(task.cred());
                if inode.grant.holds(id, need) {
                    return Ok(FileSec::new(sid, inode.class(), isid, seqno, av, flags));
                }
            }
        }
        self.file_open_slow(task, inode, p, flags, av)
    }

    #[inline(never)]
    fn file_open_slow(
        &self,
        task: &Task,
        inode: &InodeSec,
        p: &str,
        flags: i32,
        av: u32,
    ) -> Result<FileSec> {
        let sid = task.sid();
        let w = self.window();
        let (v, isid) = self.check_inode_noaudit(Hook::FileOpen, task, inode, av)?;
        self.audit(task, sid, isid, inode.class(), &v, &path(inode, p));
        self.outcome(inode.class(), &v)?;
        let granted = if self.may_keep_open(w, &v) { av } else { 0 };
        Ok(FileSec::new(
            sid,
            inode.class(),
            isid,
            v.decision.seqno,
            granted,
            flags,
        ))
    }

    /// read(2), write(2) and the like on an open file (selinux_file_permission): skipped,
    /// writing nothing, when the task, the inode's SID and the policy are those of the open and
    /// the policy granted the open what is asked, auditallow'ed or not (the 2007 revalidation
    /// skip); else `fd {use}` when another SID opened the file, then `{read}`/`{write}`/
    /// `{append}` on the inode (FILE audit data; O_APPEND turns a write into an append). An
    /// open granted in permissive mode or to a permissive domain is never kept, so its reads
    /// and writes are checked (docs/objmgr.md: the one deliberate difference).
    #[inline]
    pub fn file_permission(
        &self,
        task: &Task,
        file: &FileSec,
        inode: &InodeSec,
        mask: u32,
        p: &str,
    ) -> Result<()> {
        let m = mask & (MAY_READ | MAY_WRITE | MAY_EXEC | MAY_APPEND);
        // `may` holds the masks whose permissions the open granted (an empty mask asks
        // nothing, so passes too).
        if m & !file.may == 0
            && self.fast_paths().revalidate()
            && task.sid() == file.sid
            && inode.sid() == file.isid
            && file.pseqno == self.avc().seqno()
        {
            return Ok(());
        }
        self.file_permission_slow(task, file, inode, m, p)
    }

    #[inline(never)]
    fn file_permission_slow(
        &self,
        task: &Task,
        file: &FileSec,
        inode: &InodeSec,
        mut mask: u32,
        p: &str,
    ) -> Result<()> {
        if mask == 0 {
            return Ok(());
        }
        if file.flags & oflags::O_APPEND != 0 && mask & MAY_WRITE != 0 {
            mask |= MAY_APPEND;
        }
        let class = inode.class();
        let av = file_mask_to_av(class, mask);
        let sid = task.sid();
        let isid = inode.sid();
        if sid == file.sid
            && isid == file.isid
            && file.pseqno == self.avc().seqno()
            && av & !file.granted == 0
        {
            if self.fast_paths().revalidate() || av == 0 {
                return Ok(());
            }
            // The skip switched off (to measure it): the check is made, but, as the kernel
            // skips it, it writes no record; the policy and the SIDs are the open's, so it
            // grants what the open was granted.
            let v = self.check_noaudit(Hook::FilePermission, sid, isid, class, av)?;
            return self.outcome(class, &v).map(|_| ());
        }
        self.file_has_perm(Hook::FilePermission, task, file, inode, isid, av, p)
    }

    /// flock(2) and fcntl's F_GETLK, F_SETLK, F_SETLKW and their OFD forms on an open file
    /// (selinux_file_lock, and selinux_file_fcntl's lock commands): both go through
    /// file_has_perm with `{lock}`, so `fd {use}` first when another SID opened the file.
    pub fn file_lock(&self, task: &Task, file: &FileSec, inode: &InodeSec, p: &str) -> Result<()> {
        self.file_has_perm(
            Hook::FileLock,
            task,
            file,
            inode,
            inode.sid(),
            common_file::LOCK,
            p,
        )
    }

    /// ioctl(2) on an open file (selinux_file_ioctl): `{getattr}` or `{setattr}` for the
    /// attribute commands, `fd {use}` alone for FIONBIO and FIOASYNC, `capability
    /// {sys_tty_config}` for the keyboard table commands, nothing for FIOCLEX/FIONCLEX under the
    /// ioctl_skip_cloexec capability; any other command `fd {use}` then `{ioctl}` decided with
    /// the policy's extended permissions for the command (ioctl_has_perm, IOCTL_OP audit data
    /// with `ioctlcmd=`, the command cut to 16 bits as there).
    pub fn file_ioctl(
        &self,
        task: &Task,
        file: &FileSec,
        inode: &InodeSec,
        cmd: u32,
        p: &str,
    ) -> Result<()> {
        use ioctls::*;
        let isid = inode.sid();
        match cmd {
            FIONREAD | FIBMAP | FIGETBSZ | FS_IOC_GETFLAGS | FS_IOC_GETVERSION => {
                return self.file_has_perm(
                    Hook::FileIoctl,
                    task,
                    file,
                    inode,
                    isid,
                    common_file::GETATTR,
                    p,
                );
            }
            FS_IOC_SETFLAGS | FS_IOC_SETVERSION => {
                return self.file_has_perm(
                    Hook::FileIoctl,
                    task,
                    file,
                    inode,
                    isid,
                    common_file::SETATTR,
                    p,
                );
            }
            FIONBIO | FIOASYNC => {
                return self.file_has_perm(Hook::FileIoctl, task, file, inode, isid, 0, p)
            }
            KDSKBENT | KDSKBSENT => {
                // cred_has_capability(CAP_SYS_TTY_CONFIG), capability 26.
                let sid = task.sid();
                return self
                    .check(
                        Hook::FileIoctl,
                        task,
                        sid,
                        Class::CAPABILITY,
                        capability::SYS_TTY_CONFIG,
                        &AuditData::Cap(26),
                    )
                    .map(|_| ());
            }
            FIOCLEX | FIONCLEX if self.policy_caps().contains(PolicyCap::IoctlSkipCloexec) => {
                return Ok(())
            }
            _ => {}
        }
        let ad = AuditData::Ioctl {
            path: p,
            dev: &inode.sb.dev,
            ino: inode.ino,
        };
        if task.sid() != file.sid {
            // A plain check, audited with the command too (IOCTL_OP data).
            let v =
                self.check_noaudit(Hook::FileIoctl, task.sid(), file.sid, Class::FD, fd::USE)?;
            if v.audits() {
                let aux = format!(
                    "{} ioctlcmd={:#x}",
                    ad.render(task.pid(), task.comm()),
                    cmd as u16
                );
                self.audit_text(task.sid(), file.sid, Class::FD, &v, &aux);
            }
            self.outcome(Class::FD, &v)?;
        }
        self.check_ioctl(
            Hook::FileIoctl,
            task,
            isid,
            inode.class(),
            common_file::IOCTL,
            cmd as u16,
            &ad,
        )
        .map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classes::dir;
    use seaccess_types::{Seqno, Sid};

    /// The revalidation skip's mask test passes only where the permissions file_permission
    /// asks (file_mask_to_av, O_APPEND turning a write into an append) were granted at the
    /// open: for every class kind, open flags, granted set and mask.
    #[test]
    fn the_skips_mask_test_never_covers_more_than_the_open_granted() {
        let perms = [
            common_file::READ,
            common_file::WRITE,
            common_file::APPEND,
            common_file::EXECUTE,
            common_file::IOCTL,
            common_file::OPEN,
            dir::SEARCH,
        ];
        let mut skipped = 0;
        for class in [Class::FILE, Class::DIR] {
            for flags in [
                oflags::O_RDONLY,
                oflags::O_WRONLY,
                oflags::O_RDWR,
                3,
                oflags::O_WRONLY | oflags::O_APPEND,
                oflags::O_RDWR | oflags::O_APPEND,
            ] {
                for set in 0..1u32 << perms.len() {
                    let granted = perms
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| set & 1 << i != 0)
                        .fold(0, |g, (_, p)| g | p);
                    let f = FileSec::new(Sid(1), class, Sid(2), Seqno(1), granted, flags);
                    for mask in 0..16u32 {
                        let mut m = mask;
                        if flags & oflags::O_APPEND != 0 && m & MAY_WRITE != 0 {
                            m |= MAY_APPEND;
                        }
                        let asked = file_mask_to_av(class, m);
                        if mask & !f.may == 0 {
                            skipped += 1;
                            assert_eq!(
                                asked & !granted,
                                0,
                                "{class:?} flags {flags:#o} granted {granted:#x} mask {mask}"
                            );
                        }
                    }
                }
            }
        }
        assert!(skipped > 1000, "the test covers skips ({skipped})");
    }
}
