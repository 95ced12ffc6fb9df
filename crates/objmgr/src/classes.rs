//! The classes and permissions the hooks enforce, in the object manager's own numbering (the
//! kernel's classmap.h). The numbers are ours and never change; the class map
//! ([`crate::classmap`]) finds each name in whatever policy is loaded.
//!
//! A permission is a bit in its class's list (bit 0 first). Every file class starts with the
//! same permissions in the same order, as every socket class does, so a helper asking `read` of
//! an inode of any file class uses one constant, as the kernel's FILE__READ does.

/// A class in the object manager's numbering: an index into [`CLASSES`].
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Class(pub u16);

/// A class the object manager enforces: its policy name and its permissions' names, bit 0 first.
#[derive(Debug)]
pub struct ClassDef {
    pub name: &'static str,
    pub perms: &'static [&'static str],
}

macro_rules! perm_bits {
    ($i:expr;) => {};
    ($i:expr; $c:ident $(, $rest:ident)*) => {
        pub const $c: u32 = 1 << ($i);
        perm_bits!($i + 1; $($rest),*);
    };
}

/// Declares a class's permissions: constants for their bits and their policy names in order.
/// `name: common_file_perms { .. }` and `name: socket_perms { .. }` start the list with the
/// permissions every file class or every socket class shares (the kernel's COMMON_FILE_PERMS
/// and COMMON_SOCK_PERMS), each of which starts with the permissions files and sockets share
/// (COMMON_FILE_SOCK_PERMS), written once here so that their bits agree in every class.
macro_rules! perms {
    ($(#[$m:meta])* $module:ident: common_file_perms { $($c:ident = $n:literal),* $(,)? }) => {
        perms! {
            $(#[$m])*
            $module: common_file_sock_perms {
                UNLINK = "unlink", LINK = "link", RENAME = "rename", EXECUTE = "execute", QUOTAON = "quotaon",
                MOUNTON = "mounton", AUDIT_ACCESS = "audit_access", OPEN = "open", EXECMOD = "execmod",
                WATCH = "watch", WATCH_MOUNT = "watch_mount", WATCH_SB = "watch_sb",
                WATCH_WITH_PERM = "watch_with_perm", WATCH_READS = "watch_reads",
                $($c = $n),*
            }
        }
    };
    ($(#[$m:meta])* $module:ident: socket_perms { $($c:ident = $n:literal),* $(,)? }) => {
        perms! {
            $(#[$m])*
            $module: common_file_sock_perms {
                BIND = "bind", CONNECT = "connect", LISTEN = "listen", ACCEPT = "accept", GETOPT = "getopt",
                SETOPT = "setopt", SHUTDOWN = "shutdown", RECVFROM = "recvfrom", SENDTO = "sendto",
                NAME_BIND = "name_bind",
                $($c = $n),*
            }
        }
    };
    ($(#[$m:meta])* $module:ident: common_file_sock_perms { $($c:ident = $n:literal),* $(,)? }) => {
        perms! {
            $(#[$m])*
            $module {
                IOCTL = "ioctl", READ = "read", WRITE = "write", CREATE = "create", GETATTR = "getattr",
                SETATTR = "setattr", LOCK = "lock", RELABELFROM = "relabelfrom", RELABELTO = "relabelto",
                APPEND = "append", MAP = "map",
                $($c = $n),*
            }
        }
    };
    ($(#[$m:meta])* $module:ident { $($c:ident = $n:literal),* $(,)? }) => {
        $(#[$m])*
        pub mod $module {
            /// The permissions' policy names, bit 0 first.
            pub const NAMES: &[&str] = &[$($n),*];
            perm_bits!(0; $($c),*);
        }
    };
}

perms! {
    /// `file` (the common file permissions, then the file class's own).
    file: common_file_perms {
        EXECUTE_NO_TRANS = "execute_no_trans", ENTRYPOINT = "entrypoint",
    }
}

perms! {
    /// `dir`: the common file permissions, then the directory's own.
    dir: common_file_perms {
        ADD_NAME = "add_name", REMOVE_NAME = "remove_name", REPARENT = "reparent", SEARCH = "search",
        RMDIR = "rmdir",
    }
}

perms! {
    /// The permissions every file class has (lnk_file, chr_file, blk_file, fifo_file and
    /// sock_file have no others); the same bits as in [`file`] and [`dir`].
    common_file: common_file_perms {}
}

perms! {
    /// The permissions every socket class has; the same bits in every socket class.
    socket: socket_perms {}
}

perms! {
    /// `tcp_socket` (and `sctp_socket`, `dccp_socket`): the socket permissions, then these.
    tcp_socket: socket_perms {
        NODE_BIND = "node_bind", NAME_CONNECT = "name_connect",
    }
}

perms! {
    /// `udp_socket`, `rawip_socket`, `icmp_socket`: the socket permissions, then node_bind.
    udp_socket: socket_perms {
        NODE_BIND = "node_bind",
    }
}

perms! {
    /// `unix_stream_socket`: the socket permissions, then connectto.
    unix_stream_socket: socket_perms {
        CONNECTTO = "connectto",
    }
}

perms! {
    /// `process`.
    process {
        FORK = "fork", TRANSITION = "transition", SIGCHLD = "sigchld", SIGKILL = "sigkill",
        SIGSTOP = "sigstop", SIGNULL = "signull", SIGNAL = "signal", PTRACE = "ptrace",
        GETSCHED = "getsched", SETSCHED = "setsched", GETSESSION = "getsession", GETPGID = "getpgid",
        SETPGID = "setpgid", GETCAP = "getcap", SETCAP = "setcap", SHARE = "share",
        GETATTR = "getattr", SETEXEC = "setexec", SETFSCREATE = "setfscreate",
        NOATSECURE = "noatsecure", SIGINH = "siginh", SETRLIMIT = "setrlimit",
        RLIMITINH = "rlimitinh", DYNTRANSITION = "dyntransition", SETCURRENT = "setcurrent",
        EXECMEM = "execmem", EXECSTACK = "execstack", EXECHEAP = "execheap",
        SETKEYCREATE = "setkeycreate", SETSOCKCREATE = "setsockcreate", GETRLIMIT = "getrlimit",
    }
}

perms! {
    /// `process2`.
    process2 {
        NNP_TRANSITION = "nnp_transition", NOSUID_TRANSITION = "nosuid_transition",
    }
}

perms! {
    /// `fd`.
    fd {
        USE = "use",
    }
}

perms! {
    /// `filesystem`.
    filesystem {
        MOUNT = "mount", REMOUNT = "remount", UNMOUNT = "unmount", GETATTR = "getattr",
        RELABELFROM = "relabelfrom", RELABELTO = "relabelto", ASSOCIATE = "associate",
        QUOTAMOD = "quotamod", QUOTAGET = "quotaget", WATCH = "watch",
    }
}

perms! {
    /// `capability` (capability numbers 0 to 31 are the bits).
    capability {
        CHOWN = "chown", DAC_OVERRIDE = "dac_override", DAC_READ_SEARCH = "dac_read_search",
        FOWNER = "fowner", FSETID = "fsetid", KILL = "kill", SETGID = "setgid", SETUID = "setuid",
        SETPCAP = "setpcap", LINUX_IMMUTABLE = "linux_immutable",
        NET_BIND_SERVICE = "net_bind_service", NET_BROADCAST = "net_broadcast",
        NET_ADMIN = "net_admin", NET_RAW = "net_raw", IPC_LOCK = "ipc_lock", IPC_OWNER = "ipc_owner",
        SYS_MODULE = "sys_module", SYS_RAWIO = "sys_rawio", SYS_CHROOT = "sys_chroot",
        SYS_PTRACE = "sys_ptrace", SYS_PACCT = "sys_pacct", SYS_ADMIN = "sys_admin",
        SYS_BOOT = "sys_boot", SYS_NICE = "sys_nice", SYS_RESOURCE = "sys_resource",
        SYS_TIME = "sys_time", SYS_TTY_CONFIG = "sys_tty_config", MKNOD = "mknod", LEASE = "lease",
        AUDIT_WRITE = "audit_write", AUDIT_CONTROL = "audit_control", SETFCAP = "setfcap",
    }
}

perms! {
    /// `capability2` (capability numbers 32 to 63, less 32, are the bits).
    capability2 {
        MAC_OVERRIDE = "mac_override", MAC_ADMIN = "mac_admin", SYSLOG = "syslog",
        WAKE_ALARM = "wake_alarm", BLOCK_SUSPEND = "block_suspend", AUDIT_READ = "audit_read",
        PERFMON = "perfmon", BPF = "bpf", CHECKPOINT_RESTORE = "checkpoint_restore",
    }
}

macro_rules! ipc_perms {
    ($(#[$m:meta])* $module:ident { $($c:ident = $n:literal),* $(,)? }) => {
        perms! {
            $(#[$m])*
            $module {
                CREATE = "create", DESTROY = "destroy", GETATTR = "getattr", SETATTR = "setattr", READ = "read",
                WRITE = "write", ASSOCIATE = "associate", UNIX_READ = "unix_read", UNIX_WRITE = "unix_write",
                $($c = $n),*
            }
        }
    };
}

ipc_perms! {
    /// `sem` (and the permissions every System V IPC class starts with, the kernel's
    /// COMMON_IPC_PERMS, at the same bits in `msgq` and `shm`).
    ipc {}
}

ipc_perms! {
    /// `msgq`: the IPC permissions, then enqueue.
    msgq { ENQUEUE = "enqueue" }
}

ipc_perms! {
    /// `shm`: the IPC permissions, then lock.
    shm { LOCK = "lock" }
}

perms! {
    /// `msg` (one message on a queue).
    msg { SEND = "send", RECEIVE = "receive" }
}

perms! {
    /// `key` (the kernel's KEY_NEED_* bits are these, in this order).
    key {
        VIEW = "view", READ = "read", WRITE = "write", SEARCH = "search", LINK = "link", SETATTR = "setattr",
        CREATE = "create",
    }
}

perms! {
    /// `binder`.
    binder { IMPERSONATE = "impersonate", CALL = "call", SET_CONTEXT_MGR = "set_context_mgr", TRANSFER = "transfer" }
}

perms! {
    /// `kernel_service` (a task acting as another SID, or creating files as one).
    kernel_service { USE_AS_OVERRIDE = "use_as_override", CREATE_FILES_AS = "create_files_as" }
}

perms! {
    /// `user_namespace`.
    user_namespace { CREATE = "create" }
}

perms! {
    /// `tun_socket`: the socket permissions, then attach_queue.
    tun_socket: socket_perms { ATTACH_QUEUE = "attach_queue" }
}

perms! {
    /// `memprotect` (a mapping below the lowest address user space may map).
    memprotect { MMAP_ZERO = "mmap_zero" }
}

perms! {
    /// `netlink_route_socket`, `netlink_tcpdiag_socket` and `netlink_xfrm_socket`: the socket
    /// permissions, then what selinux_netlink_send asks of a message (nlmsgtab.c), or `nlmsg`
    /// as an extended permission under the netlink_xperm policy capability.
    netlink_msg_socket: socket_perms { NLMSG_READ = "nlmsg_read", NLMSG_WRITE = "nlmsg_write", NLMSG = "nlmsg" }
}

perms! {
    /// `netlink_audit_socket`: the socket permissions, then its message permissions.
    netlink_audit_socket: socket_perms {
        NLMSG_READ = "nlmsg_read", NLMSG_WRITE = "nlmsg_write", NLMSG_RELAY = "nlmsg_relay",
        NLMSG_READPRIV = "nlmsg_readpriv", NLMSG_TTY_AUDIT = "nlmsg_tty_audit", NLMSG = "nlmsg",
    }
}

perms! {
    /// `system` (the kernel's own operations; the IPC hooks ask `ipc_info` of the kernel SID).
    system {
        IPC_INFO = "ipc_info", SYSLOG_READ = "syslog_read", SYSLOG_MOD = "syslog_mod",
        SYSLOG_CONSOLE = "syslog_console", MODULE_REQUEST = "module_request", MODULE_LOAD = "module_load",
        FIRMWARE_LOAD = "firmware_load", KEXEC_IMAGE_LOAD = "kexec_image_load",
        KEXEC_INITRAMFS_LOAD = "kexec_initramfs_load", POLICY_LOAD = "policy_load",
        X509_CERTIFICATE_LOAD = "x509_certificate_load",
    }
}

perms! {
    /// `io_uring`.
    io_uring { OVERRIDE_CREDS = "override_creds", SQPOLL = "sqpoll", CMD = "cmd", ALLOWED = "allowed" }
}

/// The socket classes appended after [`Class::CAP2_USERNS`], in the order of the kernel's
/// socket_type_to_security_class: the other families' classes, netlink's per protocol, and
/// those only the extended_socket_class policy capability gives. Each has the socket
/// permissions ([`socket`]); the netlink classes whose messages selinux_netlink_send checks
/// have their message permissions after them.
const MORE_SOCKETS: &[ClassDef] = &[
    s("key_socket"),
    s("appletalk_socket"),
    ClassDef {
        name: "netlink_route_socket",
        perms: netlink_msg_socket::NAMES,
    },
    ClassDef {
        name: "netlink_tcpdiag_socket",
        perms: netlink_msg_socket::NAMES,
    },
    s("netlink_nflog_socket"),
    ClassDef {
        name: "netlink_xfrm_socket",
        perms: netlink_msg_socket::NAMES,
    },
    s("netlink_selinux_socket"),
    s("netlink_iscsi_socket"),
    ClassDef {
        name: "netlink_audit_socket",
        perms: netlink_audit_socket::NAMES,
    },
    s("netlink_fib_lookup_socket"),
    s("netlink_connector_socket"),
    s("netlink_netfilter_socket"),
    s("netlink_dnrt_socket"),
    s("netlink_kobject_uevent_socket"),
    s("netlink_generic_socket"),
    s("netlink_scsitransport_socket"),
    s("netlink_rdma_socket"),
    s("netlink_crypto_socket"),
    s("ax25_socket"),
    s("ipx_socket"),
    s("netrom_socket"),
    s("atmpvc_socket"),
    s("x25_socket"),
    s("rose_socket"),
    s("decnet_socket"),
    s("atmsvc_socket"),
    s("rds_socket"),
    s("irda_socket"),
    s("pppox_socket"),
    s("llc_socket"),
    s("can_socket"),
    s("tipc_socket"),
    s("bluetooth_socket"),
    s("iucv_socket"),
    s("rxrpc_socket"),
    s("isdn_socket"),
    s("phonet_socket"),
    s("ieee802154_socket"),
    s("caif_socket"),
    s("alg_socket"),
    s("nfc_socket"),
    s("vsock_socket"),
    s("kcm_socket"),
    s("qipcrtr_socket"),
    s("smc_socket"),
    s("xdp_socket"),
    s("mctp_socket"),
];

impl Class {
    pub const FILE: Class = Class(0);
    pub const DIR: Class = Class(1);
    pub const LNK_FILE: Class = Class(2);
    pub const CHR_FILE: Class = Class(3);
    pub const BLK_FILE: Class = Class(4);
    pub const FIFO_FILE: Class = Class(5);
    pub const SOCK_FILE: Class = Class(6);
    pub const FILESYSTEM: Class = Class(7);
    pub const FD: Class = Class(8);
    pub const PROCESS: Class = Class(9);
    pub const PROCESS2: Class = Class(10);
    pub const CAPABILITY: Class = Class(11);
    pub const SOCKET: Class = Class(12);
    pub const TCP_SOCKET: Class = Class(13);
    pub const UDP_SOCKET: Class = Class(14);
    pub const RAWIP_SOCKET: Class = Class(15);
    pub const UNIX_STREAM_SOCKET: Class = Class(16);
    pub const UNIX_DGRAM_SOCKET: Class = Class(17);
    pub const ICMP_SOCKET: Class = Class(18);
    pub const SCTP_SOCKET: Class = Class(19);
    pub const NETLINK_SOCKET: Class = Class(20);
    pub const PACKET_SOCKET: Class = Class(21);
    pub const CAPABILITY2: Class = Class(22);
    /// `capability` in a user namespace other than the initial one.
    pub const CAP_USERNS: Class = Class(23);
    pub const CAP2_USERNS: Class = Class(24);
    /// The first of [`MORE_SOCKETS`]; the others follow it in that list's order.
    pub const KEY_SOCKET: Class = Class(25);
    /// The netlink classes whose messages have permissions of their own (in [`MORE_SOCKETS`]).
    pub const NETLINK_ROUTE_SOCKET: Class = Class(27);
    pub const NETLINK_TCPDIAG_SOCKET: Class = Class(28);
    pub const NETLINK_XFRM_SOCKET: Class = Class(30);
    pub const NETLINK_AUDIT_SOCKET: Class = Class(33);
    // The classes after the sockets ([`LATER_CLASSES`]).
    pub const MSG: Class = Class(AFTER_SOCKETS);
    pub const MSGQ: Class = Class(AFTER_SOCKETS + 1);
    pub const SEM: Class = Class(AFTER_SOCKETS + 2);
    pub const SHM: Class = Class(AFTER_SOCKETS + 3);
    pub const KEY: Class = Class(AFTER_SOCKETS + 4);
    pub const BINDER: Class = Class(AFTER_SOCKETS + 5);
    pub const KERNEL_SERVICE: Class = Class(AFTER_SOCKETS + 6);
    pub const USER_NAMESPACE: Class = Class(AFTER_SOCKETS + 7);
    /// A tun device's socket class (the tun hooks), not one socket_type_to_security_class gives.
    pub const TUN_SOCKET: Class = Class(AFTER_SOCKETS + 8);
    pub const MEMPROTECT: Class = Class(AFTER_SOCKETS + 9);
    pub const SYSTEM: Class = Class(AFTER_SOCKETS + 10);
    pub const IO_URING: Class = Class(AFTER_SOCKETS + 11);

    /// The class of one of the kernel's socket class names, if the table has it.
    pub fn socket_named(name: &str) -> Option<Class> {
        let i = CLASSES.iter().position(|c| c.name == name)?;
        let c = Class(u16::try_from(i).ok()?);
        c.is_socket().then_some(c)
    }

    /// The class's definition.
    pub fn def(self) -> Option<&'static ClassDef> {
        CLASSES.get(usize::from(self.0))
    }

    /// The class's policy name ("?" for a number outside the table).
    pub fn name(self) -> &'static str {
        self.def().map_or("?", |d| d.name)
    }

    /// Whether the class is one of the file classes (an inode's class).
    pub fn is_file(self) -> bool {
        self.0 <= Class::SOCK_FILE.0
    }

    /// Whether the class is a socket class.
    pub fn is_socket(self) -> bool {
        (Class::SOCKET.0..=Class::PACKET_SOCKET.0).contains(&self.0)
            || (Class::KEY_SOCKET.0..AFTER_SOCKETS).contains(&self.0)
            || self == Class::TUN_SOCKET
    }
}

/// A socket class with the socket permissions alone.
const fn s(name: &'static str) -> ClassDef {
    ClassDef {
        name,
        perms: socket::NAMES,
    }
}

const FIXED: usize = 25;
/// The number of the first class after [`MORE_SOCKETS`].
const AFTER_SOCKETS: u16 = (FIXED + MORE_SOCKETS.len()) as u16;
const ALL: usize = FIXED + MORE_SOCKETS.len() + LATER_CLASSES.len();
const TABLE: [ClassDef; ALL] = {
    let first = FIXED_CLASSES;
    let more = MORE_SOCKETS;
    let later = LATER_CLASSES;
    let mut out = [const {
        ClassDef {
            name: "",
            perms: &[],
        }
    }; ALL];
    let mut i = 0;
    while i < FIXED {
        out[i] = ClassDef {
            name: first[i].name,
            perms: first[i].perms,
        };
        i += 1;
    }
    while i < FIXED + MORE_SOCKETS.len() {
        out[i] = ClassDef {
            name: more[i - FIXED].name,
            perms: more[i - FIXED].perms,
        };
        i += 1;
    }
    while i < ALL {
        let l = &later[i - FIXED - MORE_SOCKETS.len()];
        out[i] = ClassDef {
            name: l.name,
            perms: l.perms,
        };
        i += 1;
    }
    out
};

/// The classes after the sockets, in number order (System V IPC, keys, binder, ...).
const LATER_CLASSES: [ClassDef; 12] = [
    ClassDef {
        name: "msg",
        perms: msg::NAMES,
    },
    ClassDef {
        name: "msgq",
        perms: msgq::NAMES,
    },
    ClassDef {
        name: "sem",
        perms: ipc::NAMES,
    },
    ClassDef {
        name: "shm",
        perms: shm::NAMES,
    },
    ClassDef {
        name: "key",
        perms: key::NAMES,
    },
    ClassDef {
        name: "binder",
        perms: binder::NAMES,
    },
    ClassDef {
        name: "kernel_service",
        perms: kernel_service::NAMES,
    },
    ClassDef {
        name: "user_namespace",
        perms: user_namespace::NAMES,
    },
    ClassDef {
        name: "tun_socket",
        perms: tun_socket::NAMES,
    },
    ClassDef {
        name: "memprotect",
        perms: memprotect::NAMES,
    },
    ClassDef {
        name: "system",
        perms: system::NAMES,
    },
    ClassDef {
        name: "io_uring",
        perms: io_uring::NAMES,
    },
];

/// Every class the hooks enforce, indexed by [`Class`].
pub static CLASSES: &[ClassDef] = &TABLE;

/// The classes with numbers of their own constant, in number order.
const FIXED_CLASSES: [ClassDef; FIXED] = [
    ClassDef {
        name: "file",
        perms: file::NAMES,
    },
    ClassDef {
        name: "dir",
        perms: dir::NAMES,
    },
    ClassDef {
        name: "lnk_file",
        perms: common_file::NAMES,
    },
    ClassDef {
        name: "chr_file",
        perms: common_file::NAMES,
    },
    ClassDef {
        name: "blk_file",
        perms: common_file::NAMES,
    },
    ClassDef {
        name: "fifo_file",
        perms: common_file::NAMES,
    },
    ClassDef {
        name: "sock_file",
        perms: common_file::NAMES,
    },
    ClassDef {
        name: "filesystem",
        perms: filesystem::NAMES,
    },
    ClassDef {
        name: "fd",
        perms: fd::NAMES,
    },
    ClassDef {
        name: "process",
        perms: process::NAMES,
    },
    ClassDef {
        name: "process2",
        perms: process2::NAMES,
    },
    ClassDef {
        name: "capability",
        perms: capability::NAMES,
    },
    ClassDef {
        name: "socket",
        perms: socket::NAMES,
    },
    ClassDef {
        name: "tcp_socket",
        perms: tcp_socket::NAMES,
    },
    ClassDef {
        name: "udp_socket",
        perms: udp_socket::NAMES,
    },
    ClassDef {
        name: "rawip_socket",
        perms: udp_socket::NAMES,
    },
    ClassDef {
        name: "unix_stream_socket",
        perms: unix_stream_socket::NAMES,
    },
    ClassDef {
        name: "unix_dgram_socket",
        perms: socket::NAMES,
    },
    ClassDef {
        name: "icmp_socket",
        perms: udp_socket::NAMES,
    },
    ClassDef {
        name: "sctp_socket",
        perms: tcp_socket::NAMES,
    },
    ClassDef {
        name: "netlink_socket",
        perms: socket::NAMES,
    },
    ClassDef {
        name: "packet_socket",
        perms: socket::NAMES,
    },
    ClassDef {
        name: "capability2",
        perms: capability2::NAMES,
    },
    ClassDef {
        name: "cap_userns",
        perms: capability::NAMES,
    },
    ClassDef {
        name: "cap2_userns",
        perms: capability2::NAMES,
    },
];

/// The file class of an inode of mode `mode` (the `S_IFMT` bits of st_mode), as the kernel's
/// inode_mode_to_security_class; a mode of no file type is a plain file, as there.
pub fn inode_class(mode: u32) -> Class {
    match mode & 0o170000 {
        0o140000 => Class::SOCK_FILE,
        0o120000 => Class::LNK_FILE,
        0o100000 => Class::FILE,
        0o060000 => Class::BLK_FILE,
        0o040000 => Class::DIR,
        0o020000 => Class::CHR_FILE,
        0o010000 => Class::FIFO_FILE,
        _ => Class::FILE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_bits_name_the_same_permission_in_every_class_of_a_kind() {
        for c in CLASSES.iter().take(7) {
            for (i, n) in common_file::NAMES.iter().enumerate() {
                assert_eq!(c.perms.get(i), Some(n), "{}", c.name);
            }
        }
        for c in CLASSES
            .iter()
            .enumerate()
            .filter(|(i, _)| Class(*i as u16).is_socket())
            .map(|(_, c)| c)
        {
            for (i, n) in socket::NAMES.iter().enumerate() {
                assert_eq!(c.perms.get(i), Some(n), "{}", c.name);
            }
        }
        assert_eq!(
            dir::SEARCH,
            1 << dir::NAMES.iter().position(|n| *n == "search").unwrap_or(99)
        );
        assert_eq!(
            file::ENTRYPOINT,
            1 << file::NAMES
                .iter()
                .position(|n| *n == "entrypoint")
                .unwrap_or(99)
        );
        assert!(CLASSES.iter().all(|c| c.perms.len() <= 32));
        assert_eq!(Class::PACKET_SOCKET.name(), "packet_socket");
        assert_eq!(Class::SOCKET.name(), "socket");
        assert_eq!(Class::CAPABILITY.name(), "capability");
        assert_eq!(Class::CAP2_USERNS.name(), "cap2_userns");
        assert_eq!(Class::KEY_SOCKET.name(), "key_socket");
        assert_eq!(Class(AFTER_SOCKETS - 1).name(), "mctp_socket");
        assert_eq!(
            (
                Class::MSG.name(),
                Class::SHM.name(),
                Class::TUN_SOCKET.name()
            ),
            ("msg", "shm", "tun_socket")
        );
        assert!(
            Class::TUN_SOCKET.is_socket()
                && !Class::MSG.is_socket()
                && !Class::USER_NAMESPACE.is_socket()
        );
        assert_eq!(
            (Class::SYSTEM.name(), Class::IO_URING.name()),
            ("system", "io_uring")
        );
        assert!(!Class::SYSTEM.is_socket() && !Class::IO_URING.is_socket());
        assert_eq!((msgq::ENQUEUE, shm::LOCK), (1 << 9, 1 << 9));
        assert!(
            !Class::CAPABILITY2.is_socket()
                && Class::KEY_SOCKET.is_socket()
                && Class::PACKET_SOCKET.is_socket()
        );
        assert_eq!(
            Class::socket_named("netlink_route_socket").map(|c| c.name()),
            Some("netlink_route_socket")
        );
        assert_eq!(Class::socket_named("capability2"), None);
        let netlink = [
            Class::NETLINK_ROUTE_SOCKET,
            Class::NETLINK_TCPDIAG_SOCKET,
            Class::NETLINK_XFRM_SOCKET,
            Class::NETLINK_AUDIT_SOCKET,
        ];
        assert_eq!(
            netlink.map(Class::name),
            [
                "netlink_route_socket",
                "netlink_tcpdiag_socket",
                "netlink_xfrm_socket",
                "netlink_audit_socket"
            ]
        );
        assert_eq!(
            Class::NETLINK_AUDIT_SOCKET.def().map(|d| d.perms.len()),
            Some(socket::NAMES.len() + 6)
        );
        assert_eq!(Class::SYSTEM.name(), "system");
        assert_eq!(netlink_msg_socket::NLMSG_READ, 1 << socket::NAMES.len());
    }

    #[test]
    fn inode_classes_follow_the_mode() {
        assert_eq!(inode_class(0o040755), Class::DIR);
        assert_eq!(inode_class(0o100644), Class::FILE);
        assert_eq!(inode_class(0o120777), Class::LNK_FILE);
        assert_eq!(inode_class(0o140777), Class::SOCK_FILE);
        assert_eq!(inode_class(0o010644), Class::FIFO_FILE);
        assert_eq!(inode_class(0o020644), Class::CHR_FILE);
        assert_eq!(inode_class(0o060644), Class::BLK_FILE);
    }
}
