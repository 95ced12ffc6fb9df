// SPDX-License-Identifier: GPL-2.0
/* seaccess.bpf.c's Processes: exec transitions, fork, signals, ptrace, capabilities.
 * Included by seaccess.bpf.c, in its order, never on its own. */
#ifndef SEACCESS_TASKS_H
#define SEACCESS_TASKS_H

/* ---- Tasks, sockets and memory: task_kill, ptrace, capable, the socket hooks, mmap and
 * mprotect. A task (or socket) with no storage is not confined (not labeled): such a task is
 * not checked when it acts, and meets as a target the SID the kernel gives every task before
 * a policy labels it, the initial SID kernel. ---- */

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

#endif
