//! The further socket hooks ask exactly the permissions the kernel's hooks ask (hooks.c at
//! 28254722a459938d97150d3b0712b81e06d0645e, each test citing its function): names, options
//! and shutdown, sendmsg with MSG_FASTOPEN, datagram peer labels, SCTP's per-address checks,
//! tun devices, and netlink messages (nlmsgtab.c's tables, or the `nlmsg` extended permission
//! under the netlink_xperm policy capability).
//!
//! Method as in socket_hooks.rs: testdata/policies/objmgr-net.cil allows and auditallows
//! everything, so each check writes one `granted` record naming exactly what it asked; its
//! variants show the denials.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use seaccess_objmgr::hooks::socket::more::{SctpOp, MSG_FASTOPEN};
use seaccess_objmgr::hooks::socket::netlink::{nlmsg_lookup, NlmsgPerm};
use seaccess_objmgr::hooks::socket::{family, ipproto, sock_type, SockAddr};
use seaccess_objmgr::{errno, Class};
use seaccess_policy::XpermsKind;
use seaccess_security::SecurityServer;

mod fs_support;
mod net_support;
use net_support::{env_at, net_variant, rec, Env, NetEnv};

fn policy(variant: &str) -> std::path::PathBuf {
    static ALL: OnceLock<std::path::PathBuf> = OnceLock::new();
    static DENY: OnceLock<std::path::PathBuf> = OnceLock::new();
    static NOEXT: OnceLock<std::path::PathBuf> = OnceLock::new();
    match variant {
        "deny" => DENY
            .get_or_init(|| {
                net_variant("objmgr-net-deny", |l| {
                    (!l.contains("; grant")).then(|| l.to_string())
                })
            })
            .clone(),
        "noext" => NOEXT
            .get_or_init(|| {
                net_variant("objmgr-net-noext", |l| {
                    (!l.contains("extended_socket_class")).then(|| l.to_string())
                })
            })
            .clone(),
        _ => ALL
            .get_or_init(|| seaccess_testkit::compile("objmgr-net", 33))
            .clone(),
    }
}

fn env(variant: &str) -> Env {
    env_at(&policy(variant))
}

