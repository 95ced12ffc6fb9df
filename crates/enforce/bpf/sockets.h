// SPDX-License-Identifier: GPL-2.0
/* seaccess.bpf.c's Sockets: their class, label (socket storage) and checks.
 * Included by seaccess.bpf.c, in its order, never on its own. */
#ifndef SEACCESS_SOCKETS_H
#define SEACCESS_SOCKETS_H

/* socket_type_to_security_class (with default_protocol_stream/_dgram). SOCK_DCCP's class is
 * rawip_socket here: the object manager's table has no dccp_socket. */
static __always_inline __u32 socket_class(int family, int type, int protocol, int ext)
{
	switch (family) {
	case PF_UNIX:
		if (type == SOCK_STREAM || type == SOCK_SEQPACKET)
			return SEA_CLASS_UNIX_STREAM_SOCKET;
		if (type == SOCK_DGRAM || type == SOCK_RAW)
			return SEA_CLASS_UNIX_DGRAM_SOCKET;
		break;
	case PF_INET:
	case PF_INET6:
		if (type == SOCK_STREAM || type == SOCK_SEQPACKET) {
			if (protocol == IPPROTO_IP || protocol == IPPROTO_TCP ||
			    protocol == IPPROTO_MPTCP)
				return SEA_CLASS_TCP_SOCKET;
			if (ext && protocol == IPPROTO_SCTP)
				return SEA_CLASS_SCTP_SOCKET;
			return SEA_CLASS_RAWIP_SOCKET;
		}
		if (type == SOCK_DGRAM) {
			if (protocol == IPPROTO_IP || protocol == IPPROTO_UDP)
				return SEA_CLASS_UDP_SOCKET;
			if (ext && (protocol == IPPROTO_ICMP || protocol == IPPROTO_ICMPV6))
				return SEA_CLASS_ICMP_SOCKET;
		}
		return SEA_CLASS_RAWIP_SOCKET;
	case PF_NETLINK:
		switch (protocol) {
		case 0: /* NETLINK_ROUTE */
			return SEA_CLASS_NETLINK_ROUTE_SOCKET;
		case 4: /* NETLINK_SOCK_DIAG */
			return SEA_CLASS_NETLINK_TCPDIAG_SOCKET;
		case 5:
			return SEA_CLASS_NETLINK_NFLOG_SOCKET;
		case 6:
			return SEA_CLASS_NETLINK_XFRM_SOCKET;
		case 7:
			return SEA_CLASS_NETLINK_SELINUX_SOCKET;
		case 8:
			return SEA_CLASS_NETLINK_ISCSI_SOCKET;
		case 9:
			return SEA_CLASS_NETLINK_AUDIT_SOCKET;
		case 10:
			return SEA_CLASS_NETLINK_FIB_LOOKUP_SOCKET;
		case 11:
			return SEA_CLASS_NETLINK_CONNECTOR_SOCKET;
		case 12:
			return SEA_CLASS_NETLINK_NETFILTER_SOCKET;
		case 14: /* NETLINK_DNRTMSG */
			return SEA_CLASS_NETLINK_DNRT_SOCKET;
		case 15:
			return SEA_CLASS_NETLINK_KOBJECT_UEVENT_SOCKET;
		case 16:
			return SEA_CLASS_NETLINK_GENERIC_SOCKET;
		case 18:
			return SEA_CLASS_NETLINK_SCSITRANSPORT_SOCKET;
		case 20:
			return SEA_CLASS_NETLINK_RDMA_SOCKET;
		case 21:
			return SEA_CLASS_NETLINK_CRYPTO_SOCKET;
		}
		return SEA_CLASS_NETLINK_SOCKET;
	case PF_PACKET:
		return SEA_CLASS_PACKET_SOCKET;
	case PF_KEY:
		return SEA_CLASS_KEY_SOCKET;
	case PF_APPLETALK:
		return SEA_CLASS_APPLETALK_SOCKET;
	}
	if (ext) {
		switch (family) {
		case 3:
			return SEA_CLASS_AX25_SOCKET;
		case 4:
			return SEA_CLASS_IPX_SOCKET;
		case 6:
			return SEA_CLASS_NETROM_SOCKET;
		case 8:
			return SEA_CLASS_ATMPVC_SOCKET;
		case 9:
			return SEA_CLASS_X25_SOCKET;
		case 11:
			return SEA_CLASS_ROSE_SOCKET;
		case 12:
			return SEA_CLASS_DECNET_SOCKET;
		case 20:
			return SEA_CLASS_ATMSVC_SOCKET;
		case 21:
			return SEA_CLASS_RDS_SOCKET;
		case 23:
			return SEA_CLASS_IRDA_SOCKET;
		case 24:
			return SEA_CLASS_PPPOX_SOCKET;
		case 26:
			return SEA_CLASS_LLC_SOCKET;
		case 29:
			return SEA_CLASS_CAN_SOCKET;
		case 30:
			return SEA_CLASS_TIPC_SOCKET;
		case 31:
			return SEA_CLASS_BLUETOOTH_SOCKET;
		case 32:
			return SEA_CLASS_IUCV_SOCKET;
		case 33:
			return SEA_CLASS_RXRPC_SOCKET;
		case 34:
			return SEA_CLASS_ISDN_SOCKET;
		case 35:
			return SEA_CLASS_PHONET_SOCKET;
		case 36:
			return SEA_CLASS_IEEE802154_SOCKET;
		case 37:
			return SEA_CLASS_CAIF_SOCKET;
		case 38:
			return SEA_CLASS_ALG_SOCKET;
		case 39:
			return SEA_CLASS_NFC_SOCKET;
		case 40:
			return SEA_CLASS_VSOCK_SOCKET;
		case 41:
			return SEA_CLASS_KCM_SOCKET;
		case 42:
			return SEA_CLASS_QIPCRTR_SOCKET;
		case 43:
			return SEA_CLASS_SMC_SOCKET;
		case 44:
			return SEA_CLASS_XDP_SOCKET;
		case 45:
			return SEA_CLASS_MCTP_SOCKET;
		}
	}
	return SEA_CLASS_SOCKET;
}

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC | BPF_F_CLONE);
	__type(key, int);
	__type(value, struct sea_sock);
} sock_store SEC(".maps");

