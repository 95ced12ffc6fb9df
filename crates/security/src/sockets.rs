//! The classes the kernel labels as sockets when it computes a new context.
//!
//! The kernel asks `security_is_socket_class` of its own class numbers: the classes of its class
//! map (security/selinux/include/classmap.h) whose name ends in "socket". A policy class the
//! kernel's map does not name (Debian still declares the retired `netlink_firewall_socket`,
//! `netlink_ip6fw_socket` and their `obsolete_` twins) maps to no kernel class at all, so it is
//! labelled as an ordinary object however it is named.

/// The socket classes of the kernel's class map (Linux 6.13), in its order.
pub const KERNEL_SOCKET_CLASSES: &[&str] = &[
    "socket",
    "tcp_socket",
    "udp_socket",
    "rawip_socket",
    "netlink_socket",
    "packet_socket",
    "key_socket",
    "unix_stream_socket",
    "unix_dgram_socket",
    "netlink_route_socket",
    "netlink_tcpdiag_socket",
    "netlink_nflog_socket",
    "netlink_xfrm_socket",
    "netlink_selinux_socket",
    "netlink_iscsi_socket",
    "netlink_audit_socket",
    "netlink_fib_lookup_socket",
    "netlink_connector_socket",
    "netlink_netfilter_socket",
    "netlink_dnrt_socket",
    "netlink_kobject_uevent_socket",
    "netlink_generic_socket",
    "netlink_scsitransport_socket",
    "netlink_rdma_socket",
    "netlink_crypto_socket",
    "appletalk_socket",
    "dccp_socket",
    "tun_socket",
    "sctp_socket",
    "icmp_socket",
    "ax25_socket",
    "ipx_socket",
    "netrom_socket",
    "atmpvc_socket",
    "x25_socket",
    "rose_socket",
    "decnet_socket",
    "atmsvc_socket",
    "rds_socket",
    "irda_socket",
    "pppox_socket",
    "llc_socket",
    "can_socket",
    "tipc_socket",
    "bluetooth_socket",
    "iucv_socket",
    "rxrpc_socket",
    "isdn_socket",
    "phonet_socket",
    "ieee802154_socket",
    "caif_socket",
    "alg_socket",
    "nfc_socket",
    "vsock_socket",
    "kcm_socket",
    "qipcrtr_socket",
    "smc_socket",
    "xdp_socket",
    "mctp_socket",
];

/// Whether the kernel labels objects of the policy class `name` as sockets (the creating
/// process's role, type and range by default) rather than as files.
pub fn is_kernel_socket_class(name: &str) -> bool {
    KERNEL_SOCKET_CLASSES.contains(&name)
}
