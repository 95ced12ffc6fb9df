//! Process contexts: getcon, getpidcon, getpeercon, getprevcon, and the attributes a process
//! sets for its next exec and its new files, sockets and keys (the kernel's
//! /proc/PID/attr/{current,prev,exec,fscreate,sockcreate,keycreate}).
//!
//! A kernel without SELinux has no such attributes, so a process's context comes from the
//! rules `seaccess mount --subjects` uses (`SEACCESS_SUBJECTS=FILE`, the same parser): the first
//! rule matching the process's executable, uid or cgroup; a `transition` rule gives what its
//! context becomes by executing the process's executable as file_contexts labels it. Without
//! the variable, and in a secure-execution process whatever its environment says (see
//! [`crate::state`]), every process is `unconfined_u:unconfined_r:unconfined_t:s0` where the
//! policy has that context, else the `kernel` initial SID's. `setcon` changes this process's own
//! context (one context a process: the library does not keep one a thread, as the kernel's
//! credentials would, and so applies no bounds rule to a multi-threaded process), checked as
//! the kernel's selinux_lsm_setattr checks it, and in a `seaccess run` session told to the
//! supervisor, which checks it again and judges the process's selinuxfs writes by it
//! ([`crate::publish::current`]); the other
//! attributes are the calling thread's, as on Linux, kept as set (validated against the
//! policy).
//!
//! Under `seaccess run` the interposer it preloads (crates/capi/preload) makes the exec and
//! fscreate attributes take effect: an exec is checked and its new context handed to the
//! program in `SEACCESS_CONTEXT` ([`CONTEXT_ENV`], which then comes before the subjects
//! rules), and a creation is checked and labelled (crates/capi/src/objects.rs). Without the
//! interposer nothing would apply them, so setexeccon, setexecfilecon and setfscreatecon of a
//! context fail with ENOTSUP instead of being remembered and ignored.

use std::ffi::{c_char, c_int};
use std::path::Path;
use std::sync::Mutex;

use seaccess_subjects::{self as subjects, Match, Subjects};
use seaccess_types::lock;

use crate::ffi::{self, Errno, Res, EACCES, EINVAL};
use crate::kernel;
use crate::state::{self, SUBJECTS_ENV};

/// The context this process runs in after an exec under `seaccess run`: the interposer
/// (crates/capi/preload) puts it in the environment of the program it executes, the context
/// [`crate::objects::exec`] checked and computed. Not in a secure-execution process.
pub const CONTEXT_ENV: &str = "SEACCESS_CONTEXT";
/// The context before that exec (getprevcon), set beside [`CONTEXT_ENV`].
pub const PREV_ENV: &str = "SEACCESS_PREVCON";
const UNCONFINED: &str = "unconfined_u:unconfined_r:unconfined_t:s0";

/// The attributes a thread sets for what it does next, each its own as on Linux
/// (/proc/thread-self/attr/{exec,fscreate,sockcreate,keycreate}, which libselinux writes): a
/// thread's setfscreatecon is not another thread's (the mount keys the published fscreate by
/// thread too), a forked child starts with the forking thread's, and an exec starts afresh.
#[derive(Default)]
struct Attrs {
    exec: Option<String>,
    fscreate: Option<String>,
    sockcreate: Option<String>,
    keycreate: Option<String>,
}

thread_local! {
    static THREAD: std::cell::RefCell<Attrs> = std::cell::RefCell::new(Attrs::default());
}

/// setcon's context, the process's own until then (see the module docs).
static CURRENT: Mutex<Option<String>> = Mutex::new(None);

