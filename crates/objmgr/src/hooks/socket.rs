//! Socket hooks: create, bind, connect, listen, accept, send and receive, unix stream connect
//! and datagram send, socketpair, peer SIDs (hooks.c, selinux_socket_*). Each hook's comment
//! names the kernel function it follows.

pub mod blob;
pub mod class;
pub mod more;
pub mod netlink;
pub mod tun;

use seaccess_types::{PolicyCap, Sid};

use crate::audit::AuditData;
use crate::classes::{socket as sockperm, tcp_socket, unix_stream_socket, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::{ObjmgrError, Result};
use crate::grant::compact;
use crate::{Checked, ObjectManager};

pub use blob::{SockAddr, SocketSec};
pub use class::{family, ipproto, sk_protocol, sock_type, socket_class};

/// The kernel's initial SID numbers the socket hooks use.
pub(crate) const SECINITSID_KERNEL: u32 = 1;
pub(crate) const SECINITSID_UNLABELED: u32 = 3;
pub(crate) const SECINITSID_INIT: u32 = 7;

/// The port ranges deciding whether a bind asks `name_bind` (the sysctls
/// net.ipv4.ip_unprivileged_port_start and net.ipv4.ip_local_port_range).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PortRanges {
    /// Ports below this need CAP_NET_BIND_SERVICE (inet_port_requires_bind_service).
    pub unprivileged_start: u16,
    /// The ephemeral range, inclusive.
    pub local: (u16, u16),
}

impl Default for PortRanges {
    /// The kernel's defaults: 1024, and 32768 to 60999.
    fn default() -> PortRanges {
        PortRanges {
            unprivileged_start: 1024,
            local: (32768, 60999),
        }
    }
}

impl PortRanges {
    /// Whether binding `port` asks `name_bind` (__selinux_socket_bind): a reserved port, or
    /// one outside the ephemeral range; port 0 never.
    pub fn asks_name_bind(&self, port: u16) -> bool {
        port != 0 && (port < self.unprivileged_start || port < self.local.0 || port > self.local.1)
    }
}

impl ObjectManager {
    pub(crate) fn initial_or_null(&self, n: u32) -> Sid {
        self.server().initial_sid(n).unwrap_or(Sid::NULL)
    }

    /// The kernel's sock_skip_has_perm: sockets of the kernel, and of init where the policy
    /// does not declare userspace_initial_context, are not checked by sock_has_perm.
    fn skip_sock_check(&self, sid: Sid) -> bool {
        if sid == Sid::NULL
            || (self.numbered_initials && sid.0 != SECINITSID_KERNEL && sid.0 != SECINITSID_INIT)
        {
            return false;
        }
        if self.server().is_initial_sid(sid, SECINITSID_KERNEL) {
            return true;
        }
        self.server().is_initial_sid(sid, SECINITSID_INIT)
            && !self
                .policy_caps()
                .contains(PolicyCap::UserspaceInitialContext)
    }

    /// The kernel's sock_has_perm: the task's SID to the socket's, in the socket's class, with
    /// the socket's addresses in the record. Inlined into each socket hook: its silent grant is
    /// the whole of a send's or receive's check, and a call's saved registers cost it a tenth.
    /// With the sockets fast path on (the default), a grant the socket remembers for the task's
    /// credential under the newest policy answers without the cache (the same answer: only the
    /// policy's own grants with nothing to audit are remembered, see [`crate::grant`]).
    #[inline(always)]
    pub(crate) fn sock_has_perm(
        &self,
        hook: Hook,
        task: &Task,
        sock: &SocketSec,
        perms: u32,
    ) -> Result<()> {
        if self.fast_paths().sockets() {
            if let Some(need) = compact(perms) {
                // A remembered grant first: it answers Ok, as the skip would, and is the warm
                // case of every send and receive.
                if sock.grant.holds(self.epoch(task.cred()).0, need) {
                    return Ok(());
                }
                return self.sock_has_perm_remember(hook, task, sock, perms, need);
            }
        }
        if self.skip_sock_check(sock.sid()) {
            return Ok(());
        }
        if self.passes_quietly(hook, task.sid(), sock.sid(), sock.class(), perms) {
            return Ok(());
        }
        self.sock_has_perm_full(hook, task, sock, perms)
    }

    /// [`ObjectManager::sock_has_perm`] with no grant remembered for the task's credential:
    /// the check, whose grant the socket remembers if it may (the policy's own, nothing to
    /// audit, decided in enforcing mode with no switch meanwhile: `may_remember`).
    #[inline(never)]
    fn sock_has_perm_remember(
        &self,
        hook: Hook,
        task: &Task,
        sock: &SocketSec,
        perms: u32,
        need: u16,
    ) -> Result<()> {
        if self.skip_sock_check(sock.sid()) {
            return Ok(());
        }
        let seen = sock.grant.seen();
        let target = (sock.sid(), sock.class());
        let v = self.check_remembering(hook, task, target, perms, &sock.grant, seen, Some(need))?;
        self.sock_verdict(task, sock, &v)
    }