/// objmgr-net.cil with the netlink_xperm capability and one netlink-message rule pair for
/// app_t on itself: RTM_GETLINK (type 18: high byte 0, low byte 0x12) allowed and
/// auditallowed. secilc cannot write nlmsg rules, so they are written as ioctl rules and turned
/// into netlink-message rules in the policy read, as the security server's own tests do.
fn xperm_env() -> Env {
    static PATH: OnceLock<std::path::PathBuf> = OnceLock::new();
    let path = PATH.get_or_init(|| {
        net_variant("objmgr-net-nlxperm", |l| {
            Some(if l.starts_with("(typetransition app_t exec_t") {
                format!("{l}\n(allowx app_t app_t (ioctl netlink_route_socket (0x0012)))\n(auditallowx app_t app_t (ioctl netlink_route_socket (0x0012)))")
            } else {
                l.to_string()
            })
        })
    });
    let mut p = seaccess_policy::read_policy(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(
        p.change_xperms_kind(|x| x.kind == XpermsKind::IoctlFunction, XpermsKind::Nlmsg),
        2
    );
    // POLICYDB_CAP_NETLINK_XPERM.
    p.add_policy_cap(9);
    let server = Arc::new(SecurityServer::new(p));
    let dynserver: Arc<dyn seaccess_types::AccessServer> = server.clone();
    let avc = Arc::new(seaccess_avc::Avc::new(dynserver, 512));
    avc.follow(&*server).keep();
    Env::over(server, avc)
}

const APP: &str = "u:app_r:app_t:s0";
const PEER: &str = "u:app_r:peer_t:s0";
const HTTP_PORT: &str = "u:object_r:http_port_t:s0";
const PORT: &str = "u:object_r:port_t:s0";
const LO_NODE: &str = "u:object_r:lo_node_t:s0";
const NODE: &str = "u:object_r:node_t:s0";

fn inet(s: &str) -> SockAddr {
    SockAddr::Inet(s.parse::<SocketAddr>().unwrap())
}

/// selinux_socket_getsockname and selinux_socket_getpeername `{getattr}`,
/// selinux_socket_setsockopt `{setopt}`, selinux_socket_getsockopt `{getopt}`,
/// selinux_socket_shutdown `{shutdown}`: each sock_has_perm, task → socket, with the socket's
/// addresses.
#[test]
fn names_options_and_shutdown() {
    let e = env("all");
    let t = e.task_as(10, "srv", APP);
    let s =
        e.om.socket_create(&t, family::INET, sock_type::STREAM, 0, false)
            .unwrap();
    e.om.socket_bind(&t, &s, &inet("127.0.0.1:80")).unwrap();
    e.records();
    let f = "laddr=127.0.0.1 lport=80";
    e.om.socket_getsockname(&t, &s).unwrap();
    e.om.socket_getpeername(&t, &s).unwrap();
    e.om.socket_setsockopt(&t, &s, 1, 2).unwrap();
    e.om.socket_getsockopt(&t, &s, 1, 31).unwrap();
    e.om.socket_shutdown(&t, &s, 2).unwrap();
    let class = "tcp_socket";
    assert_eq!(
        e.records(),
        vec![
            rec(class, "getattr", APP, APP, f),
            rec(class, "getattr", APP, APP, f),
            rec(class, "setopt", APP, APP, f),
            rec(class, "getopt", APP, APP, f),
            rec(class, "shutdown", APP, APP, f)
        ]
    );
    let d = env("deny");
    let t = d.task_as(42, "srv", APP);
    let u =
        d.om.socket_create(&t, family::UNIX, sock_type::DGRAM, 0, true)
            .unwrap();
    // A kernel socket is not checked (sock_skip_has_perm).
    d.om.socket_shutdown(&t, &u, 0).unwrap();
    assert_eq!(d.take(), Vec::<String>::new());
    let sec = seaccess_objmgr::hooks::socket::SocketSec::new(
        d.sid(APP),
        Class::UNIX_DGRAM_SOCKET,
        family::UNIX,
        0,
        seaccess_types::Sid::NULL,
    );
    assert_eq!(
        d.om.socket_setsockopt(&t, &sec, 1, 2).unwrap_err().errno(),
        errno::EACCES
    );
    assert_eq!(d.take(), vec![format!("avc:  denied  {{ setopt }} for  pid=42 comm=\"srv\" scontext={APP} tcontext={APP} tclass=unix_dgram_socket permissive=0")]);
}

/// Issue 25 item 1.7, selinux_socket_sendmsg: `{write}`, then with MSG_FASTOPEN and an address
/// on a TCP or MPTCP stream socket, selinux_socket_connect's checks (`{connect}`, and
/// `{name_connect}` of the destination port with ` dest=`). Nothing more without the flag,
/// without an address, or on another kind of socket (UDP, a raw socket of protocol TCP).
#[test]
fn sendmsg_with_fastopen_makes_the_connect_checks() {
    let e = env("all");
    let t = e.task_as(10, "cli", APP);
    let s =
        e.om.socket_create(&t, family::INET, sock_type::STREAM, 0, false)
            .unwrap();
    e.records();
    let dst = inet("127.0.0.1:8080");
    e.om.socket_sendmsg_to(&t, &s, Some(&dst), MSG_FASTOPEN)
        .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("tcp_socket", "write", APP, APP, ""),
            rec("tcp_socket", "connect", APP, APP, ""),
            rec("tcp_socket", "name_connect", APP, HTTP_PORT, "dest=8080")
        ]
    );
    // The send connected the socket: its records name the peer from now on.
    e.om.socket_sendmsg_to(&t, &s, Some(&dst), 0).unwrap();
    assert_eq!(
        e.records(),
        vec![rec(
            "tcp_socket",
            "write",
            APP,
            APP,
            "faddr=127.0.0.1 fport=8080"
        )]
    );
    let s =
        e.om.socket_create(&t, family::INET6, sock_type::STREAM, ipproto::MPTCP, false)
            .unwrap();
    e.records();
    e.om.socket_sendmsg_to(&t, &s, Some(&inet("[::1]:443")), MSG_FASTOPEN | 0x40)
        .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("tcp_socket", "write", APP, APP, ""),
            rec("tcp_socket", "connect", APP, APP, ""),
            rec("tcp_socket", "name_connect", APP, PORT, "dest=443")
        ]
    );
    e.om.socket_sendmsg_to(&t, &s, None, MSG_FASTOPEN).unwrap();
    assert_eq!(
        e.records(),
        vec![rec("tcp_socket", "write", APP, APP, "faddr=::1 fport=443")]
    );
    for (ty, proto, class) in [
        (sock_type::DGRAM, 0, "udp_socket"),
        (sock_type::RAW, ipproto::TCP, "rawip_socket"),
    ] {
        let s =
            e.om.socket_create(&t, family::INET, ty, proto, false)
                .unwrap();
        e.records();
        e.om.socket_sendmsg_to(&t, &s, Some(&dst), MSG_FASTOPEN)
            .unwrap();
        assert_eq!(e.records(), vec![rec(class, "write", APP, APP, "")]);
    }
    // Refused at name_connect: the send fails with the connect's error.
    let d = env("deny");
    let t = d.task_as(42, "cli", APP);
    let k =
        d.om.socket_create(&t, family::INET, sock_type::STREAM, 0, true)
            .unwrap();
    assert_eq!(
        d.om.socket_sendmsg_to(&t, &k, Some(&dst), MSG_FASTOPEN)
            .unwrap_err()
            .errno(),
        errno::EACCES
    );
    let kctx = d.ctx(k.sid());
    assert_eq!(d.take(), vec![format!("avc:  denied  {{ name_connect }} for  pid=42 comm=\"cli\" dest=8080 scontext={kctx} tcontext={HTTP_PORT} tclass=tcp_socket permissive=0")]);
}

