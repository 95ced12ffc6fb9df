//! Loading policies and booleans, and what only a kernel's selinuxfs can do (load_policy.c,
//! booleans.c, disable.c). Policies and booleans go to the in-process kernel; what has no
//! meaning without an SELinux kernel answers as libselinux does on a kernel without SELinux.

use std::ffi::{c_char, c_int, c_void, CStr};

use crate::ffi::{self, Errno, EINVAL, ENOENT};
use crate::paths::under_root;
use crate::state;

/// Disabling SELinux at run time is gone from kernels; libselinux answers -1 (ENOENT) where
/// there is no selinuxfs.
#[no_mangle]
pub extern "C" fn security_disable() -> c_int {
    ffi::guard(-1, || Err(ENOENT))
}

/// Loads (or replaces) the policy from the image `data` of `len` bytes.
#[no_mangle]
pub extern "C" fn security_load_policy(data: *mut c_void, len: usize) -> c_int {
    ffi::guard(-1, || {
        if data.is_null() {
            return Err(EINVAL);
        }
        // SAFETY: `data` holds `len` bytes (the caller's contract), read for the call only.
        let bytes = unsafe { std::slice::from_raw_parts(data as *const u8, len) };
        load_image(bytes, "security_load_policy")
    })
}

/// Loads the configured policy (`policy/policy.N` under the policy root, the highest N this
/// library reads).
#[no_mangle]
pub extern "C" fn selinux_mkload_policy(_preservebools: c_int) -> c_int {
    ffi::guard(-1, || {
        let path = crate::paths::installed_policy().ok_or(ENOENT)?;
        if crate::session::active() {
            let data =
                std::fs::read(&path).map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EIO)))?;
            return load_image(&data, &path);
        }
        crate::kernel::load(&path).map(|_| 0)
    })
}

/// Loads a policy image: in a `seaccess run` session into the session (its view's `load`,
/// checked by the supervisor as sel_write_load checks `security { load_policy }`; every process
/// of the session then loads it), else into this process.
fn load_image(data: &[u8], name: &str) -> ffi::Res<c_int> {
    if let Some(r) = crate::session::write("load", data) {
        return r.map(|_| 0);
    }
    crate::kernel::load_bytes(data, name).map(|_| 0)
}

/// An init's first policy load needs a kernel with SELinux: as libselinux on a kernel without
/// it, enforcing 0 and -1 (ENOENT).
#[no_mangle]
pub extern "C" fn selinux_init_load_policy(enforce: *mut c_int) -> c_int {
    ffi::guard(-1, || {
        if !enforce.is_null() {
            // SAFETY: a non-NULL pointer the caller gives for one int.
            unsafe { *enforce = 0 };
        }
        Err(ENOENT)
    })
}

/// Deprecated in libselinux 3.4, which always answers -1.
#[no_mangle]
pub extern "C" fn security_load_booleans(_path: *mut c_char) -> c_int {
    ffi::guard(-1, || Ok(-1))
}

/// libselinux's `SELboolean`.
#[repr(C)]
pub struct SelBoolean {
    pub name: *mut c_char,
    pub value: c_int,
}

/// Sets each boolean and commits them in one change; a name the policy lacks puts the ones
/// already set back and fails. `permanent` is no longer supported: -1 after the commit, as
/// libselinux.
#[no_mangle]
pub extern "C" fn security_set_boolean_list(
    count: usize,
    list: *mut SelBoolean,
    permanent: c_int,
) -> c_int {
    ffi::guard(-1, || {
        let k = state::kernel()?;
        if list.is_null() && count != 0 {
            return Err(EINVAL);
        }
        let items = if count == 0 {
            &mut [][..]
        } else {
            // SAFETY: `list` holds `count` entries (the caller's contract).
            unsafe { std::slice::from_raw_parts_mut(list, count) }
        };
        if crate::session::active() {
            return set_list_in_session(items, permanent);
        }
        let mut before = Vec::new();
        for b in items.iter_mut() {
            b.value = c_int::from(b.value != 0);
            let name = ffi::str_arg(b.name)?;
            let old = k.server.pending_boolean(name);
            match (old, k.server.set_boolean(name, b.value == 1)) {
                (Ok(o), Ok(())) => before.push((name, o)),
                _ => {
                    for (n, o) in before {
                        let _ = k.server.set_boolean(n, o);
                    }
                    return Err(ENOENT);
                }
            }
        }
        k.server.commit_booleans();
        Ok(if permanent != 0 { -1 } else { 0 })
    })
}