/* selinux_socket_create: socket {create} of the new socket's SID in its class; a kernel socket
 * is not checked. The new SID is the creator's: socket_sockcreate_sid's
 * security_transition_sid(task, task, class) is the task's own context for a socket class
 * unless a type_transition names one (not in the transitions map), and setsockcreatecon has
 * no storage here. */
SEC("lsm/socket_create")
int BPF_PROG(sea_socket_create, int family, int type, int protocol, int kern)
{
	struct sea_task *t;
	struct gen g;

	if (kern)
		return 0;
	t = confined(bpf_get_current_task_btf());
	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	return has_perm(&g, t->sid, t->sid,
			socket_class(family, type, protocol,
				     g.config->flags & SEA_CONFIG_EXTSOCKCLASS),
			SEA_SOCKET__CREATE, 0, 0);
}

/* selinux_socket_post_create: the new socket's label (sk_security_struct sid and sclass) in
 * socket storage, as socket_create computed it. A kernel socket (the initial SID kernel, which
 * sock_has_perm skips) and an unconfined task's socket get none: never checked. */
SEC("lsm/socket_post_create")
int BPF_PROG(sea_socket_post_create, struct socket *sock, int family, int type, int protocol,
	     int kern)
{
	struct sea_task *t;
	struct sea_sock *s;
	struct sock *sk;
	struct gen g;

	if (kern)
		return 0;
	t = confined(bpf_get_current_task_btf());
	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	sk = sock->sk;
	s = sk ? bpf_sk_storage_get(&sock_store, sk, 0, BPF_LOCAL_STORAGE_GET_F_CREATE) : 0;
	if (!s)
		/* A confined task's socket must not go unchecked. */
		return -EACCES;
	s->sid = t->sid;
	s->sclass = socket_class(family, type, protocol, g.config->flags & SEA_CONFIG_EXTSOCKCLASS);
	return 0;
}

/* sock_has_perm: the task's SID to the socket's, in the socket's class. */
static __always_inline int sock_has_perm(struct socket *sock, __u32 perms)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct sock *sk = sock->sk;
	struct sea_sock *s;
	struct gen g;

	/* No sock, no label to check against (the kernel's sk_security is the sock's). */
	if (!t || !sk)
		return 0;
	s = bpf_sk_storage_get(&sock_store, sk, 0, 0);
	if (!s)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	return has_perm(&g, t->sid, s->sid, s->sclass, perms, 0, 0);
}

/* include/linux/socket.h, in.h */
#define SEA_AF_UNSPEC 0
#define SEA_AF_INET 2
#define SEA_AF_INET6 10
#define SEA_IPPROTO_TCP 6
#define SEA_IPPROTO_UDP 17
#define SEA_IPPROTO_DCCP 33
#define SEA_IPPROTO_SCTP 132
#define SEA_SIN_LEN 16		/* sizeof(struct sockaddr_in) */
#define SEA_SIN6_LEN_RFC2133 24

