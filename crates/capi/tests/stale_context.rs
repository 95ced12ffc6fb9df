//! A context the reloaded policy does not define answers alike whether or not the process
//! checked it under the policy before: -1/EINVAL while enforcing (libselinux's AVC, its cache
//! flushed by the load, asks the kernel, which answers EINVAL), 0 while permissive (avc.c
//! ignores that EINVAL when not enforcing). u:r:dom_t:s0 is defined by renumber_a.cil, which
//! allows it to `process fork` itself, and not by example.cil (no user `u`);
//! u:object_r:obj_t:s0 is never used before the reload. tests/capi/stale_context.c checks the
//! same from C.
#![allow(unsafe_code)] // calls the library through its C ABI
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};

use seaccess as _;

extern "C" {
    fn seaccess_load_policy(path: *const c_char) -> c_int;
    fn seaccess_reload_policy(path: *const c_char) -> c_int;
    fn selinux_check_access(
        s: *const c_char,
        t: *const c_char,
        class: *const c_char,
        perm: *const c_char,
        aux: *mut c_void,
    ) -> c_int;
    fn security_check_context(con: *const c_char) -> c_int;
    fn security_setenforce(v: c_int) -> c_int;
    fn avc_context_to_sid(ctx: *const c_char, sid: *mut *mut c_void) -> c_int;
    fn avc_has_perm(
        s: *mut c_void,
        t: *mut c_void,
        class: u16,
        av: u32,
        aeref: *mut c_void,
        aux: *mut c_void,
    ) -> c_int;
    fn string_to_security_class(name: *const c_char) -> u16;
    fn string_to_av_perm(class: u16, name: *const c_char) -> u32;
}

fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn answer(rc: c_int) -> Result<(), c_int> {
    if rc == 0 {
        Ok(())
    } else {
        Err(errno())
    }
}

fn reload(name: &str) {
    let p = CString::new(format!(
        "{}/../../target/policies/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert_eq!(
        // SAFETY: a NUL-terminated path.
        unsafe { seaccess_load_policy(p.as_ptr()) },
        0,
        "target/policies/{name} (make policies)"
    );
}

/// selinux_check_access and avc_has_perm of `process fork`, the context on itself.
fn fork(ctx: &CStr) -> [Result<(), c_int>; 2] {
    let mut sid = std::ptr::null_mut();
    // SAFETY: NUL-terminated strings and a valid out-pointer; the SID lives for the process.
    unsafe {
        assert_eq!(avc_context_to_sid(ctx.as_ptr(), &mut sid), 0);
        let process = string_to_security_class(c"process".as_ptr());
        let fork = string_to_av_perm(process, c"fork".as_ptr());
        [
            answer(selinux_check_access(
                ctx.as_ptr(),
                ctx.as_ptr(),
                c"process".as_ptr(),
                c"fork".as_ptr(),
                std::ptr::null_mut(),
            )),
            answer(avc_has_perm(
                sid,
                sid,
                process,
                fork,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )),
        ]
    }
}

#[test]
fn a_context_the_reload_made_invalid_is_einval_as_a_never_seen_one() {
    let (seen, unseen) = (c"u:r:dom_t:s0", c"u:object_r:obj_t:s0");
    reload("renumber_a.33");
    // SAFETY: NUL-terminated strings.
    assert_eq!(unsafe { security_check_context(seen.as_ptr()) }, 0);
    for _ in 0..3 {
        assert_eq!(fork(seen), [Ok(()), Ok(())], "renumber_a allows it");
    }
    reload("example.33");
    // SAFETY: as above.
    unsafe {
        assert_eq!(
            answer(security_check_context(seen.as_ptr())),
            Err(22),
            "example.cil must not define {seen:?}"
        );
        assert_eq!(
            answer(security_check_context(unseen.as_ptr())),
            Err(22),
            "example.cil must not define {unseen:?}"
        );
    }
    for round in 0..3 {
        assert_eq!(
            fork(seen),
            [Err(22), Err(22)],
            "seen before the reload, round {round}"
        );
        assert_eq!(
            fork(unseen),
            [Err(22), Err(22)],
            "never seen, round {round}"
        );
    }
    // SAFETY: no pointers.
    assert_eq!(unsafe { security_setenforce(0) }, 0);
    assert_eq!(fork(seen), [Ok(()), Ok(())], "permissive, seen");
    assert_eq!(fork(unseen), [Ok(()), Ok(())], "permissive, never seen");
    // SAFETY: no pointers.
    assert_eq!(unsafe { security_setenforce(1) }, 0);
    assert_eq!(fork(seen), [Err(22), Err(22)], "enforcing again, seen");
    let back = CString::new(format!(
        "{}/../../target/policies/renumber_a.33",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { seaccess_reload_policy(back.as_ptr()) }, 0);
    assert_eq!(fork(seen), [Ok(()), Ok(())], "renumber_a again");
}