/// The process context's lock, held across a fork (see [`crate::fork`]): it nests in no other lock.
pub(crate) struct Held(#[allow(dead_code)] std::sync::MutexGuard<'static, Option<String>>);

pub(crate) fn hold() -> Held {
    Held(lock(&CURRENT))
}

/// `f` on the calling thread's attributes. The closures given here take no other borrow of
/// them, so the borrow cannot fail; in a thread's own destructors, after its storage is gone,
/// `f` sees none set and what it sets is dropped with the thread.
fn with_attrs<T>(f: impl FnOnce(&mut Attrs) -> T) -> T {
    // Checked first, so that `with` and `borrow_mut` below (on this thread, nothing between)
    // cannot panic.
    if THREAD
        .try_with(|a| a.try_borrow_mut().is_ok())
        .unwrap_or(false)
    {
        THREAD.with(|a| f(&mut a.borrow_mut()))
    } else {
        f(&mut Attrs::default())
    }
}

/// The context a process of `pid` runs in, by the subjects rules (see the module docs).
fn subject_of(pid: u32) -> Res<String> {
    let k = state::kernel()?;
    let g = k.server.snapshot();
    // Not in a secure-execution process (kernel::env): a setuid program's caller must not
    // choose the context it runs in.
    let Some(file) = kernel::env(SUBJECTS_ENV) else {
        if g.context_to_sid(UNCONFINED).is_ok() {
            return Ok(UNCONFINED.to_string());
        }
        return crate::avc_life::initial_context("kernel");
    };
    // A rules file that cannot be read or parsed fails every process context closed (EINVAL),
    // and says why through the log callback: a silent EINVAL from getcon would leave the user
    // guessing.
    let rules = Subjects::load(Path::new(&file)).map_err(|e| {
        crate::callbacks::log(
            crate::callbacks::SELINUX_ERROR,
            &format!(
                "seaccess: {SUBJECTS_ENV}={}: {e}\n",
                Path::new(&file).display()
            ),
        );
        EINVAL
    })?;
    // A process gone meanwhile: what opening its /proc/PID/attr/current gives libselinux.
    let info = subjects::proc_info(pid).ok_or(Errno(libc::ENOENT))?;
    let rule = rules.find(&info.info).ok_or(EACCES)?;
    let sid = g.context_to_sid(&rule.context).map_err(|_| EINVAL)?;
    if rule.matches != Match::Transition {
        return Ok(rule.context.clone());
    }
    // The path /proc names, only where it reaches the very file the process runs (a path its
    // own mount namespace gave would label another file): subjects::exe_path.
    let exe = subjects::exe_path(pid, info.info.exe.ok_or(EACCES)?).map_err(|_| EACCES)?;
    let fc = seaccess_label::FileContexts::open(Path::new(&crate::paths::under_root(
        "/contexts/files/file_contexts",
    )))
    .map_err(|_| Errno(libc::ENOENT))?;
    let exe_ctx = fc
        .context(exe.as_bytes(), seaccess_label::FileKind::File)
        .map_err(|_| EINVAL)?
        .ok_or(EACCES)?;
    let exe_sid = g.context_to_sid(exe_ctx).map_err(|_| EINVAL)?;
    let class = g.class("process").map_err(|_| EINVAL)?;
    let new = g
        .compute_create(sid, exe_sid, class, None)
        .map_err(|_| EINVAL)?;
    g.sid_to_context(new).map_err(|_| EINVAL)
}

fn self_pid() -> u32 {
    std::process::id()
}

/// A context the interposer left in the environment at exec (see [`CONTEXT_ENV`]), checked
/// against the policy: one it does not define fails closed (EINVAL, and a log line saying
/// which), never falling back to another context.
fn from_env(name: &str) -> Res<Option<String>> {
    let Some(v) = kernel::env(name) else {
        return Ok(None);
    };
    let c = v.to_str().ok_or(EINVAL)?.to_string();
    if state::kernel()?
        .server
        .snapshot()
        .context_to_sid(&c)
        .is_err()
    {
        crate::callbacks::log(
            crate::callbacks::SELINUX_ERROR,
            &format!("seaccess: {name}={c}: not a context of the loaded policy\n"),
        );
        return Err(EINVAL);
    }
    Ok(Some(c))
}

/// Whether setcon gave this process its context (an exec must then hand the program its
/// context, whatever the exec computes: the environment still says the old one).
pub(crate) fn set_by_setcon() -> bool {
    lock(&CURRENT).is_some()
}

/// This process's context: setcon's, else the one its exec under `seaccess run` gave it, else
/// the subjects rules' (see the module docs).
pub(crate) fn current() -> Res<String> {
    match lock(&CURRENT).clone() {
        Some(c) => Ok(c),
        None => match from_env(CONTEXT_ENV)? {
            Some(c) => Ok(c),
            None => subject_of(self_pid()),
        },
    }
}

/// The hooks' task (crates/capi/src/objects.rs): this process's context, and its exec and
/// fscreate attributes.
pub(crate) fn task_contexts() -> Res<(String, Option<String>, Option<String>)> {
    let (exec, fscreate) = with_attrs(|a| (a.exec.clone(), a.fscreate.clone()));
    Ok((current()?, exec, fscreate))
}

/// Whether setfscreatecon asked for a context (no policy load: the creations' fast path).
pub(crate) fn fscreate_set() -> bool {
    with_attrs(|a| a.fscreate.is_some())
}

/// Whether the interposer of `seaccess run` (crates/capi/preload) is in front of the C
/// library in this process: only then does a creation or an exec see the attributes.
static INTERPOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The interposer says it is loaded (its constructor).
pub(crate) fn interposed() {
    INTERPOSED.store(true, std::sync::atomic::Ordering::Release);
}

/// An exec or fscreate context is asked for: refused (ENOTSUP, with a log line) where no
/// interposer would apply it, rather than kept and ignored by the creation or exec it names.
fn applied(what: &str) -> Res<()> {
    if INTERPOSED.load(std::sync::atomic::Ordering::Acquire) {
        return Ok(());
    }
    crate::callbacks::log(
        crate::callbacks::SELINUX_ERROR,
        &format!("seaccess: {what}: nothing would apply it: this program runs without the interposer `seaccess run` preloads (libseaccess-preload.so)\n"),
    );
    Err(Errno(libc::ENOTSUP))
}

/// Sets the calling thread's exec attribute to `new` (already checked against the policy) for
/// `what` (setexecfilecon), refused as [`applied`] refuses it where nothing would apply it.
pub(crate) fn set_exec(what: &str, new: String) -> Res<()> {
    applied(what)?;
    with_attrs(|a| a.exec = Some(new));
    Ok(())
}

fn give(con: *mut *mut c_char, v: Option<&str>) -> Res<c_int> {
    let p = match v {
        Some(s) => ffi::c_string(s)?,
        None => std::ptr::null_mut(),
    };
    ffi::out(con, p)?;
    Ok(0)
}

macro_rules! both {
    ($raw:ident, $trans:ident, ($($a:ident: $t:ty),*) => $body:expr) => {
        #[no_mangle]
        pub extern "C" fn $raw($($a: $t),*) -> c_int {
            ffi::guard(-1, || $body)
        }
        #[no_mangle]
        pub extern "C" fn $trans($($a: $t),*) -> c_int {
            $raw($($a),*)
        }
    };
}

both!(getcon_raw, getcon, (con: *mut *mut c_char) => give(con, Some(&current()?)));
both!(getprevcon_raw, getprevcon, (con: *mut *mut c_char) => {
    let prev = match from_env(PREV_ENV)? {
        Some(c) => c,
        None => subject_of(self_pid())?,
    };
    give(con, Some(&prev))
});
both!(getpidcon_raw, getpidcon, (pid: libc::pid_t, con: *mut *mut c_char) => {
    // libselinux's procattr.c: `if (pid <= 0) return EINVAL`, and a pid with no process fails
    // opening /proc/PID/attr/current (ENOENT).
    let pid = u32::try_from(pid).ok().filter(|&p| p > 0).ok_or(EINVAL)?;
    if pid != self_pid() && !Path::new(&format!("/proc/{pid}")).exists() {
        return Err(Errno(libc::ENOENT));
    }
    let c = if pid == self_pid() { current()? } else { subject_of(pid)? };
    give(con, Some(&c))
});
both!(getpeercon_raw, getpeercon, (fd: c_int, con: *mut *mut c_char) => {
    let mut cred = libc::ucred { pid: 0, uid: 0, gid: 0 };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: SO_PEERCRED writes one struct ucred of `len` bytes into `cred`, which lives for
    // the call; `fd` is the caller's socket.
    let r = unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_PEERCRED, &mut cred as *mut libc::ucred as *mut libc::c_void, &mut len) };
    if r != 0 {
        return Err(Errno(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EINVAL)));
    }
    let pid = u32::try_from(cred.pid).map_err(|_| Errno(libc::ENOPROTOOPT))?;
    let c = if pid == self_pid() { current()? } else { subject_of(pid)? };
    give(con, Some(&c))
});

