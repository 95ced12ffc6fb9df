//! The backing tree's system calls, each on a descriptor, as virtiofsd's passthrough makes
//! them: nothing here takes a path longer than one validated component, so nothing the server
//! does leaves the tree, whatever is done to the tree meanwhile.
//!
//! - A name is resolved by [`resolve`] alone: openat2 beneath its parent's descriptor, one
//!   component, no symbolic link followed (a last component that is one is opened itself),
//!   no magic link, and no mount crossed. RESOLVE_NO_XDEV is what keeps the server off every
//!   other file system and off its own mount (a request to it would make a request thread
//!   wait on itself): a mount point inside the tree answers EXDEV. (`fstatat(dir, name,
//!   AT_SYMLINK_NOFOLLOW)` would not do: on a mount point it answers for the mounted root.)
//! - An object is acted on through its own O_PATH descriptor: the `*at` calls that take one
//!   with AT_EMPTY_PATH (statx, fchownat, fchmodat2, utimensat, linkat, readlinkat, fstatfs),
//!   else through `/proc/self/fd/N` relative to a descriptor of /proc/self/fd opened once
//!   ([`Backing`]): that magic link leads to exactly the inode the descriptor holds and no
//!   further (a symbolic link there is the link itself, not its target). The extended
//!   attribute calls go that way: getxattrat and its kin refuse an O_PATH descriptor with
//!   AT_EMPTY_PATH (EBADF, Linux 6.18), so they take the magic link's name relative to that
//!   directory descriptor instead.
//! - Only regular files and directories are opened for I/O ([`Backing::reopen`]): the server
//!   never opens a FIFO (which would block a request thread) or a device.
//! - A node that gave up its descriptor opens its inode again by file handle ([`open_handle`],
//!   see [`crate::hot`]): the file system decodes the handle to that inode generation or
//!   answers ESTALE, and no name is resolved on the way.

use std::ffi::{CStr, CString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags, Statx, StatxFlags};
use rustix::io::Errno;

/// A backing object's attributes (statx's basic ones).
pub type Stat = Statx;

/// The file type bits (S_IFMT) of `st`'s mode.
pub fn kind(st: &Stat) -> u32 {
    u32::from(st.stx_mode) & libc::S_IFMT
}

/// The (device, inode) pair naming `st`'s inode.
pub fn key(st: &Stat) -> (u64, u64) {
    (
        rustix::fs::makedev(st.stx_dev_major, st.stx_dev_minor),
        st.stx_ino,
    )
}

/// The directory SOURCE names, as a descriptor taken before anything is mounted there (so
/// that a tree mounted over itself is reached beneath its mount). The path is the
/// administrator's, and its links are followed as given.
pub fn open_root(path: &std::path::Path) -> std::io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        path,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// The one way a name is resolved: `name` in the directory `dir`, as an O_PATH descriptor of
/// what it names now (a symbolic link itself, never its target). The name must be one
/// component: anything else is EINVAL. A mount point answers EXDEV.
pub fn resolve(dir: BorrowedFd<'_>, name: &str) -> std::io::Result<OwnedFd> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') {
        return Err(Errno::INVAL.into());
    }
    let how = ResolveFlags::BENEATH
        | ResolveFlags::NO_SYMLINKS
        | ResolveFlags::NO_MAGICLINKS
        | ResolveFlags::NO_XDEV;
    Ok(rustix::fs::openat2(
        dir,
        name,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        how,
    )?)
}

/// The attributes of the object `fd` holds (statx on the descriptor itself).
pub fn stat(fd: BorrowedFd<'_>) -> std::io::Result<Stat> {
    Ok(rustix::fs::statx(
        fd,
        "",
        AtFlags::EMPTY_PATH | AtFlags::SYMLINK_NOFOLLOW,
        StatxFlags::BASIC_STATS,
    )?)
}

/// Changes the owner of the object `fd` holds (a symbolic link itself).
pub fn chown(fd: BorrowedFd<'_>, uid: Option<u32>, gid: Option<u32>) -> std::io::Result<()> {
    // -1 is chown's "leave it", never an id.
    let u = uid
        .filter(|&u| u != u32::MAX)
        .map(rustix::fs::Uid::from_raw);
    let g = gid
        .filter(|&g| g != u32::MAX)
        .map(rustix::fs::Gid::from_raw);
    Ok(rustix::fs::chownat(
        fd,
        "",
        u,
        g,
        AtFlags::EMPTY_PATH | AtFlags::SYMLINK_NOFOLLOW,
    )?)
}

