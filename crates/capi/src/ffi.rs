//! The C boundary's plumbing: panics caught, errno set, and C strings read and written with
//! the C allocator (a context handed to C is freed with `freecon`, that is `free`).

use std::ffi::{c_char, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use rustc_hash::FxHashMap;
use seaccess_types::lock;

/// An errno value, what every failing entry point reports.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Errno(pub i32);

pub(crate) const EINVAL: Errno = Errno(libc::EINVAL);
pub(crate) const ENOENT: Errno = Errno(libc::ENOENT);
pub(crate) const EACCES: Errno = Errno(libc::EACCES);
pub(crate) const ENOMEM: Errno = Errno(libc::ENOMEM);
pub(crate) const EPERM: Errno = Errno(libc::EPERM);

pub(crate) type Res<T> = Result<T, Errno>;

pub(crate) fn set_errno(e: i32) {
    // SAFETY: __errno_location returns this thread's errno slot, valid for the thread's life.
    unsafe { *libc::__errno_location() = e };
}

/// Runs an entry point's body: its error becomes `fail` with errno set, and a panic (a bug in
/// seaccess) becomes `fail` with errno ENOTRECOVERABLE instead of unwinding into C, which would
/// be undefined behaviour. Inlined, so that an entry point's arguments reach its body in
/// registers rather than through a closure on the stack (a fifth of a cache hit's cost).
#[inline(always)]
pub(crate) fn guard<T>(fail: T, f: impl FnOnce() -> Res<T>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(Errno(e))) => {
            set_errno(e);
            fail
        }
        Err(_) => {
            set_errno(libc::ENOTRECOVERABLE);
            fail
        }
    }
}

/// A NUL-terminated UTF-8 argument; NULL or non-UTF-8 is EINVAL.
pub(crate) fn str_arg<'a>(p: *const c_char) -> Res<&'a str> {
    if p.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: the caller passes a NUL-terminated string that outlives the call (libselinux's
    // contract for every `const char *` argument); we checked it is not NULL.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str().map_err(|_| EINVAL)
}

/// A NUL-terminated argument's bytes, not checked for UTF-8; NULL is EINVAL.
#[inline]
pub(crate) fn bytes_arg<'a>(p: *const c_char) -> Res<&'a [u8]> {
    if p.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: as in str_arg: a NUL-terminated string that outlives the call, not NULL.
    Ok(unsafe { CStr::from_ptr(p) }.to_bytes())
}

/// Whether NUL-terminated strings `a` and `b` are equal (false if either is NULL): libc's
/// strcmp, one pass that stops at the first difference, so that neither is read past its NUL
/// (sanitizers and valgrind know strcmp and check it byte-exactly).
#[inline(always)]
pub(crate) fn same_c_string(a: *const c_char, b: *const c_char) -> bool {
    if a.is_null() || b.is_null() {
        return false;
    }
    // SAFETY: both are non-NULL NUL-terminated strings that outlive the call: a caller's
    // argument (libselinux's contract) or a string this library owns for the process's life.
    unsafe { libc::strcmp(a, b) == 0 }
}

/// Like [`str_arg`], but NULL is None.
pub(crate) fn opt_str_arg<'a>(p: *const c_char) -> Res<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        str_arg(p).map(Some)
    }
}

/// A copy of `s` in memory from `malloc`, for the caller to `free` (freecon).
pub(crate) fn c_string(s: &str) -> Res<*mut c_char> {
    if s.as_bytes().contains(&0) {
        return Err(EINVAL);
    }
    // SAFETY: malloc of len+1 bytes; on success we write exactly len+1 bytes into it.
    unsafe {
        let p = libc::malloc(s.len() + 1) as *mut c_char;
        if p.is_null() {
            return Err(ENOMEM);
        }
        std::ptr::copy_nonoverlapping(s.as_ptr() as *const c_char, p, s.len());
        *p.add(s.len()) = 0;
        Ok(p)
    }
}

