//! `avc_has_perm` through libseaccess's fast paths (the thread's front, the cache), on SIDs the
//! input makes with `avc_context_to_sid`, each answer compared with libselinux's rule applied by
//! the security server, while the input changes the world between checks: `avc_destroy` (every
//! SID retired), a switch of mode, a reload of the same policy.
//!
//! libselinux's rule (avc.c, avc_has_perm_noaudit), with the kernel's compute_av: a context the
//! policy does not define is EINVAL while enforcing and a pass while permissive; otherwise the
//! request is refused (EACCES) when a requested permission is not allowed, or nothing is
//! requested, unless the process is permissive or the source a permissive domain. A SID
//! `avc_destroy` retired is EINVAL (libselinux frees it: a use after free there).
//!
//! The input is a program: `sid` (a pool string, or raw bytes, into one of eight SID slots),
//! `ask` (two slots, a class of the policy, and a request: a random word, or one permission the
//! decision allows, or nothing; asked three times: the full way, the cache, the front),
//! `destroy`, `mode` and `reload` (one value of its byte in 256). Each ask goes through
//! `avc_has_perm_noaudit` too, whose decision must be the policy's (in permissive mode, or for a
//! permissive domain, with what the checks asked granted into it, as libselinux's avc.c does).
#![no_main]
#![feature(c_variadic)]
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use seaccess_security::SecurityServer;
use seaccess_types::ClassId;

// Links libseaccess's entry points.
extern crate seaccess;

mod capi_common;

/// libselinux's `security_id_t`: an opaque pointer here.
type SecurityId = *mut c_void;

/// libselinux's `struct av_decision`.
#[repr(C)]
#[derive(Default, Debug)]
struct AvDecision {
    allowed: u32,
    decided: u32,
    auditallow: u32,
    auditdeny: u32,
    seqno: u32,
    flags: u32,
}

extern "C" {
    fn avc_context_to_sid(ctx: *const c_char, sid: *mut SecurityId) -> c_int;
    fn avc_has_perm(
        ssid: SecurityId,
        tsid: SecurityId,
        tclass: u16,
        requested: u32,
        aeref: *mut c_void,
        auditdata: *mut c_void,
    ) -> c_int;
    fn avc_has_perm_noaudit(
        ssid: SecurityId,
        tsid: SecurityId,
        tclass: u16,
        requested: u32,
        aeref: *mut c_void,
        avd: *mut AvDecision,
    ) -> c_int;
    fn avc_destroy();
    fn security_setenforce(value: c_int) -> c_int;
    fn seaccess_reload_policy(path: *const c_char) -> c_int;
}

struct Setup {
    server: SecurityServer,
    path: CString,
    /// Contexts: the initial SIDs' users, roles and levels with the policy's types.
    pool: Vec<CString>,
    /// The policy's class numbers.
    classes: u16,
}

static SETUP: OnceLock<Setup> = OnceLock::new();

fn setup() -> &'static Setup {
    SETUP.get_or_init(|| {
        let (path, server) = capi_common::policy();
        let g = server.snapshot();
        let pool = capi_common::contexts(&g);
        let classes = (1..=u16::MAX)
            .take_while(|&c| g.class_name(ClassId(c)).is_ok())
            .count() as u16;
        Setup {
            server,
            path,
            pool: pool
                .into_iter()
                .filter_map(|c| CString::new(c).ok())
                .collect(),
            classes,
        }
    })
}

/// A SID slot: the SID, the context it was made of, and whether `avc_destroy` retired it.
#[derive(Clone)]
struct Slot {
    sid: SecurityId,
    context: Vec<u8>,
    retired: bool,
}

fn errno_of(rc: c_int) -> c_int {
    if rc == 0 {
        0
    } else {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(-1)
    }
}

