// SPDX-License-Identifier: GPL-2.0
/* seaccess.bpf.c's Open files: file_open and file_permission with the revalidation skip.
 * Included by seaccess.bpf.c, in its order, never on its own. */
#ifndef SEACCESS_FILES_H
#define SEACCESS_FILES_H

/* open_file_to_av (file_to_av, then FILE__OPEN: Debian's policies have open_perms). */
static __always_inline __u32 open_file_to_av(struct file *file)
{
	__u32 av = 0;

	if (file->f_mode & FMODE_READ)
		av |= SEA_FILE__READ;
	if (file->f_mode & FMODE_WRITE) {
		if (file->f_flags & O_APPEND)
			av |= SEA_FILE__APPEND;
		else
			av |= SEA_FILE__WRITE;
	}
	if (!av)
		/* Special file opened with flags 3 for ioctl-only use. */
		av = SEA_FILE__IOCTL;
	return av | SEA_FILE__OPEN;
}

/* file_mask_to_av */
static __always_inline __u32 file_mask_to_av(unsigned short mode, int mask)
{
	__u32 av = 0;

	if ((mode & S_IFMT) != S_IFDIR) {
		if (mask & MAY_EXEC)
			av |= SEA_FILE__EXECUTE;
		if (mask & MAY_READ)
			av |= SEA_FILE__READ;
		if (mask & MAY_APPEND)
			av |= SEA_FILE__APPEND;
		else if (mask & MAY_WRITE)
			av |= SEA_FILE__WRITE;
	} else {
		if (mask & MAY_EXEC)
			av |= SEA_DIR__SEARCH;
		if (mask & MAY_WRITE)
			av |= SEA_DIR__WRITE;
		if (mask & MAY_READ)
			av |= SEA_DIR__READ;
	}
	return av;
}

/* selinux_file_open: file_path_has_perm(cred, file, open_file_to_av(file)), through the task's
 * decision cache (bpf/avd.h). The kernel also keeps the state file_permission skips on in the
 * file's blob (fsec->isid, fsec->pseqno); BPF has no file storage, and a grant kept on the
 * inode would be shared by every task: the cache stands in for it. */
SEC("lsm/file_open")
int BPF_PROG(sea_file_open, struct file *file)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct inode *inode = file->f_inode;
	__u64 seqno;

	if (!t)
		return 0;
	seqno = seqno_now();
	if (!seqno)
		return -EACCES;
	/* inode_has_perm: a private inode (the kernel's own) is never checked. */
	if (inode->i_flags & SEA_S_PRIVATE)
		return 0;
	return task_inode_has_perm(t, seqno, inode, file->f_path.dentry, open_file_to_av(file));
}

/* selinux_file_permission: nothing for an empty mask; the revalidation skip, here a clean
 * grant in the task's decision cache for the inode's label now, in the generation in use
 * (the kernel's: the same task SID, inode label and seqno as at open; the same verdicts, but
 * an auditallow'ed read is recorded each time here, once at open there); else
 * selinux_revalidate_file_permission: file_has_perm(cred, file, file_mask_to_av(mode, mask)),
 * with MAY_APPEND added for a file opened O_APPEND. file_has_perm's fd use check is left out:
 * BPF has no file storage to keep the opener's SID in. */
SEC("lsm/file_permission")
int BPF_PROG(sea_file_permission, struct file *file, int mask)
{
	struct sea_task *t;
	struct inode *inode;
	__u32 av;
	__u64 seqno;

	if (!mask)
		return 0;
	t = confined(bpf_get_current_task_btf());
	if (!t)
		return 0;
	inode = file->f_inode;
	if (inode->i_flags & SEA_S_PRIVATE)
		return 0;
	if ((file->f_flags & O_APPEND) && (mask & MAY_WRITE))
		mask |= MAY_APPEND;
	av = file_mask_to_av(inode->i_mode, mask);
	if (!av)
		return 0;
	seqno = seqno_now();
	if (!seqno)
		return -EACCES;
	return task_inode_has_perm(t, seqno, inode, file->f_path.dentry, av);
}

#endif
