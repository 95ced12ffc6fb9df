//! setexecfilecon and rpm_execcon: the next exec's context computed from a file's label (read
//! as getfilecon reads it) and this process's context, set as the exec attribute
//! ([`crate::proccon`] keeps the attributes; [`crate::filecon`] reads labels, and its setters
//! ask the hooks, which ask proccon for the task: this sits above both).

use std::ffi::{c_char, c_int};

use crate::ffi::{self, Errno, EINVAL};
use crate::proccon;
use crate::state;

/// The context `filename` would be executed in (security_compute_create of this process's
/// context on the file's, class process), or this context with `fallback` as its type when
/// no transition applies, set as the next exec's (setexecfilecon).
#[no_mangle]
pub extern "C" fn setexecfilecon(filename: *const c_char, fallback: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let me = proccon::current()?;
        let k = state::kernel()?;
        let g = k.server.snapshot();
        let mut fcon: *mut c_char = std::ptr::null_mut();
        if crate::filecon::getfilecon(filename, &mut fcon) < 0 {
            return Err(Errno(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::ENODATA),
            ));
        }
        // SAFETY: getfilecon wrote a NUL-terminated string.
        let f = unsafe { std::ffi::CStr::from_ptr(fcon) }
            .to_string_lossy()
            .into_owned();
        crate::names::freecon(fcon);
        let (s, t) = (
            g.context_to_sid(&me).map_err(|_| EINVAL)?,
            g.context_to_sid(&f).map_err(|_| EINVAL)?,
        );
        let class = g.class("process").map_err(|_| EINVAL)?;
        let mut new = g
            .sid_to_context(g.compute_create(s, t, class, None).map_err(|_| EINVAL)?)
            .map_err(|_| EINVAL)?;
        if new == me {
            let fb = ffi::str_arg(fallback)?;
            let mut parts: Vec<&str> = me.splitn(4, ':').collect();
            if parts.len() < 3 || fb.contains(':') {
                return Err(EINVAL);
            }
            parts[2] = fb;
            new = parts.join(":");
        }
        g.context_to_sid(&new).map_err(|_| EINVAL)?;
        proccon::set_exec("setexecfilecon", new)?;
        Ok(0)
    })
}

/// setexecfilecon with rpm_script_t, then execve (deprecated in libselinux, kept).
#[no_mangle]
pub extern "C" fn rpm_execcon(
    _verified: libc::c_uint,
    filename: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    ffi::guard(-1, || {
        if setexecfilecon(filename, c"rpm_script_t".as_ptr()) < 0 {
            return Err(Errno(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(EINVAL.0),
            ));
        }
        // SAFETY: execve with the caller's NUL-terminated path and NULL-terminated argument
        // and environment arrays (its contract); it returns only on failure.
        unsafe { libc::execve(filename, argv, envp) };
        Err(Errno(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::ENOEXEC),
        ))
    })
}