fuzz_target!(|data: &[u8]| {
    let st = setup();
    // The library's state outlives an input; its mode is the one thing an input sets.
    // SAFETY: no pointer.
    assert_eq!(unsafe { security_setenforce(1) }, 0);
    let mut enforcing = true;
    let mut slots: Vec<Option<Slot>> = vec![None; 8];
    let mut it = data.iter().copied();
    let word = |it: &mut std::iter::Copied<std::slice::Iter<u8>>| {
        (0..4).fold(0u32, |w, _| w << 8 | u32::from(it.next().unwrap_or(0)))
    };
    while let Some(op) = it.next() {
        let arg = it.next().unwrap_or(0);
        match op % 6 {
            0 | 1 => {
                let i = usize::from(arg % 8);
                let context = if op % 6 == 0 {
                    let k = word(&mut it) as usize % st.pool.len();
                    st.pool[k].clone()
                } else {
                    let raw: Vec<u8> = it.by_ref().take_while(|&b| b != 0).take(200).collect();
                    CString::new(raw).unwrap_or_default()
                };
                let mut sid: SecurityId = std::ptr::null_mut();
                // SAFETY: a NUL-terminated context and a place for the SID.
                let rc = unsafe { avc_context_to_sid(context.as_ptr(), &mut sid) };
                let utf8 = std::str::from_utf8(context.as_bytes()).is_ok();
                // A context that is not UTF-8 is refused here (docs/capi.md), any other interned.
                assert_eq!(rc == 0, utf8, "avc_context_to_sid {context:?}: {rc}");
                slots[i] = (rc == 0).then(|| Slot {
                    sid,
                    context: context.into_bytes(),
                    retired: false,
                });
            }
            2 => {
                // Every SID retired.
                // SAFETY: no argument.
                unsafe { avc_destroy() };
                for s in slots.iter_mut().flatten() {
                    s.retired = true;
                }
            }
            3 => {
                enforcing = !enforcing;
                // SAFETY: no pointer.
                assert_eq!(unsafe { security_setenforce(c_int::from(enforcing)) }, 0);
            }
            4 => {
                if arg == 0 {
                    // SAFETY: a NUL-terminated path.
                    assert_eq!(unsafe { seaccess_reload_policy(st.path.as_ptr()) }, 0);
                }
            }
            _ => {
                let (Some(s), Some(t)) = (
                    slots[usize::from(arg % 8)].clone(),
                    slots[usize::from(arg / 8 % 8)].clone(),
                ) else {
                    continue;
                };
                let class = (word(&mut it) % u32::from(st.classes)) as u16 + 1;
                let g = st.server.snapshot();
                let sid = |b: &[u8]| {
                    std::str::from_utf8(b)
                        .ok()
                        .and_then(|c| g.context_to_sid(c).ok())
                };
                let d = sid(&s.context)
                    .zip(sid(&t.context))
                    .map(|(a, b)| g.compute_av(a, b, ClassId(class)))
                    .transpose()
                    .unwrap_or_else(|e| panic!("compute_av: {e}"));
                let w = word(&mut it);
                let requested = match it.next().unwrap_or(0) % 3 {
                    0 => w,
                    1 => d.map_or(w, |d| d.allowed.0 & d.allowed.0.wrapping_neg()),
                    _ => 0,
                };
                let want = if s.retired || t.retired {
                    libc::EINVAL
                } else {
                    match d {
                        None if enforcing => libc::EINVAL,
                        None => 0,
                        Some(d) => {
                            let refused = requested == 0 || requested & !d.allowed.0 != 0;
                            if refused && enforcing && !d.flags.permissive() {
                                libc::EACCES
                            } else {
                                0
                            }
                        }
                    }
                };
                for round in 0..3 {
                    // SAFETY: two SIDs this library made (or retired: EINVAL), no audit data.
                    let rc = unsafe {
                        avc_has_perm(
                            s.sid,
                            t.sid,
                            class,
                            requested,
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                        )
                    };
                    assert!(rc == 0 || rc == -1, "rc {rc}");
                    let what = || {
                        format!(
                            "round {round}: {:?} {:?} class {class} requested {requested:#x}, enforcing {enforcing}",
                            String::from_utf8_lossy(&s.context),
                            String::from_utf8_lossy(&t.context)
                        )
                    };
                    assert_eq!(errno_of(rc), want, "{}", what());
                    // The same through avc_has_perm_noaudit, with the decision written out: the
                    // policy's (its seqno is the library's own count of loads).
                    let mut avd = AvDecision::default();
                    // SAFETY: as above, and a place for the decision.
                    let rc = unsafe {
                        avc_has_perm_noaudit(
                            s.sid,
                            t.sid,
                            class,
                            requested,
                            std::ptr::null_mut(),
                            &mut avd,
                        )
                    };
                    assert_eq!(errno_of(rc), want, "noaudit {}", what());
                    if let (Some(d), false) = (d, s.retired || t.retired) {
                        let ours = (d.decided.0, d.auditallow.0, d.auditdeny.0, d.flags.0);
                        let theirs = (avd.decided, avd.auditallow, avd.auditdeny, avd.flags);
                        assert_eq!(theirs, ours, "the decision {}", what());
                        if enforcing && !d.flags.permissive() {
                            assert_eq!(avd.allowed, d.allowed.0, "allowed {}", what());
                        } else {
                            // libselinux grants what a permissive check asks into the cache's
                            // entry (after copying the decision out: avc.c) and keeps it for the
                            // mode epoch (a permissive domain's, for good); avc_has_perm asked
                            // first, so the entry holds the policy's permissions, this request's
                            // and perhaps earlier ones.
                            let want = d.allowed.0 | requested;
                            assert_eq!(avd.allowed & want, want, "allowed {}", what());
                        }
                    }
                }
            }
        }
    }
});
