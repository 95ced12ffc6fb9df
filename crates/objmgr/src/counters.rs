//! Per-hook counts of the cache lookups the hooks made: what the benchmark reads to show how
//! many lookups each fast path saves.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use seaccess_avc::stripe::{self, OWNED, SHARED};

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
    FileLock => "file_lock",
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
    FileFcntl => "file_fcntl",
    FileReceive => "file_receive",
    FileSendSigiotask => "file_send_sigiotask",
    MmapFile => "mmap_file",
    MmapAddr => "mmap_addr",
    FileMprotect => "file_mprotect",
    InodeSetAcl => "inode_set_acl",
    InodeGetAcl => "inode_get_acl",
    InodeRemoveAcl => "inode_remove_acl",
    InodeFileGetattr => "inode_file_getattr",
    InodeFileSetattr => "inode_file_setattr",
    InodeGetsecurity => "inode_getsecurity",
    PathNotify => "path_notify",
    QuotaOn => "quota_on",
    Quotactl => "quotactl",
    SbMount => "sb_mount",
    SbUmount => "sb_umount",
    SbKernMount => "sb_kern_mount",
    MoveMount => "move_mount",
    // Processes and credentials (hooks/process/task.rs, procattr.rs, cred_hooks.rs, kernel.rs,
    // uring.rs).
    TaskAlloc => "task_alloc",
    TaskSetpgid => "task_setpgid",
    TaskGetpgid => "task_getpgid",
    TaskGetsid => "task_getsid",
    TaskSetnice => "task_setnice",
    TaskSetioprio => "task_setioprio",
    TaskGetioprio => "task_getioprio",
    TaskPrlimit => "task_prlimit",
    TaskSetrlimit => "task_setrlimit",
    TaskSetscheduler => "task_setscheduler",
    TaskGetscheduler => "task_getscheduler",
    TaskMovememory => "task_movememory",
    Capget => "capget",
    Capset => "capset",
    UsernsCreate => "userns_create",
    VmEnoughMemory => "vm_enough_memory",
    Getprocattr => "getprocattr",
    Setprocattr => "setprocattr",
    Getselfattr => "getselfattr",
    Setselfattr => "setselfattr",
    KernelActAs => "kernel_act_as",
    KernelCreateFilesAs => "kernel_create_files_as",
    Syslog => "syslog",
    UringAllowed => "uring_allowed",
    UringSqpoll => "uring_sqpoll",
    UringOverrideCreds => "uring_override_creds",
    UringCmd => "uring_cmd",
    // System V IPC, keys, binder, the further socket hooks and tun.
    IpcPermission => "ipc_permission",
    MsgQueueAllocSecurity => "msg_queue_alloc_security",
    MsgQueueAssociate => "msg_queue_associate",
    MsgQueueMsgctl => "msg_queue_msgctl",
    MsgQueueMsgsnd => "msg_queue_msgsnd",
    MsgQueueMsgrcv => "msg_queue_msgrcv",
    ShmAllocSecurity => "shm_alloc_security",
    ShmAssociate => "shm_associate",
    ShmShmctl => "shm_shmctl",
    ShmShmat => "shm_shmat",
    SemAllocSecurity => "sem_alloc_security",
    SemAssociate => "sem_associate",
    SemSemctl => "sem_semctl",
    SemSemop => "sem_semop",
    KeyPermission => "key_permission",
    WatchKey => "watch_key",
    BinderSetContextMgr => "binder_set_context_mgr",
    BinderTransaction => "binder_transaction",
    BinderTransferBinder => "binder_transfer_binder",
    BinderTransferFile => "binder_transfer_file",
    SocketGetsockname => "socket_getsockname",
    SocketGetpeername => "socket_getpeername",
    SocketSetsockopt => "socket_setsockopt",
    SocketGetsockopt => "socket_getsockopt",
    SocketShutdown => "socket_shutdown",
    NetlinkSend => "netlink_send",
    SctpBindConnect => "sctp_bind_connect",
    TunDevCreate => "tun_dev_create",
    TunDevAttachQueue => "tun_dev_attach_queue",
    TunDevOpen => "tun_dev_open",
    Other => "other",
}

/// Hooks in [`Hook::ALL`].
const HOOKS: usize = Hook::ALL.len();