/// libselinux's security_set_boolean_list over selinuxfs: each value written, the ones already
/// written put back to their active values when one fails, then one commit.
fn set_list_in_session(items: &mut [SelBoolean], permanent: c_int) -> ffi::Res<c_int> {
    use crate::booleans::{
        security_commit_booleans, security_get_boolean_active, security_set_boolean,
    };
    for (i, b) in items.iter().enumerate() {
        if security_set_boolean(b.name, c_int::from(b.value != 0)) < 0 {
            let e = Errno(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(EINVAL.0),
            );
            for done in &items[..i] {
                let v = security_get_boolean_active(done.name);
                if v >= 0 {
                    security_set_boolean(done.name, v);
                }
            }
            return Err(e);
        }
    }
    for b in items.iter_mut() {
        b.value = c_int::from(b.value != 0);
    }
    if security_commit_booleans() < 0 {
        return Err(Errno(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(EINVAL.0),
        ));
    }
    Ok(if permanent != 0 { -1 } else { 0 })
}

/// The policy file this process enforces (SEACCESS_POLICY's, or the system's in a
/// secure-execution process), or NULL when none is named.
#[no_mangle]
pub extern "C" fn selinux_current_policy_path() -> *const c_char {
    ffi::guard(std::ptr::null(), || {
        // Racing, not waiting (see crate::fork).
        static PATH: once_cell::race::OnceBox<Option<std::ffi::CString>> =
            once_cell::race::OnceBox::new();
        let p = PATH.get_or_init(|| {
            use std::os::unix::ffi::OsStrExt;
            Box::new(
                state::policy_path()
                    .and_then(|p| std::ffi::CString::new(p.as_os_str().as_bytes()).ok()),
            )
        });
        Ok(p.as_ref().map_or(std::ptr::null(), |c| c.as_ptr()))
    })
}

/// Class and permission names are read from each policy generation as it is used: there is
/// no cache to flush.
#[no_mangle]
pub extern "C" fn selinux_flush_class_cache() {}

/// The boolean's current name after booleans.subs_dist's renames (`old new` lines), as a
/// malloc'ed copy; the name itself when none applies.
#[no_mangle]
pub extern "C" fn selinux_boolean_sub(name: *const c_char) -> *mut c_char {
    ffi::guard(std::ptr::null_mut(), || {
        let n = ffi::str_arg(name)?;
        let subs = std::fs::read_to_string(under_root("/booleans.subs_dist")).unwrap_or_default();
        let new = subs.lines().find_map(|l| {
            let mut w = l.split_whitespace();
            match (w.next(), w.next()) {
                (Some(old), Some(new)) if old == n && !old.starts_with('#') => {
                    Some(new.to_string())
                }
                _ => None,
            }
        });
        ffi::c_string(new.as_deref().unwrap_or(n))
    })
}

/// `requested` passwd permissions of the caller on itself (selinux_check_passwd_access):
/// 0 when all are allowed, -1 otherwise; 0 with no policy (SELinux disabled).
#[no_mangle]
pub extern "C" fn selinux_check_passwd_access(requested: u32) -> c_int {
    ffi::guard(-1, || {
        let Ok(k) = state::kernel() else { return Ok(0) };
        let mut con: *mut c_char = std::ptr::null_mut();
        if crate::proccon::getprevcon_raw(&mut con) < 0 {
            return Err(Errno(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(EINVAL.0),
            ));
        }
        // SAFETY: getprevcon_raw wrote a NUL-terminated string.
        let ctx = unsafe { CStr::from_ptr(con) }
            .to_string_lossy()
            .into_owned();
        crate::names::freecon(con);
        let g = k.server.snapshot();
        let Ok(class) = g.class("passwd") else {
            return Ok(0);
        };
        let sid = g.context_to_sid(&ctx).map_err(|_| EINVAL)?;
        let av = g.compute_av(sid, sid, class).map_err(|_| EINVAL)?;
        Ok(if av.allowed.0 & requested == requested {
            0
        } else {
            -1
        })
    })
}

#[no_mangle]
pub extern "C" fn checkPasswdAccess(requested: u32) -> c_int {
    selinux_check_passwd_access(requested)
}

/// Whether the context's type is listed in customizable_types: 1, 0, or -1 (errno) when the
/// list cannot be read.
#[no_mangle]
pub extern "C" fn is_context_customizable(ctx: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let c = ffi::str_arg(ctx)?;
        let ty = c.split(':').nth(2).ok_or(EINVAL)?;
        let text = std::fs::read_to_string(under_root("/contexts/customizable_types"))
            .map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::ENOENT)))?;
        Ok(c_int::from(text.lines().any(|l| l.trim() == ty)))
    })
}

/// The type a role starts in (default_type's `role:type` lines), malloc'ed.
#[no_mangle]
pub extern "C" fn get_default_type(role: *const c_char, kind: *mut *mut c_char) -> c_int {
    ffi::guard(-1, || {
        let r = ffi::str_arg(role)?;
        let text = std::fs::read_to_string(under_root("/contexts/default_type"))
            .map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::ENOENT)))?;
        let t = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.starts_with('#'))
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(x, _)| *x == r)
                    .map(|(_, t)| t.trim().to_string())
            })
            .ok_or(ENOENT)?;
        ffi::out(kind, ffi::c_string(&t)?)?;
        Ok(0)
    })
}
