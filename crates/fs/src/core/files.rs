//! Open files and directories: open and create (may_open, then selinux_file_open), read and
//! write (selinux_file_permission), readdir, fallocate and copy_file_range (file_permission
//! as the VFS asks it), locks (selinux_file_lock / selinux_file_fcntl), ioctl.

use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

use rustix::fs::OFlags;
use seaccess_objmgr::hooks::fs::{oflags, MAY_APPEND, MAY_EXEC, MAY_READ, MAY_WRITE};

use super::{Core, DirEntry, Handle, Req};
use crate::backing;
use crate::error::{FsError, Result};
use crate::locks;
use crate::nodes::{name_of, Node};

/// The open flag the kernel adds for an exec (__FMODE_EXEC), which FUSE passes on.
pub const FMODE_EXEC: i32 = 0o40;

/// may_open's access mask for `flags` (the VFS's ACC_MODE, O_TRUNC asking write, O_APPEND
/// append; an exec's open asks MAY_EXEC).
fn acc_mode(flags: i32) -> u32 {
    if flags & FMODE_EXEC != 0 {
        return MAY_EXEC;
    }
    let mut m = match flags & oflags::O_ACCMODE {
        oflags::O_RDONLY => MAY_READ,
        oflags::O_WRONLY => MAY_WRITE,
        oflags::O_RDWR => MAY_READ | MAY_WRITE,
        _ => MAY_READ | MAY_WRITE,
    };
    if flags & oflags::O_TRUNC != 0 {
        m |= MAY_WRITE;
    }
    if flags & oflags::O_APPEND != 0 {
        m |= MAY_APPEND;
    }
    m
}

/// The flags a node's inode is reopened with for the caller's open: its access mode (read for
/// an exec) and the flags an open file keeps. Never O_CREAT or O_EXCL (the object exists),
/// O_TRUNC (a SETATTR of the size does it), O_NOFOLLOW (the magic link reopened must be
/// followed, to our inode and no further), O_PATH or O_TMPFILE; O_DIRECTORY comes from the
/// node's type.
fn reopen_flags(flags: i32) -> OFlags {
    let acc = flags & oflags::O_ACCMODE;
    let read = acc != oflags::O_WRONLY || flags & FMODE_EXEC != 0;
    let write = acc != oflags::O_RDONLY;
    let mode = match (read, write) {
        (true, true) => OFlags::RDWR,
        (false, true) => OFlags::WRONLY,
        _ => OFlags::RDONLY,
    };
    // O_APPEND makes every write an append at the file's end, as the caller's descriptor.
    let keep = libc::O_APPEND | libc::O_NONBLOCK | libc::O_SYNC | libc::O_DSYNC | libc::O_NOATIME;
    mode | OFlags::from_bits_retain((flags & keep) as u32)
}

impl Core {
    /// OPEN and OPENDIR: may_open's selinux_inode_permission with the access mask, then
    /// selinux_file_open; the backing file is opened only then. O_TRUNC comes as a SETATTR
    /// of the size after the open (no atomic_o_trunc), as the kernel's handle_truncate.
    pub fn open(&self, req: Req, id: u64, flags: i32) -> Result<u64> {
        // The descriptor first, as open(2) takes one before it resolves anything: EMFILE
        // beyond the uid's share (crate::budget).
        let slot = self.budget.take(req.uid)?;
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let n = self.node(id)?;
        let rel = n.path();
        let shown = self.shown(&rel);
        self.gate(|| {
            self.om
                .inode_permission(t, &n.sec, acc_mode(flags), Some(name_of(&n.path())))
        })?;
        let fsec = self.open_check(|| self.om.file_open(t, &n.sec, &shown, flags & !FMODE_EXEC))?;
        // Only a regular file or a directory: never a FIFO or a device.
        let file = self
            .backing
            .reopen(n.fd()?.as_fd(), n.kind, reopen_flags(flags))?;
        Ok(self.new_fh(
            Handle {
                node: n,
                fsec,
                file,
                shown,
                entries: Mutex::new(None),
            },
            slot,
        ))
    }