/// One thread's counts, on cache lines of their own (128 bytes: adjacent-line prefetch pairs
/// 64-byte lines).
#[repr(align(128))]
struct Stripe([AtomicU64; HOOKS]);

/// Lookup counts, one per hook, kept per thread in the stripe of the thread's number (the
/// cache's statistics' numbers, [`seaccess_avc::stripe`]) and summed when read: a count is a
/// plain load and store on a line the counting thread owns, not a locked add on a line every
/// thread writes. Only hooks that ask the cache count; a fast path that answers without it
/// counts nothing.
pub struct Counters(Box<[Stripe]>);

impl std::fmt::Debug for Counters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(
                self.snapshot()
                    .into_iter()
                    .filter(|(_, n)| *n != 0)
                    .map(|(h, n)| (h.name(), n)),
            )
            .finish()
    }
}

impl Default for Counters {
    fn default() -> Counters {
        Counters(
            (0..=OWNED)
                .map(|_| Stripe(std::array::from_fn(|_| AtomicU64::new(0))))
                .collect(),
        )
    }
}

impl Counters {
    /// Counts one lookup of `hook` for the calling thread. An owned stripe's number is below
    /// [`SHARED`]: the one comparison that says so also rules out the shared stripe and a
    /// thread that has not claimed one yet (`usize::MAX`), which go the cold way.
    #[inline(always)]
    pub fn bump(&self, hook: Hook) {
        let i = stripe::cached();
        if i < SHARED {
            if let Some(c) = self.0.get(i).and_then(|s| s.0.get(hook as usize)) {
                // Only this thread writes its stripe (a number changes hands through the free
                // list's lock, which orders the old owner's stores before the new owner's).
                c.store(c.load(Relaxed).wrapping_add(1), Relaxed);
                return;
            }
        }
        self.bump_unowned(hook);
    }

    /// [`Counters::bump`] for a thread without a stripe of its own: it claims one if it has
    /// not tried yet, else counts in the shared stripe.
    #[cold]
    #[inline(never)]
    fn bump_unowned(&self, hook: Hook) {
        let i = stripe::current();
        let Some(c) = self.0.get(i).and_then(|s| s.0.get(hook as usize)) else {
            return;
        };
        if i == SHARED {
            c.fetch_add(1, Relaxed);
        } else {
            c.store(c.load(Relaxed).wrapping_add(1), Relaxed);
        }
    }

    /// The cache lookups `hook` has made.
    pub fn get(&self, hook: Hook) -> u64 {
        self.0
            .iter()
            .filter_map(|s| s.0.get(hook as usize))
            .map(|c| c.load(Relaxed))
            .fold(0, u64::wrapping_add)
    }

    /// Every hook's count, zeros included.
    pub fn snapshot(&self) -> Vec<(Hook, u64)> {
        Hook::ALL.iter().map(|&h| (h, self.get(h))).collect()
    }

    /// The lookups of every hook together.
    pub fn total(&self) -> u64 {
        Hook::ALL
            .iter()
            .map(|&h| self.get(h))
            .fold(0, u64::wrapping_add)
    }

    /// Zeroes every count. A count made by another thread while this runs may survive it.
    pub fn reset(&self) {
        for s in self.0.iter() {
            for c in &s.0 {
                c.store(0, Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// More threads than stripes, coming and going: no count is lost, and each lands on its
    /// hook.
    #[test]
    fn counts_are_exact_with_many_threads() {
        let c = Counters::default();
        std::thread::scope(|sc| {
            for _ in 0..(OWNED + 16) {
                sc.spawn(|| {
                    for _ in 0..1000 {
                        c.bump(Hook::InodeGetattr);
                    }
                    c.bump(Hook::FileOpen);
                });
            }
        });
        assert_eq!(c.get(Hook::InodeGetattr), (OWNED as u64 + 16) * 1000);
        assert_eq!(c.get(Hook::FileOpen), OWNED as u64 + 16);
        assert_eq!(c.total(), (OWNED as u64 + 16) * 1001);
        c.reset();
        assert_eq!(c.total(), 0);
    }

    #[test]
    fn stripes_do_not_share_cache_lines() {
        assert_eq!(std::mem::align_of::<Stripe>(), 128);
        assert_eq!(std::mem::size_of::<Stripe>() % 128, 0);
    }
}
