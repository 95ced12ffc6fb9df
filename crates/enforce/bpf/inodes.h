// SPDX-License-Identifier: GPL-2.0
/* seaccess.bpf.c's Inodes: creates and their labels, the path walk, stat, setattr, link, unlink, rmdir, rename, symlink, and pipes' labels at d_instantiate.
 * Included by seaccess.bpf.c, in its order, never on its own. */
#ifndef SEACCESS_INODES_H
#define SEACCESS_INODES_H

/* selinux_determine_inode_label: security_transition_sid(task, dir, class, name), from the
 * named transitions map where a filename rule names the new object, else the transitions map,
 * the directory decided as inode_sid says (the initial SID file where it is not checked). 0 on
 * a miss, or where the policy computes a context it does not define. */
static __always_inline __u32 new_inode_sid(const struct gen *g, __u32 ssid, struct inode *dir,
					   __u32 tclass, const unsigned char *name,
					   const struct obj *o)
{
	struct sea_inode *ds = bpf_inode_storage_get(&inode_store, dir, 0, 0);
	struct sea_key k = { .ssid = ssid, .tclass = tclass };
	struct sea_nkey nk;
	struct sea_trans *tr;

	if (!inode_sid(g, dir, ds, &k.tsid))
		k.tsid = g->config->file_sid;
	/* A filename type_transition first (the map holds those whose answer differs from the
	 * unnamed one); a name that fills the key was cut and is not looked up. */
	__builtin_memset(&nk, 0, sizeof(nk));
	nk.ssid = ssid;
	nk.tsid = k.tsid;
	nk.tclass = tclass;
	if (name) {
		long n = bpf_probe_read_kernel_str(nk.name, sizeof(nk.name), name);

		if (n > 0 && n < (long)sizeof(nk.name)) {
			tr = bpf_map_lookup_elem(g->named, &nk);
			if (tr)
				return tr->newsid;
		}
	}
	tr = bpf_map_lookup_elem(g->transitions, &k);
	if (!tr) {
		emit(SEA_EV_MISS, g->seqno, &k, SEA_FILE__CREATE, SEA_FILE__CREATE, SEA_FILE__CREATE,
		     !g->config->enforcing, o);
		return 0;
	}
	return tr->newsid;
}

/* may_create: dir {add_name search} on the parent, then {create} of the new label in its
 * class; filesystem {associate} is left out (no superblock storage to hold the fs's SID). */
static __always_inline int may_create(struct inode *dir, struct dentry *dentry, __u32 tclass)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct sea_inode *ds;
	struct gen g;
	struct obj o = { .dentry = dentry, .inode = dir };
	__u32 newsid, dsid;
	int rc;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	ds = bpf_inode_storage_get(&inode_store, dir, 0, 0);
	if (!inode_sid(&g, dir, ds, &dsid))
		return 0;
	rc = has_perm(&g, t->sid, dsid, SEA_CLASS_DIR, SEA_DIR__ADD_NAME | SEA_DIR__SEARCH, &o, 0);
	if (rc)
		return rc;
	newsid = new_inode_sid(&g, t->sid, dir, tclass, BPF_CORE_READ(dentry, d_name.name), &o);
	if (!newsid)
		return g.config->enforcing ? -EACCES : 0;
	o.inode = 0;
	return has_perm(&g, t->sid, newsid, tclass, SEA_FILE__CREATE, &o, 0);
}

/* selinux_inode_create */
SEC("lsm/inode_create")
int BPF_PROG(sea_inode_create, struct inode *dir, struct dentry *dentry, unsigned short mode)
{
	return may_create(dir, dentry, SEA_CLASS_FILE);
}

/* selinux_inode_mkdir */
SEC("lsm/inode_mkdir")
int BPF_PROG(sea_inode_mkdir, struct inode *dir, struct dentry *dentry, unsigned short mode)
{
	return may_create(dir, dentry, SEA_CLASS_DIR);
}

