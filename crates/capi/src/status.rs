//! The status page (sestatus.c's selinux_status_*): what a kernel publishes in
//! /sys/fs/selinux/status, here read from the loaded policy: the enforcing mode, the policy
//! load count (the policy seqno, which a reload and a boolean commit both advance, as the
//! kernel's selinux_status_update_policyload sets it), handle-unknown, and whether any of them
//! changed since the last look. The library's cache follows every change itself, so there is
//! nothing for the page to drive. In a `seaccess run` session the figures are the session's
//! page's (see [`crate::session`]), which every process of the session maps.

use std::ffi::c_int;
use std::sync::atomic::Ordering::Acquire;
use std::sync::Mutex;

use seaccess_types::lock;

use crate::ffi::{self, EINVAL};
use crate::state;

/// (open, the (seqno, enforcing) last seen by selinux_status_updated).
static STATUS: Mutex<(bool, Option<(u32, bool)>)> = Mutex::new((false, None));

/// The status page's lock, held across a fork (see [`crate::fork`]): it nests in no other lock.
pub(crate) struct Held(
    #[allow(dead_code)] std::sync::MutexGuard<'static, (bool, Option<(u32, bool)>)>,
);

pub(crate) fn hold() -> Held {
    Held(lock(&STATUS))
}

fn now() -> ffi::Res<(u32, bool)> {
    let k = state::kernel()?;
    // In a session, the session's page: its policy load count is the supervisor's.
    if let Some((load, enforcing, _)) = crate::session::status() {
        return Ok((load, enforcing));
    }
    Ok((k.server.seqno().0 as u32, k.enforcing.load(Acquire)))
}

/// Opens the status page: 0 with a policy, -1 (errno from the load) without one.
#[no_mangle]
pub extern "C" fn selinux_status_open(_fallback: c_int) -> c_int {
    ffi::guard(-1, || {
        let n = now()?;
        *lock(&STATUS) = (true, Some(n));
        Ok(0)
    })
}

/// 1 if the enforcing mode or the policy changed since the last call (never at the first),
/// 0 if not; -1 (EINVAL) when the page is not open.
#[no_mangle]
pub extern "C" fn selinux_status_updated() -> c_int {
    ffi::guard(-1, || {
        // Read before STATUS is taken: a first call may load the policy, under the load lock.
        let n = now();
        let mut s = lock(&STATUS);
        if !s.0 {
            return Err(EINVAL);
        }
        let n = n?;
        let changed = s.1.is_some_and(|last| last != n);
        s.1 = Some(n);
        Ok(c_int::from(changed))
    })
}

#[no_mangle]
pub extern "C" fn selinux_status_getenforce() -> c_int {
    ffi::guard(-1, || {
        if !lock(&STATUS).0 {
            return Err(EINVAL);
        }
        Ok(c_int::from(now()?.1))
    })
}

#[no_mangle]
pub extern "C" fn selinux_status_policyload() -> c_int {
    ffi::guard(-1, || {
        if !lock(&STATUS).0 {
            return Err(EINVAL);
        }
        Ok(now()?.0 as c_int)
    })
}

#[no_mangle]
pub extern "C" fn selinux_status_deny_unknown() -> c_int {
    ffi::guard(-1, || {
        if !lock(&STATUS).0 {
            return Err(EINVAL);
        }
        Ok(crate::compute::security_deny_unknown())
    })
}

#[no_mangle]
pub extern "C" fn selinux_status_close() {
    ffi::guard((), || {
        *lock(&STATUS) = (false, None);
        Ok(())
    })
}
