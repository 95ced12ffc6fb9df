// SPDX-License-Identifier: GPL-2.0
/* seaccess enforce: the SELinux policy's decisions, computed by the engine in userspace and put
 * in maps, enforced on the BPF LSM's hooks. Each hook follows its function in the kernel's
 * security/selinux/hooks.c (cited above it): the same permissions, in the same order, with the
 * object manager's class numbers and bits (classes.h, generated from crates/objmgr by build.rs).
 *
 * A task without task storage is not confined and never checked; a confined task meets a miss
 * (no decision for its key) as a denial, and the daemon is told (SEA_EV_MISS). An inode nobody
 * labeled (no inode storage) is what the kernel gives it on its file system (inode_sid: the
 * filesystems map, by the file system type's name).
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "kernel.h"
#include "layout.h"
#include "classes.h"

char LICENSE[] SEC("license") = "GPL";

/* The generation in use: its seqno, stored by the daemon in one 64-bit store. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
	__uint(map_flags, BPF_F_MMAPABLE);
} current SEC(".maps");

/* Allocated as filled: a preallocated hash of SEA_MAX_DECISIONS entries would take about 100 MiB
 * per generation whatever the policy needs. */
struct decisions_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SEA_MAX_DECISIONS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	/* Sizes, not __type: libbpf 1.7 cannot size a struct key of an inner map's BTF ("can't
	 * determine key size"), and inner maps made by the daemon carry no BTF anyway. */
	__uint(key_size, sizeof(struct sea_key));
	__uint(value_size, sizeof(struct sea_av));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct decisions_inner);
} decisions SEC(".maps");

struct transitions_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SEA_MAX_TRANSITIONS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(struct sea_key));
	__uint(value_size, sizeof(struct sea_trans));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct transitions_inner);
} transitions SEC(".maps");

struct config_inner {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(struct sea_config));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct config_inner);
} config SEC(".maps");

struct filesystems_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SEA_MAX_FILESYSTEMS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(struct sea_fskey));
	__uint(value_size, sizeof(struct sea_fsdef));
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, SEA_GENERATIONS);
	__type(key, __u32);
	__array(values, struct filesystems_inner);
} filesystems SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sea_task);
} task_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_INODE_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct sea_inode);
} inode_store SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

/* One generation's maps, taken once per hook: everything a hook decides comes from these. */
struct gen {
	__u64 seqno;
	void *decisions;
	void *transitions;
	void *filesystems;
	struct sea_config *config;
};

/* Reads `current` once and takes its slot's maps; 0 when no generation is installed (then a
 * confined task is denied: it cannot have been confined before one was). */
static __always_inline int gen_get(struct gen *g)
{
	__u32 zero = 0, slot;
	__u64 *cur = bpf_map_lookup_elem(&current, &zero);
	void *cfgmap;

	if (!cur)
		return 0;
	/* One aligned 64-bit load (BPF_LDX | BPF_DW: one instruction once JITed), so never half of
	 * one store and half of another. Not __atomic_load_n(ACQUIRE): clang 14 cannot select it
	 * for BPF (load-acquire came with LLVM 20); the daemon fills the slot's maps through bpf()
	 * system calls before its store, which the kernel's map updates order. */
	g->seqno = *(volatile __u64 *)cur;
	if (!g->seqno)
		return 0;
	slot = g->seqno & 1;
	g->decisions = bpf_map_lookup_elem(&decisions, &slot);
	g->transitions = bpf_map_lookup_elem(&transitions, &slot);
	g->filesystems = bpf_map_lookup_elem(&filesystems, &slot);
	cfgmap = bpf_map_lookup_elem(&config, &slot);
	if (!g->decisions || !g->transitions || !g->filesystems || !cfgmap)
		return 0;
	g->config = bpf_map_lookup_elem(cfgmap, &zero);
	return g->config != 0;
}

/* What a record says of the object: the dentry's name and the inode's device and number (the
 * kernel's LSM_AUDIT_DATA_DENTRY fields). */
struct obj {
	struct dentry *dentry;
	struct inode *inode;
};

