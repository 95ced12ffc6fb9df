//! A login's contexts (get_context_list.c, compute_user.c, query_user_context.c): the
//! contexts the policy's configuration lists for a user from a context (the per-user file
//! under contexts/users/, then default_contexts; each `role:type` completed with the user and
//! the starting context's range, kept if the policy accepts it), the failsafe context when
//! none is, the default among them, the menus that let a person choose, and
//! security_compute_user's list of every context the policy lets the user reach.

use std::ffi::{c_char, c_int, CStr};

use crate::ffi::{self, Errno, Res, EINVAL, ENOENT};
use crate::paths::under_root;
use crate::state;

fn valid(ctx: &str) -> bool {
    state::kernel().is_ok_and(|k| k.server.snapshot().context_to_sid(ctx).is_ok())
}

/// The contexts one configuration file lists for `user` from `from` (get_context_user),
/// appended to `out` unless already there. ENOENT when no line starts with from's role:type.
fn from_file(text: &str, from: &str, user: &str, out: &mut Vec<String>) -> Res<()> {
    let f: Vec<&str> = from.splitn(4, ':').collect();
    let (Some(role), Some(ty)) = (f.get(1), f.get(2)) else {
        return Err(EINVAL);
    };
    let range = f.get(3).copied();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let Some(first) = words.next() else { continue };
        let mut parts = first.splitn(3, ':');
        let (Some(lr), Some(lt)) = (parts.next(), parts.next()) else {
            continue;
        };
        // A line with nothing after its starting context lists nothing.
        if words.clone().next().is_none() {
            continue;
        }
        if lr != *role || lt != *ty {
            continue;
        }
        for partial in words {
            let mut p: Vec<&str> = partial.splitn(3, ':').collect();
            if p.len() < 2 {
                continue;
            }
            p.truncate(2);
            let mut c = format!("{user}:{}:{}", p[0], p[1]);
            if let Some(r) = range {
                c.push(':');
                c.push_str(r);
            }
            if !out.contains(&c) && valid(&c) {
                out.push(c);
            }
        }
        return Ok(());
    }
    Err(ENOENT)
}

fn failsafe(user: &str) -> Res<String> {
    let text =
        std::fs::read_to_string(under_root("/contexts/failsafe_context")).map_err(|_| ENOENT)?;
    let line = text.lines().next().ok_or(ENOENT)?;
    let c = format!("{user}:{line}");
    if state::kernel().is_ok() && !valid(&c) {
        return Err(EINVAL);
    }
    Ok(c)
}

fn current() -> Res<String> {
    let mut c: *mut c_char = std::ptr::null_mut();
    if crate::proccon::getcon(&mut c) < 0 {
        return Err(Errno(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EINVAL),
        ));
    }
    // SAFETY: getcon wrote a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(c) }.to_string_lossy().into_owned();
    crate::names::freecon(c);
    Ok(s)
}

fn ordered(user: &str, from: Option<&str>) -> Res<Vec<String>> {
    let from = match from {
        Some(f) => f.to_string(),
        None => current()?,
    };
    let mut out = Vec::new();
    for file in [
        format!("{}{user}", under_root("/contexts/users/")),
        under_root("/contexts/default_contexts"),
    ] {
        if let Ok(text) = std::fs::read_to_string(&file) {
            let _ = from_file(&text, &from, user, &mut out);
        }
    }
    if out.is_empty() {
        out.push(failsafe(user)?);
    }
    Ok(out)
}

/// `from` (or this process's context) with its range replaced by `level`.
fn with_level(from: *const c_char, level: &str) -> Res<String> {
    let f = match ffi::opt_str_arg(from)? {
        Some(f) => f.to_string(),
        None => current()?,
    };
    let mut p: Vec<&str> = f.splitn(4, ':').collect();
    if p.len() < 3 {
        return Err(EINVAL);
    }
    p.truncate(3);
    p.push(level);
    Ok(p.join(":"))
}