/// Sets the times of the object `fd` holds.
pub fn utimens(fd: BorrowedFd<'_>, times: &rustix::fs::Timestamps) -> std::io::Result<()> {
    Ok(rustix::fs::utimensat(
        fd,
        "",
        times,
        AtFlags::EMPTY_PATH | AtFlags::SYMLINK_NOFOLLOW,
    )?)
}

/// The target of the symbolic link `fd` holds.
pub fn readlink(fd: BorrowedFd<'_>) -> std::io::Result<std::path::PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let t = rustix::fs::readlinkat(fd, "", Vec::new())?;
    Ok(std::ffi::OsString::from_vec(t.into_bytes()).into())
}

/// A new name `name` in `dir` for the object `fd` holds (ENOENT once it has no name left).
pub fn link(fd: BorrowedFd<'_>, dir: BorrowedFd<'_>, name: &str) -> std::io::Result<()> {
    Ok(rustix::fs::linkat(fd, "", dir, name, AtFlags::EMPTY_PATH)?)
}

/// Removes `name` from `dir` (a directory when `is_dir`).
pub fn unlink(dir: BorrowedFd<'_>, name: &str, is_dir: bool) -> std::io::Result<()> {
    Ok(rustix::fs::unlinkat(
        dir,
        name,
        if is_dir {
            AtFlags::REMOVEDIR
        } else {
            AtFlags::empty()
        },
    )?)
}

/// renameat2 between two directories' descriptors.
pub fn rename(
    from: BorrowedFd<'_>,
    old: &str,
    to: BorrowedFd<'_>,
    new: &str,
    flags: u32,
) -> std::io::Result<()> {
    Ok(rustix::fs::renameat_with(
        from,
        old,
        to,
        new,
        rustix::fs::RenameFlags::from_bits_retain(flags),
    )?)
}

/// The object just made as `name` in `dir`, which must be of file type `kind`: a name the
/// caller's kernel holds locked through the mount, so only a change made directly on the
/// backing tree can have put another object there, and that one is inside the tree too. One
/// that cannot be opened (no descriptor left) is removed again: never an object the server
/// cannot label.
pub fn made(dir: BorrowedFd<'_>, name: &str, kind: u32) -> std::io::Result<OwnedFd> {
    let fd = resolve(dir, name).inspect_err(|_| {
        let _ = unlink(dir, name, kind == libc::S_IFDIR);
    })?;
    if self::kind(&stat(fd.as_fd())?) != kind {
        return Err(std::io::Error::other(format!(
            "{name} was replaced as it was made"
        )));
    }
    Ok(fd)
}

/// Makes a directory `name` in `dir`.
pub fn mkdir(dir: BorrowedFd<'_>, name: &str, perm: u32) -> std::io::Result<()> {
    Ok(rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(perm))?)
}

/// Makes a node `name` of `mode` (its type and permissions) in `dir`.
pub fn mknod(dir: BorrowedFd<'_>, name: &str, mode: u32, rdev: u64) -> std::io::Result<()> {
    let t = rustix::fs::FileType::from_raw_mode(mode);
    Ok(rustix::fs::mknodat(
        dir,
        name,
        t,
        Mode::from_raw_mode(mode & 0o7777),
        rdev,
    )?)
}

/// Makes a symbolic link `name` in `dir` pointing at `target` (text only: never followed here).
pub fn symlink(dir: BorrowedFd<'_>, name: &str, target: &std::path::Path) -> std::io::Result<()> {
    Ok(rustix::fs::symlinkat(target, dir, name)?)
}

/// The file system statistics of the tree `fd` is in.
pub fn statfs(fd: BorrowedFd<'_>) -> std::io::Result<rustix::fs::StatVfs> {
    Ok(rustix::fs::fstatvfs(fd)?)
}

