/* The few kernel structures the hooks read, declared with preserve_access_index: clang records
 * each field access as a CO-RE relocation, and libbpf moves it to the running kernel's offset
 * from its BTF (/sys/kernel/btf/vmlinux). No vmlinux.h is generated at build time, so the
 * build needs neither bpftool nor a kernel's BTF, and the object loads on any kernel with BTF
 * whose fields keep these names and types.
 */
#ifndef SEACCESS_KERNEL_H
#define SEACCESS_KERNEL_H

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct qstr {
	union {
		struct {
			__u32 hash;
			__u32 len;
		};
		__u64 hash_len;
	};
	const unsigned char *name;
};

struct file_system_type {
	const char *name;
};

struct super_block {
	__u32 s_dev;
	unsigned long s_magic;
	struct file_system_type *s_type;
	char s_id[32];
};

struct hlist_node {
	struct hlist_node *next;
};

struct hlist_head {
	struct hlist_node *first;
};

struct inode {
	unsigned short i_mode;
	unsigned int i_flags;
	unsigned long i_ino;
	struct super_block *i_sb;
	struct hlist_head i_dentry; /* in an anonymous union: CO-RE finds it by name */
};

struct dentry {
	struct qstr d_name;
	struct inode *d_inode;
	union {
		struct hlist_node d_alias;
	} d_u;
};

struct path {
	void *mnt;
	struct dentry *dentry;
};

struct file {
	struct path f_path;
	struct inode *f_inode;
	unsigned int f_flags;
	unsigned int f_mode;
};

struct xattr;
struct mnt_idmap;

struct iattr {
	unsigned int ia_valid;
};

struct linux_binprm {
	struct file *file;
};

struct cred;

struct task_struct {
	int pid;
	int tgid;
	const struct cred *real_cred;
	const struct cred *cred;
};

/* Only the initial user namespace has level 0 (cred_has_capability's initns). */
struct user_namespace {
	int level;
};

struct sock_common {
	unsigned short skc_family;
};

struct sock {
	struct sock_common __sk_common;
	__u16 sk_protocol;
};

struct socket {
	struct sock *sk;
};

struct sockaddr;
struct kern_ipc_perm;
struct msghdr;
struct kernel_siginfo;

struct mm_struct {
	unsigned long start_brk;
	unsigned long brk;
	unsigned long start_stack;
};

/* vm_start, vm_end and vm_flags sit in anonymous unions in 6.12; CO-RE finds them by name. */
struct vm_area_struct {
	unsigned long vm_start;
	unsigned long vm_end;
	struct mm_struct *vm_mm;
	unsigned long vm_flags;
	void *anon_vma;
	struct file *vm_file;
};

#pragma clang attribute pop

/* include/linux/fs.h */
#define FMODE_READ 0x1
#define FMODE_WRITE 0x2
#define MAY_EXEC 0x1
#define MAY_WRITE 0x2
#define MAY_READ 0x4
#define MAY_APPEND 0x8
/* include/uapi/asm-generic/fcntl.h */
#define O_APPEND 02000
/* include/uapi/linux/stat.h */
#define S_IFMT 00170000
#define S_IFSOCK 0140000
#define S_IFLNK 0120000
#define S_IFREG 0100000
#define S_IFBLK 0060000
#define S_IFDIR 0040000
#define S_IFCHR 0020000
#define S_IFIFO 0010000
#define EACCES 13
#define EINVAL 22
#define EAFNOSUPPORT 97
/* include/linux/fs.h */
#define S_PRIVATE 512
/* include/uapi/asm-generic/mman-common.h, mman.h */
#define PROT_WRITE 0x2
#define PROT_EXEC 0x4
#define MAP_SHARED 0x01
#define MAP_TYPE 0x0f
/* include/linux/mm.h */
#define VM_EXEC 0x4
#define VM_SHARED 0x8
/* include/linux/security.h */
#define CAP_OPT_NOAUDIT 0x2
/* include/linux/ptrace.h */
#define PTRACE_MODE_READ 0x01
/* include/uapi/asm-generic/signal.h (x86_64) */
#define SIGKILL 9
#define SIGCHLD 17
#define SIGSTOP 19
/* include/linux/socket.h, include/linux/net.h, include/uapi/linux/in.h */
#define PF_UNIX 1
#define PF_INET 2
#define PF_INET6 10
#define PF_NETLINK 16
#define PF_PACKET 17
#define PF_KEY 15
#define PF_APPLETALK 5
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3
#define SOCK_SEQPACKET 5
#define IPPROTO_IP 0
#define IPPROTO_ICMP 1
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define IPPROTO_ICMPV6 58
#define IPPROTO_SCTP 132
#define IPPROTO_MPTCP 262

#endif
