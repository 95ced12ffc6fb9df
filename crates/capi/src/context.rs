//! libselinux's context_t helpers (context.c): a context split into user, role, type and an
//! optional range, each part read and replaced, and the whole written back. The parsing rules
//! are libselinux's, not the policy's: 3 to 6 colon-separated fields, the fourth onward being
//! the range; no tab, newline or carriage return anywhere, no space before the range; nothing
//! is checked against a policy (security_check_context does that).

use std::ffi::{c_char, c_int, c_void, CString};

use crate::ffi::{self, Res, EINVAL};

/// libselinux's `context_s_t`: one pointer to the private parts, which is the only layout C
/// code may rely on (`context_t` is a pointer to it).
#[repr(C)]
pub struct ContextS {
    ptr: *mut c_void,
}

struct Parts {
    /// user, role, type, range (absent: None).
    comp: [Option<CString>; 4],
    /// The last string context_str made (valid until the next call or a change).
    current: Option<CString>,
}

fn parse(s: &str) -> Res<[Option<CString>; 4]> {
    let mut colons = 0;
    for c in s.bytes() {
        match c {
            b':' => colons += 1,
            b'\n' | b'\t' | b'\r' => return Err(EINVAL),
            b' ' if colons < 3 => return Err(EINVAL),
            _ => {}
        }
    }
    if !(2..=5).contains(&colons) {
        return Err(EINVAL);
    }
    let mut comp: [Option<CString>; 4] = [None, None, None, None];
    let mut rest = s;
    for (i, slot) in comp.iter_mut().enumerate() {
        if rest.is_empty() {
            break;
        }
        let (part, next) = if i < 3 {
            rest.split_once(':').unwrap_or((rest, ""))
        } else {
            (rest, "")
        };
        *slot = Some(CString::new(part).map_err(|_| EINVAL)?);
        rest = next;
    }
    Ok(comp)
}

