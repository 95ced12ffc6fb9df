//! Context translation (setrans_client.c): with no mcstrans daemon running, which is always
//! the case here, libselinux's translations are copies, and so are these.

use std::ffi::{c_char, c_int};

use crate::ffi::{self, EINVAL};

fn copy(from: *const c_char, to: *mut *mut c_char) -> ffi::Res<c_int> {
    if to.is_null() {
        return Err(EINVAL);
    }
    if from.is_null() {
        // SAFETY: `to` is a non-NULL pointer the caller gives for one `char *`.
        unsafe { *to = std::ptr::null_mut() };
        return Err(EINVAL);
    }
    let s = ffi::c_string(ffi::str_arg(from)?)?;
    // SAFETY: as above.
    unsafe { *to = s };
    Ok(0)
}

#[no_mangle]
pub extern "C" fn selinux_raw_to_trans_context(
    raw: *const c_char,
    trans: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || copy(raw, trans))
}

#[no_mangle]
pub extern "C" fn selinux_trans_to_raw_context(
    trans: *const c_char,
    raw: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || copy(trans, raw))
}

/// The color of a context: without mcstrans, libselinux hands back the context itself.
#[no_mangle]
pub extern "C" fn selinux_raw_context_to_color(
    raw: *const c_char,
    color: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || copy(raw, color))
}