static __always_inline void emit(__u32 kind, __u64 seqno, const struct sea_key *k, __u32 requested,
				 __u32 denied, __u32 audited, __u32 permissive, const struct obj *o)
{
	struct sea_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		return;
	__builtin_memset(e, 0, sizeof(*e));
	e->seqno = seqno;
	e->kind = kind;
	e->ssid = k->ssid;
	e->tsid = k->tsid;
	e->tclass = k->tclass;
	e->requested = requested;
	e->denied = denied;
	e->audited = audited;
	e->permissive = permissive;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	if (o && o->dentry)
		bpf_probe_read_kernel_str(e->name, sizeof(e->name), o->dentry->d_name.name);
	if (o && o->inode) {
		struct super_block *sb = o->inode->i_sb;

		e->ino = o->inode->i_ino;
		e->dev = sb->s_dev;
		bpf_probe_read_kernel_str(e->dev_name, sizeof(e->dev_name), sb->s_id);
	}
	bpf_ringbuf_submit(e, 0);
}

/* avc_has_perm with the decision from the generation's map: the record avc_audit would write
 * (denials the policy audits, grants it auditallows), then the verdict: a denial stands unless
 * the generation or the source domain is permissive. A missing decision is a denial (fail
 * closed) and a request for the daemon. *allowed_out (if given) says whether every requested
 * bit was granted by the policy, not merely let through by permissive mode. */
static __always_inline int has_perm(const struct gen *g, __u32 ssid, __u32 tsid, __u32 tclass,
				    __u32 requested, const struct obj *o, int *allowed_out)
{
	struct sea_key k = { .ssid = ssid, .tsid = tsid, .tclass = tclass };
	struct sea_av *av = bpf_map_lookup_elem(g->decisions, &k);
	__u32 denied, audited, permissive;

	if (allowed_out)
		*allowed_out = 0;
	if (!av) {
		emit(SEA_EV_MISS, g->seqno, &k, requested, requested, requested,
		     !g->config->enforcing, o);
		return g->config->enforcing ? -EACCES : 0;
	}
	denied = requested & ~av->allowed;
	permissive = !g->config->enforcing || (av->flags & SEA_AV_PERMISSIVE);
	if (denied) {
		audited = denied & av->auditdeny;
		if (audited)
			emit(SEA_EV_DENIED, g->seqno, &k, requested, denied, audited, permissive, o);
		return permissive ? 0 : -EACCES;
	}
	audited = requested & av->auditallow;
	if (audited)
		emit(SEA_EV_GRANTED, g->seqno, &k, requested, 0, audited, 0, o);
	if (allowed_out)
		*allowed_out = 1;
	return 0;
}

static __always_inline struct sea_task *confined(struct task_struct *task)
{
	return bpf_task_storage_get(&task_store, task, 0, 0);
}

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

/* selinux_bprm_creds_for_exec: the new domain is security_transition_sid(old, file, process)
 * (from the transitions map; no setexeccon here); with no change, file {execute_no_trans};
 * else process {transition} old -> new, then file {entrypoint} new -> file (class file
 * whatever the inode's), then process {noatsecure}, whose denial only sets secureexec. The
 * share and ptrace checks (LSM_UNSAFE_SHARE, a tracer) and check_nnp_nosuid are left out: no
 * cred storage to compare against yet. An executable nobody labeled is the initial SID file. */