/* ---- The inode hooks of the path walk and of names: inode_permission, getattr, setattr, link,
 * unlink, rmdir, rename, symlink (security/selinux/hooks.c as of 6.12). 6.12's bpf_lsm.c
 * refuses none of them (its bpf_lsm_disabled_hooks list holds no inode hook these use). They
 * are ordinary, non-sleepable programs: inode_permission (called under RCU in the path walk)
 * and inode_link are not in its sleepable_lsm_hooks, and none here needs to sleep. An object
 * without inode storage (nobody labeled it) is decided as inode_sid says. */

/* include/linux/fs.h: the inode_permission mask bits beyond MAY_EXEC/WRITE/READ/APPEND. */
#define SEA_MAY_ACCESS 0x10
/* include/linux/fs.h: the iattr ia_valid bits selinux_inode_setattr reads. */
#define SEA_ATTR_MODE (1u << 0)
#define SEA_ATTR_UID (1u << 1)
#define SEA_ATTR_GID (1u << 2)
#define SEA_ATTR_SIZE (1u << 3)
#define SEA_ATTR_ATIME_SET (1u << 7)
#define SEA_ATTR_MTIME_SET (1u << 8)
#define SEA_ATTR_FORCE (1u << 9)
#define SEA_ATTR_KILL_SUID (1u << 11)
#define SEA_ATTR_KILL_SGID (1u << 12)
#define SEA_ATTR_FILE (1u << 13)
#define SEA_ATTR_TIMES_SET (1u << 16)
/* include/uapi/linux/magic.h */
#define SEA_SOCKFS_MAGIC 0x534F434Bul
/* include/linux/fs.h: may_link's kinds. */
#define SEA_MAY_LINK 0
#define SEA_MAY_UNLINK 1
#define SEA_MAY_RMDIR 2

/* inode_has_perm (and dentry_has_perm / path_has_perm, which call it): nothing for a private
 * inode, else the task's permission on the inode's label in the class of its mode. */
static __always_inline int inode_has_perm(const struct gen *g, __u32 ssid, struct inode *inode,
					  struct dentry *dentry, __u32 perms)
{
	struct obj o = { .dentry = dentry, .inode = inode };
	__u32 isid;

	if (!inode || (inode->i_flags & SEA_S_PRIVATE))
		return 0;
	if (!inode_sid(g, inode, bpf_inode_storage_get(&inode_store, inode, 0, 0), &isid))
		return 0;
	return has_perm(g, ssid, isid, inode_class(inode->i_mode), perms, &o, 0);
}

/* avc_has_perm on an object's label, for may_link and may_rename, which (unlike
 * inode_has_perm) have no IS_PRIVATE test. */
static __always_inline int obj_has_perm(const struct gen *g, __u32 ssid, struct inode *inode,
					__u32 tclass, __u32 perms, struct dentry *dentry)
{
	struct obj o = { .dentry = dentry, .inode = inode };
	__u32 isid;

	if (!inode)
		return 0;
	if (!inode_sid(g, inode, bpf_inode_storage_get(&inode_store, inode, 0, 0), &isid))
		return 0;
	return has_perm(g, ssid, isid, tclass, perms, &o, 0);
}