/// selinux_socket_getpeersec_dgram: an AF_UNIX datagram carries its sending socket's SID; an
/// INET one a packet label, none without labelled networking (ENOPROTOOPT).
/// selinux_inet_conn_established: a connected TCP client's peer is the SYN-ACK's label, none
/// here, so SO_PEERSEC then fails where the unlabeled SID of a new socket would have answered.
#[test]
fn datagram_and_connection_peer_labels() {
    let e = env("all");
    let t = e.task_as(10, "cli", PEER);
    let u =
        e.om.socket_create(&t, family::UNIX, sock_type::DGRAM, 0, false)
            .unwrap();
    assert_eq!(e.ctx(e.om.socket_getpeersec_dgram(&u).unwrap()), PEER);
    let d =
        e.om.socket_create(&t, family::INET, sock_type::DGRAM, 0, false)
            .unwrap();
    assert_eq!(
        e.om.socket_getpeersec_dgram(&d).unwrap_err().errno(),
        errno::ENOPROTOOPT
    );
    let c =
        e.om.socket_create(&t, family::INET, sock_type::STREAM, 0, false)
            .unwrap();
    assert_eq!(
        e.om.socket_getpeersec(&c).unwrap(),
        e.server.snapshot().initial_sid(3).unwrap()
    );
    e.om.inet_conn_established(&c);
    assert_eq!(
        e.om.socket_getpeersec(&c).unwrap_err().errno(),
        errno::ENOPROTOOPT
    );
    assert_eq!(
        e.records(),
        vec![
            rec("unix_dgram_socket", "create", PEER, PEER, ""),
            rec("udp_socket", "create", PEER, PEER, ""),
            rec("tcp_socket", "create", PEER, PEER, "")
        ]
    );
}