SEC("lsm/bprm_creds_for_exec")
int BPF_PROG(sea_bprm_creds_for_exec, struct linux_binprm *bprm)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct file *file = bprm->file;
	struct inode *inode = file->f_inode;
	struct sea_inode *is;
	struct sea_trans *tr;
	struct sea_key k;
	struct gen g;
	struct obj o;
	__u32 isid, newsid;
	int rc;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	t->flags &= ~SEA_TASK_EXEC_PENDING;
	is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	if (!inode_sid(&g, inode, is, &isid))
		/* An executable on a file system labeled by path: the initial SID file, as before
		 * file systems had defaults (never unchecked: exec decides the new domain). */
		isid = g.config->file_sid;
	o.dentry = file->f_path.dentry;
	o.inode = inode;
	k.ssid = t->sid;
	k.tsid = isid;
	k.tclass = SEA_CLASS_PROCESS;
	tr = bpf_map_lookup_elem(g.transitions, &k);
	if (!tr) {
		emit(SEA_EV_MISS, g.seqno, &k, SEA_PROCESS__TRANSITION, SEA_PROCESS__TRANSITION,
		     SEA_PROCESS__TRANSITION, !g.config->enforcing, &o);
		if (g.config->enforcing)
			return -EACCES;
		newsid = t->sid;
	} else {
		newsid = tr->newsid;
	}
	if (newsid == t->sid)
		return has_perm(&g, t->sid, isid, SEA_CLASS_FILE, SEA_FILE__EXECUTE_NO_TRANS, &o, 0);
	rc = has_perm(&g, t->sid, newsid, SEA_CLASS_PROCESS, SEA_PROCESS__TRANSITION, &o, 0);
	if (rc)
		return rc;
	rc = has_perm(&g, newsid, isid, SEA_CLASS_FILE, SEA_FILE__ENTRYPOINT, &o, 0);
	if (rc)
		return rc;
	if (has_perm(&g, t->sid, newsid, SEA_CLASS_PROCESS, SEA_PROCESS__NOATSECURE, 0, 0))
		bpf_bprm_opts_set(bprm, BPF_F_BPRM_SECUREEXEC);
	t->exec_sid = newsid;
	t->flags |= SEA_TASK_EXEC_PENDING;
	return 0;
}

/* The new domain takes effect when the exec commits its creds (the kernel's commit_creds of
 * the bprm's cred, which selinux_bprm_creds_for_exec labeled); selinux_bprm_committed_creds's
 * own checks (siginh, the inherited descriptors of selinux_bprm_committing_creds) are left out. */
SEC("lsm/bprm_committed_creds")
int BPF_PROG(sea_bprm_committed_creds, struct linux_binprm *bprm)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());

	if (t && (t->flags & SEA_TASK_EXEC_PENDING)) {
		t->sid = t->exec_sid;
		t->flags &= ~SEA_TASK_EXEC_PENDING;
	}
	return 0;
}

/* selinux_task_alloc: process {fork} on itself; the child keeps the parent's SID (the kernel's
 * cred copy, selinux_cred_prepare), here a copy of the parent's task storage. */
SEC("lsm/task_alloc")
int BPF_PROG(sea_task_alloc, struct task_struct *task, unsigned long clone_flags)
{
	struct sea_task *parent = confined(bpf_get_current_task_btf());
	struct sea_task *child;
	struct gen g;
	int rc;

	if (!parent)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	rc = has_perm(&g, parent->sid, parent->sid, SEA_CLASS_PROCESS, SEA_PROCESS__FORK, 0, 0);
	if (rc)
		return rc;
	child = bpf_task_storage_get(&task_store, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!child)
		/* A confined task's child must not run unconfined. */
		return -EACCES;
	child->sid = parent->sid;
	child->exec_sid = 0;
	child->flags = 0;
	return 0;
}

/* selinux_determine_inode_label without a name: security_transition_sid(task, dir, class) from
 * the transitions map (name-keyed type transitions are not in the map yet), the directory
 * decided as inode_sid says (the initial SID file where it is not checked). 0 on a miss. */
