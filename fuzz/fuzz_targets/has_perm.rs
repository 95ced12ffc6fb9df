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
//! `avc_has_perm_noaudit` too, whose decision must be the policy's.
#![no_main]
#![feature(c_variadic)]
use std::ffi::{c_char, c_int, c_void, CString};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use seaccess_security::SecurityServer;
use seaccess_types::{ClassId, Sid};

// Links libseaccess's entry points.
extern crate seaccess;

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
    fn selinux_set_callback(
        kind: c_int,
        cb: unsafe extern "C" fn(c_int, *const c_char, ...) -> c_int,
    );
}

/// The log callback: the records are not the test's.
unsafe extern "C" fn quiet(_kind: c_int, _fmt: *const c_char, _args: ...) -> c_int {
    0
}

/// selinux_set_callback's SELINUX_CB_LOG.
const SELINUX_CB_LOG: c_int = 0;

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
        let path = std::env::var("SEACCESS_FUZZ_POLICY")
            .unwrap_or_else(|_| "../target/policies/example.33".into());
        // Read by libseaccess at its first call, before any thread of its own exists.
        std::env::set_var("SEACCESS_POLICY", &path);
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let server = SecurityServer::from_bytes(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
        let g = server.snapshot();
        let initial: Vec<String> = (1..=40)
            .filter_map(|s| g.sid_to_context(Sid(s)).ok())
            .collect();
        let mut pool = initial.clone();
        let mut shapes: Vec<(String, String, String)> = initial
            .iter()
            .filter_map(|c| {
                let mut f = c.splitn(4, ':');
                let (u, r, _t) = (f.next()?, f.next()?, f.next()?);
                let l = f.next().map_or(String::new(), |l| format!(":{l}"));
                Some((u.to_owned(), r.to_owned(), l))
            })
            .collect();
        shapes.sort();
        shapes.dedup();
        for (u, r, l) in &shapes {
            for t in g.policy().type_names.by_value.iter() {
                let c = format!("{u}:{r}:{t}{l}");
                if pool.len() < 2000 && g.context_to_sid(&c).is_ok() {
                    pool.push(c);
                }
            }
        }
        let classes = (1..=u16::MAX)
            .take_while(|&c| g.class_name(ClassId(c)).is_ok())
            .count() as u16;
        // SAFETY: a function of the log callback's type, for the process's life.
        unsafe { selinux_set_callback(SELINUX_CB_LOG, quiet) };
        Setup {
            server,
            path: CString::new(path).unwrap_or_else(|e| panic!("{e}")),
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
