//! The socket hooks beyond the connection's life: names, options, shutdown, a send that
//! connects (TCP Fast Open), datagram peer labels, and SCTP's per-address bind and connect
//! checks (hooks.c).

use seaccess_types::{PolicyCap, Sid};

use super::{family, ipproto, PortRanges, SockAddr, SocketSec};
use crate::classes::{socket as sockperm, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

/// sendmsg(2)'s flag asking TCP Fast Open (the kernel's MSG_FASTOPEN).
pub const MSG_FASTOPEN: i32 = 0x2000_0000;

/// The SCTP socket options and address events whose addresses selinux_sctp_bind_connect
/// checks (the kernel's optname argument).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SctpOp {
    /// SCTP_PRIMARY_ADDR: a new primary local address.
    PrimaryAddr,
    /// SCTP_SET_PEER_PRIMARY_ADDR.
    SetPeerPrimaryAddr,
    /// SCTP_SOCKOPT_BINDX_ADD (sctp_bindx(3)).
    BindxAdd,
    /// SCTP_SOCKOPT_CONNECTX (sctp_connectx(3)).
    Connectx,
    /// SCTP_PARAM_SET_PRIMARY: the peer asks for a new primary address (ASCONF).
    ParamSetPrimary,
    /// SCTP_PARAM_ADD_IP: the peer adds an address (ASCONF).
    ParamAddIp,
    /// SCTP_SENDMSG_CONNECT: sctp_sendmsg(3) starting an association.
    SendmsgConnect,
}

impl ObjectManager {
    /// getsockname(2) (selinux_socket_getsockname): {getattr}.
    pub fn socket_getsockname(&self, task: &Task, sock: &SocketSec) -> Result<()> {
        self.sock_has_perm(Hook::SocketGetsockname, task, sock, sockperm::GETATTR)
    }

    /// getpeername(2) (selinux_socket_getpeername): {getattr}.
    pub fn socket_getpeername(&self, task: &Task, sock: &SocketSec) -> Result<()> {
        self.sock_has_perm(Hook::SocketGetpeername, task, sock, sockperm::GETATTR)
    }

    /// setsockopt(2) of `optname` at `level` (selinux_socket_setsockopt): {setopt}. The kernel
    /// then lets NetLabel refuse IP options on a labelled socket; without labelled networking
    /// there is nothing to refuse.
    pub fn socket_setsockopt(
        &self,
        task: &Task,
        sock: &SocketSec,
        level: i32,
        optname: i32,
    ) -> Result<()> {
        let _ = (level, optname);
        self.sock_has_perm(Hook::SocketSetsockopt, task, sock, sockperm::SETOPT)
    }

    /// getsockopt(2) (selinux_socket_getsockopt): {getopt}, SO_PEERSEC included (whose label
    /// [`ObjectManager::socket_getpeersec`] then gives).
    pub fn socket_getsockopt(
        &self,
        task: &Task,
        sock: &SocketSec,
        level: i32,
        optname: i32,
    ) -> Result<()> {
        let _ = (level, optname);
        self.sock_has_perm(Hook::SocketGetsockopt, task, sock, sockperm::GETOPT)
    }

    /// shutdown(2) (selinux_socket_shutdown): {shutdown}.
    pub fn socket_shutdown(&self, task: &Task, sock: &SocketSec, how: i32) -> Result<()> {
        let _ = how;
        self.sock_has_perm(Hook::SocketShutdown, task, sock, sockperm::SHUTDOWN)
    }

    /// sendmsg(2) with destination `addr` and flags `flags` (selinux_socket_sendmsg): {write};
    /// then, for MSG_FASTOPEN with an address on a TCP or MPTCP stream socket, the connect
    /// checks of connect(2) (selinux_socket_connect: {connect}, and {name_connect} of the
    /// destination port), as the send connects the socket. TCP and MPTCP stream sockets are
    /// the tcp_socket class with protocol TCP or MPTCP: a raw socket of protocol TCP has the
    /// rawip_socket class, and no other type takes those protocols.
    pub fn socket_sendmsg_to(
        &self,
        task: &Task,
        sock: &SocketSec,
        addr: Option<&SockAddr>,
        flags: i32,
    ) -> Result<()> {
        self.sock_has_perm(Hook::SocketSendmsg, task, sock, sockperm::WRITE)?;
        let stream = sock.class() == Class::TCP_SOCKET
            && matches!(sock.family, family::INET | family::INET6)
            && matches!(sock.protocol, ipproto::TCP | ipproto::MPTCP);
        if let Some(a) = addr.filter(|_| flags & MSG_FASTOPEN != 0 && stream) {
            self.connect_checks(Hook::SocketSendmsg, task, sock, a)?;
            sock.set_peer(a);
        }
        Ok(())
    }

    /// SCM_SECURITY on a datagram (selinux_socket_getpeersec_dgram): for an AF_UNIX socket
    /// the SID of the sending socket `sock` (af_unix asks it at send time); for INET the
    /// packet's peer label, which without labelled networking is none. ENOPROTOOPT when there
    /// is no label.
    pub fn socket_getpeersec_dgram(&self, sock: &SocketSec) -> Result<Sid> {
        let sid = if sock.family == family::UNIX {
            sock.sid()
        } else {
            Sid::NULL
        };
        if sid == Sid::NULL {
            return Err(ObjmgrError::NoProtocolOption(
                "SCM_SECURITY: the datagram is not labelled".into(),
            ));
        }
        Ok(sid)
    }

    /// A TCP connection made by `sock` completed (selinux_inet_conn_established): its peer SID
    /// is the SYN-ACK's peer label, which without labelled networking is none (SECSID_NULL),
    /// so SO_PEERSEC on a connected TCP client fails with ENOPROTOOPT as the kernel's does.
    pub fn inet_conn_established(&self, sock: &SocketSec) {
        sock.set_peer_sid(Sid::NULL);
    }

    /// The addresses of an SCTP bind or connect option or event `op` on `sock`
    /// (selinux_sctp_bind_connect), with the extended_socket_class policy capability (without
    /// it, nothing): each address of SCTP_PRIMARY_ADDR, SCTP_SET_PEER_PRIMARY_ADDR and
    /// SCTP_SOCKOPT_BINDX_ADD gets bind(2)'s checks (with the kernel's default port ranges);
    /// each of SCTP_SOCKOPT_CONNECTX, SCTP_PARAM_SET_PRIMARY, SCTP_PARAM_ADD_IP and
    /// SCTP_SENDMSG_CONNECT connect(2)'s; the first refusal ends it. An AF_UNIX address is
    /// refused with EINVAL, as there.
    pub fn sctp_bind_connect(
        &self,
        task: &Task,
        sock: &SocketSec,
        op: SctpOp,
        addrs: &[SockAddr],
    ) -> Result<()> {
        use SctpOp::*;
        if !self.policy_caps().contains(PolicyCap::ExtendedSocketClass) {
            return Ok(());
        }
        for a in addrs {
            if let SockAddr::Unix(_) = a {
                return Err(ObjmgrError::Invalid(format!("an SCTP address {a:?}")));
            }
            match op {
                PrimaryAddr | SetPeerPrimaryAddr | BindxAdd => {
                    self.bind_checks(Hook::SctpBindConnect, task, sock, a, &PortRanges::default())?
                }
                Connectx | ParamSetPrimary | ParamAddIp | SendmsgConnect => {
                    self.connect_checks(Hook::SctpBindConnect, task, sock, a)?
                }
            }
        }
        Ok(())
    }
}
