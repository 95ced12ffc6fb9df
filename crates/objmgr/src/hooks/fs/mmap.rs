//! Memory mappings: mmap(2) of a file or of anonymous memory, mprotect(2), and mappings at
//! low addresses. An object manager has no address space of its own to look at, so the
//! caller says what the kernel reads from the mm: the mapping's kind and whether it was
//! copied on write.

use crate::audit::AuditData;
use crate::blobs::{FileSec, InodeSec};
use crate::classes::{common_file, memprotect, process, Class};
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::Result;
use crate::ObjectManager;

use super::path;

/// mmap(2)'s protection bits and mapping types (linux/mman.h).
pub mod mman {
    pub const PROT_READ: u32 = 0x1;
    pub const PROT_WRITE: u32 = 0x2;
    pub const PROT_EXEC: u32 = 0x4;
    pub const MAP_SHARED: u32 = 0x01;
    pub const MAP_PRIVATE: u32 = 0x02;
    pub const MAP_SHARED_VALIDATE: u32 = 0x03;
    pub const MAP_TYPE: u32 = 0x0f;
}

/// The lowest address user space may map without `memprotect {mmap_zero}`: the kernel's
/// CONFIG_LSM_MMAP_MIN_ADDR default.
pub const LSM_MMAP_MIN_ADDR: u64 = 65536;

/// Data is not executable unless asked (the kernel's default_noexec, true on every
/// architecture whose default data mappings lack VM_EXEC: x86-64, arm64, ...): the
/// `execmem`, `execheap` and `execstack` checks apply.
const DEFAULT_NOEXEC: bool = true;

/// An open file being mapped: its blob, its inode, and its path for the audit record.
#[derive(Clone, Copy, Debug)]
pub struct MappedFile<'a> {
    pub file: &'a FileSec,
    pub inode: &'a InodeSec,
    pub path: &'a str,
}

/// Where a mapping lies, as selinux_file_mprotect tells it from the mm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VmaKind {
    /// Inside the program's heap (between start_brk and brk).
    Heap,
    /// The initial stack or the current thread's stack.
    Stack,
    /// Anything else.
    Other,
}

/// A mapping whose protection changes (what selinux_file_mprotect reads of the vma).
#[derive(Clone, Copy, Debug)]
pub struct Vma<'a> {
    /// The mapped file, or None for anonymous memory.
    pub file: Option<MappedFile<'a>>,
    /// Shared (VM_SHARED), not private.
    pub shared: bool,
    /// Already executable (VM_EXEC).
    pub exec: bool,
    pub kind: VmaKind,
    /// Some page of it was copied on write (the vma has an anon_vma): a private file
    /// mapping whose content may differ from the file's.
    pub cowed: bool,
}

impl ObjectManager {
    /// mmap(2) of `file` (None for anonymous memory) with protection `prot` and flags `flags`
    /// (selinux_mmap_file): `{map}` on the inode (FILE audit data, no `fd {use}`); then
    /// file_map_prot_check: `process {execmem}` when an anonymous mapping, or a private one
    /// that is also writable, is made executable; then, for a file, `fd {use}` when another SID
    /// opened it and `{read}`, with `{write}` for a shared writable mapping and `{execute}` for
    /// an executable one. A mapping is shared only when its type is MAP_SHARED exactly, as
    /// the kernel tests it (MAP_SHARED_VALIDATE counts as private here too). `prot` is the
    /// protection after READ_IMPLIES_EXEC, as the kernel passes it.
    pub fn mmap_file(
        &self,
        task: &Task,
        file: Option<MappedFile>,
        prot: u32,
        flags: u32,
    ) -> Result<()> {
        if let Some(f) = file {
            self.check(
                Hook::MmapFile,
                task,
                f.inode.sid(),
                f.inode.class(),
                common_file::MAP,
                &path(f.inode, f.path),
            )?;
        }
        self.file_map_prot_check(
            Hook::MmapFile,
            task,
            file,
            prot,
            flags & mman::MAP_TYPE == mman::MAP_SHARED,
        )
    }

    /// mprotect(2) of `vma` to protection `prot` (selinux_file_mprotect). Making a mapping
    /// executable that was not asks first, by its kind: `process {execheap}` in the heap;
    /// `process {execstack}` for an anonymous stack; `{execmod}` for a file mapping copied on
    /// write (file_has_perm: `fd {use}` first when another SID opened it). Then the checks of
    /// file_map_prot_check, as [`ObjectManager::mmap_file`] makes them.
    pub fn file_mprotect(&self, task: &Task, vma: &Vma, prot: u32) -> Result<()> {
        let h = Hook::FileMprotect;
        let sid = task.sid();
        if DEFAULT_NOEXEC && prot & mman::PROT_EXEC != 0 && !vma.exec {
            if vma.kind == VmaKind::Heap {
                self.check(
                    h,
                    task,
                    sid,
                    Class::PROCESS,
                    process::EXECHEAP,
                    &AuditData::None,
                )?;
            } else if vma.file.is_none() && vma.kind == VmaKind::Stack {
                self.check(
                    h,
                    task,
                    sid,
                    Class::PROCESS,
                    process::EXECSTACK,
                    &AuditData::None,
                )?;
            } else if let Some(f) = vma.file.filter(|_| vma.cowed) {
                self.file_has_perm(
                    h,
                    task,
                    f.file,
                    f.inode,
                    f.inode.sid(),
                    common_file::EXECMOD,
                    f.path,
                )?;
            }
        }
        self.file_map_prot_check(h, task, vma.file, prot, vma.shared)
    }

    /// The kernel's file_map_prot_check (without the backing-file mounter's check).
    fn file_map_prot_check(
        &self,
        hook: Hook,
        task: &Task,
        file: Option<MappedFile>,
        prot: u32,
        shared: bool,
    ) -> Result<()> {
        let exec = prot & mman::PROT_EXEC != 0;
        let write = prot & mman::PROT_WRITE != 0;
        if DEFAULT_NOEXEC && exec && (file.is_none() || (!shared && write)) {
            let sid = task.sid();
            self.check(
                hook,
                task,
                sid,
                Class::PROCESS,
                process::EXECMEM,
                &AuditData::None,
            )?;
        }
        let Some(f) = file else { return Ok(()) };
        let mut av = common_file::READ;
        if shared && write {
            av |= common_file::WRITE;
        }
        if exec {
            av |= common_file::EXECUTE;
        }
        self.file_has_perm(hook, task, f.file, f.inode, f.inode.sid(), av, f.path)
    }

    /// A mapping at address `addr` (selinux_mmap_addr): below [`LSM_MMAP_MIN_ADDR`],
    /// `memprotect {mmap_zero}` of the task to itself, no audit data; above it nothing. The
    /// POSIX capability check the kernel makes first (cap_mmap_addr: `CAP_SYS_RAWIO` below
    /// vm.mmap_min_addr, through cap_capable, which asks SELinux nothing) is the caller's.
    pub fn mmap_addr(&self, task: &Task, addr: u64) -> Result<()> {
        if addr >= LSM_MMAP_MIN_ADDR {
            return Ok(());
        }
        let sid = task.sid();
        self.check(
            Hook::MmapAddr,
            task,
            sid,
            Class::MEMPROTECT,
            memprotect::MMAP_ZERO,
            &AuditData::None,
        )
        .map(|_| ())
    }
}
