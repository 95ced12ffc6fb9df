//! Per-hook counts of the cache lookups the hooks made: what the benchmark reads to show how
//! many lookups each fast path saves.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

macro_rules! hooks {
    ($($v:ident => $n:literal),* $(,)?) => {
        /// A hook, for its lookup counter and its name in reports.
        #[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
        pub enum Hook { $($v),* }

        impl Hook {
            /// Every hook, in counter order.
            pub const ALL: &'static [Hook] = &[$(Hook::$v),*];
            /// The kernel hook's name without its `selinux_` prefix.
            pub fn name(self) -> &'static str {
                match self { $(Hook::$v => $n),* }
            }
        }
    };
}

hooks! {
    InodePermission => "inode_permission",
    InodeFollowLink => "inode_follow_link",
    InodeReadlink => "inode_readlink",
    InodeGetattr => "inode_getattr",
    InodeSetattr => "inode_setattr",
    FileOpen => "file_open",
    FilePermission => "file_permission",
    FileIoctl => "file_ioctl",
    InodeCreate => "inode_create",
    InodeLink => "inode_link",
    InodeUnlink => "inode_unlink",
    InodeRmdir => "inode_rmdir",
    InodeRename => "inode_rename",
    InodeSetxattr => "inode_setxattr",
    InodeGetxattr => "inode_getxattr",
    InodeListxattr => "inode_listxattr",
    InodeRemovexattr => "inode_removexattr",
    SbStatfs => "sb_statfs",
    SocketCreate => "socket_create",
    SocketBind => "socket_bind",
    SocketConnect => "socket_connect",
    SocketListen => "socket_listen",
    SocketAccept => "socket_accept",
    SocketSendmsg => "socket_sendmsg",
    SocketRecvmsg => "socket_recvmsg",
    UnixStreamConnect => "unix_stream_connect",
    UnixMaySend => "unix_may_send",
    SocketPair => "socket_socketpair",
    BprmCredsForExec => "bprm_creds_for_exec",
    BprmCommittingCreds => "bprm_committing_creds",
    TaskKill => "task_kill",
    PtraceAccessCheck => "ptrace_access_check",
    Capable => "capable",
    Other => "other",
}

/// Lookup counts, one per hook.
#[derive(Debug)]
pub struct Counters(Vec<AtomicU64>);

impl Default for Counters {
    fn default() -> Counters {
        Counters(Hook::ALL.iter().map(|_| AtomicU64::new(0)).collect())
    }
}

impl Counters {
    #[inline(always)]
    pub fn bump(&self, hook: Hook) {
        if let Some(c) = self.0.get(hook as usize) {
            c.fetch_add(1, Relaxed);
        }
    }

    /// The cache lookups `hook` has made.
    pub fn get(&self, hook: Hook) -> u64 {
        self.0.get(hook as usize).map_or(0, |c| c.load(Relaxed))
    }

    /// Every hook's count, zeros included.
    pub fn snapshot(&self) -> Vec<(Hook, u64)> {
        Hook::ALL.iter().map(|&h| (h, self.get(h))).collect()
    }

    /// The lookups of every hook together.
    pub fn total(&self) -> u64 {
        self.0.iter().map(|c| c.load(Relaxed)).sum()
    }

    pub fn reset(&self) {
        for c in &self.0 {
            c.store(0, Relaxed);
        }
    }
}