fn give_list(list: *mut *mut *mut c_char, items: &[String]) -> Res<c_int> {
    ffi::out(list, ffi::c_string_array(items)?)?;
    Ok(items.len() as c_int)
}

#[no_mangle]
pub extern "C" fn get_ordered_context_list(
    user: *const c_char,
    from: *const c_char,
    list: *mut *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        give_list(
            list,
            &ordered(ffi::str_arg(user)?, ffi::opt_str_arg(from)?)?,
        )
    })
}

#[no_mangle]
pub extern "C" fn get_ordered_context_list_with_level(
    user: *const c_char,
    level: *const c_char,
    from: *const c_char,
    list: *mut *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        let u = ffi::str_arg(user)?;
        let items = match ffi::opt_str_arg(level)? {
            None => ordered(u, ffi::opt_str_arg(from)?)?,
            Some(l) => ordered(u, Some(&with_level(from, l)?))?,
        };
        give_list(list, &items)
    })
}

fn first(items: Vec<String>, role: Option<&str>, con: *mut *mut c_char) -> Res<c_int> {
    let c = items
        .into_iter()
        .find(|c| role.is_none_or(|r| c.split(':').nth(1) == Some(r)))
        .ok_or(EINVAL)?;
    ffi::out(con, ffi::c_string(&c)?)?;
    Ok(0)
}

#[no_mangle]
pub extern "C" fn get_default_context(
    user: *const c_char,
    from: *const c_char,
    con: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        first(
            ordered(ffi::str_arg(user)?, ffi::opt_str_arg(from)?)?,
            None,
            con,
        )
    })
}

#[no_mangle]
pub extern "C" fn get_default_context_with_level(
    user: *const c_char,
    level: *const c_char,
    from: *const c_char,
    con: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        let u = ffi::str_arg(user)?;
        let items = match ffi::opt_str_arg(level)? {
            None => ordered(u, ffi::opt_str_arg(from)?)?,
            Some(l) => ordered(u, Some(&with_level(from, l)?))?,
        };
        first(items, None, con)
    })
}

#[no_mangle]
pub extern "C" fn get_default_context_with_role(
    user: *const c_char,
    role: *const c_char,
    from: *const c_char,
    con: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        first(
            ordered(ffi::str_arg(user)?, ffi::opt_str_arg(from)?)?,
            Some(ffi::str_arg(role)?),
            con,
        )
    })
}

#[no_mangle]
pub extern "C" fn get_default_context_with_rolelevel(
    user: *const c_char,
    role: *const c_char,
    level: *const c_char,
    from: *const c_char,
    con: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        let u = ffi::str_arg(user)?;
        let items = match ffi::opt_str_arg(level)? {
            None => ordered(u, ffi::opt_str_arg(from)?)?,
            Some(l) => ordered(u, Some(&with_level(from, l)?))?,
        };
        first(items, Some(ffi::str_arg(role)?), con)
    })
}

/// Every context of `user` that `scon` may transition to (the kernel's selinuxfs `user`).
#[no_mangle]
pub extern "C" fn security_compute_user_raw(
    scon: *const c_char,
    user: *const c_char,
    con: *mut *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        let g = state::kernel()?.server.snapshot();
        let from = g.context_to_sid(ffi::str_arg(scon)?).map_err(|_| EINVAL)?;
        let sids = g
            .compute_user(from, ffi::str_arg(user)?)
            .map_err(|_| EINVAL)?;
        let items = sids
            .into_iter()
            .map(|s| g.sid_to_context(s).map_err(|_| EINVAL))
            .collect::<Res<Vec<_>>>()?;
        give_list(con, &items).map(|_| 0)
    })
}

#[no_mangle]
pub extern "C" fn security_compute_user(
    scon: *const c_char,
    user: *const c_char,
    con: *mut *mut *mut c_char,
) -> c_int {
    security_compute_user_raw(scon, user, con)
}