/// selinux_sctp_bind_connect, with extended_socket_class: each address of a bind option gets
/// __selinux_socket_bind's checks and each of a connect option selinux_socket_connect_helper's,
/// in order; without the capability nothing is asked; an AF_UNIX address is EINVAL.
#[test]
fn sctp_checks_each_address() {
    let e = env("all");
    let t = e.task_as(10, "srv", APP);
    let s =
        e.om.socket_create(&t, family::INET, sock_type::SEQPACKET, ipproto::SCTP, false)
            .unwrap();
    e.records();
    let c = "sctp_socket";
    e.om.sctp_bind_connect(
        &t,
        &s,
        SctpOp::BindxAdd,
        &[inet("127.0.0.1:80"), inet("0.0.0.0:40000")],
    )
    .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec(c, "bind", APP, APP, ""),
            rec(c, "name_bind", APP, PORT, "src=80"),
            rec(c, "node_bind", APP, LO_NODE, "saddr=127.0.0.1 src=80"),
            rec(c, "bind", APP, APP, ""),
            rec(c, "node_bind", APP, NODE, "src=40000"),
        ]
    );
    for op in [SctpOp::PrimaryAddr, SctpOp::SetPeerPrimaryAddr] {
        e.om.sctp_bind_connect(&t, &s, op, &[inet("0.0.0.0:40000")])
            .unwrap();
        assert_eq!(
            e.records(),
            vec![
                rec(c, "bind", APP, APP, ""),
                rec(c, "node_bind", APP, NODE, "src=40000")
            ],
            "{op:?}"
        );
    }
    for op in [
        SctpOp::Connectx,
        SctpOp::ParamSetPrimary,
        SctpOp::ParamAddIp,
        SctpOp::SendmsgConnect,
    ] {
        e.om.sctp_bind_connect(&t, &s, op, &[inet("10.0.0.1:80"), inet("10.0.0.2:9")])
            .unwrap();
        assert_eq!(
            e.records(),
            vec![
                rec(c, "connect", APP, APP, ""),
                rec(c, "name_connect", APP, PORT, "dest=80"),
                rec(c, "connect", APP, APP, ""),
                rec(c, "name_connect", APP, PORT, "dest=9")
            ],
            "{op:?}"
        );
    }
    assert_eq!(
        e.om.sctp_bind_connect(&t, &s, SctpOp::Connectx, &[SockAddr::Unix("/x".into())])
            .unwrap_err()
            .errno(),
        errno::EINVAL
    );
    let n = env("noext");
    let t = n.task_as(10, "srv", APP);
    let s =
        n.om.socket_create(&t, family::INET, sock_type::STREAM, ipproto::SCTP, false)
            .unwrap();
    n.records();
    n.om.sctp_bind_connect(&t, &s, SctpOp::Connectx, &[inet("10.0.0.1:80")])
        .unwrap();
    assert_eq!(n.records(), vec![]);
}