/* bpf_rdonly_cast (a kfunc of every program type since 6.2): a kernel address as a read-only
 * typed pointer, whose loads the verifier turns into faulting-safe reads. */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* d_find_alias, for the record of a denial on an inode (LSM_AUDIT_DATA_INODE's name=): the
 * first dentry on the inode's alias list, 0 if none. Read, not referenced: the name is copied
 * into the record at once, as the kernel's audit does under its own reference. */
static __always_inline struct dentry *inode_alias(struct inode *inode)
{
	struct hlist_node *first = 0;

	bpf_probe_read_kernel(&first, sizeof(first), &inode->i_dentry.first);
	if (!first)
		return 0;
	return bpf_rdonly_cast((void *)first - bpf_core_field_offset(struct dentry, d_u.d_alias),
			       bpf_core_type_id_kernel(struct dentry));
}

/* selinux_inode_permission (6.12): the mask reduced to MAY_READ/WRITE/EXEC/APPEND (nothing
 * left: an existence test, allowed), nothing for a private inode, else file_mask_to_av on the
 * inode's label: a directory's `search` for each step of the path walk, `write search` on
 * the parent of a create, link or delete, `read`/`write`/`append`/`execute` on the file an
 * open or exec names. First the task's decision cache (bpf/avd.h; the kernel's task avdcache
 * came in 6.13: 6.12 asks the AVC each time, with the same verdicts and records). avc_audit_required decides the
 * record: for access(2) (MAY_ACCESS) a denial is recorded only if the policy does not
 * dontaudit `audit_access`; the verdict is the same. The alias for the record's name is only
 * looked for when there is a record to write (the walk's common case writes none). */
SEC("lsm/inode_permission")
int BPF_PROG(sea_inode_permission, struct inode *inode, int requested)
{
	struct sea_task *t;
	struct sea_inode *is;
	struct sea_av *av;
	struct sea_key k;
	struct gen g;
	struct obj o = { .dentry = 0, .inode = inode };
	int mask = requested & (MAY_READ | MAY_WRITE | MAY_EXEC | MAY_APPEND);
	__u32 perms, denied;

	if (!mask)
		return 0;
	t = confined(bpf_get_current_task_btf());
	if (!t)
		return 0;
	if (inode->i_flags & SEA_S_PRIVATE)
		return 0;
	is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	perms = file_mask_to_av(inode->i_mode, mask);
	k.tclass = inode_class(inode->i_mode);
	if (is && avd_hit(t, seqno_now(), is->sid, k.tclass, perms))
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	if (!inode_sid(&g, inode, is, &k.tsid))
		return 0;
	k.ssid = t->sid;
	av = bpf_map_lookup_elem(g.decisions, &k);
	if (av) {
		denied = perms & ~av->allowed;
		if (!denied && !(perms & av->auditallow)) {
			avd_keep(t, g.seqno, k.tsid, k.tclass, av);
			return 0;
		}
		if (denied && (!(denied & av->auditdeny) ||
			       ((requested & SEA_MAY_ACCESS) &&
				!(av->auditdeny & SEA_FILE__AUDIT_ACCESS))))
			return (g.config->enforcing && !(av->flags & SEA_AV_PERMISSIVE)) ? -EACCES
											 : 0;
	}
	o.dentry = inode_alias(inode);
	return has_perm(&g, k.ssid, k.tsid, k.tclass, perms, &o, 0);
}

/* selinux_inode_getattr: path_has_perm(cred, path, FILE__GETATTR). */
SEC("lsm/inode_getattr")
int BPF_PROG(sea_inode_getattr, const struct path *path)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct dentry *dentry;
	struct inode *inode;
	__u64 seqno;

	if (!t)
		return 0;
	seqno = seqno_now();
	if (!seqno)
		return -EACCES;
	dentry = path->dentry;
	inode = dentry->d_inode;
	/* inode_has_perm's test, after the generation's. */
	if (!inode || (inode->i_flags & SEA_S_PRIVATE))
		return 0;
	return task_inode_has_perm(t, seqno, inode, dentry, SEA_FILE__GETATTR);
}

/* selinux_inode_setattr: ATTR_FORCE alone (ATTR_KILL_S[UG]ID) asks nothing; a change of mode,
 * owner or times asks `setattr`; else (a size change) `write`, with `open` for a truncate not
 * made through an open file (open_perms, which Debian's policies have) outside sockfs. */
