// SPDX-License-Identifier: GPL-2.0
/* seaccess.bpf.c's System V IPC: shared memory, semaphores and message queues (their creation,
 * association, control and attach), labeled in a map keyed by the object's kern_ipc_perm (BPF
 * has no IPC storage), the entry removed when the kernel frees the object.
 * Included by seaccess.bpf.c, in its order, never on its own. */
#ifndef SEACCESS_IPC_H
#define SEACCESS_IPC_H

/* An IPC object's label (the kernel's ipc_security_struct): its creator's SID and its class. */
struct sea_ipc {
	__u32 sid;
	__u32 sclass;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1 << 16);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct sea_ipc);
} ipc_store SEC(".maps");

/* include/uapi/linux/ipc.h, shm.h, sem.h, msg.h: the commands the hooks tell apart. */
#define SEA_IPC_RMID 0
#define SEA_IPC_SET 1
#define SEA_IPC_STAT 2
#define SEA_IPC_INFO 3
#define SEA_SHM_LOCK 11
#define SEA_SHM_UNLOCK 12
#define SEA_SHM_STAT 13
#define SEA_SHM_INFO 14
#define SEA_SHM_STAT_ANY 15
#define SEA_SEM_GETPID 11
#define SEA_SEM_GETVAL 12
#define SEA_SEM_GETALL 13
#define SEA_SEM_GETNCNT 14
#define SEA_SEM_GETZCNT 15
#define SEA_SEM_SETVAL 16
#define SEA_SEM_SETALL 17
#define SEA_SEM_STAT 18
#define SEA_SEM_INFO 19
#define SEA_SEM_STAT_ANY 20
#define SEA_MSG_STAT 11
#define SEA_MSG_INFO 12
#define SEA_MSG_STAT_ANY 13
#define SEA_SHM_RDONLY 010000

/* ipc_init_security and the {create} check of selinux_shm_alloc_security, _sem_, _msg_queue_:
 * the new object takes the creator's SID; a confined creator asks {create} on it, and its label
 * is kept. An unconfined task's object has no entry: not checked (its creator's domain, which
 * the kernel would give it, is unknown here). */
static __always_inline int ipc_alloc(struct kern_ipc_perm *perm, __u32 sclass)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct sea_ipc v;
	struct gen g;
	__u64 key = (__u64)perm;
	int rc;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	/* {create} is bit 0 of shm, sem and msgq alike (the common ipc permissions). */
	rc = has_perm(&g, t->sid, t->sid, sclass, SEA_SHM__CREATE, 0, 0);
	if (rc)
		return rc;
	v.sid = t->sid;
	v.sclass = sclass;
	if (bpf_map_update_elem(&ipc_store, &key, &v, BPF_ANY))
		/* A confined task's object must not go unlabeled. */
		return -EACCES;
	return 0;
}

/* ipc_has_perm: the task's SID to the object's, in its class. */
static __always_inline int ipc_has_perm(struct kern_ipc_perm *perm, __u32 perms)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	__u64 key = (__u64)perm;
	struct sea_ipc *v;
	struct gen g;

	if (!t || !perms)
		return 0;
	v = bpf_map_lookup_elem(&ipc_store, &key);
	if (!v)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	return has_perm(&g, t->sid, v->sid, v->sclass, perms, 0, 0);
}

/* The `system {ipc_info}` check of IPC_INFO and its kind's _INFO (against the initial SID
 * kernel, as the kernel's avc_has_perm(sid, SECINITSID_KERNEL, ...)). */
static __always_inline int ipc_info(void)
{
	struct sea_task *t = confined(bpf_get_current_task_btf());
	struct gen g;

	if (!t)
		return 0;
	if (!gen_get(&g))
		return -EACCES;
	return has_perm(&g, t->sid, g.config->kernel_sid, SEA_CLASS_SYSTEM, SEA_SYSTEM__IPC_INFO,
			0, 0);
}

static __always_inline void ipc_free(struct kern_ipc_perm *perm)
{
	__u64 key = (__u64)perm;

	bpf_map_delete_elem(&ipc_store, &key);
}

/* selinux_shm_alloc_security */
SEC("lsm/shm_alloc_security")
int BPF_PROG(sea_shm_alloc, struct kern_ipc_perm *perm)
{
	return ipc_alloc(perm, SEA_CLASS_SHM);
}

SEC("lsm/shm_free_security")
int BPF_PROG(sea_shm_free, struct kern_ipc_perm *perm)
{
	ipc_free(perm);
	return 0;
}

/* selinux_shm_associate */
SEC("lsm/shm_associate")
int BPF_PROG(sea_shm_associate, struct kern_ipc_perm *perm, int shmflg)
{
	return ipc_has_perm(perm, SEA_SHM__ASSOCIATE);
}