    /// CREATE: the creation checks (may_create), then, as for a file just created, only
    /// selinux_file_open (may_open asks nothing of a file the open created).
    #[allow(clippy::too_many_arguments)]
    pub fn create(
        &self,
        req: Req,
        parent: u64,
        name: &std::ffi::OsStr,
        mode: u32,
        flags: i32,
    ) -> Result<(Arc<Node>, backing::Stat, u64)> {
        let slot = self.budget.take(req.uid)?;
        let perm = mode & 0o7777;
        let (n, st, c) = self.create_with(req, parent, name, libc::S_IFREG | perm, |d, name| {
            self.backing.create(d, name, perm)
        })?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let shown = self.shown(&n.path());
        let fsec = self.open_check(|| {
            self.om
                .file_open(t, &n.sec, &shown, flags & !(FMODE_EXEC | oflags::O_TRUNC))
        })?;
        let file = self
            .backing
            .reopen(n.fd()?.as_fd(), n.kind, reopen_flags(flags))?;
        let fh = self.new_fh(
            Handle {
                node: n.clone(),
                fsec,
                file,
                shown,
                entries: Mutex::new(None),
            },
            slot,
        );
        Ok((n, st, fh))
    }

    /// The open file `fh` and the caller, after selinux_file_permission with `mask`.
    fn file_checked(&self, req: Req, fh: u64, mask: u32) -> Result<Arc<Handle>> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let h = self.handle(fh)?;
        if let Some(why) = h.node.closed() {
            return Err(FsError::Closed(why));
        }
        self.gate(|| {
            self.om
                .file_permission(t, h.fsec()?, &h.node.sec, mask, &h.shown)
        })?;
        Ok(h)
    }

    /// READ: selinux_file_permission with MAY_READ.
    pub fn read(&self, req: Req, fh: u64, offset: u64, size: u32) -> Result<Vec<u8>> {
        let h = self.file_checked(req, fh, MAY_READ)?;
        let mut buf = vec![0u8; size as usize];
        let mut got = 0;
        while got < buf.len() {
            let n = h
                .file
                .read_at(buf.get_mut(got..).unwrap_or_default(), offset + got as u64)?;
            if n == 0 {
                break;
            }
            got += n;
        }
        buf.truncate(got);
        Ok(buf)
    }

    /// WRITE: selinux_file_permission with MAY_WRITE (an append on a file opened O_APPEND).
    pub fn write(&self, req: Req, fh: u64, offset: u64, data: &[u8]) -> Result<u32> {
        let h = self.file_checked(req, fh, MAY_WRITE)?;
        // pwrite on an O_APPEND descriptor appends, as the caller's write does.
        h.file.write_all_at(data, offset)?;
        Ok(u32::try_from(data.len()).unwrap_or(u32::MAX))
    }

    /// WRITE of a shared map's dirty pages by the kernel (FUSE_WRITE_CACHE, no calling
    /// process): no hook, as the kernel's own writeback asks nothing of SELinux; what a
    /// process may store through a map was checked at its mmap (selinux_mmap_file,
    /// file_map_prot_check: `{write}` for MAP_SHARED with PROT_WRITE), which the mount cannot
    /// see, and at the open (selinux_file_open), which it checked. The kernel writes back
    /// only through an open that mapped the file shared and writable, so an open for reading
    /// only, or a node closed since, is refused (fail closed) and the pages are not written.
    pub fn writeback(&self, fh: u64, offset: u64, data: &[u8]) -> Result<u32> {
        let h = self.handle(fh)?;
        if let Some(why) = h.node.closed() {
            return Err(FsError::Closed(why));
        }
        let acc = rustix::fs::fcntl_getfl(&h.file)? & OFlags::RWMODE;
        if acc == OFlags::RDONLY {
            return Err(FsError::errno_of(
                libc::EBADF,
                format!("{}: a write-back through an open for reading", h.shown),
            ));
        }
        h.file.write_all_at(data, offset)?;
        Ok(u32::try_from(data.len()).unwrap_or(u32::MAX))
    }

    /// RELEASE and RELEASEDIR: no hook.
    pub fn release(&self, fh: u64) {
        seaccess_types::lock(&self.handles).remove(&fh);
        seaccess_types::lock(&self.slots).remove(&fh);
        // Its locks went with it: a waiter may get one now.
        self.waits.poke();
    }

    /// FSYNC: no hook (the kernel's fsync asks nothing of SELinux).
    pub fn fsync(&self, fh: u64, datasync: bool) -> Result<()> {
        let h = self.handle(fh)?;
        if datasync {
            h.file.sync_data()?;
        } else {
            h.file.sync_all()?;
        }
        Ok(())
    }

    /// READDIR: iterate_dir's selinux_file_permission with MAY_READ on each call; the
    /// entries from `offset` on (read once, at the first call, from the open directory's own
    /// descriptor: an unlinked directory has none).
    pub fn readdir(&self, req: Req, fh: u64, offset: u64) -> Result<Vec<(u64, DirEntry)>> {
        let h = self.file_checked(req, fh, MAY_READ)?;
        let mut cache = seaccess_types::lock(&h.entries);
        if cache.is_none() || offset == 0 {
            let mut v = vec![
                DirEntry {
                    ino: h.node.id,
                    mode: libc::S_IFDIR,
                    name: ".".into(),
                },
                DirEntry {
                    ino: 1,
                    mode: libc::S_IFDIR,
                    name: "..".into(),
                },
            ];
            // The kernel learns node ids from LOOKUP; readdir's numbers are the backing ones,
            // as a passthrough's.
            v.extend(
                backing::read_dir(h.file.as_fd())?
                    .into_iter()
                    .map(|e| DirEntry {
                        ino: e.ino,
                        mode: e.kind,
                        name: e.name,
                    }),
            );
            *cache = Some(v);
        }
        let all = cache.as_ref().map(|v| v.as_slice()).unwrap_or_default();
        Ok(all
            .iter()
            .enumerate()
            .skip(offset as usize)
            .map(|(i, e)| (i as u64 + 1, e.clone()))
            .collect())
    }

    /// FALLOCATE: vfs_fallocate's selinux_file_permission with MAY_WRITE.
    pub fn fallocate(&self, req: Req, fh: u64, offset: u64, length: u64, mode: i32) -> Result<()> {
        let h = self.file_checked(req, fh, MAY_WRITE)?;
        let m = rustix::fs::FallocateFlags::from_bits_retain(mode as u32);
        rustix::fs::fallocate(&h.file, m, offset, length)?;
        Ok(())
    }

    /// COPY_FILE_RANGE: rw_verify_area's selinux_file_permission, MAY_READ on the source
    /// and then MAY_WRITE on the destination.
    #[allow(clippy::too_many_arguments)]
    pub fn copy_file_range(
        &self,
        req: Req,
        fh_in: u64,
        off_in: u64,
        fh_out: u64,
        off_out: u64,
        len: u64,
    ) -> Result<u64> {
        let hin = self.file_checked(req, fh_in, MAY_READ)?;
        let hout = self.file_checked(req, fh_out, MAY_WRITE)?;
        let (mut oi, mut oo) = (off_in, off_out);
        let n = rustix::fs::copy_file_range(
            &hin.file,
            Some(&mut oi),
            &hout.file,
            Some(&mut oo),
            usize::try_from(len).unwrap_or(usize::MAX),
        )?;
        Ok(n as u64)
    }

    /// The lock checks (selinux_file_lock, selinux_file_fcntl for F_GETLK/F_SETLK/F_SETLKW):
    /// `{lock}` through file_has_perm.
    fn lock_checked(&self, req: Req, fh: u64) -> Result<Arc<Handle>> {
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let h = self.handle(fh)?;
        self.gate(|| self.om.file_lock(t, h.fsec()?, &h.node.sec, &h.shown))?;
        Ok(h)
    }

    /// GETLK: the first lock that would conflict with `typ` over `start..=end`, as
    /// (start, end, type, pid); F_UNLCK when none. Locks are open-file-description locks on
    /// the backing file, one description per open of the mount.
    pub fn getlk(
        &self,
        req: Req,
        fh: u64,
        start: u64,
        end: u64,
        typ: i32,
    ) -> Result<(u64, u64, i32, u32)> {
        let h = self.lock_checked(req, fh)?;
        let mut fl = locks::flock(start, end, typ);
        locks::fcntl_lock(&h.file, libc::F_OFD_GETLK, &mut fl)?;
        let e = if fl.l_len == 0 {
            u64::MAX
        } else {
            (fl.l_start + fl.l_len - 1) as u64
        };
        Ok((fl.l_start as u64, e, i32::from(fl.l_type), 0))
    }

    /// SETLK (and flock, which FUSE sends as a lock of the whole file), answered through
    /// `done`. With `wait` (F_SETLKW) a lock held by another open waits in [`locks::Waits`]:
    /// no server thread blocks, the wait is bounded per uid (ENOLCK beyond) and ends with
    /// EINTR when the caller is signalled or gone.
    #[allow(clippy::too_many_arguments)]
    pub fn setlk(
        &self,
        req: Req,
        fh: u64,
        start: u64,
        end: u64,
        typ: i32,
        wait: bool,
        done: locks::Done,
    ) {
        let h = match self.lock_checked(req, fh) {
            Ok(h) => h,
            Err(e) => return done(Err(e)),
        };
        let mut fl = locks::flock(start, end, typ);
        match locks::fcntl_lock(&h.file, libc::F_OFD_SETLK, &mut fl) {
            Err(e) if wait && locks::conflict(&e) => {
                self.waits.add(&h, locks::flock(start, end, typ), req, done)
            }
            r => {
                // A release or a downgrade may let a waiter through.
                if r.is_ok() && typ != libc::F_WRLCK {
                    self.waits.poke();
                }
                done(r)
            }
        }
    }

    /// IOCTL: selinux_file_ioctl; then only the inode flag commands reach the backing file
    /// (an ioctl's argument is a pointer only the caller's own kernel can follow).
    pub fn ioctl(&self, req: Req, fh: u64, cmd: u32, input: &[u8]) -> Result<Vec<u8>> {
        use seaccess_objmgr::hooks::fs::ioctls::{FS_IOC_GETFLAGS, FS_IOC_SETFLAGS};
        let c = self.caller(req)?;
        let t = c.who.as_ref().map_err(|e| FsError::Closed(e.clone()))?;
        let h = self.handle(fh)?;
        self.gate(|| self.om.file_ioctl(t, h.fsec()?, &h.node.sec, cmd, &h.shown))?;
        let mut v: libc::c_long = 0;
        match cmd {
            FS_IOC_GETFLAGS => {}
            FS_IOC_SETFLAGS => {
                let b: [u8; 4] =
                    input
                        .get(..4)
                        .and_then(|b| b.try_into().ok())
                        .ok_or_else(|| {
                            FsError::errno_of(libc::EINVAL, "FS_IOC_SETFLAGS without its flags")
                        })?;
                v = libc::c_long::from(i32::from_ne_bytes(b));
            }
            _ => {
                return Err(FsError::errno_of(
                    libc::ENOTTY,
                    format!("ioctl {cmd:#x} is not passed to the backing file"),
                ))
            }
        }
        // SAFETY: both commands take a pointer to an integer of at least 4 bytes, which `v`
        // (8 bytes, live for the call) is; the descriptor is open for the call's length.
        let r = unsafe {
            libc::ioctl(
                h.file.as_raw_fd(),
                cmd as libc::Ioctl,
                &mut v as *mut libc::c_long,
            )
        };
        if r < 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        Ok(if cmd == FS_IOC_GETFLAGS {
            (v as i32).to_ne_bytes().to_vec()
        } else {
            Vec::new()
        })
    }
}