/// selinux_tun_dev_alloc_security (the creator's SID), selinux_tun_dev_create `tun_socket
/// {create}` self → self, selinux_tun_dev_attach_queue `{attach_queue}` task → device,
/// selinux_tun_dev_attach (the queue's socket: the device's SID, class tun_socket),
/// selinux_tun_dev_open `{relabelfrom}` task → device then `{relabelto}` task → itself, after
/// which the device has the opener's SID.
#[test]
fn tun_devices() {
    let e = env("all");
    let t = e.task_as(10, "vpn", APP);
    let p = e.task_as(11, "other", PEER);
    e.om.tun_dev_create(&t).unwrap();
    let tun = e.om.tun_dev_alloc_security(&t);
    assert_eq!(e.records(), vec![rec("tun_socket", "create", APP, APP, "")]);
    e.om.tun_dev_attach_queue(&p, &tun).unwrap();
    assert_eq!(
        e.records(),
        vec![rec("tun_socket", "attach_queue", PEER, APP, "")]
    );
    let s = e.om.tun_dev_attach(&tun);
    assert_eq!(
        (e.ctx(s.sid()), s.class()),
        (APP.to_string(), Class::TUN_SOCKET)
    );
    e.om.tun_dev_open(&p, &tun).unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("tun_socket", "relabelfrom", PEER, APP, ""),
            rec("tun_socket", "relabelto", PEER, PEER, "")
        ]
    );
    assert_eq!(e.ctx(tun.sid()), PEER);
    let d = env("deny");
    let t = d.task_as(42, "vpn", APP);
    let tun = d.om.tun_dev_alloc_security(&t);
    let p = d.task_as(43, "other", PEER);
    assert_eq!(
        d.om.tun_dev_open(&p, &tun).unwrap_err().errno(),
        errno::EACCES
    );
    assert_eq!(
        d.ctx(tun.sid()),
        APP,
        "a refused open keeps the device's label"
    );
    assert_eq!(d.take(), vec![format!("avc:  denied  {{ relabelfrom }} for  pid=43 comm=\"other\" scontext={PEER} tcontext={APP} tclass=tun_socket permissive=0")]);
}

/// Netlink messages as the kernel lays them out: length (header included), type, flags,
/// sequence, port; each padded to 4 bytes.
fn nlmsgs(msgs: &[(u16, usize)]) -> Vec<u8> {
    let mut out = Vec::new();
    for &(ty, payload) in msgs {
        let len = 16 + payload;
        out.extend_from_slice(&(len as u32).to_ne_bytes());
        out.extend_from_slice(&ty.to_ne_bytes());
        out.extend_from_slice(&[0; 10]);
        out.extend(std::iter::repeat_n(0xaa, payload));
        out.extend(std::iter::repeat_n(0, (4 - len % 4) % 4));
    }
    out
}

/// nlmsgtab.c's tables (selinux_nlmsg_lookup), a few rows of each, read from the kernel
/// source: the permission each message type asks without netlink_xperm, and `nlmsg` with it.
#[test]
fn message_types_map_as_nlmsgtab_does() {
    use seaccess_objmgr::classes::{netlink_audit_socket as a, netlink_msg_socket as m};
    let (route, diag, xfrm, audit) = (
        Class::NETLINK_ROUTE_SOCKET,
        Class::NETLINK_TCPDIAG_SOCKET,
        Class::NETLINK_XFRM_SOCKET,
        Class::NETLINK_AUDIT_SOCKET,
    );
    let rows = [
        (route, 16, NlmsgPerm::Perm(m::NLMSG_WRITE)), // RTM_NEWLINK
        (route, 18, NlmsgPerm::Perm(m::NLMSG_READ)),  // RTM_GETLINK
        (route, 89, NlmsgPerm::Perm(m::NLMSG_READ)),  // RTM_DELNSID, read in the table
        (route, 92, NlmsgPerm::Perm(m::NLMSG_READ)),  // RTM_NEWSTATS
        (route, 110, NlmsgPerm::Unknown),             // RTM_GETLINKPROP: not in the table
        (route, 122, NlmsgPerm::Perm(m::NLMSG_READ)), // RTM_GETTUNNEL
        (route, 121, NlmsgPerm::Perm(m::NLMSG_WRITE)), // RTM_DELTUNNEL
        (diag, 20, NlmsgPerm::Perm(m::NLMSG_READ)),   // SOCK_DIAG_BY_FAMILY
        (diag, 21, NlmsgPerm::Perm(m::NLMSG_WRITE)),  // SOCK_DESTROY
        (diag, 19, NlmsgPerm::Unknown),               // DCCPDIAG_GETSOCK, gone from the table
        (xfrm, 0x12, NlmsgPerm::Perm(m::NLMSG_READ)), // XFRM_MSG_GETSA
        (xfrm, 0x26, NlmsgPerm::Perm(m::NLMSG_READ)), // XFRM_MSG_MAPPING
        (xfrm, 0x27, NlmsgPerm::Perm(m::NLMSG_WRITE)), // XFRM_MSG_SETDEFAULT
        (audit, 1000, NlmsgPerm::Perm(a::NLMSG_READ)), // AUDIT_GET
        (audit, 1013, NlmsgPerm::Perm(a::NLMSG_READPRIV)), // AUDIT_LIST_RULES
        (audit, 1017, NlmsgPerm::Perm(a::NLMSG_TTY_AUDIT)), // AUDIT_TTY_SET
        (audit, 1107, NlmsgPerm::Perm(a::NLMSG_RELAY)), // AUDIT_USER_AVC, a user message
        (audit, 2500, NlmsgPerm::Perm(a::NLMSG_RELAY)), // the second user range
        (audit, 1300, NlmsgPerm::Unknown),
        (Class::NETLINK_SOCKET, 16, NlmsgPerm::NoTable),
    ];
    for (class, ty, want) in rows {
        assert_eq!(
            nlmsg_lookup(class, ty, false),
            want,
            "{} {ty}",
            class.name()
        );
    }
    assert_eq!(nlmsg_lookup(route, 110, true), NlmsgPerm::Perm(m::NLMSG));
    assert_eq!(nlmsg_lookup(audit, 1300, true), NlmsgPerm::Perm(a::NLMSG));
    assert_eq!(
        nlmsg_lookup(
            Class::socket_named("netlink_generic_socket").unwrap(),
            16,
            true
        ),
        NlmsgPerm::NoTable
    );
}

