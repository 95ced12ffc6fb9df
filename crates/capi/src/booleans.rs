//! Booleans as selinuxfs's booleans directory gives them to libselinux: names in alphabetical
//! order, pending and active values, and a commit that makes every pending value active (a new
//! policy generation, which the cache and the policyload callback follow). An unknown boolean
//! is ENOENT, as a missing selinuxfs file is.
//!
//! In a `seaccess run` session the values are the session's: pending values are read from its
//! page, and changes are written to its selinuxfs view (`booleans/NAME`,
//! `commit_pending_bools`), where the supervisor checks `security { setbool }` as selinuxfs's
//! sel_write_bool and sel_commit_bools_write do (see [`crate::session`]).

use std::ffi::{c_char, c_int};

use crate::ffi::{self, EINVAL, ENOENT};
use crate::{session, state};

#[no_mangle]
pub extern "C" fn security_get_boolean_names(
    names: *mut *mut *mut c_char,
    len: *mut c_int,
) -> c_int {
    ffi::guard(-1, || {
        if names.is_null() || len.is_null() {
            return Err(EINVAL);
        }
        let k = state::kernel()?;
        let mut all: Vec<String> = k
            .server
            .snapshot()
            .booleans()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        if all.is_empty() {
            // scandir found nothing: libselinux reports ENOENT.
            return Err(ENOENT);
        }
        all.sort();
        let n = c_int::try_from(all.len()).map_err(|_| EINVAL)?;
        let arr = ffi::c_string_array(&all)?;
        ffi::out(names, arr)?;
        ffi::out(len, n)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn security_get_boolean_pending(name: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        let name = ffi::str_arg(name)?;
        if let Some(v) = session::pending(name) {
            return Ok(c_int::from(v?));
        }
        let v = k.server.pending_boolean(name).map_err(|_| ENOENT)?;
        Ok(c_int::from(v))
    })
}

#[no_mangle]
pub extern "C" fn security_get_boolean_active(name: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        let v = k
            .server
            .snapshot()
            .boolean(ffi::str_arg(name)?)
            .map_err(|_| ENOENT)?;
        Ok(c_int::from(v))
    })
}

#[no_mangle]
pub extern "C" fn security_set_boolean(name: *const c_char, value: c_int) -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        if !(0..=1).contains(&value) {
            return Err(EINVAL);
        }
        let name = ffi::str_arg(name)?;
        if name.contains('/') || name.starts_with('.') {
            return Err(ENOENT);
        }
        if let Some(r) = session::write(
            &format!("booleans/{name}"),
            if value == 1 { b"1" } else { b"0" },
        ) {
            return r.map(|_| 0);
        }
        k.server.set_boolean(name, value == 1).map_err(|_| ENOENT)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn security_commit_booleans() -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        if let Some(r) = session::write("commit_pending_bools", b"1") {
            return r.map(|_| 0);
        }
        k.server.commit_booleans();
        Ok(0)
    })
}