/* The head of a sockaddr_in or sockaddr_in6 (the kernel's copy of the caller's address). */
struct sea_sockaddr {
	__u16 family;
	__u16 port; /* network byte order */
	union {
		__u32 v4;
		struct {
			__u32 flowinfo;
			__u8 addr[16];
		} in6;
	};
};

/* The caller's address, as much of it as addrlen gives (the rest zero). */
static __always_inline void read_addr(struct sea_sockaddr *a, struct sockaddr *address,
				      int addrlen)
{
	__builtin_memset(a, 0, sizeof(*a));
	if (addrlen >= (int)sizeof(*a))
		bpf_probe_read_kernel(a, sizeof(*a), address);
	else if (addrlen >= SEA_SIN_LEN)
		bpf_probe_read_kernel(a, SEA_SIN_LEN, address);
	else if (addrlen >= 2)
		bpf_probe_read_kernel(a, 2, address);
}

/* sel_netport_sid (security_port_sid): the ports map for TCP, UDP, SCTP and DCCP; any other
 * protocol's ports are the initial SID port, as no portcon names them. */
static __always_inline __u32 port_sid(const struct gen *g, __u16 protocol, __u16 port)
{
	__u32 idx, *sid;

	switch (protocol) {
	case SEA_IPPROTO_TCP:
		idx = SEA_PORT_TCP;
		break;
	case SEA_IPPROTO_UDP:
		idx = SEA_PORT_UDP;
		break;
	case SEA_IPPROTO_SCTP:
		idx = SEA_PORT_SCTP;
		break;
	case SEA_IPPROTO_DCCP:
		idx = SEA_PORT_DCCP;
		break;
	default:
		return g->config->port_sid;
	}
	idx = idx * 65536 + port;
	sid = bpf_map_lookup_elem(g->ports, &idx);
	return sid ? *sid : 0;
}

/* sel_netnode_sid (security_node_sid): the first nodecon entry of the address's family whose
 * masked address matches, else the initial SID node. */
static __always_inline __u32 node_sid(const struct gen *g, __u32 v6, const __u8 *addr)
{
	__u32 n = g->config->nodes;

	for (__u32 i = 0; i < SEA_MAX_NODES; i++) {
		struct sea_node *e;
		__u32 key = i;
		int match = 1;

		if (i >= n)
			break;
		e = bpf_map_lookup_elem(g->nodes, &key);
		if (!e || e->v6 != v6)
			continue;
		for (int j = 0; j < 16; j++) {
			if (j >= (v6 ? 16 : 4))
				break;
			if ((addr[j] & e->mask[j]) != e->addr[j]) {
				match = 0;
				break;
			}
		}
		if (match)
			return e->sid;
	}
	return g->config->node_sid;
}

/* selinux_socket_bind (6.12): socket {bind}; then for an INET socket, the address checked as
 * the kernel does (its length, AF_UNSPEC only for INADDR_ANY on an IPv4 socket), `name_bind`
 * from the socket's SID to the port's when the port needs it (below
 * ip_unprivileged_port_start or outside ip_local_port_range, as the initial network namespace
 * has them), then `node_bind` to the address's node SID, in the socket's class. */
SEC("lsm/socket_bind")
int BPF_PROG(sea_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen)
{
	struct sock *sk = sock->sk;
	struct sea_sockaddr a;
	struct sea_sock *s;
	struct gen g;
	__u16 family, protocol, snum;
	__u32 node_perm, v6;
	int rc;

	rc = sock_has_perm(sock, SEA_SOCKET__BIND);
	if (rc || !sk || !confined(bpf_get_current_task_btf()))
		return rc;
	s = bpf_sk_storage_get(&sock_store, sk, 0, 0);
	if (!s)
		return 0;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	if (family != SEA_AF_INET && family != SEA_AF_INET6)
		return 0;
	protocol = BPF_CORE_READ(sk, sk_protocol);
	if (addrlen < 2)
		return -EINVAL;
	if (!gen_get(&g))
		return -EACCES;
	read_addr(&a, address, addrlen);
	switch (a.family) {
	case SEA_AF_UNSPEC:
	case SEA_AF_INET:
		if (addrlen < SEA_SIN_LEN)
			return -EINVAL;
		if (a.family == SEA_AF_UNSPEC) {
			if (family == SEA_AF_INET6) {
				if (addrlen < SEA_SIN6_LEN_RFC2133)
					return -EINVAL;
				goto err_af;
			}
			if (a.v4 != 0)
				goto err_af;
		}
		v6 = 0;
		break;
	case SEA_AF_INET6:
		if (addrlen < SEA_SIN6_LEN_RFC2133)
			return -EINVAL;
		v6 = 1;
		break;
	default:
		goto err_af;
	}
	snum = bpf_ntohs(a.port);
	if (snum && (snum < g.config->prot_sock || snum < g.config->local_low ||
		     snum > g.config->local_high)) {
		rc = has_perm(&g, s->sid, port_sid(&g, protocol, snum), s->sclass,
			      SEA_SOCKET__NAME_BIND, 0, 0);
		if (rc)
			return rc;
	}
	switch (s->sclass) {
	case SEA_CLASS_TCP_SOCKET:
		node_perm = SEA_TCP_SOCKET__NODE_BIND;
		break;
	case SEA_CLASS_UDP_SOCKET:
		node_perm = SEA_UDP_SOCKET__NODE_BIND;
		break;
	case SEA_CLASS_SCTP_SOCKET:
		node_perm = SEA_SCTP_SOCKET__NODE_BIND;
		break;
	default:
		node_perm = SEA_RAWIP_SOCKET__NODE_BIND;
		break;
	}
	return has_perm(&g, s->sid, node_sid(&g, v6, v6 ? a.in6.addr : (const __u8 *)&a.v4),
			s->sclass, node_perm, 0, 0);
err_af:
	/* SCTP expects EINVAL, the others EAFNOSUPPORT. */
	return protocol == SEA_IPPROTO_SCTP ? -EINVAL : -EAFNOSUPPORT;
}

