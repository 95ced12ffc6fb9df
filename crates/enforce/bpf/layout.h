/* The contract between the BPF object (seaccess.bpf.c) and the daemon (src/layout.rs mirrors
 * every struct here, field for field; a test checks the sizes and offsets agree).
 *
 * Numbers that cross it: SIDs are the engine's (stable across reloads, as the kernel's sidtab
 * keeps them); classes and permissions are the object manager's own numbering (the kernel's
 * classmap.h, crates/objmgr/src/classes.rs), never the policy's, so the BPF side needs no
 * per-policy table: the daemon translates each decision with the class map (map_decision), as
 * the kernel's AVC does.
 *
 * Generations: the daemon fills the slot the current seqno does not use (fresh inner maps, never
 * the ones in use), then stores seqno + 1 into `current` with one 64-bit store through the
 * mmapped array. A hook reads `current` once, takes slot (seqno & 1)'s inner maps once, and
 * decides with those alone; a grant it remembers carries that seqno, so any later seqno ends it.
 */
#ifndef SEACCESS_LAYOUT_H
#define SEACCESS_LAYOUT_H

#define SEA_GENERATIONS 2
#define SEA_MAX_DECISIONS (1 << 20)
#define SEA_MAX_TRANSITIONS (1 << 16)
#define SEA_NAME_LEN 64
#define SEA_MAX_FILESYSTEMS 1024
#define SEA_FSNAME_LEN 32
/* The protocols a port SID is kept for, in this order: the index of (protocol, port) in the
 * ports map is SEA_PORT_<P> * 65536 + port. Any other protocol's ports are config.port_sid. */
#define SEA_PORT_TCP 0
#define SEA_PORT_UDP 1
#define SEA_PORT_SCTP 2
#define SEA_PORT_DCCP 3
#define SEA_PORTS (4 * 65536)
#define SEA_MAX_NODES 64
#define SEA_MAX_NAMED (1 << 16)
#define SEA_TNAME_LEN 64

/* Key of the decisions and transitions maps: tclass is the object manager's class number
 * (32 bits wide so the key has no padding). */
struct sea_key {
	__u32 ssid;
	__u32 tsid;
	__u32 tclass;
};

#define SEA_AV_PERMISSIVE 1u /* the source domain is permissive */

/* One decision, already mapped into the object manager's bits (handle_unknown applied). */
struct sea_av {
	__u32 allowed;
	__u32 auditallow;
	__u32 auditdeny;
	__u32 flags;
};

/* The SID a new object or an exec's new domain gets (type_transition and the default rules):
 * for class process, source = the task, target = the executable; for a file class, source =
 * the task, target = the parent directory. */
struct sea_trans {
	__u32 newsid;
	__u32 pad;
};

/* Key of the named transitions map: a create's (task SID, directory SID, file class) with the
 * new object's name, NUL-padded (filename type_transition rules; a name of SEA_TNAME_LEN bytes
 * or more is not in the map). */
struct sea_nkey {
	__u32 ssid;
	__u32 tsid;
	__u32 tclass;
	char name[SEA_TNAME_LEN];
};

/* Per generation, one entry (index 0). */
struct sea_config {
	__u32 enforcing;     /* 0: permissive, decisions logged, nothing denied */
	__u32 unlabeled_sid; /* initial SID "unlabeled" */
	__u32 file_sid;      /* initial SID "file": inodes nobody labeled */
	__u32 kernel_sid;    /* initial SID "kernel" */
	__u32 flags;         /* SEA_CONFIG_* */
	__u32 port_sid;      /* initial SID "port": a port no portcon names */
	__u32 node_sid;      /* initial SID "node": an address no nodecon names */
	__u32 nodes;         /* entries of the nodes map in use */
	__u32 prot_sock;     /* net.ipv4.ip_unprivileged_port_start */
	__u32 local_low;     /* net.ipv4.ip_local_port_range */
	__u32 local_high;
	__u32 pad;
};

