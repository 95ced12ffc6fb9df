//! Files' labels: getfilecon, lgetfilecon, fgetfilecon and the set counterparts, raw and
//! translated (the same: no mcstrans runs), read from and written to the `security.selinux`
//! extended attribute as on an SELinux system, with `user.selinux` (what `seaccess label
//! --apply` and `seaccess mount` write where the security namespace is refused) as the
//! fallback. As libselinux's: the returned length counts the stored NUL, an empty attribute
//! is ENOTSUP, a missing one ENODATA.
//!
//! Setting a label is the kernel's setxattr of `security.selinux`: with a policy loaded, the
//! caller's context must pass selinux_inode_setxattr's checks first (crates/capi/src/objects.rs:
//! an undefined context is EINVAL with the kernel's SELINUX_ERR record, a relabel the policy
//! refuses EACCES with its AVC record), and nothing is written otherwise.

use std::ffi::{c_char, c_int, CStr, OsStr};
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use seaccess_label::xattr::{self, Attrs, Object};

use crate::ffi::{self, Errno, Res, EINVAL};

/// Which object: a path (following a final symlink or not) or a descriptor.
#[derive(Clone, Copy)]
enum Obj<'a> {
    Path(&'a CStr, bool),
    Fd(c_int),
}

impl Obj<'_> {
    /// The object for crates/label's rule (security.selinux, else user.selinux).
    fn with<T>(self, f: impl FnOnce(Object<'_>) -> T) -> T {
        match self {
            Obj::Path(p, follow) => {
                let p = Path::new(OsStr::from_bytes(p.to_bytes()));
                f(if follow {
                    Object::Path(p)
                } else {
                    Object::Link(p)
                })
            }
            // SAFETY: the caller's descriptor, open for the call (libselinux's contract).
            Obj::Fd(fd) => f(Object::Fd(unsafe { BorrowedFd::borrow_raw(fd) })),
        }
    }
}

fn io(e: rustix::io::Errno) -> Errno {
    Errno(e.raw_os_error())
}

fn get(o: Obj, con: *mut *mut c_char) -> Res<c_int> {
    if con.is_null() {
        return Err(EINVAL);
    }
    let (v, _) = o.with(|o| xattr::read_raw(o, Attrs::Either)).map_err(io)?;
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
    let target = match o {
        Obj::Path(p, follow) => crate::objects::Target::Path(p, follow),
        // SAFETY: the caller's descriptor, open for the call (libselinux's contract).
        Obj::Fd(fd) => crate::objects::Target::Fd(unsafe { BorrowedFd::borrow_raw(fd) }),
    };
    crate::objects::check_relabel(target, c)?;
    o.with(|o| xattr::write(o, c, Attrs::Either))
        .map(|_| 0)
        .map_err(io)
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
