//! Login names to SELinux users (seusers.c): the policy's `seusers` file (`name:seuser[:level]`
//! lines; `%group` entries for a group's members, `__default__` for anyone else), and
//! `logins/NAME` files per service; the level only where the policy is an MLS one.

use std::ffi::{c_char, c_int};

use crate::ffi::{self, EINVAL};
use crate::paths::under_root;

/// One seusers line: (login, seuser, level), or None for a comment or a line it cannot read.
fn line(l: &str, mls: bool) -> Option<(String, String, Option<String>)> {
    let l = l.trim_start();
    if l.starts_with('#') || l.is_empty() {
        return None;
    }
    let (login, rest) = l.split_once(':')?;
    let (seuser, level) = match rest.split_once(':') {
        Some((s, lv)) => (s, Some(lv.split_whitespace().next().unwrap_or(""))),
        None => (rest.split_whitespace().next().unwrap_or(""), None),
    };
    if seuser.is_empty() {
        return None;
    }
    let level = match level {
        Some(lv) if mls => {
            if lv.is_empty() {
                return None;
            }
            Some(lv.to_string())
        }
        _ => None,
    };
    Some((login.to_string(), seuser.to_string(), level))
}

/// Whether `user` is in `group`: by its primary group in /etc/passwd or the group's member
/// list in /etc/group (getgrouplist over the files).
fn in_group(group: &str, user: &str) -> bool {
    let groups = std::fs::read_to_string("/etc/group").unwrap_or_default();
    let Some(g) = groups
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.first() == Some(&group))
    else {
        return false;
    };
    if g.get(3).is_some_and(|m| m.split(',').any(|x| x == user)) {
        return true;
    }
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .any(|f| f.first() == Some(&user) && f.get(3) == g.get(2))
}

fn by_name(name: &str) -> (String, Option<String>) {
    let mls = crate::compute::is_selinux_mls_enabled() == 1;
    let text = std::fs::read_to_string(under_root("/seusers")).unwrap_or_default();
    let (mut group, mut default) = (None, None);
    for l in text.lines() {
        let Some((login, seuser, level)) = line(l, mls) else {
            continue;
        };
        if login == name {
            return (seuser, level);
        }
        if let Some(g) = login.strip_prefix('%') {
            if group.is_none() && in_group(g, name) {
                group = Some((seuser, level));
            }
        } else if default.is_none() && login == "__default__" {
            default = Some((seuser, level));
        }
    }
    // No entry at all: the login name itself, with no level.
    group
        .or(default)
        .unwrap_or_else(|| (name.to_string(), None))
}

fn give(
    seuser: &str,
    level: Option<&str>,
    r_seuser: *mut *mut c_char,
    r_level: *mut *mut c_char,
) -> ffi::Res<c_int> {
    ffi::out(r_seuser, ffi::c_string(seuser)?)?;
    ffi::out(
        r_level,
        level.map_or(Ok(std::ptr::null_mut()), ffi::c_string)?,
    )?;
    Ok(0)
}

#[no_mangle]
pub extern "C" fn getseuserbyname(
    name: *const c_char,
    r_seuser: *mut *mut c_char,
    r_level: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        let (s, l) = by_name(ffi::str_arg(name)?);
        give(&s, l.as_deref(), r_seuser, r_level)
    })
}

/// The service's line of `logins/USERNAME` (`service:seuser:level`, `*` for any service),
/// else getseuserbyname's answer.
#[no_mangle]
pub extern "C" fn getseuser(
    username: *const c_char,
    service: *const c_char,
    r_seuser: *mut *mut c_char,
    r_level: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        let user = ffi::str_arg(username)?;
        if user.contains('/') {
            return Err(EINVAL);
        }
        let svc = ffi::opt_str_arg(service)?;
        let text =
            std::fs::read_to_string(under_root(&format!("/logins/{user}"))).unwrap_or_default();
        let mut rec = None;
        for l in text.lines() {
            if let Some(rest) = l.strip_prefix("*:") {
                rec = Some(rest.to_string());
                continue;
            }
            if let Some(rest) = svc
                .and_then(|s| l.strip_prefix(s))
                .and_then(|r| r.strip_prefix(':'))
            {
                rec = Some(rest.to_string());
                break;
            }
        }
        if let Some((s, l)) = rec.as_deref().and_then(|r| r.split_once(':')) {
            return give(s, Some(l), r_seuser, r_level);
        }
        let (s, l) = by_name(user);
        give(&s, l.as_deref(), r_seuser, r_level)
    })
}
