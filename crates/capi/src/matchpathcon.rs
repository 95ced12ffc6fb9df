//! matchpathcon (matchpathcon.c): the file backend through one process-wide handle, opened at
//! the first lookup (or by matchpathcon_init), with paths resolved as libselinux resolves them
//! (realpath, or all but the last component for a symlink); the context comparisons and
//! checks built on it, and setfiles' inode bookkeeping.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::os::unix::fs::MetadataExt;
use std::sync::Mutex;

use rustc_hash::FxHashMap;
use seaccess_types::lock;

use crate::ffi::{self, Errno, Res, EINVAL};
use crate::selabel::{self, Handle, SelinuxOpt, SELABEL_CTX_FILE};

const MATCHPATHCON_BASEONLY: c_uint = 1;
const MATCHPATHCON_VALIDATE: c_uint = 4;

struct Global {
    handle: usize,
    flags: c_uint,
    /// matchpathcon_index's contexts, by the index it returned.
    contexts: Vec<String>,
    /// matchpathcon_filespec_add's inodes: (specification index, file).
    inodes: FxHashMap<u64, (c_int, String)>,
}

static GLOBAL: Mutex<Global> = Mutex::new(Global {
    handle: 0,
    flags: 0,
    contexts: Vec::new(),
    inodes: FxHashMap::with_hasher(rustc_hash::FxBuildHasher),
});

/// matchpathcon's global state's lock, held across a fork (see [`crate::fork`]): it nests in no other lock.
pub(crate) struct Held(#[allow(dead_code)] std::sync::MutexGuard<'static, Global>);

pub(crate) fn hold() -> Held {
    Held(lock(&GLOBAL))
}

fn open_global(path: *const c_char) -> Res<*mut Handle> {
    let flags = lock(&GLOBAL).flags;
    let one: *const c_char = c"1".as_ptr();
    let opts = [
        SelinuxOpt {
            kind: 3,
            value: path,
        },
        SelinuxOpt {
            kind: 2,
            value: if flags & MATCHPATHCON_BASEONLY != 0 {
                one
            } else {
                std::ptr::null()
            },
        },
        SelinuxOpt {
            kind: 1,
            value: if flags & MATCHPATHCON_VALIDATE != 0 {
                one
            } else {
                std::ptr::null()
            },
        },
    ];
    let h = selabel::selabel_open(SELABEL_CTX_FILE, opts.as_ptr(), opts.len() as c_uint);
    if h.is_null() {
        return Err(Errno(
            std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::ENOENT),
        ));
    }
    let mut g = lock(&GLOBAL);
    if g.handle != 0 {
        selabel::selabel_close(g.handle as *mut Handle);
    }
    g.handle = h as usize;
    Ok(h)
}

fn global() -> Res<*mut Handle> {
    let h = lock(&GLOBAL).handle;
    if h != 0 {
        return Ok(h as *mut Handle);
    }
    open_global(std::ptr::null())
}

/// `name` with every component but the last resolved (libselinux's realpath_not_final).
fn not_final(name: &str) -> Res<String> {
    let (dir, last) = match name.rfind('/') {
        Some(0) => return Ok(format!("/{}", &name[1..])),
        Some(i) => (&name[..i], &name[i + 1..]),
        None => (".", name),
    };
    let d =
        std::fs::canonicalize(dir).map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::ENOENT)))?;
    let d = d.to_string_lossy();
    Ok(if d == "/" {
        format!("/{last}")
    } else {
        format!("{d}/{last}")
    })
}

/// The path matchpathcon looks up for `path` of `mode`.
fn resolved(path: &str, mode: c_uint) -> String {
    if mode & libc::S_IFMT == libc::S_IFLNK {
        return not_final(path).unwrap_or_else(|_| path.to_string());
    }
    std::fs::canonicalize(path)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| path.to_string())
}

