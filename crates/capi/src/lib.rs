//! libseaccess: seaccess behind libselinux's C API, so that an object manager written for
//! libselinux (`avc_has_perm`, `security_compute_av`, `selinux_check_access`, ...) runs on
//! seaccess by relinking, without a kernel that runs SELinux.
//!
//! libselinux is a process-global API, so this library keeps one global "kernel" (a security
//! server, its access vector cache and its enforcing mode), loaded by [`seaccess_load_policy`]
//! or, at the first call that needs it, from the `SEACCESS_POLICY` environment variable. Without
//! one, every call fails as libselinux's does on a kernel without SELinux (mostly ENOENT).
//!
//! Every exported function runs its body through [`ffi::guard`], which catches panics so that
//! none crosses into C, and turns errors into libselinux's `-1` and errno. Only the modules that
//! touch raw pointers allow `unsafe`, each block with its SAFETY comment.

mod audit;
mod avc;
mod booleans;
mod callbacks;
mod compute;
mod ffi;
mod names;
mod sid;
mod state;

pub use ffi::Errno;

use std::ffi::c_char;

/// Loads the policy image at `path` (a NUL-terminated path) as the process's policy; if one is
/// loaded already, replaces it as [`seaccess_reload_policy`] does. Returns 0, or -1 with errno
/// (ENOENT or another I/O error when the file cannot be read, EINVAL when it is not a policy
/// seaccess can load).
#[no_mangle]
pub extern "C" fn seaccess_load_policy(path: *const c_char) -> i32 {
    ffi::guard(-1, || {
        let p = ffi::str_arg(path)?;
        state::load(p)?;
        Ok(0)
    })
}

/// Replaces the loaded policy with the image at `path`, atomically for every thread (the
/// kernel's policy load: a new seqno, booleans kept by name, the cache recomputed and the
/// policyload callback told). Without a loaded policy it loads one. Returns 0, or -1 with errno
/// as [`seaccess_load_policy`].
#[no_mangle]
pub extern "C" fn seaccess_reload_policy(path: *const c_char) -> i32 {
    seaccess_load_policy(path)
}
