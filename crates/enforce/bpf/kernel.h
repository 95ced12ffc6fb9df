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

struct super_block {
	__u32 s_dev;
	unsigned long s_magic;
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

struct task_struct {
	int pid;
	int tgid;
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

#endif