SEC("lsm/inode_setattr")
int BPF_PROG(sea_inode_setattr, struct mnt_idmap *idmap, struct dentry *dentry,
	     struct iattr *iattr)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	unsigned int ia_valid = iattr->ia_valid;
	struct inode *inode = dentry->d_inode;
	__u32 av = SEA_FILE__WRITE;
	struct gen g;

	if (!t)
		return 0;
	if (ia_valid & SEA_ATTR_FORCE) {
		ia_valid &= ~(SEA_ATTR_KILL_SUID | SEA_ATTR_KILL_SGID | SEA_ATTR_MODE |
			      SEA_ATTR_FORCE);
		if (!ia_valid)
			return 0;
	}
	if (!gen_get(&g))
		return -EACCES;
	if (ia_valid & (SEA_ATTR_MODE | SEA_ATTR_UID | SEA_ATTR_GID | SEA_ATTR_ATIME_SET |
			SEA_ATTR_MTIME_SET | SEA_ATTR_TIMES_SET))
		return inode_has_perm(&g, t->sid, inode, dentry, SEA_FILE__SETATTR);
	if (inode && inode->i_sb->s_magic != SEA_SOCKFS_MAGIC && (ia_valid & SEA_ATTR_SIZE) &&
	    !(ia_valid & SEA_ATTR_FILE))
		av |= SEA_FILE__OPEN;
	return inode_has_perm(&g, t->sid, inode, dentry, av);
}

/* may_link: `dir {search}` and `add_name` (a link) or `remove_name` (unlink, rmdir) on the
 * directory, then `link`, `unlink` or `dir {rmdir}` on the object itself. */
static __always_inline int may_link(struct inode *dir, struct dentry *dentry, int kind)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct inode *inode = dentry->d_inode;
	struct gen g;
	__u32 av;
	int rc;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	av = SEA_DIR__SEARCH | (kind ? SEA_DIR__REMOVE_NAME : SEA_DIR__ADD_NAME);
	rc = obj_has_perm(&g, t->sid, dir, SEA_CLASS_DIR, av, dentry);
	if (rc)
		return rc;
	if (!inode)
		return 0;
	if (kind == SEA_MAY_LINK)
		av = SEA_FILE__LINK;
	else if (kind == SEA_MAY_UNLINK)
		av = SEA_FILE__UNLINK;
	else
		av = SEA_DIR__RMDIR;
	return obj_has_perm(&g, t->sid, inode, inode_class(inode->i_mode), av, dentry);
}

/* selinux_inode_link: may_link(dir, old_dentry, MAY_LINK): the new name's directory, the
 * existing file. */
SEC("lsm/inode_link")
int BPF_PROG(sea_inode_link, struct dentry *old_dentry, struct inode *dir,
	     struct dentry *new_dentry)
{
	return may_link(dir, old_dentry, SEA_MAY_LINK);
}

/* selinux_inode_unlink */
SEC("lsm/inode_unlink")
int BPF_PROG(sea_inode_unlink, struct inode *dir, struct dentry *dentry)
{
	return may_link(dir, dentry, SEA_MAY_UNLINK);
}

/* selinux_inode_rmdir */
SEC("lsm/inode_rmdir")
int BPF_PROG(sea_inode_rmdir, struct inode *dir, struct dentry *dentry)
{
	return may_link(dir, dentry, SEA_MAY_RMDIR);
}

/* selinux_inode_symlink: may_create(dir, dentry, SECCLASS_LNK_FILE). */
SEC("lsm/inode_symlink")
int BPF_PROG(sea_inode_symlink, struct inode *dir, struct dentry *dentry, const char *old_name)
{
	return may_create(dir, dentry, SEA_CLASS_LNK_FILE);
}

/* may_rename (selinux_inode_rename; a RENAME_EXCHANGE calls the hook once each way): on the
 * old side `dir {remove_name search}`, the object's `rename`, and `dir {reparent}` for a
 * directory moving to another parent; on the new side `dir {add_name search}`, with
 * `remove_name` and the replaced object's `unlink` (or `dir {rmdir}`) when the new name
 * exists. */
