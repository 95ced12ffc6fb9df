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

/* Remembers a grant of `perms` on the inode to `ssid` in generation `seqno` (the kernel keeps
 * it in the file's blob: fsec->isid and fsec->pseqno, set by selinux_file_open; BPF has no
 * file storage, so it is kept on the inode, per task SID, as crates/objmgr/src/grant.rs does). */
static __always_inline void remember(struct sea_inode *is, __u32 ssid, __u64 seqno, __u32 perms)
{
	if (is->grant_seqno == seqno && is->grant_ssid == ssid) {
		is->grant_perms |= perms;
		return;
	}
	is->grant_perms = perms;
	is->grant_ssid = ssid;
	is->grant_seqno = seqno;
}

/* selinux_file_open: file_path_has_perm(cred, file, open_file_to_av(file)), and the revalidation
 * state file_permission skips on (fsec->isid, fsec->pseqno). */
SEC("lsm/file_open")
int BPF_PROG(sea_file_open, struct file *file)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct inode *inode = file->f_inode;
	struct sea_inode *is;
	struct gen g;
	struct obj o;
	__u32 av, isid;
	int rc, ok;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	/* inode_has_perm: a private inode (the kernel's own) is never checked. */
	if (inode->i_flags & SEA_S_PRIVATE)
		return 0;
	is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	if (!inode_sid(&g, inode, is, &isid))
		return 0;
	av = open_file_to_av(file);
	o.dentry = file->f_path.dentry;
	o.inode = inode;
	rc = has_perm(&g, t->sid, isid, inode_class(inode->i_mode), av, &o, &ok);
	/* Remembered where there is storage to keep it in: an inode decided by its file system's
	 * default asks again on each read and write. */
	if (ok && is)
		remember(is, t->sid, g.seqno, av & (SEA_FILE__READ | SEA_FILE__WRITE | SEA_FILE__APPEND));
	return rc;
}

/* selinux_file_permission: nothing for an empty mask; the revalidation skip (the same task SID,
 * the same inode label, the same generation as the grant); else
 * selinux_revalidate_file_permission: file_has_perm(cred, file, file_mask_to_av(mode, mask)),
 * with MAY_APPEND added for a file opened O_APPEND. file_has_perm's fd use check is left out:
 * BPF has no file storage to keep the opener's SID in. */
SEC("lsm/file_permission")
int BPF_PROG(sea_file_permission, struct file *file, int mask)
{
	struct sea_task *t;
	struct inode *inode;
	struct sea_inode *is;
	struct gen g;
	struct obj o;
	__u32 av, isid;
	int rc, ok;

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
	if (!gen_get(&g))
		return -EACCES;
	is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	if (is && is->grant_seqno == g.seqno && is->grant_ssid == t->sid &&
	    (is->grant_perms & av) == av)
		return 0;
	if (!inode_sid(&g, inode, is, &isid))
		return 0;
	o.dentry = file->f_path.dentry;
	o.inode = inode;
	rc = has_perm(&g, t->sid, isid, inode_class(inode->i_mode), av, &o, &ok);
	if (ok && is)
		remember(is, t->sid, g.seqno, av);
	return rc;
}

#endif
