//! selinux_restorecon (selinux_restorecon.c), what restorecon and setfiles run: each object
//! under a path given its file_contexts label, restorecon's rules kept: without
//! SET_SPECFILE_CTX an object that has a label keeps its user, role and range and only a
//! different type is changed, and a customizable type is left alone; NOCHANGE only reports;
//! VERBOSE says each change through the log callback ("Relabeled PATH from OLD to NEW").
//! Unlike libselinux on a kernel without SELinux, which finds no filesystem mounted with
//! `seclabel` and so skips every one, every filesystem here carries labels in extended
//! attributes. The SHA-1 digests restorecon keeps on directories (`-D`) are read, listed and
//! removed (selinux_restorecon_xattr, restorecon_xattr's library call), not written.
//!
//! Both walk with crates/label's descriptor walk, as `seaccess label --apply` does: restorecon
//! runs as root over trees other users own, and a walk by path strings followed a directory
//! swapped for a link out of the tree (issue 34). Beneath the path given nothing is resolved by
//! path: each object is a name in a directory held open, or a directory's own descriptor.

use std::ffi::{c_char, c_int, c_uint, CStr, CString};
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use std::sync::Mutex;

use seaccess_label::walk::{self, Entry, Flow, Root};
use seaccess_label::xattr::Attrs;
use seaccess_types::lock;

use crate::callbacks::{self, SELINUX_ERROR, SELINUX_INFO};
use crate::ffi::{self, Errno, Res, EINVAL};
use crate::selabel::{self, selabel_open, Handle};

const NOCHANGE: c_uint = 0x2;
const SET_SPECFILE_CTX: c_uint = 0x4;
const RECURSE: c_uint = 0x8;
const VERBOSE: c_uint = 0x10;
const REALPATH: c_uint = 0x40;
const XDEV: c_uint = 0x80;
const ABORT_ON_ERROR: c_uint = 0x200;
const LOG_MATCHES: c_uint = 0x800;
const IGNORE_NOENTRY: c_uint = 0x1000;
const COUNT_ERRORS: c_uint = 0x20000;

struct Settings {
    /// The handle lookups use (selinux_restorecon_set_sehandle), else one opened on demand.
    handle: usize,
    own: bool,
    exclude: Vec<PathBuf>,
    alt_root: Option<String>,
    /// selinux_restorecon_xattr's list (its first and last `struct dir_xattr`, 0 for none):
    /// like libselinux's, one list for the process, which every call extends.
    xattr_list: usize,
    xattr_last: usize,
}

static SETTINGS: Mutex<Settings> = Mutex::new(Settings {
    handle: 0,
    own: false,
    exclude: Vec::new(),
    alt_root: None,
    xattr_list: 0,
    xattr_last: 0,
});

/// restorecon's settings's lock, held across a fork (see [`crate::fork`]): it nests in no other lock.
pub(crate) struct Held(#[allow(dead_code)] std::sync::MutexGuard<'static, Settings>);

pub(crate) fn hold() -> Held {
    Held(lock(&SETTINGS))
}
static SKIPPED: AtomicI64 = AtomicI64::new(0);

fn handle() -> Res<*mut Handle> {
    let h = lock(&SETTINGS).handle;
    if h != 0 {
        return Ok(h as *mut Handle);
    }
    // Opened with SETTINGS free, so that it stays a lock that nests in no other (opening reads
    // the configuration under its own lock).
    let h = selabel::selabel_open(selabel::SELABEL_CTX_FILE, std::ptr::null(), 0);
    if h.is_null() {
        return Err(Errno(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::ENOENT),
        ));
    }
    let mut s = lock(&SETTINGS);
    if s.handle != 0 {
        // Another thread set one meanwhile: use it.
        selabel::selabel_close(h);
        return Ok(s.handle as *mut Handle);
    }
    s.handle = h as usize;
    s.own = true;
    Ok(h)
}

fn c_text(p: *mut c_char) -> Option<String> {
    if p.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated string this library allocated.
    let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    crate::names::freecon(p);
    Some(s)
}