fn parts<'a>(c: *mut ContextS) -> Res<&'a mut Parts> {
    if c.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: a non-NULL context_t came from context_new (the caller's contract), whose ptr is
    // a live Box<Parts> until context_free; C's context API is not shared across threads
    // without the caller's own locking, so this borrow is exclusive for the call.
    let p = unsafe { (*c).ptr } as *mut Parts;
    if p.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: as above.
    Ok(unsafe { &mut *p })
}

/// A new context from `s`, or NULL with errno EINVAL.
#[no_mangle]
pub extern "C" fn context_new(s: *const c_char) -> *mut ContextS {
    ffi::guard(std::ptr::null_mut(), || {
        let comp = parse(ffi::str_arg(s)?)?;
        let p = Box::into_raw(Box::new(Parts {
            comp,
            current: None,
        }));
        Ok(Box::into_raw(Box::new(ContextS {
            ptr: p as *mut c_void,
        })))
    })
}

/// Frees a context (NULL is allowed).
#[no_mangle]
pub extern "C" fn context_free(c: *mut ContextS) {
    ffi::guard((), || {
        if c.is_null() {
            return Ok(());
        }
        // SAFETY: `c` and its ptr came from context_new's Box::into_raw and are freed once
        // (the caller's contract, as libselinux's).
        unsafe {
            let p = (*c).ptr as *mut Parts;
            if !p.is_null() {
                drop(Box::from_raw(p));
            }
            drop(Box::from_raw(c));
        }
        Ok(())
    })
}

/// The whole context as text, valid until the next context_str or change of `c`.
#[no_mangle]
pub extern "C" fn context_str(c: *mut ContextS) -> *mut c_char {
    ffi::guard(std::ptr::null_mut(), || {
        let p = parts(c)?;
        let mut s = Vec::new();
        for (i, part) in p.comp.iter().enumerate() {
            if let Some(v) = part {
                if i > 0 {
                    s.push(b':');
                }
                s.extend_from_slice(v.as_bytes());
            }
        }
        let cs = CString::new(s).map_err(|_| EINVAL)?;
        Ok(p.current.insert(cs).as_ptr() as *mut c_char)
    })
}

fn get(c: *mut ContextS, i: usize) -> Res<*const c_char> {
    Ok(parts(c)?.comp[i]
        .as_ref()
        .map_or(std::ptr::null(), |v| v.as_ptr()))
}

/// Replaces part `i` (NULL removes it); user, role and type may hold no colon or space.
fn set(c: *mut ContextS, i: usize, v: *const c_char) -> Res<c_int> {
    {
        let p = parts(c)?;
        let new = match ffi::opt_str_arg(v)? {
            None => None,
            Some(s) => {
                if s.bytes().any(|b| {
                    matches!(b, b'\t' | b'\n' | b'\r') || (i != 3 && matches!(b, b':' | b' '))
                }) {
                    return Err(EINVAL);
                }
                Some(CString::new(s).map_err(|_| EINVAL)?)
            }
        };
        p.comp[i] = new;
        Ok(0)
    }
}

#[no_mangle]
pub extern "C" fn context_user_get(c: *mut ContextS) -> *const c_char {
    ffi::guard(std::ptr::null(), || get(c, 0))
}
#[no_mangle]
pub extern "C" fn context_role_get(c: *mut ContextS) -> *const c_char {
    ffi::guard(std::ptr::null(), || get(c, 1))
}
#[no_mangle]
pub extern "C" fn context_type_get(c: *mut ContextS) -> *const c_char {
    ffi::guard(std::ptr::null(), || get(c, 2))
}
#[no_mangle]
pub extern "C" fn context_range_get(c: *mut ContextS) -> *const c_char {
    ffi::guard(std::ptr::null(), || get(c, 3))
}
#[no_mangle]
pub extern "C" fn context_user_set(c: *mut ContextS, v: *const c_char) -> c_int {
    ffi::guard(-1, || set(c, 0, v))
}
#[no_mangle]
pub extern "C" fn context_role_set(c: *mut ContextS, v: *const c_char) -> c_int {
    ffi::guard(-1, || set(c, 1, v))
}
#[no_mangle]
pub extern "C" fn context_type_set(c: *mut ContextS, v: *const c_char) -> c_int {
    ffi::guard(-1, || set(c, 2, v))
}
#[no_mangle]
pub extern "C" fn context_range_set(c: *mut ContextS, v: *const c_char) -> c_int {
    ffi::guard(-1, || set(c, 3, v))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::ffi::CStr;

    fn text(p: *const c_char) -> Option<String> {
        // SAFETY: NULL or a string the context owns.
        (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string())
    }

    #[test]
    fn contexts_split_and_join_as_libselinux_does() {
        let c = CString::new("staff_u:staff_r:staff_t:s0-s0:c0.c1023").unwrap();
        let k = context_new(c.as_ptr());
        assert!(!k.is_null());
        assert_eq!(text(context_user_get(k)).as_deref(), Some("staff_u"));
        assert_eq!(
            text(context_range_get(k)).as_deref(),
            Some("s0-s0:c0.c1023")
        );
        let t = CString::new("sysadm_t").unwrap();
        assert_eq!(context_type_set(k, t.as_ptr()), 0);
        assert_eq!(
            text(context_str(k)).as_deref(),
            Some("staff_u:staff_r:sysadm_t:s0-s0:c0.c1023")
        );
        let bad = CString::new("a:b").unwrap();
        assert_eq!(context_role_set(k, bad.as_ptr()), -1);
        assert_eq!(context_range_set(k, std::ptr::null()), 0);
        assert_eq!(
            text(context_str(k)).as_deref(),
            Some("staff_u:staff_r:sysadm_t")
        );
        context_free(k);
        for bad in ["a:b", "a:b:c:d:e:f:g", "a b:c:d", "a:b:c\n", "a:b:c\t"] {
            let c = CString::new(bad).unwrap();
            assert!(context_new(c.as_ptr()).is_null(), "{bad}");
        }
        let c = CString::new("u:r:t:s0 - s0").unwrap();
        let k = context_new(c.as_ptr());
        assert_eq!(text(context_range_get(k)).as_deref(), Some("s0 - s0"));
        context_free(k);
    }
}
