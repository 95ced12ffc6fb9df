//! `selinux_check_access` through libseaccess's fast paths (the thread's front, the query memo by
//! address and by content, the SID-keyed table), asked through two sets of four buffers that the
//! input rewrites in place between calls, each answer compared with libselinux's rule applied
//! by the security server to the strings as they are at that call: never a panic, never an
//! answer for strings the buffers held before.
//!
//! libselinux's rule (checkAccess.c): an unknown class, then an unknown permission, is allowed
//! when the policy allows unknown permissions and EINVAL otherwise, whatever the contexts; then
//! a context the policy does not define is EINVAL while enforcing (the kernel's answer to
//! security_compute_av) and a pass while permissive; then the permission is granted if the
//! decision allows it, the source is a permissive domain or the process is permissive, else
//! EACCES.
//!
//! The input is a program: `put` (a pool string into a buffer), `raw` (bytes into a buffer),
//! `poke` (one byte of a buffer: a NUL shortens its string), `grant` (a query the policy allows
//! into one set, the states the fast paths keep) and `ask` (four buffers, each from either set,
//! asked three times: the full way, the cache, the front), and the world changed under them:
//! `destroy` (avc_destroy: every SID retired), `mode` (security_setenforce, either way) and
//! `reload` (the same policy again, a new generation; one value of its byte in 256); and `map`
//! (selinux_set_mapping: one to four of the policy's classes with some of their permissions, or
//! none), through which a name the map lacks is unknown. The pool is the policy's own: its
//! initial SIDs' users, roles and levels with its types, every class and every permission name.
//! Seen failing: with the front's permission comparison removed, a query whose permission was
//! rewritten to an unknown name was granted (example.33, three minutes from an empty corpus).
#![no_main]
#![feature(c_variadic)]
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use seaccess_security::SecurityServer;
use seaccess_types::{ClassId, HandleUnknown};

// Links libseaccess's entry points.
extern crate seaccess;

mod capi_common;

/// libselinux's `struct security_class_mapping`.
#[repr(C)]
struct ClassMapping {
    name: *const c_char,
    perms: [*const c_char; 33],
}

/// The map set now, as names: each class with the permissions it maps.
type Map = Vec<(String, Vec<String>)>;

extern "C" {
    fn selinux_check_access(
        scon: *const c_char,
        tcon: *const c_char,
        class: *const c_char,
        perm: *const c_char,
        aux: *mut c_void,
    ) -> c_int;
    fn selinux_set_mapping(map: *mut ClassMapping) -> c_int;
    fn avc_destroy();
    fn security_setenforce(value: c_int) -> c_int;
    fn seaccess_reload_policy(path: *const c_char) -> c_int;
}

const BUF: usize = 96;

struct Setup {
    server: SecurityServer,
    /// The policy file, for `reload`.
    path: std::ffi::CString,
    pool: Vec<Vec<u8>>,
    /// How many of the pool's first strings are contexts.
    contexts: usize,
    /// The policy's class names, each with its permission names.
    classes: Vec<String>,
    perms: Vec<Vec<String>>,
}

static SETUP: OnceLock<Setup> = OnceLock::new();

fn setup() -> &'static Setup {
    SETUP.get_or_init(|| {
        let (path, server) = capi_common::policy();
        let g = server.snapshot();
        let mut pool: Vec<Vec<u8>> = capi_common::contexts(&g)
            .into_iter()
            .map(String::into_bytes)
            .collect();
        let contexts = pool.len();
        let mut classes = Vec::new();
        let mut perms = Vec::new();
        for c in 1..=u16::MAX {
            let Ok(name) = g.class_name(ClassId(c)) else {
                break;
            };
            classes.push(name.to_owned());
            perms.push(
                (0..32)
                    .filter_map(|b| g.perm_name(ClassId(c), b))
                    .map(str::to_owned)
                    .collect(),
            );
            pool.push(name.as_bytes().to_vec());
            pool.extend(
                (0..32)
                    .filter_map(|b| g.perm_name(ClassId(c), b))
                    .map(|p| p.as_bytes().to_vec()),
            );
        }
        pool[contexts..].sort();
        pool.retain(|s| s.len() < BUF);
        Setup {
            server,
            path,
            pool,
            contexts,
            classes,
            perms,
        }
    })
}

