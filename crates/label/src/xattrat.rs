//! getxattrat(2) and setxattrat(2) (Linux 6.13): an attribute of one name in a directory the
//! caller holds open, without following a symbolic link there. Neither the libc crate (on
//! x86_64) nor rustix has them, so they are raw system calls: this is the crate's only unsafe
//! code. Where the kernel lacks them (ENOSYS), the same object is reached as
//! `/proc/self/fd/DIRFD/NAME` with the l* calls: the magic link leads to exactly the directory
//! held open, and the one component after it is not followed either.
#![allow(unsafe_code)]

use std::ffi::CStr;
use std::os::fd::{AsRawFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::io::Errno;

// The system call numbers are the same on every architecture since Linux 5.1 gave new calls
// one table; these two came with 6.13.
const SYS_SETXATTRAT: libc::c_long = 463;
const SYS_GETXATTRAT: libc::c_long = 464;

/// The kernel's `struct xattr_args` (XATTR_ARGS_SIZE_VER0, 16 bytes).
#[repr(C)]
struct XattrArgs {
    value: u64,
    size: u32,
    flags: u32,
}

/// Set once a call said ENOSYS: from then on only the /proc route is tried.
static MISSING: AtomicBool = AtomicBool::new(false);

/// The /proc route to `name` in `dir`: one component after the magic link to `dir`.
fn proc_path(dir: BorrowedFd<'_>, name: &CStr) -> Vec<u8> {
    let mut p = format!("/proc/self/fd/{}/", dir.as_raw_fd()).into_bytes();
    p.extend_from_slice(name.to_bytes());
    p
}

fn last_errno() -> Errno {
    Errno::from_raw_os_error(
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO),
    )
}

/// `name`'s attribute `attr` in `dir`, a final symbolic link not followed, into `buf`; the
/// value's length.
pub(crate) fn get(
    dir: BorrowedFd<'_>,
    name: &CStr,
    attr: &CStr,
    buf: &mut [u8],
) -> Result<usize, Errno> {
    if !MISSING.load(Ordering::Relaxed) {
        let mut args = XattrArgs {
            value: buf.as_mut_ptr() as u64,
            size: u32::try_from(buf.len()).unwrap_or(u32::MAX),
            flags: 0,
        };
        // SAFETY: a descriptor the caller holds open, two NUL-terminated strings that outlive
        // the call, and `args` naming `buf`, which is writable for `args.size` bytes (at most
        // its length); the kernel reads `args` (its size given) and writes only into `buf`.
        let r = unsafe {
            libc::syscall(
                SYS_GETXATTRAT,
                dir.as_raw_fd(),
                name.as_ptr(),
                libc::AT_SYMLINK_NOFOLLOW as libc::c_uint,
                attr.as_ptr(),
                &mut args as *mut XattrArgs,
                std::mem::size_of::<XattrArgs>(),
            )
        };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = last_errno();
        if e != Errno::NOSYS {
            return Err(e);
        }
        MISSING.store(true, Ordering::Relaxed);
    }
    get_proc(dir, name, attr, buf)
}

/// Writes `name`'s attribute `attr` in `dir`, a final symbolic link not followed.
pub(crate) fn set(
    dir: BorrowedFd<'_>,
    name: &CStr,
    attr: &CStr,
    value: &[u8],
) -> Result<(), Errno> {
    if !MISSING.load(Ordering::Relaxed) {
        let size = u32::try_from(value.len()).map_err(|_| Errno::TOOBIG)?;
        let mut args = XattrArgs {
            value: value.as_ptr() as u64,
            size,
            flags: 0,
        };
        // SAFETY: a descriptor the caller holds open, two NUL-terminated strings that outlive
        // the call, and `args` naming `value` with its length; the kernel only reads them.
        let r = unsafe {
            libc::syscall(
                SYS_SETXATTRAT,
                dir.as_raw_fd(),
                name.as_ptr(),
                libc::AT_SYMLINK_NOFOLLOW as libc::c_uint,
                attr.as_ptr(),
                &mut args as *mut XattrArgs,
                std::mem::size_of::<XattrArgs>(),
            )
        };
        if r == 0 {
            return Ok(());
        }
        let e = last_errno();
        if e != Errno::NOSYS {
            return Err(e);
        }
        MISSING.store(true, Ordering::Relaxed);
    }
    set_proc(dir, name, attr, value)
}

/// [`get`] through `/proc/self/fd/DIRFD/NAME` (kernels before 6.13).
pub(crate) fn get_proc(
    dir: BorrowedFd<'_>,
    name: &CStr,
    attr: &CStr,
    buf: &mut [u8],
) -> Result<usize, Errno> {
    rustix::fs::lgetxattr(&proc_path(dir, name)[..], attr, buf)
}

/// [`set`] through `/proc/self/fd/DIRFD/NAME` (kernels before 6.13).
pub(crate) fn set_proc(
    dir: BorrowedFd<'_>,
    name: &CStr,
    attr: &CStr,
    value: &[u8],
) -> Result<(), Errno> {
    rustix::fs::lsetxattr(
        &proc_path(dir, name)[..],
        attr,
        value,
        rustix::fs::XattrFlags::empty(),
    )
}