static __always_inline __u32 new_inode_sid(const struct gen *g, __u32 ssid, struct inode *dir,
					   __u32 tclass, const struct obj *o)
{
	struct sea_inode *ds = bpf_inode_storage_get(&inode_store, dir, 0, 0);
	struct sea_key k = { .ssid = ssid, .tclass = tclass };
	struct sea_trans *tr;

	if (!inode_sid(g, dir, ds, &k.tsid))
		k.tsid = g->config->file_sid;
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
	newsid = new_inode_sid(&g, t->sid, dir, tclass, &o);
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
 * open or exec names. 6.12 has no revalidation skip here: every call asks the AVC (the task's
 * avdcache, and its skip for a permissive, neveraudit domain, came after 6.12); the grant
 * file_permission skips on is an open file's, not a walk's. avc_audit_required decides the
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
	if (!gen_get(&g))
		return -EACCES;
	is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	if (!inode_sid(&g, inode, is, &k.tsid))
		return 0;
	perms = file_mask_to_av(inode->i_mode, mask);
	k.ssid = t->sid;
	k.tclass = inode_class(inode->i_mode);
	av = bpf_map_lookup_elem(g.decisions, &k);
	if (av) {
		denied = perms & ~av->allowed;
		if (!denied && !(perms & av->auditallow))
			return 0;
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
	struct gen g;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	dentry = path->dentry;
	return inode_has_perm(&g, t->sid, dentry->d_inode, dentry, SEA_FILE__GETATTR);
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
	newsid = new_inode_sid(&g, t->sid, dir, inode_class(inode->i_mode), 0);
	if (!newsid)
		return 0;
	is = bpf_inode_storage_get(&inode_store, inode, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!is)
		return 0;
	is->sid = newsid;
	is->flags = SEA_INODE_LABELED;
	is->grant_perms = 0;
	is->grant_seqno = 0;
	return 0;
}

/* ---- Tasks, sockets and memory: task_kill, ptrace, capable, the socket hooks, mmap and
 * mprotect. A task (or socket) with no storage is not confined (not labeled): such a task is
 * not checked when it acts, and meets as a target the SID the kernel gives every task before
 * a policy labels it, the initial SID kernel. ---- */

/* A pointer's value as a number, read past the verifier: 6.12's verifier takes every pointer
 * argument of a hook (and some fields, vm_area_struct's vm_file) as trusted and so never NULL,
 * and removes a program's own NULL test as dead code; for an argument the kernel does pass as
 * NULL (task_kill's cred, mmap_file's file for an anonymous mapping) that test is the one
 * that decides. The typed pointer is used only where this value is not 0. */
static __always_inline __u64 raw_ptr(const void *where)
{
	__u64 v = 0;

	bpf_probe_read_kernel(&v, sizeof(v), where);
	return v;
}

/* task_sid_obj: a confined task's SID, else the initial SID kernel. */
static __always_inline __u32 task_sid_obj(const struct gen *g, struct task_struct *p)
{
	struct sea_task *t = confined(p);

	return t ? t->sid : g->config->kernel_sid;
}

/* avc_has_perm_noaudit + avc_audit as cred_has_capability does them: has_perm, with the
 * record left out when `audit` is 0 (CAP_OPT_NOAUDIT), the verdict the same. */
static __always_inline int perm_noaudit(const struct gen *g, __u32 ssid, __u32 tsid, __u32 tclass,
					__u32 requested)
{
	struct sea_key k = { .ssid = ssid, .tsid = tsid, .tclass = tclass };
	struct sea_av *av = bpf_map_lookup_elem(g->decisions, &k);

	if (!av) {
		/* The daemon still hears of the miss: it is what fills the map. */
		emit(SEA_EV_MISS, g->seqno, &k, requested, requested, requested,
		     !g->config->enforcing, 0);
		return g->config->enforcing ? -EACCES : 0;
	}
	if (!(requested & ~av->allowed))
		return 0;
	return (!g->config->enforcing || (av->flags & SEA_AV_PERMISSIVE)) ? 0 : -EACCES;
}

/* signal_to_av */
static __always_inline __u32 signal_to_av(int sig)
{
	switch (sig) {
	case SIGCHLD:
		return SEA_PROCESS__SIGCHLD;
	case SIGKILL:
		return SEA_PROCESS__SIGKILL;
	case SIGSTOP:
		return SEA_PROCESS__SIGSTOP;
	}
	return SEA_PROCESS__SIGNAL;
}

/* selinux_task_kill: process {signull} for signal 0, else signal_to_av(sig), from the sender
 * to the target. A signal sent with another task's cred (cred != NULL: a USB async I/O
 * completion, kill_pid_usb_asyncio) names a sender BPF has no storage to know: not checked. */
SEC("lsm/task_kill")
int BPF_PROG(sea_task_kill, struct task_struct *p, struct kernel_siginfo *info, int sig,
	     const struct cred *cred)
{
	struct sea_task *t;
	struct gen g;

	if (raw_ptr(&ctx[3]))
		return 0;
	t = confined(bpf_get_current_task_btf());
	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	return has_perm(&g, t->sid, task_sid_obj(&g, p), SEA_CLASS_PROCESS,
			sig ? signal_to_av(sig) : SEA_PROCESS__SIGNULL, 0, 0);
}

/* selinux_ptrace_access_check: file {read} on the child for a PTRACE_MODE_READ access (/proc's
 * ptrace_may_access), else process {ptrace}. */
SEC("lsm/ptrace_access_check")
int BPF_PROG(sea_ptrace_access_check, struct task_struct *child, unsigned int mode)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct gen g;
	__u32 csid;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	csid = task_sid_obj(&g, child);
	if (mode & PTRACE_MODE_READ)
		return has_perm(&g, t->sid, csid, SEA_CLASS_FILE, SEA_FILE__READ, 0, 0);
	return has_perm(&g, t->sid, csid, SEA_CLASS_PROCESS, SEA_PROCESS__PTRACE, 0, 0);
}