/// selinux_netlink_send without netlink_xperm: each message asks its table permission with
/// sock_has_perm (the socket's audit data); a class without a table asks nothing; a type the
/// table lacks is EINVAL when enforcing with handle_unknown deny, and passes in permissive
/// mode; a header whose length is junk ends the walk quietly.
#[test]
fn netlink_send_asks_each_message_type() {
    let e = env("all");
    let t = e.task_as(10, "ip", APP);
    let s =
        e.om.socket_create(&t, family::NETLINK, sock_type::RAW, 0, false)
            .unwrap();
    assert_eq!(s.class(), Class::NETLINK_ROUTE_SOCKET);
    e.records();
    let c = "netlink_route_socket";
    e.om.netlink_send(&t, &s, &nlmsgs(&[(18, 16), (20, 3), (26, 0)]))
        .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec(c, "nlmsg_read", APP, APP, ""),
            rec(c, "nlmsg_write", APP, APP, ""),
            rec(c, "nlmsg_read", APP, APP, "")
        ]
    );
    // A length past the end, or shorter than a header: the walk stops there.
    let mut bad = nlmsgs(&[(18, 0), (20, 0)]);
    bad[16] = 200;
    e.om.netlink_send(&t, &s, &bad).unwrap();
    bad[16] = 8;
    e.om.netlink_send(&t, &s, &bad).unwrap();
    e.om.netlink_send(&t, &s, &[1, 2, 3]).unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec(c, "nlmsg_read", APP, APP, ""),
            rec(c, "nlmsg_read", APP, APP, "")
        ]
    );
    // RTM_GETLINKPROP is not in the table.
    assert_eq!(
        e.om.netlink_send(&t, &s, &nlmsgs(&[(18, 0), (110, 0), (20, 0)]))
            .unwrap_err()
            .errno(),
        errno::EINVAL
    );
    assert_eq!(e.records(), vec![rec(c, "nlmsg_read", APP, APP, "")]);
    e.avc.set_enforcing(false);
    e.om.netlink_send(&t, &s, &nlmsgs(&[(110, 0), (20, 0)]))
        .unwrap();
    assert_eq!(e.records(), vec![rec(c, "nlmsg_write", APP, APP, "")]);
    e.avc.set_enforcing(true);
    // Protocol 13 has no class of its own (netlink_socket) and no table.
    let g =
        e.om.socket_create(&t, family::NETLINK, sock_type::RAW, 13, false)
            .unwrap();
    e.records();
    e.om.netlink_send(&t, &g, &nlmsgs(&[(0x1c, 4)])).unwrap();
    assert_eq!(e.records(), vec![]);
    let a =
        e.om.socket_create(&t, family::NETLINK, sock_type::RAW, 9, false)
            .unwrap();
    e.records();
    e.om.netlink_send(&t, &a, &nlmsgs(&[(1107, 40), (1017, 8)]))
        .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("netlink_audit_socket", "nlmsg_relay", APP, APP, ""),
            rec("netlink_audit_socket", "nlmsg_tty_audit", APP, APP, "")
        ]
    );
    let d = env("deny");
    let t = d.task_as(42, "ip", APP);
    let s = seaccess_objmgr::hooks::socket::SocketSec::new(
        d.sid(APP),
        Class::NETLINK_XFRM_SOCKET,
        family::NETLINK,
        6,
        seaccess_types::Sid::NULL,
    );
    assert_eq!(
        d.om.netlink_send(&t, &s, &nlmsgs(&[(0x10, 0)]))
            .unwrap_err()
            .errno(),
        errno::EACCES
    );
    assert_eq!(d.take(), vec![format!("avc:  denied  {{ nlmsg_write }} for  pid=42 comm=\"ip\" scontext={APP} tcontext={APP} tclass=netlink_xfrm_socket permissive=0")]);
}

