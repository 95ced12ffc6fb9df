//! avc_reset empties the cache that checks go through, on every thread: a check after it is a
//! miss counted in the new cache's statistics (libselinux's avc_reset flushes and zeroes them),
//! even on a thread whose earlier checks went through the old cache.
#![allow(unsafe_code)] // calls the library through its C ABI
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::{c_char, c_int, c_uint, c_void, CString};

use seaccess as _;

#[repr(C)]
#[derive(Default, Debug)]
struct Stats {
    entry_lookups: c_uint,
    entry_hits: c_uint,
    entry_misses: c_uint,
    entry_discards: c_uint,
    cav_lookups: c_uint,
    cav_hits: c_uint,
    cav_probes: c_uint,
    cav_misses: c_uint,
}

extern "C" {
    fn seaccess_load_policy(path: *const c_char) -> c_int;
    fn avc_open(opts: *const c_void, nopts: c_uint) -> c_int;
    fn avc_reset() -> c_int;
    fn avc_context_to_sid(ctx: *const c_char, sid: *mut *mut c_void) -> c_int;
    fn avc_has_perm(
        s: *mut c_void,
        t: *mut c_void,
        class: u16,
        av: u32,
        aeref: *mut c_void,
        aux: *mut c_void,
    ) -> c_int;
    fn avc_cache_stats(st: *mut Stats);
    fn string_to_security_class(name: *const c_char) -> u16;
    fn selinux_set_callback(kind: c_int, cb: *const c_void);
}

const SELINUX_CB_LOG: c_int = 0;

/// Each of the 40,000 checks below is a denial, logged through the log callback: dropped here
/// (written to standard error they cost more than the checks).
extern "C" fn quiet(_kind: c_int, _fmt: *const c_char) -> c_int {
    0
}

fn stats() -> Stats {
    let mut st = Stats::default();
    // SAFETY: a valid out-pointer to libselinux's struct avc_cache_stats.
    unsafe { avc_cache_stats(&mut st) };
    st
}

#[test]
fn a_check_after_avc_reset_goes_through_the_new_cache() {
    let path = CString::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/policies/example.33"
    ))
    .unwrap();
    let (sc, tc) = (
        c"system_u:system_r:init_t:s0",
        c"system_u:object_r:init_exec_t:s0:c1,c3,c6",
    );
    let (mut s, mut t) = (std::ptr::null_mut(), std::ptr::null_mut());
    // SAFETY: NUL-terminated strings and valid out-pointers, as libselinux's API asks; a
    // function of the log callback's ABI (its variadic part unread).
    let file = unsafe {
        selinux_set_callback(SELINUX_CB_LOG, quiet as *const c_void);
        assert_eq!(
            seaccess_load_policy(path.as_ptr()),
            0,
            "target/policies/example.33 (make policies)"
        );
        assert_eq!(avc_open(std::ptr::null(), 0), 0);
        assert_eq!(avc_context_to_sid(sc.as_ptr(), &mut s), 0);
        assert_eq!(avc_context_to_sid(tc.as_ptr(), &mut t), 0);
        string_to_security_class(c"file".as_ptr())
    };
    assert_ne!(file, 0);
    let (s, t) = (s as usize, t as usize);
    // SAFETY: SIDs this library handed out, which live for the process.
    let check = move || unsafe {
        avc_has_perm(
            s as *mut c_void,
            t as *mut c_void,
            file,
            1,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    for _ in 0..3 {
        check();
    }
    let st = stats();
    // One lookup per check, refused or not, as libselinux counts (its avc_has_perm_noaudit
    // looks the triple up once): two hits after the first check's miss.
    let per = 1;
    assert_eq!(
        (st.cav_lookups, st.cav_hits, st.cav_misses),
        (3, 2, 1),
        "{st:?}"
    );
    // SAFETY: no arguments.
    assert_eq!(unsafe { avc_reset() }, 0);
    assert_eq!(stats().cav_lookups, 0);
    check();
    check();
    let st = stats();
    assert_eq!(
        (st.cav_lookups, st.cav_misses),
        (2 * per, 1),
        "this thread: {st:?}"
    );
    std::thread::spawn(check).join().unwrap();
    let st = stats();
    assert_eq!(
        (st.cav_lookups, st.cav_misses),
        (3 * per, 1),
        "another thread: {st:?}"
    );
    // Many threads at once, each counted in a stripe of its own or the shared one: every
    // check counted exactly once.
    let threads: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                for _ in 0..5000 {
                    check();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let st = stats();
    assert_eq!(
        (st.cav_lookups, st.cav_hits, st.cav_misses),
        (3 + 8 * 5000, 2 + 8 * 5000, 1),
        "many threads: {st:?}"
    );
}