/* selinux_ptrace_traceme: process {ptrace} from the parent to the task asking to be traced;
 * checked when either is confined (the other is then the initial SID kernel). */
SEC("lsm/ptrace_traceme")
int BPF_PROG(sea_ptrace_traceme, struct task_struct *parent)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct gen g;

	if (!confined(cur) && !confined(parent))
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	return has_perm(&g, task_sid_obj(&g, parent), task_sid_obj(&g, cur), SEA_CLASS_PROCESS,
			SEA_PROCESS__PTRACE, 0, 0);
}

/* selinux_capable, cred_has_capability: the capability's bit in capability (0-31) or
 * capability2 (32-63), cap_userns/cap2_userns outside the initial user namespace, from the
 * cred's SID to itself; no record under CAP_OPT_NOAUDIT. The cred must be the current task's
 * (its subjective or real one): a cred held elsewhere (file_ns_capable's opener,
 * has_capability of another task) has a SID BPF keeps nowhere, and is not checked. */
SEC("lsm/capable")
int BPF_PROG(sea_capable, const struct cred *cred, struct user_namespace *ns, int cap,
	     unsigned int opts)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct sea_task *t;
	struct gen g;
	__u32 tclass, av;
	int initns;

	if (cred != cur->cred && cred != cur->real_cred)
		return 0;
	t = confined(cur);
	if (!t)
		return 0;
	if (cap < 0 || cap > 63)
		return -EINVAL;
	if (!gen_get(&g))
		return -EACCES;
	initns = ns->level == 0;
	av = 1u << (cap & 31);
	if (cap < 32)
		tclass = initns ? SEA_CLASS_CAPABILITY : SEA_CLASS_CAP_USERNS;
	else
		tclass = initns ? SEA_CLASS_CAPABILITY2 : SEA_CLASS_CAP2_USERNS;
	if (opts & CAP_OPT_NOAUDIT)
		return perm_noaudit(&g, t->sid, t->sid, tclass, av);
	return has_perm(&g, t->sid, t->sid, tclass, av, 0, 0);
}

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

/* selinux_socket_bind: socket {bind}. __selinux_socket_bind's name_bind (the port's SID) and
 * node_bind (the address's node SID) are not asked: the tables have no port or node SIDs. */
SEC("lsm/socket_bind")
int BPF_PROG(sea_socket_bind, struct socket *sock, struct sockaddr *address, int addrlen)
{
	return sock_has_perm(sock, SEA_SOCKET__BIND);
}

/* selinux_socket_connect (selinux_socket_connect_helper): socket {connect}; the TCP/SCTP
 * name_connect to the port's SID is not asked (no port SIDs in the tables). */
