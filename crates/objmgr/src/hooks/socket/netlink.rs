//! Netlink messages a task sends (selinux_netlink_send): each message's type decides the
//! permission asked of the socket, from the kernel's tables (security/selinux/nlmsgtab.c,
//! read at mainline after the netlink_xperm change of Linux 6.13), or, under the
//! netlink_xperm policy capability, the `nlmsg` permission as an extended permission on the
//! message type.

use seaccess_types::{HandleUnknown, PolicyCap};

use super::SocketSec;
use crate::audit::AuditData;
use crate::check::Xperm;
use crate::classes::{netlink_audit_socket as audit, netlink_msg_socket as nl, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

/// A netlink message header's length (NLMSG_HDRLEN): u32 length, u16 type, u16 flags, u32
/// sequence number, u32 port id.
const NLMSG_HDRLEN: usize = 16;

/// What selinux_nlmsg_lookup answers for a message type of a class.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum NlmsgPerm {
    /// The permission (our bit of the socket's class).
    Perm(u32),
    /// The class has a table without this type (the kernel's -EINVAL).
    Unknown,
    /// The class has no table: nothing is checked (the kernel's -ENOENT).
    NoTable,
}

// rtnetlink message types (include/uapi/linux/rtnetlink.h) and their permission: read for
// the GET ones, write for the others, as nlmsg_route_perms lists them.
const ROUTE_READ: &[u16] = &[
    18, 22, 26, 30, 34, 38, 42, 46,
    50, // GETLINK GETADDR GETROUTE GETNEIGH GETRULE GETQDISC GETTCLASS GETTFILTER GETACTION
    58, 62, 66, 74, 78, 82,
    86, // GETMULTICAST GETANYCAST GETNEIGHTBL GETADDRLABEL GETDCB GETNETCONF GETMDB
    89, 90, 92, 94,
    96, // DELNSID GETNSID NEWSTATS GETSTATS NEWCACHEREPORT (as the table has them)
    102, 106, 114, 118, 122, // GETCHAIN GETNEXTHOP GETVLAN GETNEXTHOPBUCKET GETTUNNEL
];
const ROUTE_WRITE: &[u16] = &[
    16, 17, 19, 20, 21, 24, 25, 28, 29, 32, 33, 36, 37, 40, 41, 44, 45, 48,
    49, // NEW/DEL/SET LINK .. ACTION
    52, 67, 72, 73, 79, 80, 81, 84, 85, 88,
    95, // NEWPREFIX SETNEIGHTBL NEW/DELADDRLABEL SETDCB NEW/DELNETCONF NEW/DELMDB NEWNSID SETSTATS
    100, 101, 104, 105, 108, 109, 112, 113, 116, 117, 120,
    121, // NEW/DEL CHAIN NEXTHOP LINKPROP VLAN NEXTHOPBUCKET TUNNEL
];
// sock_diag: TCPDIAG_GETSOCK and SOCK_DIAG_BY_FAMILY read, SOCK_DESTROY writes.
const TCPDIAG_READ: &[u16] = &[18, 20];
const TCPDIAG_WRITE: &[u16] = &[21];
// xfrm (include/uapi/linux/xfrm.h, from XFRM_MSG_NEWSA = 0x10).
const XFRM_READ: &[u16] = &[0x12, 0x15, 0x1f, 0x20, 0x22, 0x23, 0x25, 0x26, 0x28]; // GETSA GETPOLICY GETAE REPORT NEWSADINFO GETSADINFO GETSPDINFO MAPPING GETDEFAULT
const XFRM_WRITE: &[u16] = &[
    0x10, 0x11, 0x13, 0x14, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x21, 0x24, 0x27,
];
// audit (include/uapi/linux/audit.h).
const AUDIT_TABLE: &[(u16, u32)] = &[
    (1000, audit::NLMSG_READ),      // AUDIT_GET
    (1001, audit::NLMSG_WRITE),     // AUDIT_SET
    (1002, audit::NLMSG_READPRIV),  // AUDIT_LIST
    (1003, audit::NLMSG_WRITE),     // AUDIT_ADD
    (1004, audit::NLMSG_WRITE),     // AUDIT_DEL
    (1013, audit::NLMSG_READPRIV),  // AUDIT_LIST_RULES
    (1011, audit::NLMSG_WRITE),     // AUDIT_ADD_RULE
    (1012, audit::NLMSG_WRITE),     // AUDIT_DEL_RULE
    (1005, audit::NLMSG_RELAY),     // AUDIT_USER
    (1010, audit::NLMSG_READ),      // AUDIT_SIGNAL_INFO
    (1014, audit::NLMSG_WRITE),     // AUDIT_TRIM
    (1015, audit::NLMSG_WRITE),     // AUDIT_MAKE_EQUIV
    (1016, audit::NLMSG_READ),      // AUDIT_TTY_GET
    (1017, audit::NLMSG_TTY_AUDIT), // AUDIT_TTY_SET
    (1019, audit::NLMSG_READ),      // AUDIT_GET_FEATURE
    (1018, audit::NLMSG_WRITE),     // AUDIT_SET_FEATURE
];

