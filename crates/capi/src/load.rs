//! seaccess's own calls, the ones libselinux has no counterpart for: loading a policy into the
//! process (libselinux's kernel loads it at boot). cbindgen writes include/seaccess.h from this
//! file alone.

use std::ffi::{c_char, c_int};

use crate::{ffi, kernel};

/// Loads the policy image at `path` (a NUL-terminated path) as the process's policy; if one is
/// loaded already, replaces it as [`seaccess_reload_policy`] does. Returns 0, or -1 with errno
/// (ENOENT or another I/O error when the file cannot be read, EINVAL when it is not a policy
/// seaccess can load).
#[no_mangle]
pub extern "C" fn seaccess_load_policy(path: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let p = ffi::str_arg(path)?;
        kernel::load(p)?;
        Ok(0)
    })
}

/// Replaces the loaded policy with the image at `path`, atomically for every thread (the
/// kernel's policy load: a new seqno, booleans kept by name, the cache recomputed and the
/// policyload callback told). Without a loaded policy it loads one. Returns 0, or -1 with errno
/// as [`seaccess_load_policy`].
#[no_mangle]
pub extern "C" fn seaccess_reload_policy(path: *const c_char) -> c_int {
    seaccess_load_policy(path)
}
