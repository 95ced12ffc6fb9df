//! The FUSE adapter: each request handed to [`Core`], its answer or errno handed back. The
//! only module that knows FUSE.
//!
//! Timeouts are zero for entries and attributes, and every file is opened for direct I/O:
//! the kernel's caches would otherwise let one caller's lookup, stat or read serve another
//! caller, or outlive a revoked permission, without a request reaching the checks. Shared
//! maps of those files are allowed (FUSE_DIRECT_IO_ALLOW_MMAP): the pages of a map are
//! cached, as a kernel checks a mapping once, at mmap, and never its loads and stores.

use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::{Arc, Weak};
use std::time::{Duration, UNIX_EPOCH};

use fuser::{
    AccessFlags, CopyFileRangeFlags, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    Generation, INodeNo, InitFlags, IoctlFlags, KernelConfig, LockOwner, OpenFlags, RenameFlags,
    ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyIoctl,
    ReplyLock, ReplyOpen, ReplyStatfs, ReplyWrite, ReplyXattr, Request, TimeOrNow, WriteFlags,
};

use crate::backing::Stat;
use crate::core::attrs::{SetAttr, SetTime};
use crate::core::{Core, Req};
use crate::error::FsError;

const TTL: Duration = Duration::ZERO;

/// The filesystem FUSE serves.
pub struct SeaccessFs {
    core: Arc<Core>,
}

impl SeaccessFs {
    pub fn new(core: Arc<Core>) -> SeaccessFs {
        SeaccessFs { core }
    }
}

/// Mount options: other users' processes reach the mount, and the kernel's own DAC checks
/// come first, as on a kernel with SELinux.
pub fn config(threads: usize) -> fuser::Config {
    let mut c = fuser::Config::default();
    c.mount_options = vec![
        fuser::MountOption::FSName("seaccess".into()),
        fuser::MountOption::Subtype("seaccess".into()),
        fuser::MountOption::DefaultPermissions,
        fuser::MountOption::Dev,
        fuser::MountOption::Suid,
    ];
    c.acl = fuser::SessionACL::All;
    c.n_threads = Some(threads.max(1));
    c.clone_fd = true;
    c
}

/// Mounts `fs` at `mountpoint` and serves it on background threads until the returned
/// session is unmounted. Where the backing file system gives no file handles, so that nodes
/// keep their descriptors for life, a thread of its own asks the kernel to forget nodes the
/// core can spare ([`Core::to_forget`]); elsewhere nodes give up their descriptors themselves
/// (see [`crate::hot`]).
pub fn spawn(
    core: Arc<Core>,
    mountpoint: &Path,
    threads: usize,
) -> std::io::Result<fuser::BackgroundSession> {
    let session = fuser::Session::new(SeaccessFs::new(core.clone()), mountpoint, &config(threads))?;
    let dev = session.as_fd().try_clone_to_owned()?;
    let bg = session.spawn()?;
    if core.pins_nodes() {
        let weak = Arc::downgrade(&core);
        std::thread::Builder::new()
            .name("seaccess-prune".into())
            .spawn(move || prune(&weak, &dev))?;
    }
    Ok(bg)
}

/// How often the node count is looked at.
const PRUNE_EVERY: Duration = Duration::from_millis(100);
/// FUSE_NOTIFY_PRUNE (protocol 7.45, Linux 6.16): the kernel evicts those of the inodes named
/// that nothing uses, and sends their FORGET.
const FUSE_NOTIFY_PRUNE: i32 = 9;
/// Node ids per notification.
const PRUNE_BATCH: usize = 512;

