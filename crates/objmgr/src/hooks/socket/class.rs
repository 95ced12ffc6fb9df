//! Which class a new socket gets, from its family, type and protocol: the kernel's
//! socket_type_to_security_class (hooks.c), where the extended_socket_class policy capability
//! decides whether the newer families, SCTP and ICMP get classes of their own.

use crate::classes::Class;

/// Address families (the kernel's PF_* numbers).
pub mod family {
    pub const UNIX: u16 = 1;
    pub const INET: u16 = 2;
    pub const AX25: u16 = 3;
    pub const IPX: u16 = 4;
    pub const APPLETALK: u16 = 5;
    pub const NETROM: u16 = 6;
    pub const ATMPVC: u16 = 8;
    pub const X25: u16 = 9;
    pub const INET6: u16 = 10;
    pub const ROSE: u16 = 11;
    pub const DECNET: u16 = 12;
    pub const KEY: u16 = 15;
    pub const NETLINK: u16 = 16;
    pub const PACKET: u16 = 17;
    pub const ATMSVC: u16 = 20;
    pub const RDS: u16 = 21;
    pub const IRDA: u16 = 23;
    pub const PPPOX: u16 = 24;
    pub const LLC: u16 = 26;
    pub const CAN: u16 = 29;
    pub const TIPC: u16 = 30;
    pub const BLUETOOTH: u16 = 31;
    pub const IUCV: u16 = 32;
    pub const RXRPC: u16 = 33;
    pub const ISDN: u16 = 34;
    pub const PHONET: u16 = 35;
    pub const IEEE802154: u16 = 36;
    pub const CAIF: u16 = 37;
    pub const ALG: u16 = 38;
    pub const NFC: u16 = 39;
    pub const VSOCK: u16 = 40;
    pub const KCM: u16 = 41;
    pub const QIPCRTR: u16 = 42;
    pub const SMC: u16 = 43;
    pub const XDP: u16 = 44;
    pub const MCTP: u16 = 45;
}

/// Socket types (SOCK_*).
pub mod sock_type {
    pub const STREAM: i32 = 1;
    pub const DGRAM: i32 = 2;
    pub const RAW: i32 = 3;
    pub const RDM: i32 = 4;
    pub const SEQPACKET: i32 = 5;
}

/// IP protocol numbers the class choice and the port labels depend on.
pub mod ipproto {
    pub const IP: i32 = 0;
    pub const ICMP: i32 = 1;
    pub const TCP: i32 = 6;
    pub const UDP: i32 = 17;
    pub const ICMPV6: i32 = 58;
    pub const SCTP: i32 = 132;
    pub const MPTCP: i32 = 262;
}

/// Netlink protocols with classes of their own, and their class names.
const NETLINK: &[(i32, &str)] = &[
    (0, "netlink_route_socket"),
    (4, "netlink_tcpdiag_socket"), // NETLINK_SOCK_DIAG
    (5, "netlink_nflog_socket"),
    (6, "netlink_xfrm_socket"),
    (7, "netlink_selinux_socket"),
    (8, "netlink_iscsi_socket"),
    (9, "netlink_audit_socket"),
    (10, "netlink_fib_lookup_socket"),
    (11, "netlink_connector_socket"),
    (12, "netlink_netfilter_socket"),
    (14, "netlink_dnrt_socket"), // NETLINK_DNRTMSG
    (15, "netlink_kobject_uevent_socket"),
    (16, "netlink_generic_socket"),
    (18, "netlink_scsitransport_socket"),
    (20, "netlink_rdma_socket"),
    (21, "netlink_crypto_socket"),
];

/// Families with classes of their own only under extended_socket_class.
const EXTENDED: &[(u16, &str)] = &[
    (family::AX25, "ax25_socket"),
    (family::IPX, "ipx_socket"),
    (family::NETROM, "netrom_socket"),
    (family::ATMPVC, "atmpvc_socket"),
    (family::X25, "x25_socket"),
    (family::ROSE, "rose_socket"),
    (family::DECNET, "decnet_socket"),
    (family::ATMSVC, "atmsvc_socket"),
    (family::RDS, "rds_socket"),
    (family::IRDA, "irda_socket"),
    (family::PPPOX, "pppox_socket"),
    (family::LLC, "llc_socket"),
    (family::CAN, "can_socket"),
    (family::TIPC, "tipc_socket"),
    (family::BLUETOOTH, "bluetooth_socket"),
    (family::IUCV, "iucv_socket"),
    (family::RXRPC, "rxrpc_socket"),
    (family::ISDN, "isdn_socket"),
    (family::PHONET, "phonet_socket"),
    (family::IEEE802154, "ieee802154_socket"),
    (family::CAIF, "caif_socket"),
    (family::ALG, "alg_socket"),
    (family::NFC, "nfc_socket"),
    (family::VSOCK, "vsock_socket"),
    (family::KCM, "kcm_socket"),
    (family::QIPCRTR, "qipcrtr_socket"),
    (family::SMC, "smc_socket"),
    (family::XDP, "xdp_socket"),
    (family::MCTP, "mctp_socket"),
];

fn named(name: &str) -> Class {
    Class::socket_named(name).unwrap_or(Class::SOCKET)
}