/* selinux_shm_shmctl */
SEC("lsm/shm_shmctl")
int BPF_PROG(sea_shm_shmctl, struct kern_ipc_perm *perm, int cmd)
{
	switch (cmd) {
	case SEA_IPC_INFO:
	case SEA_SHM_INFO:
		return ipc_info();
	case SEA_IPC_STAT:
	case SEA_SHM_STAT:
	case SEA_SHM_STAT_ANY:
		return ipc_has_perm(perm, SEA_SHM__GETATTR | SEA_SHM__ASSOCIATE);
	case SEA_IPC_SET:
		return ipc_has_perm(perm, SEA_SHM__SETATTR);
	case SEA_SHM_LOCK:
	case SEA_SHM_UNLOCK:
		return ipc_has_perm(perm, SEA_SHM__LOCK);
	case SEA_IPC_RMID:
		return ipc_has_perm(perm, SEA_SHM__DESTROY);
	}
	return 0;
}

/* selinux_shm_shmat: {read}, and {write} unless SHM_RDONLY. */
SEC("lsm/shm_shmat")
int BPF_PROG(sea_shm_shmat, struct kern_ipc_perm *perm, char *shmaddr, int shmflg)
{
	return ipc_has_perm(perm, (shmflg & SEA_SHM_RDONLY) ? SEA_SHM__READ
							 : SEA_SHM__READ | SEA_SHM__WRITE);
}

/* selinux_sem_alloc_security */
SEC("lsm/sem_alloc_security")
int BPF_PROG(sea_sem_alloc, struct kern_ipc_perm *perm)
{
	return ipc_alloc(perm, SEA_CLASS_SEM);
}

SEC("lsm/sem_free_security")
int BPF_PROG(sea_sem_free, struct kern_ipc_perm *perm)
{
	ipc_free(perm);
	return 0;
}

/* selinux_sem_associate */
SEC("lsm/sem_associate")
int BPF_PROG(sea_sem_associate, struct kern_ipc_perm *perm, int semflg)
{
	return ipc_has_perm(perm, SEA_SEM__ASSOCIATE);
}

/* selinux_sem_semctl */
SEC("lsm/sem_semctl")
int BPF_PROG(sea_sem_semctl, struct kern_ipc_perm *perm, int cmd)
{
	switch (cmd) {
	case SEA_IPC_INFO:
	case SEA_SEM_INFO:
		return ipc_info();
	case SEA_SEM_GETPID:
	case SEA_SEM_GETNCNT:
	case SEA_SEM_GETZCNT:
		return ipc_has_perm(perm, SEA_SEM__GETATTR);
	case SEA_SEM_GETVAL:
	case SEA_SEM_GETALL:
		return ipc_has_perm(perm, SEA_SEM__READ);
	case SEA_SEM_SETVAL:
	case SEA_SEM_SETALL:
		return ipc_has_perm(perm, SEA_SEM__WRITE);
	case SEA_IPC_RMID:
		return ipc_has_perm(perm, SEA_SEM__DESTROY);
	case SEA_IPC_SET:
		return ipc_has_perm(perm, SEA_SEM__SETATTR);
	case SEA_IPC_STAT:
	case SEA_SEM_STAT:
	case SEA_SEM_STAT_ANY:
		return ipc_has_perm(perm, SEA_SEM__GETATTR | SEA_SEM__ASSOCIATE);
	}
	return 0;
}

/* selinux_sem_semop: {read write} when it alters, else {read}. */
SEC("lsm/sem_semop")
int BPF_PROG(sea_sem_semop, struct kern_ipc_perm *perm, void *sops, unsigned nsops, int alter)
{
	return ipc_has_perm(perm, alter ? SEA_SEM__READ | SEA_SEM__WRITE : SEA_SEM__READ);
}

/* selinux_msg_queue_alloc_security */
SEC("lsm/msg_queue_alloc_security")
int BPF_PROG(sea_msg_queue_alloc, struct kern_ipc_perm *perm)
{
	return ipc_alloc(perm, SEA_CLASS_MSGQ);
}

SEC("lsm/msg_queue_free_security")
int BPF_PROG(sea_msg_queue_free, struct kern_ipc_perm *perm)
{
	ipc_free(perm);
	return 0;
}

/* selinux_msg_queue_associate */
SEC("lsm/msg_queue_associate")
int BPF_PROG(sea_msg_queue_associate, struct kern_ipc_perm *perm, int msqflg)
{
	return ipc_has_perm(perm, SEA_MSGQ__ASSOCIATE);
}

/* selinux_msg_queue_msgctl */
SEC("lsm/msg_queue_msgctl")
int BPF_PROG(sea_msg_queue_msgctl, struct kern_ipc_perm *perm, int cmd)
{
	switch (cmd) {
	case SEA_IPC_INFO:
	case SEA_MSG_INFO:
		return ipc_info();
	case SEA_IPC_STAT:
	case SEA_MSG_STAT:
	case SEA_MSG_STAT_ANY:
		return ipc_has_perm(perm, SEA_MSGQ__GETATTR | SEA_MSGQ__ASSOCIATE);
	case SEA_IPC_SET:
		return ipc_has_perm(perm, SEA_MSGQ__SETATTR);
	case SEA_IPC_RMID:
		return ipc_has_perm(perm, SEA_MSGQ__DESTROY);
	}
	return 0;
}

#endif