/// A context for one of the attributes: NULL clears it; anything else must be a context of
/// the loaded policy (EINVAL otherwise), as the kernel's selinux_setprocattr requires.
fn checked(con: *const c_char) -> Res<Option<String>> {
    let Some(c) = ffi::opt_str_arg(con)? else {
        return Ok(None);
    };
    let c = c.trim_end_matches('\n');
    if c.is_empty() {
        return Ok(None);
    }
    state::kernel()?
        .server
        .snapshot()
        .context_to_sid(c)
        .map_err(|_| EINVAL)?;
    Ok(Some(c.to_string()))
}

macro_rules! attr {
    ($get_raw:ident, $get:ident, $set_raw:ident, $set:ident, $field:ident, $applied:expr) => {
        both!($get_raw, $get, (con: *mut *mut c_char) => {
            let v = with_attrs(|a| a.$field.clone());
            give(con, v.as_deref())
        });
        #[no_mangle]
        pub extern "C" fn $set_raw(con: *const c_char) -> c_int {
            ffi::guard(-1, || {
                let v = checked(con)?;
                if v.is_some() && $applied {
                    applied(stringify!($set))?;
                }
                crate::publish::attr(stringify!($field), v.as_deref())?;
                with_attrs(|a| a.$field = v);
                Ok(0)
            })
        }
        #[no_mangle]
        pub extern "C" fn $set(con: *const c_char) -> c_int {
            $set_raw(con)
        }
    };
}