/// One object: Ok(()) when done or skipped, Err when it failed. Its label is read and written
/// through the walk's descriptors (a name in a directory held open, or a directory's own
/// descriptor), never by path.
fn one(h: *mut Handle, e: &Entry, shown: &str, flags: c_uint) -> Res<()> {
    let ck = CString::new(e.key().into_owned()).map_err(|_| EINVAL)?;
    let mut newp: *mut c_char = std::ptr::null_mut();
    if selabel::selabel_lookup_raw(h, &mut newp, ck.as_ptr(), e.kind().mode() as c_int) < 0 {
        // No specification, or <<none>>: nothing to do.
        return Ok(());
    }
    let new = c_text(newp).ok_or(EINVAL)?;
    // As lgetfilecon_raw: an empty or unreadable label is no label.
    let cur = e
        .read_label(Attrs::Either)
        .ok()
        .flatten()
        .filter(|c| !c.is_empty());
    if flags & LOG_MATCHES != 0 {
        callbacks::log(SELINUX_INFO, &format!("{shown} matched by {new}\n"));
    }
    let force = flags & SET_SPECFILE_CTX != 0;
    if let Some(c) = &cur {
        if !force {
            let cc = CString::new(c.as_str()).map_err(|_| EINVAL)?;
            if c != &new && crate::admin::is_context_customizable(cc.as_ptr()) > 0 {
                if flags & VERBOSE != 0 {
                    callbacks::log(
                        SELINUX_INFO,
                        &format!("{shown} not reset as customized by admin to {c}\n"),
                    );
                }
                return Ok(());
            }
        }
    }
    let Some(target) = seaccess_label::restorecon::target(cur.as_deref(), &new, force) else {
        return Ok(());
    };
    let mut done = false;
    if flags & NOCHANGE == 0 {
        if target.as_bytes().contains(&0) {
            return Err(EINVAL);
        }
        if let Err(errno) = e.write_label(target.as_bytes(), Attrs::Either) {
            let err = std::io::Error::from(errno);
            callbacks::log(
                SELINUX_ERROR,
                &format!("Could not set context for {shown}:  {err}\n"),
            );
            return Err(Errno(errno.raw_os_error()));
        }
        done = true;
    }
    if flags & VERBOSE != 0 {
        let verb = if done { "Relabeled" } else { "Would relabel" };
        callbacks::log(
            SELINUX_INFO,
            &format!(
                "{verb} {shown} from {} to {target}\n",
                cur.as_deref().unwrap_or("(null)")
            ),
        );
    }
    Ok(())
}

/// The key file_contexts is asked about for `path`: itself, or with the alternate root cut off.
fn key_of(path: &str, alt: Option<&str>) -> Vec<u8> {
    match alt {
        Some(a) => path
            .strip_prefix(a)
            .map(|k| {
                if k.is_empty() {
                    "/".to_string()
                } else {
                    k.to_string()
                }
            })
            .unwrap_or_else(|| path.to_string())
            .into_bytes(),
        None => path.as_bytes().to_vec(),
    }
}

/// Walks `path` (crates/label's descriptor walk: no link beneath it followed, each object acted
/// on through a directory held open), giving each object outside the excluded paths its label.
/// Errors are counted in `errors`; with ABORT_ON_ERROR the first one ends the walk and is
/// returned (a directory that cannot be read is counted, never an abort, as before).
fn walk(
    h: *mut Handle,
    path: &Path,
    flags: c_uint,
    exclude: &[PathBuf],
    alt: Option<&str>,
    errors: &mut u64,
) -> Res<()> {
    let root = Root {
        path: path.to_path_buf(),
        key: key_of(&path.to_string_lossy(), alt),
        beneath: None,
    };
    let opts = walk::Options {
        one_fs: flags & XDEV != 0,
        sorted: true,
    };
    let abort = flags & ABORT_ON_ERROR != 0;
    // Shared by the two callbacks.
    let (first, count) = (std::cell::Cell::new(None), std::cell::Cell::new(0u64));
    walk::walk(
        std::slice::from_ref(&root),
        opts,
        &mut |e| {
            let p = e.path();
            if exclude.iter().any(|x| p.starts_with(x)) {
                return Flow::Prune;
            }
            if let Err(err) = one(h, &e, &p.to_string_lossy(), flags) {
                count.set(count.get() + 1);
                if abort {
                    first.set(Some(err));
                    return Flow::Stop;
                }
            }
            if flags & RECURSE == 0 {
                Flow::Prune
            } else {
                Flow::Continue
            }
        },
        &mut |err| {
            count.set(count.get() + 1);
            callbacks::log(SELINUX_ERROR, &format!("{err}\n"));
            if abort && !err.listing {
                first.set(Some(Errno(err.error.raw_os_error().unwrap_or(libc::EIO))));
                return Flow::Stop;
            }
            Flow::Continue
        },
    );
    *errors += count.get();
    first.into_inner().map_or(Ok(()), Err)
}