SEC("lsm/inode_rename")
int BPF_PROG(sea_inode_rename, struct inode *old_dir, struct dentry *old_dentry,
	     struct inode *new_dir, struct dentry *new_dentry)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct inode *old_inode = old_dentry->d_inode;
	struct inode *new_inode = new_dentry->d_inode;
	struct gen g;
	__u32 av;
	int rc;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	rc = obj_has_perm(&g, t->sid, old_dir, SEA_CLASS_DIR,
			  SEA_DIR__REMOVE_NAME | SEA_DIR__SEARCH, old_dentry);
	if (rc)
		return rc;
	if (old_inode) {
		__u32 oclass = inode_class(old_inode->i_mode);

		rc = obj_has_perm(&g, t->sid, old_inode, oclass, SEA_FILE__RENAME, old_dentry);
		if (rc)
			return rc;
		if (oclass == SEA_CLASS_DIR && new_dir != old_dir) {
			rc = obj_has_perm(&g, t->sid, old_inode, oclass, SEA_DIR__REPARENT,
					  old_dentry);
			if (rc)
				return rc;
		}
	}
	av = SEA_DIR__ADD_NAME | SEA_DIR__SEARCH;
	if (new_inode)
		av |= SEA_DIR__REMOVE_NAME;
	rc = obj_has_perm(&g, t->sid, new_dir, SEA_CLASS_DIR, av, new_dentry);
	if (rc)
		return rc;
	if (new_inode) {
		__u32 nclass = inode_class(new_inode->i_mode);

		rc = obj_has_perm(&g, t->sid, new_inode, nclass,
				  nclass == SEA_CLASS_DIR ? SEA_DIR__RMDIR : SEA_FILE__UNLINK,
				  new_dentry);
		if (rc)
			return rc;
	}
	return 0;
}

/* selinux_inode_init_security: the new inode's label, as may_create computed it, kept in
 * inode storage (6.12 lets a BPF LSM program on this hook create storage for the new inode;
 * it writes no xattr, so the label lasts while the inode is in memory; evicted and read
 * again, an inode outside the labeled trees is its file system's default). The kernel keeps
 * this label in memory on every file system, SBLABEL_MNT or not (it only decides whether an
 * xattr is written). Only a confined task's creations are labeled: an unconfined task's are
 * its file system's default. */
SEC("lsm/inode_init_security")
int BPF_PROG(sea_inode_init_security, struct inode *inode, struct inode *dir,
	     const struct qstr *qstr, struct xattr *xattrs, int *xattr_count)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct sea_inode *is;
	struct gen g;
	__u32 newsid;

	if (!t || !gen_get(&g))
		return 0;
	newsid = new_inode_sid(&g, t->sid, dir, inode_class(inode->i_mode),
			       qstr ? BPF_CORE_READ(qstr, name) : 0, 0);
	if (!newsid)
		return 0;
	is = bpf_inode_storage_get(&inode_store, inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!is)
		return 0;
	is->sid = newsid;
	is->flags = SEA_INODE_LABELED;
	return 0;
}

/* inode_doinit_with_dentry from selinux_d_instantiate, for an fs_use_task file system (pipefs):
 * the new object takes its creator's SID, kept in inode storage when a confined task made it
 * (one an unconfined task made is not checked: inode_sid). A socket's inode is left to the
 * socket hooks, which decide it by the socket's own label and class (socket storage). The
 * inode argument is NULL for a negative dentry: tested by value (raw_ptr). */
SEC("lsm/d_instantiate")
int BPF_PROG(sea_d_instantiate, struct dentry *dentry, struct inode *inode)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct sea_fsdef *d;
	struct sea_inode *is;
	struct gen g;

	if (!t || !raw_ptr(&ctx[1]) || !gen_get(&g))
		return 0;
	if ((inode->i_mode & S_IFMT) == S_IFSOCK)
		return 0;
	d = fs_def(&g, inode);
	if (!d || d->kind != SEA_FS_CREATOR)
		return 0;
	if (bpf_inode_storage_get(&inode_store, inode, 0, 0))
		return 0;
	is = bpf_inode_storage_get(&inode_store, inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!is)
		return 0;
	is->sid = t->sid;
	is->flags = SEA_INODE_LABELED;
	return 0;
}

#endif