/// A file handle (name_to_handle_at): the file system's own name for one inode, and for one
/// generation of it. Opened again ([`open_handle`]) it gives that inode or ESTALE once the
/// inode is freed, never another file, whatever has become of its names meanwhile: decoding
/// a handle resolves no path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileHandle {
    kind: i32,
    bytes: Box<[u8]>,
}

/// The kernel's MAX_HANDLE_SZ.
const MAX_HANDLE_SZ: usize = 128;

/// struct file_handle with room for the longest handle.
#[repr(C)]
struct RawHandle {
    bytes: u32,
    kind: i32,
    f: [u8; MAX_HANDLE_SZ],
}

/// The file handle of the object `fd` holds (a symbolic link itself), and the id of the mount
/// `fd` is on; EOPNOTSUPP where the file system gives none.
pub fn handle_of(fd: BorrowedFd<'_>) -> std::io::Result<(FileHandle, i32)> {
    let mut raw = RawHandle {
        bytes: MAX_HANDLE_SZ as u32,
        kind: 0,
        f: [0; MAX_HANDLE_SZ],
    };
    let mut mnt: libc::c_int = 0;
    // SAFETY: name_to_handle_at reads the empty NUL-terminated name and writes at most
    // `raw.bytes` bytes after the header of `raw` (a struct file_handle with that much room)
    // and one int at `mnt`; both are live exclusive borrows for the call.
    let r = unsafe {
        libc::name_to_handle_at(
            fd.as_raw_fd(),
            c"".as_ptr(),
            (&raw mut raw).cast::<libc::file_handle>(),
            &mut mnt,
            libc::AT_EMPTY_PATH,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let n = (raw.bytes as usize).min(MAX_HANDLE_SZ);
    Ok((
        FileHandle {
            kind: raw.kind,
            bytes: raw.f.get(..n).unwrap_or_default().into(),
        },
        mnt,
    ))
}

/// The object `h` names, as an O_PATH descriptor (a symbolic link itself, never its target),
/// decoded on the file system of `mount`, an open directory (open_by_handle_at takes no O_PATH
/// descriptor there); ESTALE when that inode is gone. Needs CAP_DAC_READ_SEARCH.
pub fn open_handle(mount: BorrowedFd<'_>, h: &FileHandle) -> std::io::Result<OwnedFd> {
    use std::os::fd::FromRawFd;
    let mut raw = RawHandle {
        bytes: 0,
        kind: h.kind,
        f: [0; MAX_HANDLE_SZ],
    };
    let n = h.bytes.len().min(MAX_HANDLE_SZ);
    raw.f
        .get_mut(..n)
        .unwrap_or_default()
        .copy_from_slice(h.bytes.get(..n).unwrap_or_default());
    raw.bytes = n as u32;
    let flags = libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: open_by_handle_at reads the header and `raw.bytes` bytes of `raw`, a live
    // struct file_handle of that size, and takes the descriptor and flags by value.
    let r = unsafe {
        libc::open_by_handle_at(
            mount.as_raw_fd(),
            (&raw mut raw).cast::<libc::file_handle>(),
            flags,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `r` is a descriptor the call just opened, owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(r) })
}

/// Raises the limit on open descriptors as far as it goes: the server holds a descriptor per
/// node the kernel knows (the kernel keeps an inode, and so its node, until it forgets it),
/// and one per open file. With CAP_SYS_RESOURCE the hard limit itself goes up to
/// fs.nr_open, as virtiofsd raises it; without, the soft limit goes up to the hard one.
/// The limit reached.
pub fn raise_nofile() -> std::io::Result<u64> {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let l = getrlimit(Resource::Nofile);
    let hard = l.maximum.unwrap_or(u64::MAX);
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(0);
    if nr_open > hard
        && setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(nr_open),
                maximum: Some(nr_open),
            },
        )
        .is_ok()
    {
        return Ok(nr_open);
    }
    if l.current != l.maximum {
        setrlimit(
            Resource::Nofile,
            Rlimit {
                current: l.maximum,
                maximum: l.maximum,
            },
        )?;
    }
    Ok(hard)
}

/// A directory entry as getdents gives it.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The backing inode number (not a node id: the kernel learns those from LOOKUP).
    pub ino: u64,
    /// Its file type bits (S_IFMT; 0 when neither getdents nor the entry itself tells).
    pub kind: u32,
    /// Its name in the directory.
    pub name: std::ffi::OsString,
}