/// libselinux's answer (0, or the errno of -1) for the four strings, by the security server.
fn expected(
    server: &SecurityServer,
    enforcing: bool,
    map: Option<&Map>,
    [s, t, c, p]: [&[u8]; 4],
) -> c_int {
    let g = server.snapshot();
    let unknown = if g.handle_unknown() == HandleUnknown::Allow {
        0
    } else {
        libc::EINVAL
    };
    // With a map, a name it lacks is unknown (string_to_security_class and string_to_av_perm
    // through mapping.c); a mapped name means what it means to the policy.
    if let Some(map) = map {
        let Some((_, perms)) = map.iter().find(|(name, _)| name.as_bytes() == c) else {
            return unknown;
        };
        if !perms.iter().any(|name| name.as_bytes() == p) {
            return unknown;
        }
    }
    let Some(class) = std::str::from_utf8(c).ok().and_then(|c| g.class(c).ok()) else {
        return unknown;
    };
    let Some(av) = std::str::from_utf8(p)
        .ok()
        .and_then(|p| g.perms(class, &[p]).ok())
    else {
        return unknown;
    };
    let sid = |b: &[u8]| {
        std::str::from_utf8(b)
            .ok()
            .and_then(|x| g.context_to_sid(x).ok())
    };
    let (Some(s), Some(t)) = (sid(s), sid(t)) else {
        return if enforcing { libc::EINVAL } else { 0 };
    };
    let d = g
        .compute_av(s, t, class)
        .unwrap_or_else(|e| panic!("compute_av: {e}"));
    if av.0 & !d.allowed.0 == 0 || d.flags.permissive() || !enforcing {
        0
    } else {
        libc::EACCES
    }
}

fn put(buf: &mut [u8; BUF], s: &[u8]) {
    let n = s.len().min(BUF - 1);
    buf[..n].copy_from_slice(&s[..n]);
    buf[n] = 0;
}

