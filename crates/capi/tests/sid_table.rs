//! The SID table as a program sees it: no address space reserved up front (a process with
//! little of it left still gets its SIDs), no limit but memory on how many it makes, and
//! avc_destroy giving the table back, after which an old SID is refused (EINVAL), never taken
//! for another context, while new SIDs work.
#![allow(unsafe_code)] // calls the library through its C ABI
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::{c_char, c_int, c_uint, c_void, CString};

use seaccess as _;

extern "C" {
    fn seaccess_load_policy(path: *const c_char) -> c_int;
    fn avc_open(opts: *const c_void, nopts: c_uint) -> c_int;
    fn avc_destroy();
    fn avc_context_to_sid(ctx: *const c_char, sid: *mut *mut c_void) -> c_int;
    fn avc_sid_to_context(sid: *mut c_void, ctx: *mut *mut c_char) -> c_int;
    fn avc_has_perm_noaudit(
        s: *mut c_void,
        t: *mut c_void,
        class: u16,
        av: u32,
        aeref: *mut c_void,
        avd: *mut c_void,
    ) -> c_int;
    fn string_to_security_class(name: *const c_char) -> u16;
    fn string_to_av_perm(class: u16, name: *const c_char) -> u32;
    fn freecon(ctx: *mut c_char);
}

fn sid(ctx: &str) -> Result<usize, i32> {
    let c = CString::new(ctx).unwrap();
    let mut s = std::ptr::null_mut();
    // SAFETY: a NUL-terminated string and a valid out-pointer.
    match unsafe { avc_context_to_sid(c.as_ptr(), &mut s) } {
        0 => Ok(s as usize),
        _ => Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0)),
    }
}

fn context_of(s: usize) -> Result<String, i32> {
    let mut p = std::ptr::null_mut();
    // SAFETY: any pointer value may be passed (the library refuses those it did not hand out);
    // a valid out-pointer.
    match unsafe { avc_sid_to_context(s as *mut c_void, &mut p) } {
        0 => {
            // SAFETY: a NUL-terminated string the library allocated, freed once below.
            let text = unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned();
            // SAFETY: as above.
            unsafe { freecon(p) };
            Ok(text)
        }
        _ => Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0)),
    }
}

/// avc_has_perm_noaudit's result and errno for `s` reading a file labelled `t`.
fn read(s: usize, t: usize, class: u16, perm: u32) -> (c_int, i32) {
    let mut avd = [0u8; 64];
    // SAFETY: SIDs or any other pointer values (refused if not the library's); avd is larger
    // than struct av_decision.
    let rc = unsafe {
        avc_has_perm_noaudit(
            s as *mut c_void,
            t as *mut c_void,
            class,
            perm,
            std::ptr::null_mut(),
            avd.as_mut_ptr().cast(),
        )
    };
    (
        rc,
        if rc == 0 {
            0
        } else {
            std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
        },
    )
}

/// The process's mapped address space, from /proc/self/status's VmSize (bytes).
fn vm_size() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .trim();
    kb.parse::<u64>().unwrap() * 1024
}

#[test]
fn the_sid_table_grows_as_needed_and_avc_destroy_gives_it_back() {
    let path = CString::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/policies/example.33"
    ))
    .unwrap();
    // SAFETY: a NUL-terminated path; no options.
    unsafe {
        assert_eq!(
            seaccess_load_policy(path.as_ptr()),
            0,
            "target/policies/example.33 (make policies)"
        );
        assert_eq!(avc_open(std::ptr::null(), 0), 0);
    }
    // SAFETY: NUL-terminated names.
    let (file, read_perm) = unsafe {
        let c = string_to_security_class(c"file".as_ptr());
        (c, string_to_av_perm(c, c"read".as_ptr()))
    };
    assert!(file != 0 && read_perm != 0);
    let (user, etc) = ("user_u:user_r:user_t:s0", "system_u:object_r:etc_t:s0");

    // With only 32 MiB of address space left (the table used to reserve 128 MiB at its first
    // SID), SIDs are still made and checked. The limit is this thread's process's, lifted again
    // before anything else runs.
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid out-pointer.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut old) }, 0);
    let tight = libc::rlimit {
        rlim_cur: vm_size() + (32 << 20),
        rlim_max: old.rlim_max,
    };
    // SAFETY: a valid rlimit.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &tight) }, 0);
    let first = (sid(user), sid(etc));
    // SAFETY: the limit read above.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &old) }, 0);
    let (Ok(s), Ok(t)) = first else {
        panic!("no SIDs with 32 MiB of address space left: {first:?}")
    };
    let before = read(s, t, file, read_perm);
    assert_eq!(
        before.0, 0,
        "the example policy lets user_t read etc_t (testdata/policies)"
    );

    // Well past the old limit of 2^20 would take minutes; past several chunks is what this
    // shows: each SID made is found again and names its own context.
    let many: Vec<(String, usize)> = (0..20_000)
        .map(|n| format!("user_u:user_r:user_t:s0:c{}", n % 1024) + &format!("_{n}"))
        .map(|c| {
            let s = sid(&c).unwrap_or_else(|e| panic!("{c}: errno {e}"));
            (c, s)
        })
        .collect();
    for (c, s) in many.iter().step_by(97) {
        assert_eq!(context_of(*s).as_deref(), Ok(c.as_str()));
        assert_eq!(sid(c), Ok(*s));
    }

    // avc_destroy: the old SIDs are refused, not read as anything else, while a new SID of the
    // same context works and the same check answers the same.
    // SAFETY: no other thread uses the AVC.
    unsafe { avc_destroy() };
    assert_eq!(context_of(s), Err(libc::EINVAL));
    assert_eq!(read(s, t, file, read_perm), (-1, libc::EINVAL));
    assert_eq!(context_of(many[19_999].1), Err(libc::EINVAL));
    // SAFETY: no options.
    assert_eq!(unsafe { avc_open(std::ptr::null(), 0) }, 0);
    let (s2, t2) = (sid(user).unwrap(), sid(etc).unwrap());
    assert_eq!(context_of(s2).as_deref(), Ok(user));
    assert_eq!(read(s2, t2, file, read_perm), before);
    // The old pointers still do not pass, though the new table has SIDs again: its chunks lie
    // elsewhere (the retired ones are never mapped again).
    assert!(s2 != s && t2 != t);
    assert_eq!(read(s, t, file, read_perm), (-1, libc::EINVAL));
    assert_eq!(read(s2, t, file, read_perm), (-1, libc::EINVAL));
}