#[no_mangle]
pub extern "C" fn selinux_restorecon(path: *const c_char, flags: c_uint) -> c_int {
    ffi::guard(-1, || {
        let p = ffi::str_arg(path)?;
        let mut pb = PathBuf::from(p);
        if flags & REALPATH != 0 {
            pb = std::fs::canonicalize(&pb)
                .map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::ENOENT)))?;
        }
        match std::fs::symlink_metadata(&pb) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && flags & IGNORE_NOENTRY != 0 => {
                return Ok(0)
            }
            Err(e) => return Err(Errno(e.raw_os_error().unwrap_or(libc::ENOENT))),
        }
        let h = handle()?;
        let (exclude, alt) = {
            let s = lock(&SETTINGS);
            (s.exclude.clone(), s.alt_root.clone())
        };
        let mut errors = 0;
        walk(h, &pb, flags, &exclude, alt.as_deref(), &mut errors)?;
        SKIPPED.store(errors as i64, Relaxed);
        if errors > 0 && flags & COUNT_ERRORS == 0 {
            return Err(Errno(libc::EIO));
        }
        Ok(0)
    })
}

/// The same walk (one thread: the object count of a tree this library labels is bound by
/// the file system, not by lookups).
#[no_mangle]
pub extern "C" fn selinux_restorecon_parallel(
    path: *const c_char,
    flags: c_uint,
    _nthreads: usize,
) -> c_int {
    selinux_restorecon(path, flags)
}

#[no_mangle]
pub extern "C" fn selinux_restorecon_get_skipped_errors() -> libc::c_long {
    ffi::guard(0, || Ok(SKIPPED.load(Relaxed) as libc::c_long))
}

/// The handle lookups use from now on (the caller keeps it open).
#[no_mangle]
pub extern "C" fn selinux_restorecon_set_sehandle(h: *mut Handle) {
    ffi::guard((), || {
        let mut s = lock(&SETTINGS);
        if s.own && s.handle != 0 {
            selabel::selabel_close(s.handle as *mut Handle);
        }
        s.handle = h as usize;
        s.own = false;
        Ok(())
    })
}

/// A file backend handle for restorecon (the caller's to close).
#[no_mangle]
pub extern "C" fn selinux_restorecon_default_handle() -> *mut Handle {
    selabel_open(selabel::SELABEL_CTX_FILE, std::ptr::null(), 0)
}

/// Paths (and everything under them) the walk leaves alone.
#[no_mangle]
pub extern "C" fn selinux_restorecon_set_exclude_list(list: *const *const c_char) {
    ffi::guard((), || {
        let mut v = Vec::new();
        if !list.is_null() {
            for i in 0.. {
                // SAFETY: a NULL-terminated array of strings (the caller's contract).
                let p = unsafe { *list.add(i) };
                if p.is_null() {
                    break;
                }
                v.push(PathBuf::from(ffi::str_arg(p)?));
            }
        }
        lock(&SETTINGS).exclude = v;
        Ok(())
    })
}

/// A root to strip from each path before it is looked up (labelling an image mounted there).
#[no_mangle]
pub extern "C" fn selinux_restorecon_set_alt_rootpath(path: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let p = ffi::str_arg(path)?.trim_end_matches('/').to_string();
        lock(&SETTINGS).alt_root = Some(p);
        Ok(0)
    })
}

const XATTR_RECURSE: c_uint = 0x1;
const XATTR_DELETE_NONMATCH: c_uint = 0x2;
const XATTR_DELETE_ALL: c_uint = 0x4;

/// libselinux's `struct dir_xattr`.
#[repr(C)]
pub struct DirXattr {
    directory: *mut c_char,
    digest: *mut c_char,
    result: c_int,
    next: *mut DirXattr,
}

/// `enum digest_result`.
const MATCH: c_int = 0;
const NOMATCH: c_int = 1;
const DELETED_MATCH: c_int = 2;
const DELETED_NOMATCH: c_int = 3;
const DIGEST_ERROR: c_int = 4;

