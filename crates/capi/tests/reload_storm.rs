//! selinux_check_access racing reloads that renumber classes: renumber_a.cil and renumber_b.cil
//! differ only in the order of `file` and `process` in classorder; both allow dom_t to `process
//! fork` itself and neither allows it anything on `file`, and `file read` and `process fork`
//! are both bit 0 of their class. So `file read` must be denied (EACCES) and `process fork`
//! allowed every time; the other answer is one policy's class number paired with the other's
//! decision. tests/capi/reload_storm.c checks the same from C. A deadline bounds the test: it
//! fails, never hangs.
#![allow(unsafe_code)] // calls the library through its C ABI
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::mpsc;
use std::time::{Duration, Instant};

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
    fn string_to_security_class(name: *const c_char) -> u16;
    fn selinux_set_callback(kind: c_int, cb: *const c_void);
}

const SELINUX_CB_LOG: c_int = 0;

/// Denials are logged through the log callback: dropped here.
extern "C" fn quiet(_kind: c_int, _fmt: *const c_char) -> c_int {
    0
}

fn policy(name: &str) -> CString {
    CString::new(format!(
        "{}/../../target/policies/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

const DOM: &CStr = c"u:r:dom_t:s0";

fn errno() -> c_int {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// (file read denied with EACCES, process fork allowed), with arguments in fresh buffers when
/// `fresh` (the string cache's path) or the same literals (the memo's).
fn ask(fresh: bool) -> (bool, bool) {
    let owned: Vec<CString> = ["u:r:dom_t:s0", "file", "read", "process", "fork"]
        .iter()
        .map(|s| CString::new(*s).unwrap())
        .collect();
    let [ctx, file, read, process, fork]: [&CStr; 5] = if fresh {
        [&owned[0], &owned[1], &owned[2], &owned[3], &owned[4]].map(|c| c.as_c_str())
    } else {
        [DOM, c"file", c"read", c"process", c"fork"]
    };
    // SAFETY: NUL-terminated strings.
    unsafe {
        let denied = selinux_check_access(
            ctx.as_ptr(),
            ctx.as_ptr(),
            file.as_ptr(),
            read.as_ptr(),
            std::ptr::null_mut(),
        ) == -1
            && errno() == 13;
        let allowed = selinux_check_access(
            ctx.as_ptr(),
            ctx.as_ptr(),
            process.as_ptr(),
            fork.as_ptr(),
            std::ptr::null_mut(),
        ) == 0;
        (denied, allowed)
    }
}

#[test]
fn no_wrong_answer_while_reloads_renumber_classes() {
    let (a, b) = (policy("renumber_a.33"), policy("renumber_b.33"));
    // SAFETY: a function of libselinux's log callback's ABI (its variadic part unread), and
    // NUL-terminated paths and names.
    let (file_a, file_b) = unsafe {
        selinux_set_callback(SELINUX_CB_LOG, quiet as *const c_void);
        assert_eq!(
            seaccess_load_policy(a.as_ptr()),
            0,
            "target/policies/renumber_a.33 (make policies)"
        );
        let fa = string_to_security_class(c"file".as_ptr());
        assert_eq!(ask(false), (true, true), "renumber_a without reloads");
        assert_eq!(seaccess_reload_policy(b.as_ptr()), 0);
        assert_eq!(ask(false), (true, true), "renumber_b without reloads");
        (fa, string_to_security_class(c"file".as_ptr()))
    };
    assert_ne!(file_a, file_b, "the policies must number file differently");

    static STOP: AtomicBool = AtomicBool::new(false);
    static WRONG: AtomicU64 = AtomicU64::new(0);
    static CHECKS: AtomicU64 = AtomicU64::new(0);
    let (done, finished) = mpsc::channel();
    let checkers: Vec<_> = (0..2)
        .map(|_| {
            std::thread::spawn(|| {
                let mut n = 0u64;
                while !STOP.load(Relaxed) {
                    let (denied, allowed) = ask(n % 8 == 7);
                    WRONG.fetch_add(u64::from(!denied) + u64::from(!allowed), Relaxed);
                    n += 1;
                }
                CHECKS.fetch_add(2 * n, Relaxed);
            })
        })
        .collect();
    let reloader = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_millis(1500);
        let mut reloads = 0u32;
        while Instant::now() < until {
            let p = if reloads % 2 == 0 { &a } else { &b };
            // SAFETY: a NUL-terminated path.
            assert_eq!(unsafe { seaccess_reload_policy(p.as_ptr()) }, 0);
            reloads += 1;
        }
        STOP.store(true, Relaxed);
        let _ = done.send(reloads);
    });
    let reloads = finished
        .recv_timeout(Duration::from_secs(30))
        .expect("the storm did not end in 30 s");
    reloader.join().unwrap();
    for c in checkers {
        c.join().unwrap();
    }
    let (wrong, checks) = (WRONG.load(Relaxed), CHECKS.load(Relaxed));
    assert!(
        reloads >= 20 && checks >= 1000,
        "{reloads} reloads, {checks} checks: the storm did not run"
    );
    assert_eq!(
        wrong, 0,
        "{wrong} wrong answers in {checks} checks over {reloads} reloads"
    );
}