    /// [`ObjectManager::sock_has_perm`] other than by a silent grant.
    #[cold]
    #[inline(never)]
    fn sock_has_perm_full(
        &self,
        hook: Hook,
        task: &Task,
        sock: &SocketSec,
        perms: u32,
    ) -> Result<()> {
        let v = self.check_noaudit(hook, task.sid(), sock.sid(), sock.class(), perms)?;
        self.sock_verdict(task, sock, &v)
    }

    /// A socket check's record, if its verdict asks for one, and its outcome.
    fn sock_verdict(&self, task: &Task, sock: &SocketSec, v: &Checked) -> Result<()> {
        // The audit data (the socket's addresses, its path copied out under its lock) is built
        // only for a record, as the kernel renders its lsm_network_audit only when it audits:
        // every send and receive asks this, and nearly none is audited.
        if v.audits() {
            let f = sock.audit_fields();
            let ad = AuditData::Net {
                laddr: f.laddr,
                lport: f.lport,
                faddr: f.faddr,
                fport: f.fport,
                path: f.path.as_deref(),
            };
            self.audit(task, task.sid(), sock.sid(), sock.class(), v, &ad);
        }
        self.outcome(sock.class(), v).map(|_| ())
    }

    /// The SID a socket of `class` created by `task` gets (socket_sockcreate_sid): the
    /// task's setsockcreatecon SID, else the transition from the task to itself.
    fn sockcreate_sid(&self, task: &Task, class: Class) -> Result<Sid> {
        if let Some(s) = task.cred().sockcreate_sid().filter(|s| *s != Sid::NULL) {
            return Ok(s);
        }
        self.with_policy_class(class, |c| {
            Ok(self
                .server()
                .transition_sid(task.sid(), task.sid(), c, None)?)
        })
    }

    /// socket(2) (selinux_socket_create, selinux_socket_post_create, selinux_sk_alloc_security):
    /// `{create}` of the new socket's SID (setsockcreatecon's, else the transition from the task
    /// to itself) in its class, then the blob with that SID and class and the unlabeled peer
    /// SID. A kernel socket (`kern`) is not checked and has the kernel initial SID.
    pub fn socket_create(
        &self,
        task: &Task,
        family: u16,
        ty: i32,
        protocol: i32,
        kern: bool,
    ) -> Result<SocketSec> {
        let extended = self.policy_caps().contains(PolicyCap::ExtendedSocketClass);
        let class = socket_class(family, ty, protocol, extended);
        let sid = if kern {
            self.initial_or_null(SECINITSID_KERNEL)
        } else {
            let sid = self.sockcreate_sid(task, class)?;
            self.check(
                Hook::SocketCreate,
                task,
                sid,
                class,
                sockperm::CREATE,
                &AuditData::None,
            )?;
            sid
        };
        // The peer is unlabeled until something says otherwise (sk_alloc_security).
        Ok(SocketSec::new(
            sid,
            class,
            family,
            sk_protocol(family, ty, protocol),
            self.initial_or_null(SECINITSID_UNLABELED),
        ))
    }

    /// bind(2) with the kernel's default port ranges; see [`ObjectManager::socket_bind_ranges`].
    pub fn socket_bind(&self, task: &Task, sock: &SocketSec, addr: &SockAddr) -> Result<()> {
        self.socket_bind_ranges(task, sock, addr, &PortRanges::default())
    }

    /// bind(2) (selinux_socket_bind, whose checks are __selinux_socket_bind's): the socket's
    /// {bind}; then, for INET sockets, {name_bind} from the socket to the port's SID when
    /// `ranges` say the port needs it, and {node_bind} from the socket to the address's node
    /// SID.
    pub fn socket_bind_ranges(
        &self,
        task: &Task,
        sock: &SocketSec,
        addr: &SockAddr,
        ranges: &PortRanges,
    ) -> Result<()> {
        self.bind_checks(Hook::SocketBind, task, sock, addr, ranges)?;
        sock.set_local(addr);
        Ok(())
    }