extern "C" {
    static mut stdin: *mut libc::FILE;
}

/// One line from the C library's standard input (through stdio, as libselinux reads it).
fn read_line() -> Option<String> {
    let mut buf = [0 as c_char; 128];
    // SAFETY: fgets writes at most buf.len() bytes (NUL included) into buf; stdin is the C
    // library's standard input stream.
    let p = unsafe { libc::fgets(buf.as_mut_ptr(), buf.len() as c_int, stdin) };
    if p.is_null() {
        return None;
    }
    // SAFETY: fgets NUL-terminated what it wrote.
    Some(
        unsafe { CStr::from_ptr(buf.as_ptr()) }
            .to_string_lossy()
            .trim_end_matches('\n')
            .to_string(),
    )
}

fn say(text: &str) {
    if let Ok(c) = std::ffi::CString::new(text) {
        // SAFETY: printf with a "%s" format and one NUL-terminated string; then stdout flushed.
        unsafe {
            libc::printf(c"%s".as_ptr(), c.as_ptr());
            libc::fflush(std::ptr::null_mut());
        }
    }
}

/// Offers the list's first context and, on "y", a numbered menu (query_user_context).
#[no_mangle]
pub extern "C" fn query_user_context(list: *mut *mut c_char, con: *mut *mut c_char) -> c_int {
    ffi::guard(-1, || {
        if list.is_null() {
            return Err(EINVAL);
        }
        let mut items = Vec::new();
        for i in 0.. {
            // SAFETY: a NULL-terminated array of strings (the caller's contract).
            let p = unsafe { *list.add(i) };
            if p.is_null() {
                break;
            }
            items.push(ffi::str_arg(p)?.to_string());
        }
        let first = items.first().ok_or(EINVAL)?;
        say(&format!("\nYour default context is {first}.\n"));
        let mut choice = 0;
        if items.len() > 1 {
            say("Do you want to choose a different one? [n]");
            let r = read_line().ok_or(EINVAL)?;
            if r.starts_with(['y', 'Y']) {
                say("\n\n");
                for (i, c) in items.iter().enumerate() {
                    say(&format!("[{}] {c}\n", i + 1));
                }
                loop {
                    say("Enter number of choice: ");
                    let Some(n) = read_line() else {
                        return Err(EINVAL);
                    };
                    if let Ok(k) = n.trim().parse::<usize>() {
                        if (1..=items.len()).contains(&k) {
                            choice = k - 1;
                            break;
                        }
                    }
                }
            }
        }
        ffi::out(con, ffi::c_string(&items[choice])?)?;
        Ok(0)
    })
}

/// Asks for a role, a type and (MLS) a level until they make a valid context for `user`
/// (manual_user_enter_context).
#[no_mangle]
pub extern "C" fn manual_user_enter_context(user: *const c_char, con: *mut *mut c_char) -> c_int {
    ffi::guard(-1, || {
        let u = ffi::str_arg(user)?;
        let mls = crate::compute::is_selinux_mls_enabled() == 1;
        let field = |name: &str| -> Res<String> {
            loop {
                say(&format!("\tEnter {name} "));
                let v = read_line().ok_or(EINVAL)?;
                if !v.is_empty() {
                    return Ok(v);
                }
                say(&format!("You must enter a {name}\n"));
            }
        };
        loop {
            say("Would you like to enter a security context? [y]");
            match read_line() {
                None => return Err(EINVAL),
                Some(r) if r.starts_with(['n', 'N']) => return Err(EINVAL),
                Some(_) => {}
            }
            let mut c = format!("{u}:{}:{}", field("role")?, field("type")?);
            if mls {
                c = format!("{c}:{}", field("level")?);
            }
            if valid(&c) {
                ffi::out(con, ffi::c_string(&c)?)?;
                return Ok(0);
            }
            say("Not a valid security context\n");
        }
    })
}
