// SPDX-License-Identifier: GPL-2.0
/* seaccess.bpf.c's avc_has_perm over the decisions map: the record a check writes (emit), has_perm and perm_noaudit, whether a task is confined, and raw_ptr (a hook argument tested by value).
 * Included by seaccess.bpf.c, in its order, never on its own. */
#ifndef SEACCESS_DECIDE_H
#define SEACCESS_DECIDE_H

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

#endif