    /// __selinux_socket_bind's checks, for bind(2) and for each address of an SCTP bindx.
    pub(crate) fn bind_checks(
        &self,
        hook: Hook,
        task: &Task,
        sock: &SocketSec,
        addr: &SockAddr,
        ranges: &PortRanges,
    ) -> Result<()> {
        self.sock_has_perm(hook, task, sock, sockperm::BIND)?;
        if matches!(sock.family, family::INET | family::INET6) {
            let SockAddr::Inet(a) = addr else {
                return Err(ObjmgrError::Invalid(format!(
                    "bind of an INET socket to {addr:?}"
                )));
            };
            let port = a.port();
            if ranges.asks_name_bind(port) {
                let psid = self
                    .server()
                    .port_sid(u8::try_from(sock.protocol).unwrap_or(0), port);
                let ad = AuditData::NetAddr {
                    saddr: None,
                    src: Some(port),
                    daddr: None,
                    dest: None,
                };
                self.check_sid(
                    hook,
                    task,
                    sock.sid(),
                    psid,
                    sock.class(),
                    sockperm::NAME_BIND,
                    &ad,
                )?;
            }
            // tcp, udp and sctp have node_bind at their own bit; every other class uses
            // rawip's, which in our table is the same bit.
            let nsid = self.server().node_sid(a.ip());
            let ip = Some(a.ip()).filter(|i| !i.is_unspecified());
            let ad = AuditData::NetAddr {
                saddr: ip,
                src: Some(port).filter(|p| *p != 0),
                daddr: None,
                dest: None,
            };
            self.check_sid(
                hook,
                task,
                sock.sid(),
                nsid,
                sock.class(),
                tcp_socket::NODE_BIND,
                &ad,
            )?;
        }
        Ok(())
    }

    /// connect(2) (selinux_socket_connect, whose checks are selinux_socket_connect_helper's):
    /// the socket's {connect}; nothing more for AF_UNSPEC; for TCP and SCTP sockets
    /// {name_connect} from the socket to the destination port's SID.
    pub fn socket_connect(&self, task: &Task, sock: &SocketSec, addr: &SockAddr) -> Result<()> {
        self.connect_checks(Hook::SocketConnect, task, sock, addr)?;
        sock.set_peer(addr);
        Ok(())
    }

    /// selinux_socket_connect_helper's checks, for connect(2), a TCP Fast Open sendmsg and each
    /// address of an SCTP connectx.
    pub(crate) fn connect_checks(
        &self,
        hook: Hook,
        task: &Task,
        sock: &SocketSec,
        addr: &SockAddr,
    ) -> Result<()> {
        self.sock_has_perm(hook, task, sock, sockperm::CONNECT)?;
        if let SockAddr::Inet(a) = addr {
            if matches!(sock.class(), Class::TCP_SOCKET | Class::SCTP_SOCKET) {
                let psid = self
                    .server()
                    .port_sid(u8::try_from(sock.protocol).unwrap_or(0), a.port());
                let ad = AuditData::NetAddr {
                    saddr: None,
                    src: None,
                    daddr: None,
                    dest: Some(a.port()).filter(|p| *p != 0),
                };
                self.check_sid(
                    hook,
                    task,
                    sock.sid(),
                    psid,
                    sock.class(),
                    tcp_socket::NAME_CONNECT,
                    &ad,
                )?;
            }
        }
        Ok(())
    }

    /// listen(2) (selinux_socket_listen): {listen}.
    pub fn socket_listen(&self, task: &Task, sock: &SocketSec) -> Result<()> {
        self.sock_has_perm(Hook::SocketListen, task, sock, sockperm::LISTEN)
    }

    /// accept(2) on an INET socket (selinux_socket_accept, selinux_inet_conn_request,
    /// selinux_inet_csk_clone, selinux_sock_graft): {accept} on the listening socket; the new
    /// socket takes the listener's SID and class (the connection SID inet_conn_request computes
    /// is the listener's when the packet has no peer label, and sock_graft gives it to the
    /// socket's inode, which shares this blob). Without labelled networking its peer SID is
    /// unknown (SECSID_NULL), so SO_PEERSEC on it fails as the kernel's does.
    pub fn socket_accept(&self, task: &Task, listener: &SocketSec) -> Result<SocketSec> {
        self.sock_has_perm(Hook::SocketAccept, task, listener, sockperm::ACCEPT)?;
        let s = SocketSec::new(
            listener.sid(),
            listener.class(),
            listener.family,
            listener.protocol,
            Sid::NULL,
        );
        s.copy_addrs_from(listener);
        Ok(s)
    }

    /// accept(2) on an AF_UNIX stream socket: {accept} on the listening socket, then the
    /// socket made for the connection by [`ObjectManager::unix_stream_connect`] is handed out
    /// with its SID (selinux_sock_graft keeps the connection socket's SID for AF_UNIX).
    pub fn unix_accept(
        &self,
        task: &Task,
        listener: &SocketSec,
        child: SocketSec,
    ) -> Result<SocketSec> {
        self.sock_has_perm(Hook::SocketAccept, task, listener, sockperm::ACCEPT)?;
        Ok(child)
    }