/* One nodecon entry (the nodes map, in the policy's order, IPv4 first): an address matches
 * when (address & mask) == addr, the first match wins (security_node_sid). */
struct sea_node {
	__u32 v6; /* 0: IPv4 (addr and mask in the first 4 bytes), 1: IPv6 */
	__u32 sid;
	__u8 addr[16];
	__u8 mask[16];
};

/* The policy declares extended_socket_class (socket_type_to_security_class's extsockclass). */
#define SEA_CONFIG_EXTSOCKCLASS 1u

/* Key of the filesystems map: the file system type's name (struct file_system_type's name, as
 * the kernel's security_fs_use and security_genfs_sid look it up), NUL-padded. */
struct sea_fskey {
	char name[SEA_FSNAME_LEN];
};

/* How an inode nobody labeled is labeled on a file system of that type (the kernel's
 * inode_doinit_with_dentry, by the superblock's behavior). */
enum sea_fs_kind {
	SEA_FS_FIXED = 1,   /* sid (fs_use_xattr: the initial SID file; fs_use_trans: the file
			     * system's; genfscon with "/" alone: its entry's) */
	SEA_FS_CREATOR = 3, /* fs_use_task (pipes): the creator's SID, kept when a confined task
			     * makes it; one an unconfined task made is not checked */
	SEA_FS_UNCHECKED = 4, /* labels by path inside the file system (genfscon with several
			       * entries: proc, sysfs): not checked */
};

struct sea_fsdef {
	__u32 sid;
	__u32 kind; /* enum sea_fs_kind */
};

#define SEA_TASK_EXEC_PENDING 1u

/* Task storage: a task without it is not confined and never checked. */
/* One entry of a task's decision cache (bpf/avd.h): `perms` on (tsid, tclass) were granted to
 * the task cleanly (allowed, none auditallow'ed). tsid 0 (no SID) marks an empty entry. */
struct sea_avd {
	__u32 tsid;
	__u32 tclass;
	__u32 perms;
	__u32 pad;
};

#define SEA_AVD_SLOTS 4

struct sea_task {
	__u32 sid;
	__u32 exec_sid; /* the domain bprm_creds_for_exec chose, applied at bprm_committed_creds */
	__u32 flags;
	__u32 avd_next;  /* the entry the next clean grant takes */
	__u64 avd_seqno; /* the generation the entries were decided in (0: none) */
	__u32 avd_ssid;  /* the task SID they were decided for (an exec changes sid) */
	__u32 pad;
	struct sea_avd avd[SEA_AVD_SLOTS];
};

/* Socket storage (BPF_F_CLONE: an accepted INET socket, cloned from its listener, keeps the
 * listener's label, as selinux_inet_csk_clone gives it when no peer label says otherwise): the
 * socket's SID and class (the kernel's sk_security_struct sid and sclass). A socket without it
 * was not made by a confined task and is not checked. */
struct sea_sock {
	__u32 sid;
	__u32 sclass;
};

#define SEA_INODE_LABELED 1u

/* Inode storage: the label (grants are kept per task: bpf/avd.h). */
struct sea_inode {
	__u32 sid;
	__u32 flags;
};

enum sea_event_kind {
	SEA_EV_DENIED = 1,  /* an avc: denied record */
	SEA_EV_GRANTED = 2, /* an auditallow'ed grant: an avc: granted record */
	SEA_EV_MISS = 3,    /* no decision for the key: denied (fail closed); the daemon fills it */
};

/* One record on the ring buffer. */
struct sea_event {
	__u64 seqno;
	__u32 kind;
	__u32 ssid;
	__u32 tsid;
	__u32 tclass;
	__u32 requested;
	__u32 denied;  /* SEA_EV_DENIED: requested & ~allowed */
	__u32 audited; /* the bits the record names */
	__u32 permissive;
	__u32 pid;
	__u32 dev;
	__u64 ino;
	char comm[16];
	char name[SEA_NAME_LEN];
	char dev_name[32]; /* the superblock's s_id: the record's dev="..." as the kernel prints it */
};

#endif