/// Stores `v` through an out-pointer; NULL is EINVAL.
pub(crate) fn out<T>(p: *mut T, v: T) -> Res<()> {
    if p.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: the caller passes a valid, writable, aligned pointer to a T (the C signature's
    // out-parameter); we checked it is not NULL.
    unsafe { p.write(v) };
    Ok(())
}

/// Reads through an in-pointer; NULL is EINVAL.
pub(crate) fn read<T: Copy>(p: *const T) -> Res<T> {
    if p.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: the caller passes a valid, aligned pointer to an initialised T (the C
    // signature's in-parameter); we checked it is not NULL.
    Ok(unsafe { p.read() })
}

/// `free`, the C allocator's.
pub(crate) fn c_free(p: *mut libc::c_void) {
    // SAFETY: p is NULL or came from malloc (every pointer this library hands out for freeing
    // does), and the caller gives it up.
    unsafe { libc::free(p) }
}

/// A NULL-terminated array of malloc'ed strings, itself malloc'ed (freeconary frees it).
pub(crate) fn c_string_array(items: &[String]) -> Res<*mut *mut c_char> {
    let n = items.len() + 1;
    // SAFETY: calloc of n pointers, zeroed so that the array is NULL-terminated and freeable
    // part-filled on failure.
    let arr = unsafe { libc::calloc(n, std::mem::size_of::<*mut c_char>()) } as *mut *mut c_char;
    if arr.is_null() {
        return Err(ENOMEM);
    }
    for (i, s) in items.iter().enumerate() {
        match c_string(s) {
            // SAFETY: i < items.len() < n, inside the array.
            Ok(p) => unsafe { *arr.add(i) = p },
            Err(e) => {
                free_string_array(arr);
                return Err(e);
            }
        }
    }
    Ok(arr)
}

/// Frees a NULL-terminated array of malloc'ed strings (libselinux's freeconary).
pub(crate) fn free_string_array(arr: *mut *mut c_char) {
    if arr.is_null() {
        return;
    }
    let mut i = 0;
    loop {
        // SAFETY: arr is a NULL-terminated array from malloc (the caller's contract); we stop
        // at its terminator.
        let p = unsafe { *arr.add(i) };
        if p.is_null() {
            break;
        }
        c_free(p as *mut libc::c_void);
        i += 1;
    }
    c_free(arr as *mut libc::c_void);
}

/// Names handed to C as `const char *`: libselinux's stay valid until the class cache is
/// flushed; these stay valid for the process's life, across reloads.
static NAMES: Mutex<Option<FxHashMap<String, &'static CStr>>> = Mutex::new(None);

/// The static names' lock, held across a fork (see [`crate::fork`]).
pub(crate) fn hold_names(
) -> std::sync::MutexGuard<'static, Option<FxHashMap<String, &'static CStr>>> {
    lock(&NAMES)
}

/// `s` as a `const char *` that stays valid for the process's life, one copy a text (null
/// when `s` holds a NUL): class, permission and path names handed to C.
pub(crate) fn static_name(s: &str) -> *const c_char {
    let mut m = lock(&NAMES);
    let m = m.get_or_insert_with(FxHashMap::default);
    if let Some(c) = m.get(s) {
        return c.as_ptr();
    }
    let Ok(c) = CString::new(s) else {
        return std::ptr::null();
    };
    let c: &'static CStr = Box::leak(c.into_boxed_c_str());
    m.insert(s.to_owned(), c);
    c.as_ptr()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]
    use super::*;

    // A panic inside an entry point's body comes back as the failure value with errno set,
    // instead of unwinding into C.
    #[test]
    fn a_panic_does_not_cross_the_boundary() {
        set_errno(0);
        let r: i32 = guard(-1, || panic!("deliberate"));
        assert_eq!(r, -1);
        // SAFETY: this thread's errno slot.
        assert_eq!(unsafe { *libc::__errno_location() }, libc::ENOTRECOVERABLE);
        assert_eq!(guard(-1, || Err(EINVAL)), -1);
        // SAFETY: this thread's errno slot.
        assert_eq!(unsafe { *libc::__errno_location() }, libc::EINVAL);
        assert_eq!(guard(-1, || Ok(7)), 7);
    }
}