    /// sendmsg(2) without a destination address (selinux_socket_sendmsg): {write}. With an
    /// address and flags, see [`ObjectManager::socket_sendmsg_to`].
    pub fn socket_sendmsg(&self, task: &Task, sock: &SocketSec) -> Result<()> {
        self.sock_has_perm(Hook::SocketSendmsg, task, sock, sockperm::WRITE)
    }

    /// recvmsg(2) (selinux_socket_recvmsg): {read}.
    pub fn socket_recvmsg(&self, task: &Task, sock: &SocketSec) -> Result<()> {
        self.sock_has_perm(Hook::SocketRecvmsg, task, sock, sockperm::READ)
    }

    /// The AF_UNIX stream connect (selinux_socket_unix_stream_connect), after
    /// [`ObjectManager::socket_connect`]: {connectto} from the connecting socket to the
    /// listening one (the record names the listener). Returns the server's end of the
    /// connection, for [`ObjectManager::unix_accept`]: its SID is the listener's with the
    /// client's MLS range, its peer the client; the client's peer becomes the new socket.
    pub fn unix_stream_connect(
        &self,
        task: &Task,
        sock: &SocketSec,
        listener: &SocketSec,
    ) -> Result<SocketSec> {
        let f = listener.audit_fields();
        let ad = AuditData::Net {
            laddr: None,
            lport: None,
            faddr: None,
            fport: None,
            path: f.path.as_deref(),
        };
        self.check_sid(
            Hook::UnixStreamConnect,
            task,
            sock.sid(),
            listener.sid(),
            listener.class(),
            unix_stream_socket::CONNECTTO,
            &ad,
        )?;
        let sid = self.mls_copy(listener.sid(), sock.sid())?;
        let child = SocketSec::new(
            sid,
            listener.class(),
            listener.family,
            listener.protocol,
            sock.sid(),
        );
        child.copy_addrs_from(listener);
        sock.set_peer_sid(sid);
        Ok(child)
    }

    /// A datagram sent on an AF_UNIX socket (selinux_socket_unix_may_send): {sendto} from
    /// the sending socket to the receiving one (the record names the receiver).
    pub fn unix_may_send(&self, task: &Task, sock: &SocketSec, other: &SocketSec) -> Result<()> {
        let f = other.audit_fields();
        let ad = AuditData::Net {
            laddr: None,
            lport: None,
            faddr: None,
            fport: None,
            path: f.path.as_deref(),
        };
        self.check_sid(
            Hook::UnixMaySend,
            task,
            sock.sid(),
            other.sid(),
            other.class(),
            sockperm::SENDTO,
            &ad,
        )
        .map(|_| ())
    }

    /// socketpair(2) (selinux_socket_socketpair), after both sockets' create: each is the
    /// other's peer. No check.
    pub fn socket_socketpair(&self, a: &SocketSec, b: &SocketSec) {
        a.set_peer_sid(b.sid());
        b.set_peer_sid(a.sid());
    }

    /// SO_PEERSEC (selinux_socket_getpeersec_stream): the peer SID of a unix stream, TCP or
    /// SCTP socket; ENOPROTOOPT for other classes and for a socket with no peer label.
    pub fn socket_getpeersec(&self, sock: &SocketSec) -> Result<Sid> {
        if !matches!(
            sock.class(),
            Class::UNIX_STREAM_SOCKET | Class::TCP_SOCKET | Class::SCTP_SOCKET
        ) {
            return Err(ObjmgrError::NoProtocolOption(format!(
                "SO_PEERSEC on a {}",
                sock.class().name()
            )));
        }
        match sock.peer_sid() {
            Sid::NULL => Err(ObjmgrError::NoProtocolOption(
                "SO_PEERSEC: the peer is not labelled".into(),
            )),
            s => Ok(s),
        }
    }

    /// security_sid_mls_copy: `sid` with the MLS range of `mls_sid`, or `sid` itself when the
    /// policy has no MLS ranges.
    fn mls_copy(&self, sid: Sid, mls_sid: Sid) -> Result<Sid> {
        let server = self.server();
        // Both contexts of one generation.
        let names = server.names();
        let ctx = |s: Sid| crate::context_in(&*names, s);
        let (a, b) = (ctx(sid)?, ctx(mls_sid)?);
        let range = |c: &str| c.splitn(4, ':').nth(3).map(str::to_owned);
        let head = |c: &str| c.splitn(4, ':').take(3).collect::<Vec<_>>().join(":");
        match (range(&a), range(&b)) {
            (Some(_), Some(r)) => Ok(server.context_to_sid(&format!("{}:{r}", head(&a)))?),
            _ => Ok(sid),
        }
    }
}
