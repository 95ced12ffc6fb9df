//! Security blobs: what the object manager keeps beside each inode, open file, filesystem and
//! socket (the kernel's objsec.h). Only SIDs, our class numbers and seqnos live here.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::*};
use std::sync::Arc;

use seaccess_types::{Seqno, Sid};

use crate::classes::Class;
use crate::grant::InodeGrant;

/// How a filesystem's inodes get their labels (the kernel's SECURITY_FS_USE_*, from the
/// policy's fs_use statements, genfscon, or a context= mount option).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Labeling {
    /// Each inode's `security.selinux` attribute; new inodes by type transition.
    Xattr,
    /// Every inode by type transition from the creating task and the filesystem's SID.
    Trans,
    /// Every inode takes its creating task's SID.
    Task,
    /// By path, from the policy's genfscon statements.
    Genfs,
    /// Every inode has the mount's context= SID.
    Mountpoint,
    /// The filesystem keeps and reports each inode's label itself (the kernel's
    /// SECURITY_FS_USE_NATIVE: labeled NFS); an inode it reports none for is unlabeled.
    Native,
}

/// A mounted filesystem's blob (superblock_security_struct).
#[derive(Debug)]
pub struct SuperSec {
    /// The device name audit records give as `dev=` (the kernel's s_id).
    pub dev: Arc<str>,
    /// The filesystem type, for fs_use and genfscon.
    pub fstype: Arc<str>,
    pub labeling: Labeling,
    /// The filesystem's SID (`filesystem` checks; the target of `associate`).
    pub sid: Sid,
    /// The SID of inodes without a label (defcontext=, else the policy's `file` initial SID).
    pub def_sid: Sid,
    /// The SID every inode has under [`Labeling::Mountpoint`] (context=).
    pub mntpoint_sid: Sid,
    /// The root inode's SID when rootcontext= (or context=) gave one.
    pub root_sid: Option<Sid>,
    /// Whether inodes may carry their own labels (the kernel's SBLABEL_MNT): relabeling and
    /// setfscreatecon apply only then.
    pub sblabel: bool,
    /// Whether genfscon is looked up per path (the kernel's SE_SBGENFS: proc, sysfs, ...);
    /// other genfs filesystems label every inode with the filesystem's SID.
    pub genfs_paths: bool,
}

/// An inode's blob (inode_security_struct). The SID may change (a relabel); the class is the
/// file type's and does not.
#[derive(Debug)]
pub struct InodeSec {
    sid: AtomicU32,
    class: Class,
    initialized: AtomicBool,
    /// The inode number, for `ino=` in audit records.
    pub ino: u64,
    pub sb: Arc<SuperSec>,
    /// The "nothing beyond POSIX here" fast path: what the last (credential SID, seqno) was
    /// granted here without an audit record (search, getattr, read, write, open, ...).
    pub(crate) grant: InodeGrant,
}

impl InodeSec {
    /// An inode of `class` on `sb`, labelled `sid` (initialized) or not yet (None: it has the
    /// filesystem's default SID until labelled).
    pub fn new(sb: Arc<SuperSec>, ino: u64, class: Class, sid: Option<Sid>) -> InodeSec {
        let (s, init) = match sid {
            Some(s) => (s, true),
            None => (sb.def_sid, false),
        };
        InodeSec {
            sid: AtomicU32::new(s.0),
            class,
            initialized: AtomicBool::new(init),
            ino,
            sb,
            grant: InodeGrant::new(),
        }
    }

    /// The inode's SID now.
    #[inline(always)]
    pub fn sid(&self) -> Sid {
        Sid(self.sid.load(Acquire))
    }

    pub fn class(&self) -> Class {
        self.class
    }

    pub fn initialized(&self) -> bool {
        self.initialized.load(Acquire)
    }