/// selinux_netlink_send with netlink_xperm (nlmsg_sock_has_extended_perms): every message of a
/// class with a table asks `{nlmsg}`, decided by the policy's nlmsg rules for its type once any
/// extended-permission rule covers the triple (avc_has_extended_perms, AVC_EXT_NLMSG), audited
/// with `nl-msgtype=`. app_t may send RTM_GETLINK only; peer_t's sockets have no rule, so the
/// base permission decides.
#[test]
fn netlink_send_with_netlink_xperm_asks_the_extended_permission() {
    let e = xperm_env();
    let t = e.task_as(10, "ip", APP);
    let s =
        e.om.socket_create(&t, family::NETLINK, sock_type::RAW, 0, false)
            .unwrap();
    e.take();
    e.om.netlink_send(&t, &s, &nlmsgs(&[(18, 0)])).unwrap();
    assert_eq!(e.take(), vec![format!("avc:  granted  {{ nlmsg }} for  pid=10 comm=\"ip\" nl-msgtype=18 scontext={APP} tcontext={APP} tclass=netlink_route_socket")]);
    // RTM_NEWADDR: no rule lists it. RTM_GETLINKPROP, not in the table, is asked all the same.
    for ty in [20u16, 110, 0x0112] {
        assert_eq!(
            e.om.netlink_send(&t, &s, &nlmsgs(&[(ty, 0)]))
                .unwrap_err()
                .errno(),
            errno::EACCES,
            "type {ty}"
        );
        assert_eq!(e.take(), vec![format!("avc:  denied  {{ nlmsg }} for  pid=10 comm=\"ip\" nl-msgtype={ty} scontext={APP} tcontext={APP} tclass=netlink_route_socket permissive=0")]);
    }
    let p = e.task_as(11, "ip", PEER);
    let ps =
        e.om.socket_create(&p, family::NETLINK, sock_type::RAW, 0, false)
            .unwrap();
    e.take();
    e.om.netlink_send(&p, &ps, &nlmsgs(&[(20, 0), (110, 0)]))
        .unwrap();
    assert_eq!(
        e.records(),
        vec![
            rec("netlink_route_socket", "nlmsg", PEER, PEER, "nl-msgtype=20"),
            rec(
                "netlink_route_socket",
                "nlmsg",
                PEER,
                PEER,
                "nl-msgtype=110"
            )
        ]
    );
    // The same type twice: the second answer comes from the cache, with the same record.
    e.om.netlink_send(&t, &s, &nlmsgs(&[(18, 0), (18, 0)]))
        .unwrap();
    assert_eq!(e.records().len(), 2);
}
