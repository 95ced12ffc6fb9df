// SPDX-License-Identifier: GPL-2.0
/* seaccess.bpf.c's Memory: mmap and mprotect.
 * Included by seaccess.bpf.c, in its order, never on its own. */
#ifndef SEACCESS_MEMORY_H
#define SEACCESS_MEMORY_H

/* file_has_perm without the fd use check (no file storage): inode_has_perm, the inode decided
 * as inode_sid says (a private inode never). */
static __always_inline int file_perm(const struct gen *g, __u32 ssid, struct file *file, __u32 av)
{
	struct inode *inode = file->f_inode;
	struct obj o = { .dentry = file->f_path.dentry, .inode = inode };
	__u32 isid;

	if (inode->i_flags & SEA_S_PRIVATE)
		return 0;
	if (!inode_sid(g, inode, bpf_inode_storage_get(&inode_store, inode, 0, 0), &isid))
		return 0;
	return has_perm(g, ssid, isid, inode_class(inode->i_mode), av, &o, 0);
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

#endif