/// Asks the kernel to forget the nodes the core can spare, as long as the core lives and the
/// kernel takes the notifications.
fn prune(core: &Weak<Core>, dev: &OwnedFd) {
    loop {
        std::thread::sleep(PRUNE_EVERY);
        let Some(core) = core.upgrade() else { return };
        for ids in core.to_forget().chunks(PRUNE_BATCH) {
            // fuse_out_header (unique 0: a notification, its code in `error`), then
            // fuse_notify_prune_out and the ids.
            let len = 32 + 8 * ids.len();
            let mut msg = Vec::with_capacity(len);
            msg.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_ne_bytes());
            msg.extend_from_slice(&FUSE_NOTIFY_PRUNE.to_ne_bytes());
            msg.extend_from_slice(&0u64.to_ne_bytes());
            msg.extend_from_slice(&u32::try_from(ids.len()).unwrap_or(0).to_ne_bytes());
            msg.extend_from_slice(&[0u8; 12]);
            ids.iter()
                .for_each(|id| msg.extend_from_slice(&id.to_ne_bytes()));
            match rustix::io::write(dev.as_fd(), &msg) {
                Ok(_) => {}
                // The mount is gone.
                Err(
                    rustix::io::Errno::NODEV | rustix::io::Errno::NOTCONN | rustix::io::Errno::BADF,
                ) => return,
                Err(e) => {
                    core.log(&format!("the kernel does not take FUSE_NOTIFY_PRUNE ({e}): nodes are kept until it forgets them"));
                    return;
                }
            }
        }
    }
}

fn who(req: &Request) -> Req {
    Req {
        pid: req.pid(),
        uid: req.uid(),
        gid: req.gid(),
    }
}

fn errno(e: &FsError) -> Errno {
    Errno::from_i32(e.errno())
}

fn kind(mode: u32) -> FileType {
    match mode & libc::S_IFMT {
        libc::S_IFDIR => FileType::Directory,
        libc::S_IFLNK => FileType::Symlink,
        libc::S_IFCHR => FileType::CharDevice,
        libc::S_IFBLK => FileType::BlockDevice,
        libc::S_IFIFO => FileType::NamedPipe,
        libc::S_IFSOCK => FileType::Socket,
        _ => FileType::RegularFile,
    }
}

/// The attributes callers see: the backing file's, under the node's id.
fn attr(id: u64, m: &Stat) -> FileAttr {
    let t = |ts: rustix::fs::StatxTimestamp| {
        let ns = Duration::new(0, ts.tv_nsec);
        if ts.tv_sec >= 0 {
            UNIX_EPOCH + Duration::new(ts.tv_sec.unsigned_abs(), 0) + ns
        } else {
            UNIX_EPOCH - Duration::new(ts.tv_sec.unsigned_abs(), 0) + ns
        }
    };
    let mode = u32::from(m.stx_mode);
    FileAttr {
        ino: INodeNo(id),
        size: m.stx_size,
        blocks: m.stx_blocks,
        atime: t(m.stx_atime),
        mtime: t(m.stx_mtime),
        ctime: t(m.stx_ctime),
        crtime: UNIX_EPOCH,
        kind: kind(mode),
        perm: (mode & 0o7777) as u16,
        nlink: m.stx_nlink,
        uid: m.stx_uid,
        gid: m.stx_gid,
        rdev: rustix::fs::makedev(m.stx_rdev_major, m.stx_rdev_minor) as u32,
        blksize: m.stx_blksize,
        flags: 0,
    }
}

fn set_time(t: Option<TimeOrNow>) -> Option<SetTime> {
    t.map(|t| match t {
        TimeOrNow::Now => SetTime::Now,
        TimeOrNow::SpecificTime(s) => SetTime::At(s),
    })
}

fn xattr_reply(r: crate::Result<Vec<u8>>, size: u32, reply: ReplyXattr) {
    match r {
        Ok(v) if size == 0 => reply.size(v.len() as u32),
        Ok(v) if v.len() > size as usize => reply.error(Errno::from_i32(libc::ERANGE)),
        Ok(v) => reply.data(&v),
        Err(e) => reply.error(errno(&e)),
    }
}

fn empty(r: crate::Result<()>, reply: ReplyEmpty) {
    match r {
        Ok(()) => reply.ok(),
        Err(e) => reply.error(errno(&e)),
    }
}

fn entry(r: crate::Result<(Arc<crate::nodes::Node>, Stat)>, reply: ReplyEntry) {
    match r {
        Ok((n, m)) => reply.entry(&TTL, &attr(n.id, &m), Generation(0)),
        Err(e) => reply.error(errno(&e)),
    }
}

