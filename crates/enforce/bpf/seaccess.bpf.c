// SPDX-License-Identifier: GPL-2.0
/* seaccess enforce: the SELinux policy's decisions, computed by the engine in userspace and put
 * in maps, enforced on the BPF LSM's hooks. Each hook follows its function in the kernel's
 * security/selinux/hooks.c (cited above it): the same permissions, in the same order, with the
 * object manager's class numbers and bits (classes.h, generated from crates/objmgr by build.rs).
 *
 * A task without task storage is not confined and never checked; a confined task meets a miss
 * (no decision for its key) as a denial, and the daemon is told (SEA_EV_MISS). Inodes nobody
 * labeled (no inode storage) are not checked on open and read/write yet: the kernel gives them
 * initial SIDs by filesystem (pipes, sockets, ttys), which the daemon does not fill yet.
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
	cfgmap = bpf_map_lookup_elem(&config, &slot);
	if (!g->decisions || !g->transitions || !cfgmap)
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
	__u32 av;
	int rc, ok;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	if (!is)
		return 0;
	av = open_file_to_av(file);
	o.dentry = file->f_path.dentry;
	o.inode = inode;
	rc = has_perm(&g, t->sid, is->sid, inode_class(inode->i_mode), av, &o, &ok);
	if (ok)
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
	__u32 av;
	int rc, ok;

	if (!mask)
		return 0;
	t = confined(bpf_get_current_task_btf());
	if (!t)
		return 0;
	inode = file->f_inode;
	is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	if (!is)
		return 0;
	if ((file->f_flags & O_APPEND) && (mask & MAY_WRITE))
		mask |= MAY_APPEND;
	av = file_mask_to_av(inode->i_mode, mask);
	if (!av)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	if (is->grant_seqno == g.seqno && is->grant_ssid == t->sid && (is->grant_perms & av) == av)
		return 0;
	o.dentry = file->f_path.dentry;
	o.inode = inode;
	rc = has_perm(&g, t->sid, is->sid, inode_class(inode->i_mode), av, &o, &ok);
	if (ok)
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
	isid = is ? is->sid : g.config->file_sid;
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
 * the transitions map (name-keyed type transitions are not in the map yet). A directory
 * nobody labeled is the initial SID file. 0 on a miss. */
static __always_inline __u32 new_inode_sid(const struct gen *g, __u32 ssid, struct inode *dir,
					   __u32 tclass, const struct obj *o)
{
	struct sea_inode *ds = bpf_inode_storage_get(&inode_store, dir, 0, 0);
	struct sea_key k = { .ssid = ssid, .tsid = ds ? ds->sid : g->config->file_sid,
			     .tclass = tclass };
	struct sea_trans *tr = bpf_map_lookup_elem(g->transitions, &k);

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
	__u32 newsid;
	int rc;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	ds = bpf_inode_storage_get(&inode_store, dir, 0, 0);
	if (!ds)
		return 0;
	rc = has_perm(&g, t->sid, ds->sid, SEA_CLASS_DIR, SEA_DIR__ADD_NAME | SEA_DIR__SEARCH, &o, 0);
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
 * without inode storage (nobody labeled it) is not checked, as everywhere else in this file. */

/* include/linux/fs.h: IS_PRIVATE's flag (the kernel's own internal inodes, never checked). */
#define SEA_S_PRIVATE (1u << 9)
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
	struct sea_inode *is;
	struct obj o = { .dentry = dentry, .inode = inode };

	if (!inode || (inode->i_flags & SEA_S_PRIVATE))
		return 0;
	is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	if (!is)
		return 0;
	return has_perm(g, ssid, is->sid, inode_class(inode->i_mode), perms, &o, 0);
}

/* avc_has_perm on an object's label, for may_link and may_rename, which (unlike
 * inode_has_perm) have no IS_PRIVATE test. */
static __always_inline int obj_has_perm(const struct gen *g, __u32 ssid, struct inode *inode,
					__u32 tclass, __u32 perms, struct dentry *dentry)
{
	struct sea_inode *is;
	struct obj o = { .dentry = dentry, .inode = inode };

	if (!inode)
		return 0;
	is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	if (!is)
		return 0;
	return has_perm(g, ssid, is->sid, tclass, perms, &o, 0);
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
	is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	if (!is)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	perms = file_mask_to_av(inode->i_mode, mask);
	k.ssid = t->sid;
	k.tsid = is->sid;
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
 * it writes no xattr). Only a confined task's creations under a labeled directory are
 * labeled: the rest stays unchecked, as everything unlabeled is. */
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
	if (!bpf_inode_storage_get(&inode_store, dir, 0, 0))
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