/// Every entry of the open directory `dir` but `.` and `..`, read from its start.
pub fn read_dir(dir: BorrowedFd<'_>) -> std::io::Result<Vec<Entry>> {
    use std::os::unix::ffi::OsStrExt;
    rustix::fs::seek(dir, rustix::fs::SeekFrom::Start(0))?;
    let mut buf = Vec::with_capacity(32 * 1024);
    let mut it = rustix::fs::RawDir::new(dir, buf.spare_capacity_mut());
    let mut out = Vec::new();
    while let Some(e) = it.next() {
        let e = e?;
        let name = e.file_name().to_bytes();
        if name == b"." || name == b".." {
            continue;
        }
        let mut kind = e.file_type().as_raw_mode() & libc::S_IFMT;
        if e.file_type() == rustix::fs::FileType::Unknown {
            // A file system whose getdents gives no types: the entry itself, resolved as
            // every name is (a mount point stays unknown).
            kind = std::str::from_utf8(name)
                .ok()
                .and_then(|n| resolve(dir, n).ok())
                .and_then(|fd| stat(fd.as_fd()).ok())
                .map_or(0, |s| self::kind(&s));
        }
        out.push(Entry {
            ino: e.ino(),
            kind,
            name: std::ffi::OsStr::from_bytes(name).to_os_string(),
        });
    }
    Ok(out)
}

// Extended attributes by descriptor (Linux 6.13; the same numbers on every architecture, as
// every system call since 424).
const SYS_SETXATTRAT: libc::c_long = 463;
const SYS_GETXATTRAT: libc::c_long = 464;
const SYS_LISTXATTRAT: libc::c_long = 465;
const SYS_REMOVEXATTRAT: libc::c_long = 466;

/// The kernel's struct xattr_args (XATTR_ARGS_SIZE_VER0).
#[repr(C)]
struct XattrArgs {
    value: u64,
    size: u32,
    flags: u32,
}

/// Values longer than this are refused (the VFS's XATTR_SIZE_MAX).
const XATTR_SIZE_MAX: usize = 65536;

fn cstr(s: &str) -> std::io::Result<CString> {
    CString::new(s).map_err(|_| Errno::INVAL.into())
}

/// A system call's return value as a result (errno on -1).
fn ret(r: libc::c_long) -> std::io::Result<usize> {
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    usize::try_from(r).map_err(|_| Errno::INVAL.into())
}

/// What acts through `/proc/self/fd`: a descriptor of that directory, opened once at start.
pub struct Backing {
    proc: OwnedFd,
    /// Whether the kernel has the `*xattrat` calls (cleared at the first ENOSYS).
    xattrat: AtomicBool,
}