fuzz_target!(|data: &[u8]| {
    let st = setup();
    // Two sets of four, each starting as the first pool strings; never moved, so that a
    // pointer asked twice is the same buffer.
    let mut bufs: Box<[[u8; BUF]; 8]> = Box::new([[0u8; BUF]; 8]);
    for (i, b) in bufs.iter_mut().enumerate() {
        put(b, &st.pool[i % st.pool.len()]);
    }
    // The library's state outlives an input: each starts enforcing, with no class map.
    // SAFETY: no pointer.
    assert_eq!(unsafe { security_setenforce(1) }, 0);
    let mut enforcing = true;
    // SAFETY: NULL is refused (EINVAL) and leaves no map.
    assert_eq!(unsafe { selinux_set_mapping(std::ptr::null_mut()) }, -1);
    let mut map: Option<Map> = None;
    let mut it = data.iter().copied();
    while let Some(op) = it.next() {
        let arg = it.next().unwrap_or(0);
        match op % 9 {
            0 => {
                let i = usize::from(arg % 8);
                let k =
                    usize::from(it.next().unwrap_or(0)) | usize::from(it.next().unwrap_or(0)) << 8;
                put(&mut bufs[i], &st.pool[k % st.pool.len()]);
            }
            1 => {
                let i = usize::from(arg % 8);
                let raw: Vec<u8> = it.by_ref().take_while(|&b| b != 0).take(BUF - 1).collect();
                put(&mut bufs[i], &raw);
            }
            2 => {
                let i = usize::from(arg % 8);
                let at = usize::from(it.next().unwrap_or(0)) % (BUF - 1);
                bufs[i][at] = it.next().unwrap_or(0);
            }
            3 => {
                // A query the policy grants, into one set: the states the fast paths keep.
                let mut pick = |n: usize| {
                    (usize::from(it.next().unwrap_or(0)) | usize::from(it.next().unwrap_or(0)) << 8)
                        % n
                };
                let (si, ti, ci) = (pick(st.contexts), pick(st.contexts), pick(st.classes.len()));
                let g = st.server.snapshot();
                let text = |i: usize| {
                    std::str::from_utf8(&st.pool[i])
                        .ok()
                        .and_then(|c| g.context_to_sid(c).ok())
                };
                let (Some(s), Some(t)) = (text(si), text(ti)) else {
                    continue;
                };
                let Ok(c) = g.class(&st.classes[ci]) else {
                    continue;
                };
                let Ok(d) = g.compute_av(s, t, c) else {
                    continue;
                };
                let Some(p) = (0..32)
                    .find(|b| d.allowed.0 >> b & 1 != 0)
                    .and_then(|b| g.perm_name(c, b))
                else {
                    continue;
                };
                let base = 4 * usize::from(arg & 1);
                put(&mut bufs[base], &st.pool[si]);
                put(&mut bufs[base + 1], &st.pool[ti]);
                put(&mut bufs[base + 2], st.classes[ci].as_bytes());
                put(&mut bufs[base + 3], p.as_bytes());
            }
            4 => {
                // Every SID retired (a front entry's texts zeroed), the cache emptied.
                // SAFETY: no argument.
                unsafe { avc_destroy() };
            }
            5 => {
                enforcing = !enforcing;
                // SAFETY: no pointer.
                assert_eq!(unsafe { security_setenforce(c_int::from(enforcing)) }, 0);
            }
            6 if arg == 0 => {
                // The same policy again: a new generation, every stamp moved.
                // SAFETY: a NUL-terminated path.
                assert_eq!(unsafe { seaccess_reload_policy(st.path.as_ptr()) }, 0);
            }
            6 => {}
            7 => {
                // A map of one to four of the policy's classes, each with some of its
                // permissions (none when `arg` says no map).
                let mut names: Map = Vec::new();
                for _ in 0..usize::from(arg % 5) {
                    let ci = usize::from(it.next().unwrap_or(0)) % st.classes.len();
                    let pick = it.next().unwrap_or(0);
                    let perms: Vec<String> = st.perms[ci]
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| pick >> (i % 8) & 1 != 0)
                        .map(|(_, p)| p.clone())
                        .collect();
                    names.push((st.classes[ci].clone(), perms));
                }
                let cs = |x: &str| CString::new(x).unwrap_or_default();
                let cstrings: Vec<(CString, Vec<CString>)> = names
                    .iter()
                    .map(|(c, ps)| (cs(c), ps.iter().map(|p| cs(p)).collect()))
                    .collect();
                let mut table: Vec<ClassMapping> = cstrings
                    .iter()
                    .map(|(c, ps)| {
                        let mut perms = [std::ptr::null(); 33];
                        for (slot, p) in perms.iter_mut().zip(ps.iter().take(32)) {
                            *slot = p.as_ptr();
                        }
                        ClassMapping {
                            name: c.as_ptr(),
                            perms,
                        }
                    })
                    .collect();
                table.push(ClassMapping {
                    name: std::ptr::null(),
                    perms: [std::ptr::null(); 33],
                });
                let set = if names.is_empty() {
                    std::ptr::null_mut()
                } else {
                    table.as_mut_ptr()
                };
                // SAFETY: a table of NUL-terminated names ending at a NULL name, or NULL (no
                // map); the library copies what it keeps.
                let rc = unsafe { selinux_set_mapping(set) };
                map = if names.is_empty() {
                    None
                } else {
                    assert_eq!(rc, 0, "selinux_set_mapping {names:?}");
                    Some(names)
                };
            }
            _ => {
                // Bit j of `arg` picks argument j's buffer from the second set.
                let which: [usize; 4] = std::array::from_fn(|j| j + 4 * usize::from(arg >> j & 1));
                let ptrs = which.map(|i| bufs[i].as_ptr() as *const c_char);
                // SAFETY: each buffer holds a NUL (its last byte is never written).
                let strs = ptrs.map(|p| unsafe { CStr::from_ptr(p) }.to_bytes());
                let want = expected(&st.server, enforcing, map.as_ref(), strs);
                // Three times, as a program asks again: the full way, the cache (which fills
                // the thread's front), the front.
                for round in 0..3 {
                    // SAFETY: four NUL-terminated strings that outlive the call; no audit data.
                    let rc = unsafe {
                        selinux_check_access(
                            ptrs[0],
                            ptrs[1],
                            ptrs[2],
                            ptrs[3],
                            std::ptr::null_mut(),
                        )
                    };
                    let got = if rc == 0 {
                        0
                    } else {
                        std::io::Error::last_os_error().raw_os_error().unwrap_or(-1)
                    };
                    assert!(rc == 0 || rc == -1, "rc {rc}");
                    assert_eq!(
                        got,
                        want,
                        "round {round}: {:?}",
                        strs.map(String::from_utf8_lossy)
                    );
                }
            }
        }
    }
});
