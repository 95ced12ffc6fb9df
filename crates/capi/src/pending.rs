//! The part of libselinux 3.4's interface libseaccess does not answer yet. Each is exported so
//! that a program linked against libselinux loads (Debian's programs bind every symbol at
//! start), and each fails as a call that cannot be carried out: -1 (NULL, or nothing done)
//! with errno ENOSYS, never an answer made up. README lists them.

use std::ffi::{c_char, c_int, c_uint, c_void};

use crate::ffi::{self, Errno};

const ENOSYS: Errno = Errno(libc::ENOSYS);

macro_rules! pending {
    ($($name:ident($($a:ident: $t:ty),*) -> $r:ty = $fail:expr;)*) => {
        $(
            #[no_mangle]
            pub extern "C" fn $name($($a: $t),*) -> $r {
                ffi::guard($fail, || {
                    $(let _ = $a;)*
                    Err(ENOSYS)
                })
            }
        )*
    };
}

pending! {
    selabel_get_digests_all_partial_matches(h: *mut c_void, key: *const c_char, calc: *mut *mut u8, xattr: *mut *mut u8, len: *mut usize) -> bool = false;
    selabel_hash_all_partial_matches(h: *mut c_void, key: *const c_char, digest: *mut u8) -> bool = false;
    selinux_restorecon_xattr(path: *const c_char, flags: c_uint, list: *mut c_void) -> c_int = -1;
    selinux_set_mapping(map: *mut c_void) -> c_int = -1;
}