impl Backing {
    /// Opens /proc/self/fd (it must be procfs: its entries are magic links to our own
    /// descriptors' inodes, which is what the operations below rely on).
    pub fn new() -> std::io::Result<Backing> {
        let proc = rustix::fs::open(
            "/proc/self/fd",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let fs = rustix::fs::fstatfs(&proc)?;
        if fs.f_type != libc::PROC_SUPER_MAGIC {
            return Err(std::io::Error::other("/proc/self/fd is not on procfs"));
        }
        Ok(Backing {
            proc,
            xattrat: AtomicBool::new(true),
        })
    }

    /// Use the `/proc/self/fd/N` path calls, as on a kernel without the `*xattrat` calls.
    #[cfg(test)]
    pub(crate) fn without_xattrat(&self) {
        self.xattrat.store(false, Ordering::Relaxed);
    }

    /// `fd`'s entry in /proc/self/fd: a magic link to exactly its inode.
    fn entry(fd: BorrowedFd<'_>) -> CString {
        // A decimal number has no NUL.
        CString::new(fd.as_raw_fd().to_string()).unwrap_or_default()
    }

    /// The same entry by its absolute path, for the calls that have no `*at` form.
    fn entry_path(fd: BorrowedFd<'_>) -> String {
        format!("/proc/self/fd/{}", fd.as_raw_fd())
    }

    /// The object `fd` holds, opened for I/O with `flags` (the access mode and the flags an
    /// open file keeps; O_CREAT, O_EXCL, O_TRUNC and O_NOFOLLOW are the caller's to leave
    /// out). `kind` is its file type: only a regular file or a directory is opened.
    pub fn reopen(
        &self,
        fd: BorrowedFd<'_>,
        kind: u32,
        flags: OFlags,
    ) -> std::io::Result<std::fs::File> {
        let flags = match kind {
            libc::S_IFREG => flags,
            libc::S_IFDIR => flags | OFlags::DIRECTORY,
            libc::S_IFLNK => return Err(Errno::LOOP.into()),
            _ => return Err(Errno::NXIO.into()),
        };
        let f = rustix::fs::openat(
            &self.proc,
            Self::entry(fd).as_c_str(),
            flags | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(f.into())
    }

    /// An O_PATH descriptor of the object the open `file` is.
    pub fn path_of(&self, file: BorrowedFd<'_>) -> std::io::Result<OwnedFd> {
        Ok(rustix::fs::openat(
            &self.proc,
            Self::entry(file).as_c_str(),
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
    }

    /// A new regular file `name` in `dir` (O_EXCL: never an existing one), as an O_PATH
    /// descriptor of exactly the file made.
    pub fn create(&self, dir: BorrowedFd<'_>, name: &str, perm: u32) -> std::io::Result<OwnedFd> {
        let f = rustix::fs::openat(
            dir,
            name,
            OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY,
            Mode::from_raw_mode(perm),
        )?;
        // Removed again if it cannot be held (no descriptor left): never an unlabelled file.
        self.path_of(f.as_fd()).inspect_err(|_| {
            let _ = unlink(dir, name, false);
        })
    }

    /// Sets the permission bits of the object `fd` holds (fchmodat2 on the descriptor, else
    /// fchmodat on its magic link; a symbolic link's are not changed: EOPNOTSUPP).
    pub fn chmod(&self, fd: BorrowedFd<'_>, mode: u32) -> std::io::Result<()> {
        // SAFETY: fchmodat2 reads the empty string, a live NUL-terminated constant, and takes
        // the rest by value; the descriptor is borrowed for the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_fchmodat2,
                fd.as_raw_fd() as libc::c_long,
                c"".as_ptr(),
                (mode & 0o7777) as libc::c_long,
                libc::AT_EMPTY_PATH as libc::c_long,
            )
        };
        match ret(r) {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => Ok(rustix::fs::chmodat(
                &self.proc,
                Self::entry(fd).as_c_str(),
                Mode::from_raw_mode(mode & 0o7777),
                AtFlags::empty(),
            )?),
            r => r.map(|_| ()),
        }
    }

    fn have_xattrat(&self, r: &std::io::Result<usize>) -> bool {
        if matches!(r, Err(e) if e.raw_os_error() == Some(libc::ENOSYS)) {
            self.xattrat.store(false, Ordering::Relaxed);
            return false;
        }
        true
    }

    /// The value of attribute `name` of the object `fd` holds (ENODATA when it has none).
    pub fn get_xattr(&self, fd: BorrowedFd<'_>, name: &str) -> std::io::Result<Vec<u8>> {
        let cname = cstr(name)?;
        let entry = Self::entry(fd);
        let mut buf = vec![0u8; 256];
        loop {
            let r = self.get_once(fd, &entry, &cname, &mut buf);
            match r {
                Ok(n) => {
                    buf.truncate(n);
                    return Ok(buf);
                }
                Err(e) if e.raw_os_error() == Some(libc::ERANGE) && buf.len() < XATTR_SIZE_MAX => {
                    buf.resize((buf.len() * 4).min(XATTR_SIZE_MAX), 0)
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn get_once(
        &self,
        fd: BorrowedFd<'_>,
        entry: &CStr,
        name: &CStr,
        buf: &mut [u8],
    ) -> std::io::Result<usize> {
        if self.xattrat.load(Ordering::Relaxed) {
            let mut args = XattrArgs {
                value: buf.as_mut_ptr() as u64,
                size: u32::try_from(buf.len()).unwrap_or(u32::MAX),
                flags: 0,
            };
            // SAFETY: getxattrat reads the two NUL-terminated strings and the args struct (its
            // size given), and writes at most `args.size` bytes at `args.value`, which is
            // `buf`, live and exclusively borrowed for the call.
            let r = unsafe {
                libc::syscall(
                    SYS_GETXATTRAT,
                    self.proc.as_raw_fd() as libc::c_long,
                    entry.as_ptr(),
                    0 as libc::c_long,
                    name.as_ptr(),
                    &mut args as *mut XattrArgs,
                    std::mem::size_of::<XattrArgs>(),
                )
            };
            let r = ret(r);
            if self.have_xattrat(&r) {
                return r;
            }
        }
        Ok(rustix::fs::getxattr(Self::entry_path(fd), name, buf)?)
    }

    /// Sets attribute `name` of the object `fd` holds (`flags`: XATTR_CREATE, XATTR_REPLACE).
    pub fn set_xattr(
        &self,
        fd: BorrowedFd<'_>,
        name: &str,
        value: &[u8],
        flags: u32,
    ) -> std::io::Result<()> {
        let cname = cstr(name)?;
        let entry = Self::entry(fd);
        if self.xattrat.load(Ordering::Relaxed) {
            let args = XattrArgs {
                value: value.as_ptr() as u64,
                size: u32::try_from(value.len()).map_err(|_| Errno::TOOBIG)?,
                flags,
            };
            // SAFETY: setxattrat reads the two NUL-terminated strings, the args struct (its
            // size given) and `args.size` bytes at `args.value`, which is `value`, live for
            // the call.
            let r = unsafe {
                libc::syscall(
                    SYS_SETXATTRAT,
                    self.proc.as_raw_fd() as libc::c_long,
                    entry.as_ptr(),
                    0 as libc::c_long,
                    cname.as_ptr(),
                    &args as *const XattrArgs,
                    std::mem::size_of::<XattrArgs>(),
                )
            };
            let r = ret(r);
            if self.have_xattrat(&r) {
                return r.map(|_| ());
            }
        }
        Ok(rustix::fs::setxattr(
            Self::entry_path(fd),
            cname.as_c_str(),
            value,
            rustix::fs::XattrFlags::from_bits_retain(flags),
        )?)
    }

    /// The attribute names of the object `fd` holds, each followed by a NUL.
    pub fn list_xattr(&self, fd: BorrowedFd<'_>) -> std::io::Result<Vec<u8>> {
        let entry = Self::entry(fd);
        let mut buf = vec![0u8; 1024];
        loop {
            match self.list_once(fd, &entry, &mut buf) {
                Ok(n) => {
                    buf.truncate(n);
                    return Ok(buf);
                }
                Err(e) if e.raw_os_error() == Some(libc::ERANGE) && buf.len() < XATTR_SIZE_MAX => {
                    buf.resize((buf.len() * 4).min(XATTR_SIZE_MAX), 0)
                }
                Err(e) if e.raw_os_error() == Some(libc::EOPNOTSUPP) => return Ok(Vec::new()),
                Err(e) => return Err(e),
            }
        }
    }

    fn list_once(
        &self,
        fd: BorrowedFd<'_>,
        entry: &CStr,
        buf: &mut [u8],
    ) -> std::io::Result<usize> {
        if self.xattrat.load(Ordering::Relaxed) {
            // SAFETY: listxattrat reads the NUL-terminated name and writes at most `buf.len()`
            // bytes into `buf`, live and exclusively borrowed for the call.
            let r = unsafe {
                libc::syscall(
                    SYS_LISTXATTRAT,
                    self.proc.as_raw_fd() as libc::c_long,
                    entry.as_ptr(),
                    0 as libc::c_long,
                    buf.as_mut_ptr(),
                    buf.len(),
                )
            };
            let r = ret(r);
            if self.have_xattrat(&r) {
                return r;
            }
        }
        Ok(rustix::fs::listxattr(Self::entry_path(fd), buf)?)
    }

    /// Removes attribute `name` of the object `fd` holds.
    pub fn remove_xattr(&self, fd: BorrowedFd<'_>, name: &str) -> std::io::Result<()> {
        let cname = cstr(name)?;
        let entry = Self::entry(fd);
        if self.xattrat.load(Ordering::Relaxed) {
            // SAFETY: removexattrat reads the two NUL-terminated strings, live for the call.
            let r = unsafe {
                libc::syscall(
                    SYS_REMOVEXATTRAT,
                    self.proc.as_raw_fd() as libc::c_long,
                    entry.as_ptr(),
                    0 as libc::c_long,
                    cname.as_ptr(),
                )
            };
            let r = ret(r);
            if self.have_xattrat(&r) {
                return r.map(|_| ());
            }
        }
        Ok(rustix::fs::removexattr(
            Self::entry_path(fd),
            cname.as_c_str(),
        )?)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn scratch(name: &str) -> (std::path::PathBuf, OwnedFd) {
        let d =
            std::env::temp_dir().join(format!("seaccess-fs-backing-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("f"), "f").unwrap();
        std::os::unix::fs::symlink("f", d.join("l")).unwrap();
        let fd = open_root(&d).unwrap();
        (d, fd)
    }

    fn attr(p: &std::path::Path, name: &str) -> Option<Vec<u8>> {
        let mut b = vec![0u8; 256];
        rustix::fs::lgetxattr(p, name, &mut b[..])
            .ok()
            .map(|n| b[..n].to_vec())
    }

    // Both routes to a node's attributes (the *xattrat calls on its /proc/self/fd entry, and
    // the path calls on that entry where the kernel lacks them) reach exactly the inode the
    // descriptor holds: a symbolic link's attributes are the link's own, never its target's.
    #[test]
    fn attributes_reach_the_held_inode_and_no_further() {
        if !rustix::process::geteuid().is_root() {
            eprintln!("SKIP: attributes_reach_the_held_inode_and_no_further: not root (trusted.*)");
            return;
        }
        for fallback in [false, true] {
            let (d, root) = scratch(if fallback { "paths" } else { "xattrat" });
            let b = Backing::new().unwrap();
            if fallback {
                b.without_xattrat();
            }
            let (l, f) = (
                resolve(root.as_fd(), "l").unwrap(),
                resolve(root.as_fd(), "f").unwrap(),
            );
            b.set_xattr(l.as_fd(), "trusted.t", b"link", 0).unwrap();
            b.set_xattr(f.as_fd(), "trusted.u", b"file", 0).unwrap();
            assert_eq!(
                attr(&d.join("l"), "trusted.t").as_deref(),
                Some(&b"link"[..]),
                "fallback {fallback}"
            );
            assert_eq!(
                attr(&d.join("f"), "trusted.t"),
                None,
                "the link was followed (fallback {fallback})"
            );
            assert_eq!(b.get_xattr(l.as_fd(), "trusted.t").unwrap(), b"link");
            assert_eq!(
                b.get_xattr(l.as_fd(), "trusted.u")
                    .map_err(|e| e.raw_os_error()),
                Err(Some(libc::ENODATA)),
                "fallback {fallback}"
            );
            let list = b.list_xattr(l.as_fd()).unwrap();
            assert!(
                list.split(|c| *c == 0).any(|n| n == b"trusted.t")
                    && !list.split(|c| *c == 0).any(|n| n == b"trusted.u"),
                "{list:?}"
            );
            b.remove_xattr(l.as_fd(), "trusted.t").unwrap();
            assert_eq!(attr(&d.join("l"), "trusted.t"), None);
            assert_eq!(
                attr(&d.join("f"), "trusted.u").as_deref(),
                Some(&b"file"[..])
            );
            let _ = std::fs::remove_dir_all(&d);
        }
    }

    // resolve takes one component: a path of two, `.`, `..` or nothing is EINVAL (never a
    // walk); a symbolic link is the link itself.
    #[test]
    fn resolve_takes_one_component_and_no_link() {
        let (d, root) = scratch("resolve");
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/x"), "x").unwrap();
        for bad in ["sub/x", ".", "..", "", "/etc"] {
            assert_eq!(
                resolve(root.as_fd(), bad)
                    .map(|_| ())
                    .map_err(|e| e.raw_os_error()),
                Err(Some(libc::EINVAL)),
                "{bad:?}"
            );
        }
        let l = resolve(root.as_fd(), "l").unwrap();
        assert_eq!(kind(&stat(l.as_fd()).unwrap()), libc::S_IFLNK);
        let _ = std::fs::remove_dir_all(&d);
    }
}