SEC("lsm/socket_connect")
int BPF_PROG(sea_socket_connect, struct socket *sock, struct sockaddr *address, int addrlen)
{
	return sock_has_perm(sock, SEA_SOCKET__CONNECT);
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

/* file_has_perm without the fd use check (no file storage): inode_has_perm on a labeled
 * inode; an inode nobody labeled is not checked, as on open. */
static __always_inline int file_perm(const struct gen *g, __u32 ssid, struct file *file, __u32 av)
{
	struct inode *inode = file->f_inode;
	struct sea_inode *is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	struct obj o = { .dentry = file->f_path.dentry, .inode = inode };

	if (!is)
		return 0;
	return has_perm(g, ssid, is->sid, inode_class(inode->i_mode), av, &o, 0);
}

/* file_map_prot_check, default_noexec being set (x86_64: VM_DATA_DEFAULT_FLAGS has no
 * VM_EXEC): process {execmem} for an executable anonymous mapping, a private inode's, or a
 * private writable one; then file {read}, {write} for a shared writable mapping, {execute}
 * for an executable one. */
static __always_inline int map_prot_check(const struct gen *g, __u32 sid, struct file *file,
					  unsigned long prot, int shared)
{
	int rc;

	if ((prot & PROT_EXEC) &&
	    (!file || (file->f_inode->i_flags & S_PRIVATE) || (!shared && (prot & PROT_WRITE)))) {
		rc = has_perm(g, sid, sid, SEA_CLASS_PROCESS, SEA_PROCESS__EXECMEM, 0, 0);
		if (rc)
			return rc;
	}
	if (file) {
		__u32 av = SEA_FILE__READ;

		if (shared && (prot & PROT_WRITE))
			av |= SEA_FILE__WRITE;
		if (prot & PROT_EXEC)
			av |= SEA_FILE__EXECUTE;
		return file_perm(g, sid, file, av);
	}
	return 0;
}

/* selinux_mmap_file: file {map} on the inode (inode_has_perm), then file_map_prot_check with
 * the mapping shared when (flags & MAP_TYPE) == MAP_SHARED. */
SEC("lsm/mmap_file")
int BPF_PROG(sea_mmap_file, struct file *file, unsigned long reqprot, unsigned long prot,
	     unsigned long flags)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct gen g;
	int rc;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	if (!raw_ptr(&ctx[0]))
		return map_prot_check(&g, t->sid, 0, prot, (flags & MAP_TYPE) == MAP_SHARED);
	rc = file_perm(&g, t->sid, file, SEA_FILE__MAP);
	if (rc)
		return rc;
	return map_prot_check(&g, t->sid, file, prot, (flags & MAP_TYPE) == MAP_SHARED);
}

/* selinux_file_mprotect: making executable what was not: process {execheap} inside the heap
 * (start_brk..brk), {execstack} for the initial stack, file {execmod} for a file mapping with
 * COW'd pages (anon_vma); then file_map_prot_check. vma_is_stack_for_current (another
 * thread's stack, by the task's saved stack pointer) is not recognised: such a region is
 * asked as an anonymous one (execmem alone). */
SEC("lsm/file_mprotect")
int BPF_PROG(sea_file_mprotect, struct vm_area_struct *vma, unsigned long reqprot,
	     unsigned long prot)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct mm_struct *mm;
	int rc = 0, has_file, shared;
	struct gen g;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	mm = vma->vm_mm;
	has_file = raw_ptr(&vma->vm_file) != 0;
	shared = (vma->vm_flags & VM_SHARED) != 0;
	if ((prot & PROT_EXEC) && !(vma->vm_flags & VM_EXEC)) {
		if (vma->vm_start >= mm->start_brk && vma->vm_end <= mm->brk)
			rc = has_perm(&g, t->sid, t->sid, SEA_CLASS_PROCESS, SEA_PROCESS__EXECHEAP,
				      0, 0);
		else if (!has_file && vma->vm_start <= mm->start_stack &&
			 vma->vm_end >= mm->start_stack)
			rc = has_perm(&g, t->sid, t->sid, SEA_CLASS_PROCESS,
				      SEA_PROCESS__EXECSTACK, 0, 0);
		else if (has_file && raw_ptr(&vma->anon_vma))
			rc = file_perm(&g, t->sid, vma->vm_file, SEA_FILE__EXECMOD);
		if (rc)
			return rc;
	}
	if (!has_file)
		return map_prot_check(&g, t->sid, 0, prot, shared);
	return map_prot_check(&g, t->sid, vma->vm_file, prot, shared);
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
	is->grant_perms = 0;
	is->grant_seqno = 0;
	return 0;
}
