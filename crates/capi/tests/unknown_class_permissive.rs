//! A class number the policy does not define, asked for a permissive domain while enforcing:
//! the kernel's security_compute_av_user sets AVD_FLAGS_PERMISSIVE from the source's type
//! before it looks at the class (class 0: everything under handle_unknown allow, else nothing;
//! a number past the policy's classes: nothing, the flag kept), and libselinux's
//! avc_has_perm_noaudit grants a denial whose decision carries the flag. On permissive.cil
//! (handle_unknown deny, perm_t and perm2_t permissive); whether a domain is permissive is
//! read from its decision on a class the policy defines, the flag depending on the source's
//! type alone.
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
    fn security_compute_av_flags_raw(
        s: *const c_char,
        t: *const c_char,
        class: u16,
        av: u32,
        avd: *mut [u32; 6],
    ) -> c_int;
    fn security_setenforce(v: c_int) -> c_int;
    fn security_deny_unknown() -> c_int;
    fn string_to_security_class(name: *const c_char) -> u16;
}

const DATA: &CStr = c"u:object_r:data_t:s0";
const DOMAINS: [&CStr; 4] = [
    c"u:r:perm_t:s0",
    c"u:r:perm2_t:s0",
    c"u:r:enf_t:s0",
    c"u:r:child_t:s0",
];
/// struct av_decision's fields.
const ALLOWED: usize = 0;
const FLAGS: usize = 5;

fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn answer(rc: c_int) -> Result<(), c_int> {
    match rc {
        0 => Ok(()),
        -1 => Err(errno()),
        other => panic!("returned {other}"),
    }
}

/// The kernel's decision (selinuxfs `access`) for `scon` on data_t in `class`.
fn compute(scon: &CStr, class: u16) -> [u32; 6] {
    let mut avd = [0u32; 6];
    // SAFETY: NUL-terminated contexts and a struct av_decision buffer.
    let rc =
        unsafe { security_compute_av_flags_raw(scon.as_ptr(), DATA.as_ptr(), class, 0, &mut avd) };
    assert_eq!(rc, 0, "{scon:?} class {class}");
    avd
}

#[test]
fn a_permissive_domain_passes_a_class_number_the_policy_lacks() {
    let path = CString::new(format!(
        "{}/../../target/policies/permissive.33",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    // SAFETY: a NUL-terminated path; no options; NUL-terminated names.
    let file = unsafe {
        assert_eq!(
            seaccess_load_policy(path.as_ptr()),
            0,
            "target/policies/permissive.33 (make policies)"
        );
        assert_eq!(avc_open(std::ptr::null(), 0), 0);
        assert_eq!(security_setenforce(1), 0);
        assert_eq!(
            security_deny_unknown(),
            1,
            "permissive.cil denies unknown classes"
        );
        string_to_security_class(c"file".as_ptr())
    };
    assert_ne!(file, 0);
    let mut t = std::ptr::null_mut();
    // SAFETY: a NUL-terminated context and a valid out-pointer.
    assert_eq!(unsafe { avc_context_to_sid(DATA.as_ptr(), &mut t) }, 0);
    let mut seen = [0; 2];
    for dom in DOMAINS {
        let permissive = compute(dom, file)[FLAGS] & 1 != 0;
        seen[usize::from(permissive)] += 1;
        let mut s = std::ptr::null_mut();
        // SAFETY: as above.
        assert_eq!(unsafe { avc_context_to_sid(dom.as_ptr(), &mut s) }, 0);
        for class in [0u16, 4000] {
            let at = format!("{dom:?} class {class}");
            let d = compute(dom, class);
            assert_eq!(d[ALLOWED], 0, "{at}: handle_unknown deny");
            assert_eq!(
                d[FLAGS] & 1 != 0,
                permissive,
                "{at}: the flag, set before the class"
            );
            let want = if permissive {
                Ok(())
            } else {
                Err(libc::EACCES)
            };
            for round in 0..2 {
                // SAFETY: SIDs the library handed out, no audit data.
                let rc = unsafe {
                    avc_has_perm(s, t, class, 1, std::ptr::null_mut(), std::ptr::null_mut())
                };
                assert_eq!(answer(rc), want, "{at} round {round}: avc_has_perm");
                let mut avd = [0u32; 6];
                // SAFETY: as above; `avd` is a struct av_decision.
                let rc =
                    unsafe { avc_has_perm_noaudit(s, t, class, 1, std::ptr::null_mut(), &mut avd) };
                assert_eq!(answer(rc), want, "{at} round {round}: avc_has_perm_noaudit");
                assert_eq!(
                    avd[FLAGS] & 1 != 0,
                    permissive,
                    "{at}: avc_has_perm_noaudit's flag"
                );
            }
        }
    }
    assert_eq!(
        seen.map(|n| n > 0),
        [true, true],
        "permissive and enforced domains"
    );
}