/// Whether libselinux skips a file system for digests: RAM file systems keep nothing across a
/// boot, so restorecon keeps no digest there.
fn is_in_memory(s: &rustix::fs::StatFs) -> bool {
    // linux/magic.h's RAMFS_MAGIC (libc has TMPFS_MAGIC only).
    const RAMFS_MAGIC: libc::__fsword_t = 0x8584_58f6;
    s.f_type == libc::TMPFS_MAGIC || s.f_type == RAMFS_MAGIC
}

/// Whether the file system holding `path` (the caller's, followed) is a RAM one.
fn in_memory(path: &Path) -> bool {
    rustix::fs::statfs(path).is_ok_and(|s| is_in_memory(&s))
}

/// A directory whose digest is read and perhaps removed: the caller's path (followed, as
/// libselinux's getxattr), or a directory the walk holds open.
#[derive(Clone, Copy)]
enum DigestOf<'a> {
    Path(&'a CStr),
    Fd(BorrowedFd<'a>),
}

/// A copy of `s` in memory C frees with free(3).
fn c_strdup(s: &CStr) -> Res<*mut c_char> {
    // SAFETY: a NUL-terminated string; the copy is checked for NULL.
    let p = unsafe { libc::strdup(s.as_ptr()) };
    if p.is_null() {
        return Err(crate::ffi::ENOMEM);
    }
    Ok(p)
}

/// One directory's entry (selinux_restorecon.c's add_xattr_entry): nothing when it keeps no
/// digest; else its digest in hex, whether it matches the specifications now, and, as the
/// flags ask, the attribute removed. `dir` is the directory's path (its key and its name in the
/// list); `at` how its attribute is reached.
fn xattr_entry(
    h: *mut Handle,
    dir: &Path,
    at: DigestOf<'_>,
    delete_nonmatch: bool,
    delete_all: bool,
) -> Res<Option<*mut DirXattr>> {
    let c = CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|_| EINVAL)?;
    let kept = match at {
        DigestOf::Path(p) => selabel::kept_digest(p),
        DigestOf::Fd(fd) => {
            let mut kept = [0u8; 20];
            (rustix::fs::fgetxattr(fd, selabel::SEHASH, &mut kept[..]) == Ok(20)).then_some(kept)
        }
    };
    let Some(kept) = kept else { return Ok(None) };
    let now = selabel::partial_matches_digest(h, c.as_bytes())?;
    let matched = now == Some(kept);
    let mut result = if matched { MATCH } else { NOMATCH };
    if (delete_nonmatch && !matched) || delete_all {
        result = if matched {
            DELETED_MATCH
        } else {
            DELETED_NOMATCH
        };
        let removed = match at {
            DigestOf::Path(p) => rustix::fs::removexattr(p, selabel::SEHASH),
            DigestOf::Fd(fd) => rustix::fs::fremovexattr(fd, selabel::SEHASH),
        };
        if let Err(errno) = removed {
            let e = std::io::Error::from(errno);
            callbacks::log(
                SELINUX_ERROR,
                &format!(
                    "Error: {e} removing xattr \"{}\" from: {}\n",
                    selabel::SEHASH.to_string_lossy(),
                    dir.display()
                ),
            );
            result = DIGEST_ERROR;
        }
    }
    let hex: String = kept.iter().map(|b| format!("{b:02x}")).collect();
    let hex = CString::new(hex).map_err(|_| EINVAL)?;
    // SAFETY: malloc of one struct; NULL is checked before it is written.
    let e = unsafe { libc::malloc(std::mem::size_of::<DirXattr>()) } as *mut DirXattr;
    if e.is_null() {
        return Err(crate::ffi::ENOMEM);
    }
    let (directory, digest) = (c_strdup(&c), c_strdup(&hex));
    let (Ok(directory), Ok(digest)) = (directory, digest) else {
        // SAFETY: what malloc and strdup gave (free ignores NULL); nothing else holds them.
        unsafe {
            libc::free(directory.unwrap_or(std::ptr::null_mut()).cast());
            libc::free(digest.unwrap_or(std::ptr::null_mut()).cast());
            libc::free(e.cast());
        }
        return Err(crate::ffi::ENOMEM);
    };
    // SAFETY: e is a fresh allocation of one DirXattr, written whole before it is linked.
    unsafe {
        e.write(DirXattr {
            directory,
            digest,
            result,
            next: std::ptr::null_mut(),
        })
    };
    Ok(Some(e))
}