fn lookup(path: *const c_char, mode: c_uint, con: *mut *mut c_char) -> Res<c_int> {
    let h = global()?;
    let p = CString::new(resolved(ffi::str_arg(path)?, mode)).map_err(|_| EINVAL)?;
    selabel::lookup_into(h, con, p.as_ptr(), mode as c_int)
}

#[no_mangle]
pub extern "C" fn realpath_not_final(name: *const c_char, resolved_path: *mut c_char) -> c_int {
    ffi::guard(-1, || {
        let r = not_final(ffi::str_arg(name)?)?;
        if resolved_path.is_null() {
            return Err(EINVAL);
        }
        if r.len() + 1 > libc::PATH_MAX as usize {
            return Err(Errno(libc::ENAMETOOLONG));
        }
        // SAFETY: the caller's buffer holds PATH_MAX bytes (libselinux's contract); r is
        // shorter, and its NUL is written after it.
        unsafe {
            std::ptr::copy_nonoverlapping(r.as_ptr(), resolved_path as *mut u8, r.len());
            *resolved_path.add(r.len()) = 0;
        }
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn set_matchpathcon_flags(flags: c_uint) {
    ffi::guard((), || {
        lock(&GLOBAL).flags = flags;
        Ok(())
    })
}

/// The callbacks libselinux lets a program give for its messages and for checking and
/// canonicalising contexts: this engine validates against the loaded policy and writes no
/// messages through them, so they are accepted and not called.
#[no_mangle]
pub extern "C" fn set_matchpathcon_printf(_f: *const c_void) {}
#[no_mangle]
pub extern "C" fn set_matchpathcon_invalidcon(_f: *const c_void) {}
#[no_mangle]
pub extern "C" fn set_matchpathcon_canoncon(_f: *const c_void) {}

#[no_mangle]
pub extern "C" fn matchpathcon_init_prefix(path: *const c_char, _prefix: *const c_char) -> c_int {
    ffi::guard(-1, || open_global(path).map(|_| 0))
}

#[no_mangle]
pub extern "C" fn matchpathcon_init(path: *const c_char) -> c_int {
    matchpathcon_init_prefix(path, std::ptr::null())
}

#[no_mangle]
pub extern "C" fn matchpathcon_fini() {
    ffi::guard((), || {
        let mut g = lock(&GLOBAL);
        if g.handle != 0 {
            selabel::selabel_close(g.handle as *mut Handle);
            g.handle = 0;
        }
        g.contexts.clear();
        Ok(())
    })
}

#[no_mangle]
pub extern "C" fn matchpathcon(path: *const c_char, mode: c_uint, con: *mut *mut c_char) -> c_int {
    ffi::guard(-1, || lookup(path, mode, con))
}

/// The context's index in this process's list of matched contexts (libselinux's
/// add_array_elt), the context itself in `con`.
#[no_mangle]
pub extern "C" fn matchpathcon_index(
    path: *const c_char,
    mode: c_uint,
    con: *mut *mut c_char,
) -> c_int {
    ffi::guard(-1, || {
        lookup(path, mode, con)?;
        // SAFETY: lookup just wrote a NUL-terminated string through the non-NULL `con`.
        let text = unsafe { CStr::from_ptr(*con) }
            .to_string_lossy()
            .into_owned();
        let mut g = lock(&GLOBAL);
        g.contexts.push(text);
        Ok(g.contexts.len() as c_int - 1)
    })
}

#[no_mangle]
pub extern "C" fn matchpathcon_checkmatches(_s: *mut c_char) {
    ffi::guard((), || {
        let h = lock(&GLOBAL).handle;
        if h != 0 {
            selabel::selabel_stats(h as *mut Handle);
        }
        Ok(())
    })
}

/// setfiles' hard-link check: the first specification index recorded for an inode whose
/// recorded file still is that inode wins (libselinux prints the conflict and keeps it).
#[no_mangle]
pub extern "C" fn matchpathcon_filespec_add(
    ino: libc::ino_t,
    specind: c_int,
    file: *const c_char,
) -> c_int {
    ffi::guard(-1, || {
        let f = ffi::str_arg(file)?.to_string();
        let mut g = lock(&GLOBAL);
        if let Some((idx, old)) = g.inodes.get(&ino) {
            if std::fs::symlink_metadata(old).is_ok_and(|m| m.ino() == ino) {
                let keep = *idx;
                g.inodes.insert(ino, (keep, f));
                return Ok(keep);
            }
        }
        g.inodes.insert(ino, (specind, f));
        Ok(specind)
    })
}

#[no_mangle]
pub extern "C" fn matchpathcon_filespec_eval() {}

#[no_mangle]
pub extern "C" fn matchpathcon_filespec_destroy() {
    ffi::guard((), || {
        lock(&GLOBAL).inodes.clear();
        Ok(())
    })
}

/// Contexts compared past their user (0 when only the users differ); NULL sorts first.
#[no_mangle]
pub extern "C" fn selinux_file_context_cmp(a: *const c_char, b: *const c_char) -> c_int {
    ffi::guard(-1, || {
        Ok(match (ffi::opt_str_arg(a)?, ffi::opt_str_arg(b)?) {
            (None, None) => 0,
            (None, Some(_)) => -1,
            (Some(_), None) => 1,
            (Some(x), Some(y)) => {
                let (rx, ry) = (
                    x.find(':').map(|i| &x[i..]).ok_or(EINVAL)?,
                    y.find(':').map(|i| &y[i..]).ok_or(EINVAL)?,
                );
                match rx.cmp(ry) {
                    std::cmp::Ordering::Less => -1,
                    std::cmp::Ordering::Equal => 0,
                    std::cmp::Ordering::Greater => 1,
                }
            }
        })
    })
}

/// 1 when `path`'s label is file_contexts' (past the user), 0 when not or when it has none
/// that can be read (ENOTSUP), -1 on an error.
#[no_mangle]
pub extern "C" fn selinux_file_context_verify(path: *const c_char, mode: c_uint) -> c_int {
    ffi::guard(-1, || {
        let p = CString::new(resolved(ffi::str_arg(path)?, mode)).map_err(|_| EINVAL)?;
        let mut have: *mut c_char = std::ptr::null_mut();
        if crate::filecon::lgetfilecon_raw(p.as_ptr(), &mut have) < 0 {
            let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            return if e == libc::ENOTSUP {
                Ok(0)
            } else {
                Err(Errno(e))
            };
        }
        let mut want: *mut c_char = std::ptr::null_mut();
        let h = global();
        let r = match h {
            Ok(h) if selabel::selabel_lookup_raw(h, &mut want, p.as_ptr(), mode as c_int) == 0 => {
                Ok(c_int::from(selinux_file_context_cmp(want, have) == 0))
            }
            Ok(_) => {
                let e = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
                if e == libc::ENOENT {
                    Ok(0)
                } else {
                    Err(Errno(e))
                }
            }
            Err(e) => Err(e),
        };
        crate::names::freecon(have);
        crate::names::freecon(want);
        r
    })
}

/// Labels `path` as file_contexts says (matchpathcon of its lstat mode, then lsetfilecon).
#[no_mangle]
pub extern "C" fn selinux_lsetfilecon_default(path: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let p = ffi::str_arg(path)?;
        let m = std::fs::symlink_metadata(p)
            .map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::ENOENT)))?;
        let mut con: *mut c_char = std::ptr::null_mut();
        if matchpathcon(path, m.mode(), &mut con) < 0 {
            return Err(Errno(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::ENOENT),
            ));
        }
        let r = crate::filecon::lsetfilecon(path, con);
        crate::names::freecon(con);
        if r < 0 {
            return Err(Errno(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO),
            ));
        }
        Ok(0)
    })
}