fn read_write(ty: u16, read: &[u16], write: &[u16]) -> NlmsgPerm {
    if read.contains(&ty) {
        NlmsgPerm::Perm(nl::NLMSG_READ)
    } else if write.contains(&ty) {
        NlmsgPerm::Perm(nl::NLMSG_WRITE)
    } else {
        NlmsgPerm::Unknown
    }
}

/// The kernel's selinux_nlmsg_lookup: the permission a message of type `ty` asks of a socket
/// of `class`; `xperm` is whether the policy has the netlink_xperm capability (then every
/// type of a class with a table asks `nlmsg`).
pub fn nlmsg_lookup(class: Class, ty: u16, xperm: bool) -> NlmsgPerm {
    let has_table = matches!(
        class,
        Class::NETLINK_ROUTE_SOCKET
            | Class::NETLINK_TCPDIAG_SOCKET
            | Class::NETLINK_XFRM_SOCKET
            | Class::NETLINK_AUDIT_SOCKET
    );
    if !has_table {
        return NlmsgPerm::NoTable;
    }
    if xperm {
        // The bit is nlmsg's in both permission lists.
        return NlmsgPerm::Perm(if class == Class::NETLINK_AUDIT_SOCKET {
            audit::NLMSG
        } else {
            nl::NLMSG
        });
    }
    match class {
        Class::NETLINK_ROUTE_SOCKET => read_write(ty, ROUTE_READ, ROUTE_WRITE),
        Class::NETLINK_TCPDIAG_SOCKET => read_write(ty, TCPDIAG_READ, TCPDIAG_WRITE),
        Class::NETLINK_XFRM_SOCKET => read_write(ty, XFRM_READ, XFRM_WRITE),
        _ => {
            // AUDIT_FIRST_USER_MSG..AUDIT_LAST_USER_MSG and the second user range relay.
            if (1100..=1199).contains(&ty) || (2100..=2999).contains(&ty) {
                return NlmsgPerm::Perm(audit::NLMSG_RELAY);
            }
            AUDIT_TABLE
                .iter()
                .find(|(t, _)| *t == ty)
                .map_or(NlmsgPerm::Unknown, |(_, p)| NlmsgPerm::Perm(*p))
        }
    }
}

impl ObjectManager {
    /// `task` sending the netlink messages in `data` on `sock` (selinux_netlink_send), besides
    /// sendmsg's `{write}`. Each whole message's type asks its permission (see
    /// [`nlmsg_lookup`]): with the netlink_xperm policy capability `{nlmsg}` as an extended
    /// permission on the type (audited with `nl-msgtype=`), else the table's permission as a
    /// socket check. A type the class's table lacks is refused (EINVAL) when enforcing unless
    /// the policy allows unknown permissions; a class without a table is not checked. As the
    /// kernel, the walk stops quietly at a header whose length is shorter than a header or
    /// longer than what remains.
    pub fn netlink_send(&self, task: &Task, sock: &SocketSec, data: &[u8]) -> Result<()> {
        let xperm = self.policy_caps().contains(PolicyCap::NetlinkXperm);
        let mut rest = data;
        while rest.len() >= NLMSG_HDRLEN {
            let (Some(len), Some(ty)) = (rest.get(0..4), rest.get(4..6)) else {
                return Ok(());
            };
            let len = u32::from_ne_bytes([len[0], len[1], len[2], len[3]]) as usize;
            let ty = u16::from_ne_bytes([ty[0], ty[1]]);
            if len < NLMSG_HDRLEN || len > rest.len() {
                return Ok(());
            }
            match nlmsg_lookup(sock.class(), ty, xperm) {
                NlmsgPerm::Perm(p) if xperm => self.nlmsg_has_extended_perms(task, sock, p, ty)?,
                NlmsgPerm::Perm(p) => self.sock_has_perm(Hook::NetlinkSend, task, sock, p)?,
                NlmsgPerm::Unknown => {
                    if self.avc().enforcing()
                        && self.class_maps().newest().handle_unknown() != HandleUnknown::Allow
                    {
                        return Err(ObjmgrError::Invalid(format!(
                            "unrecognized netlink message type {ty} on a {}",
                            sock.class().name()
                        )));
                    }
                }
                NlmsgPerm::NoTable => {}
            }
            // NLMSG_ALIGN: messages are padded to 4 bytes.
            let step = len.saturating_add(3) & !3;
            if step >= rest.len() {
                return Ok(());
            }
            rest = rest.get(step..).unwrap_or_default();
        }
        Ok(())
    }

    /// nlmsg_sock_has_extended_perms: `perms` (the class's `nlmsg`) from the task to the
    /// socket, decided with the policy's nlmsg allowx rules for the type's high byte
    /// (avc_has_extended_perms with AVC_EXT_NLMSG); skipped for kernel sockets as
    /// sock_has_perm is.
    fn nlmsg_has_extended_perms(
        &self,
        task: &Task,
        sock: &SocketSec,
        perms: u32,
        ty: u16,
    ) -> Result<()> {
        if self.skip_sock_check(sock.sid()) {
            return Ok(());
        }
        self.check_xperm(
            Hook::NetlinkSend,
            task,
            sock.sid(),
            sock.class(),
            perms,
            Xperm::Nlmsg(ty),
            &AuditData::Nlmsg { ty },
        )
        .map(|_| ())
    }
}
