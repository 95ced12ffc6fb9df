//! The entry points of the interposer `seaccess run` preloads (crates/capi/preload/preload.c,
//! built as target/libselinux/libseaccess-preload.so, which needs libselinux.so.1 and so
//! shares this library's state with the program). It wraps the C library's creating calls
//! and execs and asks these for the kernel's checks and labels; they are exported under their
//! own symbol version (SEACCESS_RUN_1, crates/capi/libselinux.map), not libselinux's.

use std::ffi::{c_char, c_int, c_uint, CStr};

use crate::ffi::{self, Res, EINVAL};

fn c_arg<'a>(p: *const c_char) -> Res<&'a CStr> {
    if p.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: a NUL-terminated string from the interposer, alive for the call, not NULL.
    Ok(unsafe { CStr::from_ptr(p) })
}

/// The interposer's constructor: from now on setexeccon and setfscreatecon are applied.
#[no_mangle]
pub extern "C" fn seaccess_run_attach() -> c_int {
    ffi::guard(-1, || {
        crate::proccon::interposed();
        Ok(0)
    })
}

/// Before `path` (relative to `dirfd`) is created with `mode` (file type and permission
/// bits): 0 with `*con` the label to give it once created (NULL: none), or -1 with errno
/// (EACCES: the policy refuses the creation, nothing may be created).
#[no_mangle]
pub extern "C" fn seaccess_run_create(
    dirfd: c_int,
    path: *const c_char,
    mode: c_uint,
    con: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        let label = crate::objects::create(dirfd, c_arg(path)?, mode)?;
        let p = match label {
            Some(l) => ffi::c_string(&l)?,
            None => std::ptr::null_mut(),
        };
        ffi::out(con, p)?;
        Ok(0)
    })
}

/// Labels what was just created with `con`: the open file `fd` (>= 0), else `path` relative to
/// `dirfd`, a final symbolic link labelled itself. 0, or -1 with errno.
#[no_mangle]
pub extern "C" fn seaccess_run_label(
    fd: c_int,
    dirfd: c_int,
    path: *const c_char,
    con: *const c_char,
) -> c_int {
    ffi::guard(-1, || {
        let c = ffi::str_arg(con)?;
        let p = if path.is_null() {
            None
        } else {
            Some(c_arg(path)?)
        };
        crate::objects::label_new(fd, dirfd, p, c)?;
        Ok(0)
    })
}

/// Before this process executes `path`: 0 with `*con` the context the program runs in, `*prev`
/// this process's (both NULL with SELinux off) and `*secure` 1 when the kernel would run it in
/// secure mode (AT_SECURE: a transition `process {noatsecure}` does not allow, as
/// selinux_bprm_creds_for_exec decides), else 0; or -1 with errno (EACCES: the policy refuses
/// the exec, with its record).
#[no_mangle]
pub extern "C" fn seaccess_run_exec(
    path: *const c_char,
    con: *mut *mut c_char,
    prev: *mut *mut c_char,
    secure: *mut c_int,
) -> c_int {
    ffi::guard(-1, || {
        if secure.is_null() {
            return Err(EINVAL);
        }
        let (n, o, s) = match crate::objects::exec(c_arg(path)?)? {
            Some((n, o, s)) => (ffi::c_string(&n)?, ffi::c_string(&o)?, s),
            None => (std::ptr::null_mut(), std::ptr::null_mut(), false),
        };
        // SAFETY: the interposer's int, not NULL (checked), alive for the call.
        unsafe { *secure = c_int::from(s) };
        ffi::out(con, n)?;
        ffi::out(prev, o)?;
        Ok(0)
    })
}

/// 1 when setcon changed this process's context since its exec, else 0: the interposer then
/// hands every program it executes its context (SEACCESS_CONTEXT), since the environment this
/// process started with names the one before the setcon.
#[no_mangle]
pub extern "C" fn seaccess_run_setcon() -> c_int {
    ffi::guard(-1, || Ok(c_int::from(crate::proccon::set_by_setcon())))
}