impl Filesystem for SeaccessFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> std::io::Result<()> {
        // Locks come to the checks (selinux_file_lock) instead of staying in the kernel.
        let _ = config.add_capabilities(InitFlags::FUSE_POSIX_LOCKS | InitFlags::FUSE_FLOCK_LOCKS);
        // MAP_SHARED of a file opened for direct I/O (Linux 6.6; ENODEV without it, which
        // sqlite's WAL index cannot live with). read(2) and write(2) still bypass the page
        // cache, so each is a request and is checked; only the map's own pages are cached,
        // filled by READs of the faulting caller and written back by WRITEs with no caller
        // (see `write` below), as a kernel checks a mapping at mmap only.
        if config
            .add_capabilities(InitFlags::FUSE_DIRECT_IO_ALLOW_MMAP)
            .is_err()
        {
            self.core.log("the kernel does not take FUSE_DIRECT_IO_ALLOW_MMAP (Linux 6.6): shared maps of files on the mount fail with ENODEV");
        }
        Ok(())
    }

    fn lookup(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        entry(self.core.lookup(who(req), parent.0, name), reply);
    }

    fn forget(&self, _req: &Request, ino: INodeNo, nlookup: u64) {
        self.core.forget(ino.0, nlookup);
    }

    fn getattr(&self, req: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.core.getattr(who(req), ino.0, fh.map(|f| f.0)) {
            Ok(m) => reply.attr(&TTL, &attr(ino.0, &m)),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn setattr(
        &self,
        req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<std::time::SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<std::time::SystemTime>,
        _chgtime: Option<std::time::SystemTime>,
        _bkuptime: Option<std::time::SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let a = SetAttr {
            mode,
            uid,
            gid,
            size,
            atime: set_time(atime),
            mtime: set_time(mtime),
            fh: fh.map(|f| f.0),
        };
        match self.core.setattr(who(req), ino.0, &a) {
            Ok(m) => reply.attr(&TTL, &attr(ino.0, &m)),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn readlink(&self, req: &Request, ino: INodeNo, reply: ReplyData) {
        match self.core.readlink(who(req), ino.0) {
            Ok(p) => reply.data(p.as_os_str().as_encoded_bytes()),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        entry(
            self.core
                .mknod(who(req), parent.0, name, mode & !(umask & 0o777), rdev),
            reply,
        );
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        entry(
            self.core
                .mkdir(who(req), parent.0, name, mode & !(umask & 0o777)),
            reply,
        );
    }

    fn unlink(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        empty(self.core.unlink(who(req), parent.0, name), reply);
    }

    fn rmdir(&self, req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        empty(self.core.rmdir(who(req), parent.0, name), reply);
    }

    fn symlink(
        &self,
        req: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        entry(
            self.core.symlink(who(req), parent.0, link_name, target),
            reply,
        );
    }

    fn rename(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        empty(
            self.core
                .rename(who(req), parent.0, name, newparent.0, newname, flags.bits()),
            reply,
        );
    }

    fn link(
        &self,
        req: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        entry(self.core.link(who(req), ino.0, newparent.0, newname), reply);
    }

    fn open(&self, req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        match self.core.open(who(req), ino.0, flags.0) {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::FOPEN_DIRECT_IO),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn read(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.core.read(who(req), fh.0, offset, size) {
            Ok(v) => reply.data(&v),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn write(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        // The kernel writing back a shared map's dirty pages: FUSE_WRITE_CACHE, sent with no
        // credentials (pid 0), on the handle of an open that mapped the file shared and
        // writable. A caller's own write always carries its pid (every file is opened for
        // direct I/O, so no write of a caller goes through the cache).
        let r = if write_flags.contains(WriteFlags::FUSE_WRITE_CACHE) && req.pid() == 0 {
            self.core.writeback(fh.0, offset, data)
        } else {
            self.core.write(who(req), fh.0, offset, data)
        };
        match r {
            Ok(n) => reply.written(n),
            Err(e) => reply.error(errno(&e)),
        }
    }

    // No flush: it has no SELinux hook, and locks are the open's own (released with it), so
    // the default ENOSYS tells the kernel to stop sending one request per close(2).

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.core.release(fh.0);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        empty(self.core.fsync(fh.0, datasync), reply);
    }

    fn opendir(&self, req: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        match self.core.open(who(req), ino.0, flags.0 | libc::O_DIRECTORY) {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn readdir(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        match self.core.readdir(who(req), fh.0, offset) {
            Ok(entries) => {
                for (next, e) in entries {
                    if reply.add(INodeNo(e.ino), next, kind(e.mode), &e.name) {
                        break;
                    }
                }
                reply.ok();
            }
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.core.release(fh.0);
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn statfs(&self, req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        match self.core.statfs(who(req)) {
            Ok(s) => reply.statfs(
                s.f_blocks,
                s.f_bfree,
                s.f_bavail,
                s.f_files,
                s.f_ffree,
                s.f_bsize as u32,
                s.f_namemax as u32,
                s.f_frsize as u32,
            ),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn setxattr(
        &self,
        req: &Request,
        ino: INodeNo,
        name: &OsStr,
        value: &[u8],
        flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        empty(
            self.core
                .setxattr(who(req), ino.0, &name.to_string_lossy(), value, flags),
            reply,
        );
    }

    fn getxattr(&self, req: &Request, ino: INodeNo, name: &OsStr, size: u32, reply: ReplyXattr) {
        xattr_reply(
            self.core.getxattr(who(req), ino.0, &name.to_string_lossy()),
            size,
            reply,
        );
    }

    fn listxattr(&self, req: &Request, ino: INodeNo, size: u32, reply: ReplyXattr) {
        xattr_reply(self.core.listxattr(who(req), ino.0), size, reply);
    }

    fn removexattr(&self, req: &Request, ino: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        empty(
            self.core
                .removexattr(who(req), ino.0, &name.to_string_lossy()),
            reply,
        );
    }

    fn access(&self, req: &Request, ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        empty(self.core.access(who(req), ino.0, mask.bits() as u32), reply);
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        match self
            .core
            .create(who(req), parent.0, name, mode & !(umask & 0o777), flags)
        {
            Ok((n, m, fh)) => reply.created(
                &TTL,
                &attr(n.id, &m),
                Generation(0),
                FileHandle(fh),
                FopenFlags::FOPEN_DIRECT_IO,
            ),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn getlk(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _owner: LockOwner,
        start: u64,
        end: u64,
        typ: i32,
        _pid: u32,
        reply: ReplyLock,
    ) {
        match self.core.getlk(who(req), fh.0, start, end, typ) {
            Ok((s, e, t, p)) => reply.locked(s, e, t, p),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn setlk(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _owner: LockOwner,
        start: u64,
        end: u64,
        typ: i32,
        _pid: u32,
        sleep: bool,
        reply: ReplyEmpty,
    ) {
        // A waiting lock holds no request thread: the core answers when it is taken, or
        // when the caller is signalled (see crate::locks).
        self.core.setlk(
            who(req),
            fh.0,
            start,
            end,
            typ,
            sleep,
            Box::new(move |r| empty(r, reply)),
        );
    }

    fn ioctl(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: IoctlFlags,
        cmd: u32,
        in_data: &[u8],
        _out_size: u32,
        reply: ReplyIoctl,
    ) {
        match self.core.ioctl(who(req), fh.0, cmd, in_data) {
            Ok(v) => reply.ioctl(0, &v),
            Err(e) => reply.error(errno(&e)),
        }
    }

    fn fallocate(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        empty(
            self.core.fallocate(who(req), fh.0, offset, length, mode),
            reply,
        );
    }

    fn copy_file_range(
        &self,
        req: &Request,
        _ino_in: INodeNo,
        fh_in: FileHandle,
        offset_in: u64,
        _ino_out: INodeNo,
        fh_out: FileHandle,
        offset_out: u64,
        len: u64,
        _flags: CopyFileRangeFlags,
        reply: ReplyWrite,
    ) {
        match self
            .core
            .copy_file_range(who(req), fh_in.0, offset_in, fh_out.0, offset_out, len)
        {
            Ok(n) => reply.written(u32::try_from(n).unwrap_or(u32::MAX)),
            Err(e) => reply.error(errno(&e)),
        }
    }
}
