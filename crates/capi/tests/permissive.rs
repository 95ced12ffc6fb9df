//! An empty request and a class number the policy does not define, enforcing and permissive,
//! as libselinux 3.4 answers them (its avc.c, avc_has_perm_noaudit: `if (!requested ||
//! denied)` refuses with EACCES only while enforcing; the kernel's security_compute_av_user
//! allows class 0 everything under handle_unknown allow and nothing otherwise, and a number past
//! the policy's classes nothing), and unknown names through selinux_check_access (its
//! checkAccess.c: 0 when security_deny_unknown() is 0, else -1 with EINVAL, in either mode).
//! tests/capi/permissive.c checks the same from C.
#![allow(unsafe_code)] // calls the library through its C ABI
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

use seaccess as _;

extern "C" {
    fn seaccess_load_policy(path: *const c_char) -> c_int;
    fn avc_open(opts: *const c_void, nopts: c_uint) -> c_int;
    fn avc_context_to_sid(ctx: *const c_char, sid: *mut *mut c_void) -> c_int;
    fn avc_has_perm(
        s: *mut c_void,
        t: *mut c_void,
        class: u16,
        av: u32,
        aeref: *mut c_void,
        aux: *mut c_void,
    ) -> c_int;
    fn avc_has_perm_noaudit(
        s: *mut c_void,
        t: *mut c_void,
        class: u16,
        av: u32,
        aeref: *mut c_void,
        avd: *mut [u32; 6],
    ) -> c_int;
    fn selinux_check_access(
        s: *const c_char,
        t: *const c_char,
        class: *const c_char,
        perm: *const c_char,
        aux: *mut c_void,
    ) -> c_int;
    fn security_setenforce(v: c_int) -> c_int;
    fn security_deny_unknown() -> c_int;
    fn string_to_security_class(name: *const c_char) -> u16;
    fn string_to_av_perm(class: u16, name: *const c_char) -> u32;
}

fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// 0, or -1 with errno, as one value to compare: Ok(()) or Err(errno).
fn answer(rc: c_int) -> Result<(), c_int> {
    match rc {
        0 => Ok(()),
        -1 => Err(errno()),
        other => panic!("returned {other}"),
    }
}

fn load(name: &str) {
    let path = CString::new(format!(
        "{}/../../target/policies/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    assert_eq!(
        // SAFETY: a NUL-terminated path.
        unsafe { seaccess_load_policy(path.as_ptr()) },
        0,
        "target/policies/{name} (make policies)"
    );
}

const DOM: &CStr = c"u:r:dom_t:s0";

/// Every request of the module's doc under the loaded policy, in mode `enforcing`.
fn check(policy: &str, allow_unknown: bool, enforcing: bool) {
    let at = format!(
        "{policy}, {}",
        if enforcing { "enforcing" } else { "permissive" }
    );
    let mut s = std::ptr::null_mut();
    // SAFETY: NUL-terminated strings and valid out-pointers, as libselinux's API asks; the SID
    // lives for the process.
    let (process, fork) = unsafe {
        assert_eq!(security_setenforce(c_int::from(enforcing)), 0);
        assert_eq!(security_deny_unknown(), c_int::from(!allow_unknown), "{at}");
        assert_eq!(avc_context_to_sid(DOM.as_ptr(), &mut s), 0);
        let process = string_to_security_class(c"process".as_ptr());
        (process, string_to_av_perm(process, c"fork".as_ptr()))
    };
    assert!(process != 0 && fork != 0, "{at}: process fork");
    let refused = |pass: bool, e: c_int| if pass { Ok(()) } else { Err(e) };
    let (eacces, einval) = (libc::EACCES, libc::EINVAL);
    // SAFETY: a SID the library handed out and a valid decision buffer.
    let has = |class: u16, av: u32| unsafe {
        answer(avc_has_perm(
            s,
            s,
            class,
            av,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        ))
    };
    let noaudit = |class: u16, av: u32| {
        let mut avd = [0u32; 6];
        // SAFETY: as above; `avd` is libselinux's struct av_decision (six 32-bit fields).
        unsafe {
            answer(avc_has_perm_noaudit(
                s,
                s,
                class,
                av,
                std::ptr::null_mut(),
                &mut avd,
            ))
        }
    };
    // SAFETY: NUL-terminated strings.
    let by_name = |class: &CStr, perm: &CStr| unsafe {
        answer(selinux_check_access(
            DOM.as_ptr(),
            DOM.as_ptr(),
            class.as_ptr(),
            perm.as_ptr(),
            std::ptr::null_mut(),
        ))
    };
    // Twice: the second answer may come from the cache.
    for round in 0..2 {
        let at = format!("{at}, round {round}");
        assert_eq!(has(process, fork), Ok(()), "{at}: process fork");
        assert_eq!(
            has(process, 0),
            refused(!enforcing, eacces),
            "{at}: avc_has_perm, an empty request"
        );
        assert_eq!(
            noaudit(process, 0),
            refused(!enforcing, eacces),
            "{at}: avc_has_perm_noaudit, an empty request"
        );
        assert_eq!(
            has(0, fork),
            refused(!enforcing || allow_unknown, eacces),
            "{at}: avc_has_perm, class 0"
        );
        assert_eq!(
            noaudit(0, fork),
            refused(!enforcing || allow_unknown, eacces),
            "{at}: avc_has_perm_noaudit, class 0"
        );
        assert_eq!(
            has(4000, fork),
            refused(!enforcing, eacces),
            "{at}: avc_has_perm, an undefined class number"
        );
        assert_eq!(
            noaudit(4000, fork),
            refused(!enforcing, eacces),
            "{at}: avc_has_perm_noaudit, an undefined class number"
        );
        assert_eq!(
            has(4000, 0),
            refused(!enforcing, eacces),
            "{at}: an empty request on an undefined class number"
        );
        assert_eq!(
            by_name(c"process", c"fork"),
            Ok(()),
            "{at}: selinux_check_access process fork"
        );
        assert_eq!(
            by_name(c"no_such_class", c"fork"),
            refused(allow_unknown, einval),
            "{at}: an unknown class name"
        );
        assert_eq!(
            by_name(c"process", c"no_such_perm"),
            refused(allow_unknown, einval),
            "{at}: an unknown permission name"
        );
    }
}

// renumber_a.cil denies unknown classes and permissions, unknown.cil allows them; each is
// checked enforcing, permissive, and enforcing again (the cache's permissive grants must not
// outlive the mode).
#[test]
fn empty_and_unknown_requests_pass_only_in_permissive_mode() {
    load("renumber_a.33");
    // SAFETY: no options.
    assert_eq!(unsafe { avc_open(std::ptr::null(), 0) }, 0);
    for enforcing in [true, false, true] {
        check("renumber_a", false, enforcing);
    }
    load("unknown.33");
    for enforcing in [true, false, true] {
        check("unknown", true, enforcing);
    }
}