/// Appends entry `e` to the process's list.
fn link(s: &mut Settings, e: *mut DirXattr) {
    if s.xattr_list == 0 {
        s.xattr_list = e as usize;
    } else {
        // SAFETY: xattr_last is the list's last entry, made by xattr_entry and never freed by
        // this library (the list is the process's, as libselinux's).
        unsafe { (*(s.xattr_last as *mut DirXattr)).next = e };
    }
    s.xattr_last = e as usize;
}

/// restorecon_xattr's call: the directories at `path` (and below, with RECURSE) that keep a
/// digest, each with whether it matches the specifications now, removing the digests the
/// flags ask to; RAM file systems and excluded directories are skipped. `*list` is the
/// process's list (every call extends it), left alone when nothing was found.
#[no_mangle]
pub extern "C" fn selinux_restorecon_xattr(
    path: *const c_char,
    flags: c_uint,
    list: *mut *mut *mut DirXattr,
) -> c_int {
    ffi::guard(-1, || {
        let p = PathBuf::from(ffi::str_arg(path)?);
        let h = handle()?;
        let meta = match std::fs::symlink_metadata(&p) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
            Err(e) => {
                callbacks::log(
                    SELINUX_ERROR,
                    &format!("lstat({}) failed: {e}\n", p.display()),
                );
                return Err(Errno(e.raw_os_error().unwrap_or(libc::EIO)));
            }
        };
        let (delete_nonmatch, delete_all) = (
            flags & XATTR_DELETE_NONMATCH != 0,
            flags & XATTR_DELETE_ALL != 0,
        );
        let exclude = lock(&SETTINGS).exclude.clone();
        // Each entry is made with SETTINGS free (making one may log, through the program's
        // callback), then linked under it.
        if flags & XATTR_RECURSE == 0 {
            if !in_memory(&p) && !exclude.iter().any(|e| p.starts_with(e)) {
                let c = CString::new(p.as_os_str().as_encoded_bytes()).map_err(|_| EINVAL)?;
                if let Some(e) =
                    xattr_entry(h, &p, DigestOf::Path(&c), delete_nonmatch, delete_all)?
                {
                    link(&mut lock(&SETTINGS), e);
                }
            }
        } else if meta.is_dir() {
            digests_below(h, &p, &exclude, delete_nonmatch, delete_all)?;
        }
        let mut s = lock(&SETTINGS);
        if s.xattr_list != 0 && !list.is_null() {
            // SAFETY: the caller's out-pointer, not NULL; it receives the address of the
            // process's list head, which lives for the process as libselinux's static does.
            unsafe { list.write(&mut s.xattr_list as *mut usize as *mut *mut DirXattr) };
        }
        Ok(0)
    })
}

/// The directories at and below `dir`, walked through descriptors (crates/label's walk: no
/// link followed, each digest read and removed through the directory's own descriptor), but
/// those on RAM file systems and the excluded ones with everything under them; each one's entry
/// linked to the process's list.
fn digests_below(
    h: *mut Handle,
    dir: &Path,
    exclude: &[PathBuf],
    delete_nonmatch: bool,
    delete_all: bool,
) -> Res<()> {
    let root = Root {
        path: dir.to_path_buf(),
        key: dir.as_os_str().as_bytes().to_vec(),
        beneath: None,
    };
    let mut failed = None;
    walk::walk(
        std::slice::from_ref(&root),
        walk::Options {
            one_fs: false,
            sorted: true,
        },
        &mut |e| {
            let Some(fd) = e.dir_fd() else {
                return Flow::Continue;
            };
            let p = e.path();
            if exclude.iter().any(|x| p.starts_with(x)) {
                return Flow::Prune;
            }
            // A RAM file system's directory is left out, not what is mounted below it
            // (libselinux's walk goes on into it).
            if rustix::fs::fstatfs(fd).is_ok_and(|s| is_in_memory(&s)) {
                return Flow::Continue;
            }
            match xattr_entry(h, &p, DigestOf::Fd(fd), delete_nonmatch, delete_all) {
                Ok(Some(x)) => link(&mut lock(&SETTINGS), x),
                Ok(None) => {}
                Err(err) => {
                    failed = Some(err);
                    return Flow::Stop;
                }
            }
            Flow::Continue
        },
        // Unreadable directories are passed over, as before (libselinux's fts skips them).
        &mut |_| Flow::Continue,
    );
    failed.map_or(Ok(()), Err)
}