/* selinux_socket_connect (selinux_socket_connect_helper, 6.12): socket {connect}; nothing more
 * for AF_UNSPEC (a disconnect); for a TCP or SCTP socket, the address checked as the kernel
 * does, then `name_connect` from the socket's SID to the destination port's. */
SEC("lsm/socket_connect")
int BPF_PROG(sea_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen)
{
	struct sock *sk = sock->sk;
	struct sea_sockaddr a;
	struct sea_sock *s;
	struct gen g;
	int rc;

	rc = sock_has_perm(sock, SEA_SOCKET__CONNECT);
	if (rc || !sk || !confined(bpf_get_current_task_btf()))
		return rc;
	s = bpf_sk_storage_get(&sock_store, sk, 0, 0);
	if (!s)
		return 0;
	if (addrlen < 2)
		return -EINVAL;
	read_addr(&a, address, addrlen);
	if (a.family == SEA_AF_UNSPEC)
		return 0;
	if (s->sclass != SEA_CLASS_TCP_SOCKET && s->sclass != SEA_CLASS_SCTP_SOCKET)
		return 0;
	switch (a.family) {
	case SEA_AF_INET:
		if (addrlen < SEA_SIN_LEN)
			return -EINVAL;
		break;
	case SEA_AF_INET6:
		if (addrlen < SEA_SIN6_LEN_RFC2133)
			return -EINVAL;
		break;
	default:
		return s->sclass == SEA_CLASS_SCTP_SOCKET ? -EINVAL : -EAFNOSUPPORT;
	}
	if (!gen_get(&g))
		return -EACCES;
	return has_perm(&g, s->sid, port_sid(&g, BPF_CORE_READ(sk, sk_protocol), bpf_ntohs(a.port)),
			s->sclass,
			s->sclass == SEA_CLASS_TCP_SOCKET ? SEA_TCP_SOCKET__NAME_CONNECT
							  : SEA_SCTP_SOCKET__NAME_CONNECT,
			0, 0);
}

/* selinux_socket_listen */
SEC("lsm/socket_listen")
int BPF_PROG(sea_socket_listen, struct socket *sock, int backlog)
{
	return sock_has_perm(sock, SEA_SOCKET__LISTEN);
}

/* selinux_socket_accept: socket {accept} on the listener. The new socket's label is the
 * listener's: for INET the clone of the listener's socket storage (BPF_F_CLONE, where the
 * kernel's selinux_inet_csk_clone copies it); an AF_UNIX connection's socket is made by
 * unix_stream_connect, which has no program yet, and stays unchecked. */
SEC("lsm/socket_accept")
int BPF_PROG(sea_socket_accept, struct socket *sock, struct socket *newsock)
{
	return sock_has_perm(sock, SEA_SOCKET__ACCEPT);
}

/* selinux_socket_sendmsg */
SEC("lsm/socket_sendmsg")
int BPF_PROG(sea_socket_sendmsg, struct socket *sock, struct msghdr *msg, int size)
{
	return sock_has_perm(sock, SEA_SOCKET__WRITE);
}

/* selinux_socket_recvmsg */
SEC("lsm/socket_recvmsg")
int BPF_PROG(sea_socket_recvmsg, struct socket *sock, struct msghdr *msg, int size, int flags)
{
	return sock_has_perm(sock, SEA_SOCKET__READ);
}

#endif