/// The class of a socket of `family`, `ty` and `protocol`; `extended` is whether the policy
/// declares extended_socket_class.
pub fn socket_class(family: u16, ty: i32, protocol: i32, extended: bool) -> Class {
    use sock_type::*;
    match family {
        family::UNIX => match ty {
            STREAM | SEQPACKET => return Class::UNIX_STREAM_SOCKET,
            DGRAM | RAW => return Class::UNIX_DGRAM_SOCKET,
            _ => {}
        },
        family::INET | family::INET6 => {
            return match ty {
                STREAM | SEQPACKET
                    if matches!(protocol, ipproto::IP | ipproto::TCP | ipproto::MPTCP) =>
                {
                    Class::TCP_SOCKET
                }
                STREAM | SEQPACKET if extended && protocol == ipproto::SCTP => Class::SCTP_SOCKET,
                DGRAM if matches!(protocol, ipproto::IP | ipproto::UDP) => Class::UDP_SOCKET,
                DGRAM if extended && matches!(protocol, ipproto::ICMP | ipproto::ICMPV6) => {
                    Class::ICMP_SOCKET
                }
                _ => Class::RAWIP_SOCKET,
            };
        }
        family::NETLINK => {
            return NETLINK
                .iter()
                .find(|(p, _)| *p == protocol)
                .map_or(Class::NETLINK_SOCKET, |(_, n)| named(n));
        }
        family::PACKET => return Class::PACKET_SOCKET,
        family::KEY => return named("key_socket"),
        family::APPLETALK => return named("appletalk_socket"),
        _ => {}
    }
    if extended {
        if let Some((_, n)) = EXTENDED.iter().find(|(f, _)| *f == family) {
            return named(n);
        }
    }
    Class::SOCKET
}

/// The protocol the kernel records in a new socket (sk_protocol), which labels its ports: a
/// stream or datagram INET socket asked for with protocol 0 is TCP or UDP.
pub fn sk_protocol(family: u16, ty: i32, protocol: i32) -> i32 {
    if matches!(family, family::INET | family::INET6) && protocol == ipproto::IP {
        return match ty {
            sock_type::STREAM => ipproto::TCP,
            sock_type::DGRAM => ipproto::UDP,
            _ => protocol,
        };
    }
    protocol
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cases of socket_type_to_security_class (hooks.c), with and without the capability.
    #[test]
    fn classes_follow_socket_type_to_security_class() {
        let cases: &[(u16, i32, i32, &str, &str)] = &[
            (
                family::UNIX,
                sock_type::STREAM,
                0,
                "unix_stream_socket",
                "unix_stream_socket",
            ),
            (
                family::UNIX,
                sock_type::SEQPACKET,
                0,
                "unix_stream_socket",
                "unix_stream_socket",
            ),
            (
                family::UNIX,
                sock_type::DGRAM,
                0,
                "unix_dgram_socket",
                "unix_dgram_socket",
            ),
            (
                family::UNIX,
                sock_type::RAW,
                0,
                "unix_dgram_socket",
                "unix_dgram_socket",
            ),
            (family::UNIX, sock_type::RDM, 0, "socket", "socket"),
            (
                family::INET,
                sock_type::STREAM,
                0,
                "tcp_socket",
                "tcp_socket",
            ),
            (
                family::INET6,
                sock_type::STREAM,
                ipproto::MPTCP,
                "tcp_socket",
                "tcp_socket",
            ),
            (
                family::INET,
                sock_type::STREAM,
                ipproto::SCTP,
                "rawip_socket",
                "sctp_socket",
            ),
            (
                family::INET,
                sock_type::SEQPACKET,
                ipproto::SCTP,
                "rawip_socket",
                "sctp_socket",
            ),
            (
                family::INET,
                sock_type::DGRAM,
                0,
                "udp_socket",
                "udp_socket",
            ),
            (
                family::INET,
                sock_type::DGRAM,
                ipproto::ICMP,
                "rawip_socket",
                "icmp_socket",
            ),
            (
                family::INET6,
                sock_type::DGRAM,
                ipproto::ICMPV6,
                "rawip_socket",
                "icmp_socket",
            ),
            (
                family::INET,
                sock_type::RAW,
                ipproto::ICMP,
                "rawip_socket",
                "rawip_socket",
            ),
            (
                family::NETLINK,
                sock_type::RAW,
                0,
                "netlink_route_socket",
                "netlink_route_socket",
            ),
            (
                family::NETLINK,
                sock_type::RAW,
                4,
                "netlink_tcpdiag_socket",
                "netlink_tcpdiag_socket",
            ),
            (
                family::NETLINK,
                sock_type::RAW,
                9,
                "netlink_audit_socket",
                "netlink_audit_socket",
            ),
            (
                family::NETLINK,
                sock_type::RAW,
                13,
                "netlink_socket",
                "netlink_socket",
            ),
            (
                family::PACKET,
                sock_type::RAW,
                0,
                "packet_socket",
                "packet_socket",
            ),
            (family::KEY, sock_type::RAW, 2, "key_socket", "key_socket"),
            (
                family::APPLETALK,
                sock_type::DGRAM,
                0,
                "appletalk_socket",
                "appletalk_socket",
            ),
            (
                family::BLUETOOTH,
                sock_type::STREAM,
                0,
                "socket",
                "bluetooth_socket",
            ),
            (
                family::VSOCK,
                sock_type::STREAM,
                0,
                "socket",
                "vsock_socket",
            ),
            (family::MCTP, sock_type::DGRAM, 0, "socket", "mctp_socket"),
            (46, sock_type::DGRAM, 0, "socket", "socket"),
        ];
        for &(f, t, p, plain, ext) in cases {
            assert_eq!(socket_class(f, t, p, false).name(), plain, "{f} {t} {p}");
            assert_eq!(
                socket_class(f, t, p, true).name(),
                ext,
                "{f} {t} {p} extended"
            );
        }
    }
}
