/* seaccess.bpf.c's The task's decision cache (the kernel's task avdcache, which
 * selinux_inode_permission consults from 6.13): the last SEA_AVD_SLOTS (target SID, class)
 * pairs this task was granted cleanly (allowed, nothing auditallow'ed, so that asking again
 * gives the same verdict and writes no record), valid for the task's SID and the generation
 * they were decided in. What the path walk, stat, open and the read/write revalidation skip on.
 * Included by seaccess.bpf.c, in its order, never on its own.
 *
 * Why it is sound:
 * - a generation never changes a decision it holds (extending it in place adds keys only), so
 *   (task SID, seqno) is all the validity an entry needs; a reload or boolean commit is a new
 *   seqno, 64 bits, never reused;
 * - task storage is the task's own: only its own hooks write it, one at a time (the daemon only
 *   at set_task, replacing the value whole, cache empty), so no other CPU changes an entry
 *   under a check (a grant kept on the inode, shared by every task, could be torn by another
 *   domain's write between a check's loads);
 * - an exec that changes the task's SID leaves avd_ssid behind: the entries no longer apply;
 * - tsid is the inode's label as inode storage holds it now, read at each check. */
#ifndef SEACCESS_AVD_H
#define SEACCESS_AVD_H

/* Whether every bit of `perms` on (tsid, tclass) is a clean grant the cache holds now. */
static __always_inline int avd_hit(const struct sea_task *t, __u64 seqno, __u32 tsid,
				   __u32 tclass, __u32 perms)
{
	if (!seqno || t->avd_seqno != seqno || t->avd_ssid != t->sid)
		return 0;
#pragma unroll
	for (int i = 0; i < SEA_AVD_SLOTS; i++) {
		const struct sea_avd *e = &t->avd[i];

		if (e->tsid == tsid && e->tclass == tclass && (e->perms & perms) == perms)
			return 1;
	}
	return 0;
}

/* Keeps av's clean bits (allowed, less the auditallow'ed) for (tsid, tclass): an entry from
 * another generation or SID empties the cache first; the oldest entry gives way. */
static __always_inline void avd_keep(struct sea_task *t, __u64 seqno, __u32 tsid, __u32 tclass,
				     const struct sea_av *av)
{
	__u32 perms = av->allowed & ~av->auditallow;
	struct sea_avd *e;

	if (!perms || !tsid)
		return;
	if (t->avd_seqno != seqno || t->avd_ssid != t->sid) {
		__builtin_memset(t->avd, 0, sizeof(t->avd));
		t->avd_seqno = seqno;
		t->avd_ssid = t->sid;
		t->avd_next = 0;
	}
	e = &t->avd[t->avd_next & (SEA_AVD_SLOTS - 1)];
	t->avd_next++;
	e->tsid = tsid;
	e->tclass = tclass;
	e->perms = perms;
}

/* has_perm for the task itself: the cache first, then the decision (kept when clean), then
 * has_perm for what is denied or audited (a record to write). */
static __always_inline int task_has_perm(const struct gen *g, struct sea_task *t, __u32 tsid,
					 __u32 tclass, __u32 perms, const struct obj *o,
					 int *allowed_out)
{
	struct sea_key k = { .ssid = t->sid, .tsid = tsid, .tclass = tclass };
	struct sea_av *av;

	if (avd_hit(t, g->seqno, tsid, tclass, perms)) {
		if (allowed_out)
			*allowed_out = 1;
		return 0;
	}
	av = bpf_map_lookup_elem(g->decisions, &k);
	if (av && !(perms & ~av->allowed) && !(perms & av->auditallow)) {
		avd_keep(t, g->seqno, tsid, tclass, av);
		if (allowed_out)
			*allowed_out = 1;
		return 0;
	}
	return has_perm(g, t->sid, tsid, tclass, perms, o, allowed_out);
}

/* inode_has_perm for the task itself, on an inode known not to be private, in generation
 * `seqno` (nonzero): the cache on the inode's stored label first, else the generation's maps
 * (the label its file system's default where nobody stored one). */
static __always_inline int task_inode_has_perm(struct sea_task *t, __u64 seqno,
					       struct inode *inode, struct dentry *dentry,
					       __u32 perms)
{
	struct sea_inode *is = bpf_inode_storage_get(&inode_store, inode, 0, 0);
	struct obj o = { .dentry = dentry, .inode = inode };
	__u32 tclass = inode_class(inode->i_mode), isid;
	struct gen g;

	if (is && avd_hit(t, seqno, is->sid, tclass, perms))
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	if (!inode_sid(&g, inode, is, &isid))
		return 0;
	return task_has_perm(&g, t, isid, tclass, perms, &o, 0);
}

#endif
