//! Files' labels: getfilecon, lgetfilecon, fgetfilecon and the set counterparts, raw and
//! translated (the same: no mcstrans runs), read from and written to the `security.selinux`
//! extended attribute as on an SELinux system, with `user.selinux` (what `seaccess label
//! --apply` and `seaccess mount` write where the security namespace is refused) as the
//! fallback. As libselinux's: the returned length counts the stored NUL, an empty attribute
//! is ENOTSUP, a missing one ENODATA.

use std::ffi::{c_char, c_int, CStr};
use std::os::fd::BorrowedFd;

use crate::ffi::{self, Errno, Res, EINVAL};

const SECURITY: &CStr = c"security.selinux";
const USER: &CStr = c"user.selinux";

/// Which object: a path (following a final symlink or not) or a descriptor.
#[derive(Clone, Copy)]
enum Obj<'a> {
    Path(&'a CStr, bool),
    Fd(c_int),
}

fn io(e: rustix::io::Errno) -> Errno {
    Errno(e.raw_os_error())
}

fn get_one(o: Obj, name: &CStr) -> Result<Vec<u8>, rustix::io::Errno> {
    let mut buf = vec![0u8; 256];
    loop {
        let r = match o {
            Obj::Path(p, true) => rustix::fs::getxattr(p, name, &mut buf[..]),
            Obj::Path(p, false) => rustix::fs::lgetxattr(p, name, &mut buf[..]),
            Obj::Fd(fd) => {
                // SAFETY: the caller's descriptor, open for the call (libselinux's contract).
                let fd = unsafe { BorrowedFd::borrow_raw(fd) };
                rustix::fs::fgetxattr(fd, name, &mut buf[..])
            }
        };
        match r {
            Ok(n) => {
                buf.truncate(n);
                return Ok(buf);
            }
            Err(rustix::io::Errno::RANGE) if buf.len() < 1 << 20 => buf.resize(buf.len() * 4, 0),
            Err(e) => return Err(e),
        }
    }
}

fn get(o: Obj, con: *mut *mut c_char) -> Res<c_int> {
    if con.is_null() {
        return Err(EINVAL);
    }
    let v = match get_one(o, SECURITY) {
        Ok(v) => v,
        Err(e) if e == rustix::io::Errno::NODATA || e == rustix::io::Errno::NOTSUP => get_one(o, USER).map_err(|e2| {
            // The fallback's absence says nothing: report the security namespace's answer.
            if e2 == rustix::io::Errno::NODATA || e2 == rustix::io::Errno::NOTSUP { io(e) } else { io(e2) }
        })?,
        Err(e) => return Err(io(e)),
    };
    if v.is_empty() {
        return Err(Errno(libc::ENOTSUP));
    }
    let len = c_int::try_from(v.len()).map_err(|_| EINVAL)?;
    let text = v.strip_suffix(&[0]).unwrap_or(&v);
    let s = ffi::c_string(std::str::from_utf8(text).map_err(|_| EINVAL)?)?;
    // SAFETY: `con` is a non-NULL pointer the caller gives for one `char *`.
    unsafe { *con = s };
    Ok(len)
}

fn set(o: Obj, context: *const c_char) -> Res<c_int> {
    let c = ffi::bytes_arg(context)?;
    let mut v = c.to_vec();
    v.push(0);
    let put = |name: &CStr| match o {
        Obj::Path(p, true) => rustix::fs::setxattr(p, name, &v, rustix::fs::XattrFlags::empty()),
        Obj::Path(p, false) => rustix::fs::lsetxattr(p, name, &v, rustix::fs::XattrFlags::empty()),
        Obj::Fd(fd) => {
            // SAFETY: the caller's descriptor, open for the call.
            let fd = unsafe { BorrowedFd::borrow_raw(fd) };
            rustix::fs::fsetxattr(fd, name, &v, rustix::fs::XattrFlags::empty())
        }
    };
    match put(SECURITY) {
        Ok(()) => Ok(0),
        Err(e) if e == rustix::io::Errno::PERM || e == rustix::io::Errno::ACCESS || e == rustix::io::Errno::NOTSUP => put(USER).map(|_| 0).map_err(|_| io(e)),
        Err(e) => Err(io(e)),
    }
}

fn path<'a>(p: *const c_char) -> Res<&'a CStr> {
    if p.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: a NUL-terminated path that outlives the call (the caller's contract), not NULL.
    Ok(unsafe { CStr::from_ptr(p) })
}

macro_rules! getters {
    ($($name:ident($arg:ident: $t:ty) => $obj:expr;)*) => {
        $(
            #[no_mangle]
            pub extern "C" fn $name($arg: $t, con: *mut *mut c_char) -> c_int {
                ffi::guard(-1, || get($obj, con))
            }
        )*
    };
}

macro_rules! setters {
    ($($name:ident($arg:ident: $t:ty) => $obj:expr;)*) => {
        $(
            #[no_mangle]
            pub extern "C" fn $name($arg: $t, context: *const c_char) -> c_int {
                ffi::guard(-1, || set($obj, context))
            }
        )*
    };
}

getters! {
    getfilecon(p: *const c_char) => Obj::Path(path(p)?, true);
    getfilecon_raw(p: *const c_char) => Obj::Path(path(p)?, true);
    lgetfilecon(p: *const c_char) => Obj::Path(path(p)?, false);
    lgetfilecon_raw(p: *const c_char) => Obj::Path(path(p)?, false);
    fgetfilecon(fd: c_int) => Obj::Fd(fd);
    fgetfilecon_raw(fd: c_int) => Obj::Fd(fd);
}

setters! {
    setfilecon(p: *const c_char) => Obj::Path(path(p)?, true);
    setfilecon_raw(p: *const c_char) => Obj::Path(path(p)?, true);
    lsetfilecon(p: *const c_char) => Obj::Path(path(p)?, false);
    lsetfilecon_raw(p: *const c_char) => Obj::Path(path(p)?, false);
    fsetfilecon(fd: c_int) => Obj::Fd(fd);
    fsetfilecon_raw(fd: c_int) => Obj::Fd(fd);
}