    /// Gives the inode a new SID (a relabel, or its first label). Every fast-path record
    /// made under the old SID (its grant, and every walk's memo) is forgotten before this
    /// returns, so the next operation checks the new one. Two relabels of one inode take
    /// turns (as the kernel's inode lock makes them): the second waits for the first to end.
    pub fn set_sid(&self, sid: Sid) {
        self.grant.begin_relabel();
        self.sid.store(sid.0, Release);
        self.initialized.store(true, Release);
        crate::walkmemo::relabeled();
        self.grant.end_relabel();
    }
}

/// An open file's blob (file_security_struct): who opened it and what was checked then, so
/// that reads and writes skip the check while nothing of it changed (the 2007 revalidation
/// skip).
#[derive(Debug, Clone)]
pub struct FileSec {
    /// The opener's subjective SID.
    pub sid: Sid,
    /// The SID of the task owning the file for SIGIO (fown), the opener's at first.
    pub fown_sid: Sid,
    /// The inode's SID when the open was checked.
    pub isid: Sid,
    /// The policy seqno when the open was checked.
    pub pseqno: Seqno,
    /// The permissions (our bits of the inode's class) the open checked and the policy
    /// granted, audited or not, under an enforcing decision of policy `pseqno` (never a grant
    /// made only because the mode or the domain is permissive): what the revalidation skip
    /// covers, silently, as the kernel's (0: nothing, every read and write is checked).
    /// Read-only: the skip tests the VFS masks derived from it at the open.
    pub granted: u32,
    /// The open flags (O_APPEND turns a write into an append).
    pub flags: i32,
    /// The VFS mask bits (MAY_READ, MAY_WRITE, MAY_EXEC, MAY_APPEND) whose permissions, as
    /// file_permission asks them of this file, `granted` covers: the revalidation skip's test
    /// is then one mask test, with no translation of the mask on each read or write.
    pub(crate) may: u32,
}

impl FileSec {
    /// The blob of a file opened by `sid` on an inode of `class` labelled `isid` under policy
    /// `pseqno`, the open granting `granted` cleanly.
    pub(crate) fn new(
        sid: Sid,
        class: Class,
        isid: Sid,
        pseqno: Seqno,
        granted: u32,
        flags: i32,
    ) -> FileSec {
        use crate::classes::{common_file as f, dir};
        use crate::vfs::{oflags::O_APPEND, MAY_APPEND, MAY_EXEC, MAY_READ, MAY_WRITE};
        let has = |p: u32| granted & p == p;
        // As file_mask_to_av asks (append replaces write outside directories; a directory's
        // append asks nothing), with O_APPEND turning a write into an append.
        let (r, w, x, a) = if class == Class::DIR {
            (has(dir::READ), has(dir::WRITE), has(dir::SEARCH), true)
        } else {
            let a = has(f::APPEND);
            (
                has(f::READ),
                if flags & O_APPEND != 0 {
                    a
                } else {
                    has(f::WRITE)
                },
                has(f::EXECUTE),
                a,
            )
        };
        let may = [
            (r, MAY_READ),
            (w, MAY_WRITE),
            (x, MAY_EXEC),
            (a, MAY_APPEND),
        ]
        .iter()
        .filter(|(ok, _)| *ok)
        .fold(0, |m, (_, b)| m | b);
        FileSec {
            sid,
            fown_sid: sid,
            isid,
            pseqno,
            granted,
            flags,
            may: if granted == 0 { 0 } else { may },
        }
    }
}

/// A socket's blob (sk_security_struct).
#[derive(Debug)]
pub struct SockSec {
    pub sid: Sid,
    pub class: Class,
    peer_sid: AtomicU32,
}

impl SockSec {
    pub fn new(sid: Sid, class: Class) -> SockSec {
        SockSec {
            sid,
            class,
            peer_sid: AtomicU32::new(0),
        }
    }

    /// The peer's SID (unix sockets, once connected; the `unlabeled` initial SID's number 0
    /// until then).
    pub fn peer_sid(&self) -> Sid {
        Sid(self.peer_sid.load(Acquire))
    }

    pub fn set_peer_sid(&self, sid: Sid) {
        self.peer_sid.store(sid.0, Release);
    }
}