attr!(
    getexeccon_raw,
    getexeccon,
    setexeccon_raw,
    setexeccon,
    exec,
    true
);
attr!(
    getfscreatecon_raw,
    getfscreatecon,
    setfscreatecon_raw,
    setfscreatecon,
    fscreate,
    true
);
attr!(
    getsockcreatecon_raw,
    getsockcreatecon,
    setsockcreatecon_raw,
    setsockcreatecon,
    sockcreate,
    false
);
attr!(
    getkeycreatecon_raw,
    getkeycreatecon,
    setkeycreatecon_raw,
    setkeycreatecon,
    keycreate,
    false
);

/// setcon: the kernel's selinux_setprocattr for "current": `process {setcurrent}` on itself,
/// the new context valid, then `process {dyntransition}` from the old context to the new.
#[no_mangle]
pub extern "C" fn setcon_raw(con: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let new = checked(con)?.ok_or(EINVAL)?;
        let old = current()?;
        let k = state::kernel()?;
        let g = k.server.snapshot();
        let (o, n) = (
            g.context_to_sid(&old).map_err(|_| EINVAL)?,
            g.context_to_sid(&new).map_err(|_| EINVAL)?,
        );
        let class = g.class("process").map_err(|_| EINVAL)?;
        let perm = |name: &str| g.perms(class, &[name]).map_err(|_| EINVAL);
        let allowed = |s, t, p: seaccess_types::AccessVector| -> Res<bool> {
            Ok(g.compute_av(s, t, class).map_err(|_| EINVAL)?.allowed.0 & p.0 == p.0)
        };
        let enforcing = k.enforcing.load(std::sync::atomic::Ordering::Acquire);
        if !allowed(o, o, perm("setcurrent")?)? && enforcing {
            return Err(EACCES);
        }
        // Even to the context it has: selinux_lsm_setattr asks dyntransition unconditionally.
        if !allowed(o, n, perm("dyntransition")?)? && enforcing {
            return Err(EACCES);
        }
        crate::publish::current(&new)?;
        *lock(&CURRENT) = Some(new);
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn setcon(con: *const c_char) -> c_int {
    setcon_raw(con)
}
