// SPDX-License-Identifier: GPL-2.0
/* seaccess.bpf.c's An inode's label and class: its storage's, else its file system's default (inode_sid), and inode_mode_to_security_class.
 * Included by seaccess.bpf.c, in its order, never on its own. */
#ifndef SEACCESS_LABELS_H
#define SEACCESS_LABELS_H

/* include/linux/fs.h: IS_PRIVATE's flag (the kernel's own internal inodes, never checked). */
#define SEA_S_PRIVATE (1u << 9)

/* The default of an inode's file system type (the filesystems map; 0 when the policy does not
 * name the type). */
static __always_inline struct sea_fsdef *fs_def(const struct gen *g, struct inode *inode)
{
	struct sea_fskey key;

	__builtin_memset(&key, 0, sizeof(key));
	bpf_probe_read_kernel_str(key.name, sizeof(key.name), BPF_CORE_READ(inode, i_sb, s_type, name));
	return bpf_map_lookup_elem(g->filesystems, &key);
}

/* The label an inode is decided with, in *sid; 0 when it is not checked. Its storage's label
 * (the daemon's, or a confined task's create); else what inode_doinit_with_dentry gives an
 * inode on its file system: the default of the type's entry (fs_use_xattr: the initial SID
 * file; fs_use_trans and a genfscon for "/" alone: the file system's SID), the initial SID
 * unlabeled for a type the policy does not name. Not checked: an object of an fs_use_task file
 * system (a pipe, a socket's inode) that no confined task made, whose creator's domain the
 * kernel would give it and no map holds; and a file system labeled by path inside it (genfscon
 * with several entries: proc, sysfs), which is not computed here. A SID of 0 (the policy gives
 * the initial SID no context) is in no map: a miss, denied. */
static __always_inline int inode_sid(const struct gen *g, struct inode *inode,
				     const struct sea_inode *is, __u32 *sid)
{
	struct sea_fsdef *d;

	if (is) {
		*sid = is->sid;
		return 1;
	}
	d = fs_def(g, inode);
	if (!d) {
		*sid = g->config->unlabeled_sid;
		return 1;
	}
	*sid = d->sid;
	return d->kind == SEA_FS_FIXED;
}

/* inode_mode_to_security_class */
static __always_inline __u32 inode_class(unsigned short mode)
{
	switch (mode & S_IFMT) {
	case S_IFSOCK:
		return SEA_CLASS_SOCK_FILE;
	case S_IFLNK:
		return SEA_CLASS_LNK_FILE;
	case S_IFREG:
		return SEA_CLASS_FILE;
	case S_IFBLK:
		return SEA_CLASS_BLK_FILE;
	case S_IFDIR:
		return SEA_CLASS_DIR;
	case S_IFCHR:
		return SEA_CLASS_CHR_FILE;
	case S_IFIFO:
		return SEA_CLASS_FIFO_FILE;
	}
	return SEA_CLASS_FILE;
}

#endif
