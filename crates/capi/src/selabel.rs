//! selabel_* (label.c and its backends): the file backend answered by seaccess's file_contexts
//! engine (crates/label: libselinux 3.4's lookups, tested against selabel_lookup), and the
//! media, X and database backends, whose files are lines of names (with `*` and `?`
//! wildcards for X and database objects) and contexts.

use std::ffi::{c_char, c_int, c_uint, CStr};
use std::path::{Path, PathBuf};

use seaccess_label::{FileContexts, FileKind, OpenOptions};

use crate::ffi::{self, Errno, Res, EINVAL, ENOENT};
use crate::paths::under_root;
use crate::state;

pub const SELABEL_CTX_FILE: c_uint = 0;
pub const SELABEL_CTX_MEDIA: c_uint = 1;
pub const SELABEL_CTX_X: c_uint = 2;
pub const SELABEL_CTX_DB: c_uint = 3;

const SELABEL_OPT_VALIDATE: c_int = 1;
const SELABEL_OPT_BASEONLY: c_int = 2;
const SELABEL_OPT_PATH: c_int = 3;
const SELABEL_OPT_DIGEST: c_int = 5;

/// libselinux's `struct selinux_opt`.
#[repr(C)]
pub struct SelinuxOpt {
    pub kind: c_int,
    pub value: *const c_char,
}

/// An open handle (`struct selabel_handle *` to C, opaque there).
pub struct Handle {
    backend: c_uint,
    files: Option<FileContexts>,
    /// Media: (device, context); X and database: (object type number, name pattern, context),
    /// in file order.
    names: Vec<(u32, String, String)>,
    /// With SELABEL_OPT_DIGEST: the SHA-1 of the files read, in order, and their paths (NUL-
    /// terminated, handed to C by selabel_digest and freed with the handle).
    digest: Option<([u8; 20], Vec<std::ffi::CString>, Vec<*mut c_char>)>,
}

/// X object types by keyword (SELABEL_X_*), and database ones (SELABEL_DB_*).
const X_TYPES: &[(&str, u32)] = &[
    ("property", 1),
    ("extension", 2),
    ("client", 3),
    ("event", 4),
    ("selection", 5),
    ("poly_property", 6),
    ("poly_selection", 7),
];
const DB_TYPES: &[(&str, u32)] = &[
    ("db_database", 1),
    ("db_schema", 2),
    ("db_table", 3),
    ("db_column", 4),
    ("db_sequence", 5),
    ("db_view", 6),
    ("db_procedure", 7),
    ("db_blob", 8),
    ("db_tuple", 9),
    ("db_language", 10),
    ("db_exception", 11),
    ("db_datatype", 12),
];

fn read_names(path: &Path, types: Option<&[(&str, u32)]>) -> Res<Vec<(u32, String, String)>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::ENOENT)))?;
    let mut out = Vec::new();
    for line in text.lines() {
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let w: Vec<&str> = body.split_whitespace().collect();
        match (types, w.as_slice()) {
            (None, [name, ctx]) => out.push((0, name.to_string(), ctx.to_string())),
            (Some(t), [kind, name, ctx]) => {
                let n = t
                    .iter()
                    .find(|(k, _)| k == kind)
                    .map(|(_, n)| *n)
                    .ok_or(EINVAL)?;
                out.push((n, name.to_string(), ctx.to_string()));
            }
            _ => return Err(EINVAL),
        }
    }
    Ok(out)
}

/// fnmatch(3) without flags, as the X and database backends match names.
fn fnmatch(pattern: &str, name: &str) -> bool {
    let (Ok(p), Ok(n)) = (
        std::ffi::CString::new(pattern),
        std::ffi::CString::new(name),
    ) else {
        return false;
    };
    // SAFETY: two NUL-terminated strings that live for the call.
    unsafe { libc::fnmatch(p.as_ptr(), n.as_ptr(), 0) == 0 }
}

impl Handle {
    fn open(backend: c_uint, opts: &[SelinuxOpt]) -> Res<Handle> {
        let mut path: Option<PathBuf> = None;
        let (mut validate, mut base_only, mut digest) = (false, false, false);
        for o in opts {
            match o.kind {
                SELABEL_OPT_PATH if !o.value.is_null() => {
                    path = Some(PathBuf::from(ffi::str_arg(o.value)?))
                }
                SELABEL_OPT_VALIDATE => validate = !o.value.is_null(),
                SELABEL_OPT_BASEONLY => base_only = !o.value.is_null(),
                SELABEL_OPT_DIGEST => digest = !o.value.is_null(),
                _ => {}
            }
        }
        let mut h = Handle {
            backend,
            files: None,
            names: Vec::new(),
            digest: None,
        };
        let mut read: Vec<PathBuf> = Vec::new();
        match backend {
            SELABEL_CTX_FILE => {
                let p = path
                    .unwrap_or_else(|| PathBuf::from(under_root("/contexts/files/file_contexts")));
                let check = |ctx: &str| -> Result<(), String> {
                    let k = state::kernel().map_err(|_| "no policy is loaded".to_string())?;
                    k.server
                        .snapshot()
                        .context_to_sid(ctx)
                        .map(|_| ())
                        .map_err(|e| e.to_string())
                };
                let o = OpenOptions {
                    base_only,
                    validate: if validate { Some(&check) } else { None },
                    check_regexes: validate,
                    allow_duplicates: !validate,
                };
                let fc = FileContexts::open_with(&p, &o).map_err(|_| {
                    if p.exists() {
                        EINVAL
                    } else {
                        ENOENT
                    }
                })?;
                // The substitution files are read first, where they exist (selabel_subs_init).
                for suffix in [".subs_dist", ".subs"] {
                    let sp = PathBuf::from(format!("{}{suffix}", p.display()));
                    if sp.is_file() {
                        read.push(sp);
                    }
                }
                read.extend(fc.files().iter().cloned());
                h.files = Some(fc);
            }
            _ => {
                let (default, types) = match backend {
                    SELABEL_CTX_MEDIA => ("/contexts/files/media", None),
                    SELABEL_CTX_X => ("/contexts/x_contexts", Some(X_TYPES)),
                    SELABEL_CTX_DB => ("/contexts/sepgsql_contexts", Some(DB_TYPES)),
                    _ => return Err(EINVAL),
                };
                let p = path.unwrap_or_else(|| PathBuf::from(under_root(default)));
                h.names = read_names(&p, types)?;
                read.push(p);
            }
        }
        if digest {
            // libselinux's digest: SHA-1 over the bytes of every file it read, in order.
            use sha1::Digest;
            let mut sha = sha1::Sha1::new();
            let mut names = Vec::new();
            for f in &read {
                sha.update(
                    std::fs::read(f).map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EIO)))?,
                );
                names.push(
                    std::ffi::CString::new(f.to_string_lossy().as_bytes()).map_err(|_| EINVAL)?,
                );
            }
            let ptrs = names.iter().map(|c| c.as_ptr() as *mut c_char).collect();
            h.digest = Some((sha.finalize().into(), names, ptrs));
        }
        Ok(h)
    }

    /// The context for `key` of `kind` (a file mode's type bits, or an X/database object
    /// type), or ENOENT.
    fn lookup(&self, key: &CStr, kind: c_int) -> Res<String> {
        if let Some(fc) = &self.files {
            let k = FileKind::from_mode(kind as u32);
            return fc
                .context(key.to_bytes(), k)
                .map_err(|_| EINVAL)?
                .map(str::to_string)
                .ok_or(ENOENT);
        }
        let key = key.to_str().map_err(|_| EINVAL)?;
        let found = match self.backend {
            SELABEL_CTX_MEDIA => self.names.iter().find(|(_, n, _)| n == key),
            _ => self
                .names
                .iter()
                .find(|(t, n, _)| *t == kind as u32 && fnmatch(n, key)),
        };
        found
            .map(|(_, _, c)| c.clone())
            .filter(|c| c != "<<none>>")
            .ok_or(ENOENT)
    }
}

fn handle<'a>(h: *mut Handle) -> Res<&'a Handle> {
    if h.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: a handle from selabel_open, live until selabel_close (the caller's contract);
    // lookups only read it.
    Ok(unsafe { &*h })
}

#[no_mangle]
pub extern "C" fn selabel_open(
    backend: c_uint,
    opts: *const SelinuxOpt,
    nopts: c_uint,
) -> *mut Handle {
    ffi::guard(std::ptr::null_mut(), || {
        let o = if opts.is_null() || nopts == 0 {
            &[][..]
        } else {
            // SAFETY: `opts` points at `nopts` options (the caller's contract).
            unsafe { std::slice::from_raw_parts(opts, nopts as usize) }
        };
        Ok(Box::into_raw(Box::new(Handle::open(backend, o)?)))
    })
}

#[no_mangle]
pub extern "C" fn selabel_close(h: *mut Handle) {
    ffi::guard((), || {
        if !h.is_null() {
            // SAFETY: from selabel_open's Box::into_raw, closed once.
            drop(unsafe { Box::from_raw(h) });
        }
        Ok(())
    })
}

pub(crate) fn lookup_into(
    h: *mut Handle,
    con: *mut *mut c_char,
    key: *const c_char,
    kind: c_int,
) -> Res<c_int> {
    let h = handle(h)?;
    if key.is_null() || con.is_null() {
        return Err(EINVAL);
    }
    // SAFETY: a NUL-terminated key that outlives the call, not NULL.
    let k = unsafe { CStr::from_ptr(key) };
    let c = h.lookup(k, kind)?;
    ffi::out(con, ffi::c_string(&c)?)?;
    Ok(0)
}

#[no_mangle]
pub extern "C" fn selabel_lookup_raw(
    h: *mut Handle,
    con: *mut *mut c_char,
    key: *const c_char,
    kind: c_int,
) -> c_int {
    ffi::guard(-1, || lookup_into(h, con, key, kind))
}

#[no_mangle]
pub extern "C" fn selabel_lookup(
    h: *mut Handle,
    con: *mut *mut c_char,
    key: *const c_char,
    kind: c_int,
) -> c_int {
    selabel_lookup_raw(h, con, key, kind)
}

/// The path and its aliases: an exact specification of any wins, else the longest fixed
/// prefix (file backend only; the others answer as selabel_lookup, as libselinux's do not
/// have best-match either: ENOTSUP).
#[no_mangle]
pub extern "C" fn selabel_lookup_best_match_raw(
    h: *mut Handle,
    con: *mut *mut c_char,
    key: *const c_char,
    aliases: *const *const c_char,
    kind: c_int,
) -> c_int {
    ffi::guard(-1, || {
        let hd = handle(h)?;
        let fc = hd.files.as_ref().ok_or(Errno(libc::ENOTSUP))?;
        let k = ffi::bytes_arg(key)?;
        let mut al: Vec<&[u8]> = Vec::new();
        if !aliases.is_null() {
            for i in 0.. {
                // SAFETY: a NULL-terminated array of strings (the caller's contract).
                let p = unsafe { *aliases.add(i) };
                if p.is_null() {
                    break;
                }
                al.push(ffi::bytes_arg(p)?);
            }
        }
        let spec = fc
            .lookup_best_match(k, &al, FileKind::from_mode(kind as u32))
            .map_err(|_| EINVAL)?
            .ok_or(ENOENT)?;
        ffi::out(con, ffi::c_string(&spec.context)?)?;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn selabel_lookup_best_match(
    h: *mut Handle,
    con: *mut *mut c_char,
    key: *const c_char,
    aliases: *const *const c_char,
    kind: c_int,
) -> c_int {
    selabel_lookup_best_match_raw(h, con, key, aliases, kind)
}

/// Whether a specification matches `key` or a path below it (file backend).
#[no_mangle]
pub extern "C" fn selabel_partial_match(h: *mut Handle, key: *const c_char) -> bool {
    ffi::guard(false, || {
        // A backend with no partial matching may match anything (libselinux's label.c).
        let Some(fc) = handle(h)?.files.as_ref() else {
            return Ok(true);
        };
        fc.partial_match(ffi::bytes_arg(key)?).map_err(|_| EINVAL)
    })
}

/// The name of the attribute restorecon keeps a directory's digest in.
pub(crate) const SEHASH: &CStr = c"security.sehash";

/// The SHA-1 over every specification `key` matches or may match below it (label_file.c's
/// hash_all_partial_matches: each one's expression and its NUL, its mode as a `mode_t`, its raw
/// context and its NUL, from the last specification back); None when none does, or for a
/// backend other than files (libselinux has no such function for them).
pub(crate) fn partial_matches_digest(h: *mut Handle, key: &[u8]) -> Res<Option<[u8; 20]>> {
    let Some(fc) = handle(h)?.files.as_ref() else {
        return Ok(None);
    };
    let specs = fc.partial_matches_all(key).map_err(|_| EINVAL)?;
    if specs.is_empty() {
        return Ok(None);
    }
    use sha1::Digest;
    let mut sha = sha1::Sha1::new();
    for spec in specs {
        sha.update(spec.regex.as_bytes());
        sha.update([0]);
        sha.update((spec.mode as libc::mode_t).to_ne_bytes());
        sha.update(spec.context.as_bytes());
        sha.update([0]);
    }
    Ok(Some(sha.finalize().into()))
}

/// The digest restorecon kept in `path`'s security.sehash, if it holds one of SHA-1's size.
pub(crate) fn kept_digest(path: &CStr) -> Option<[u8; 20]> {
    let mut kept = [0u8; 20];
    // SAFETY: a NUL-terminated path and attribute name, and a 20-byte buffer.
    let read = unsafe {
        libc::getxattr(
            path.as_ptr(),
            SEHASH.as_ptr(),
            kept.as_mut_ptr().cast(),
            kept.len(),
        )
    };
    (read == 20).then_some(kept)
}

/// 20 bytes and a NUL in memory the caller frees with free(3), as libselinux's calloc'ed ones.
fn c_digest(d: &[u8; 20]) -> Res<*mut u8> {
    // SAFETY: calloc of 21 bytes; NULL is checked.
    let p = unsafe { libc::calloc(1, 21) } as *mut u8;
    if p.is_null() {
        return Err(crate::ffi::ENOMEM);
    }
    // SAFETY: p holds 21 bytes, the source 20; they do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), p, 20) };
    Ok(p)
}

#[no_mangle]
pub extern "C" fn selabel_hash_all_partial_matches(
    h: *mut Handle,
    key: *const c_char,
    digest: *mut u8,
) -> bool {
    ffi::guard(false, || {
        if digest.is_null() {
            return Err(EINVAL);
        }
        let Some(d) = partial_matches_digest(h, ffi::bytes_arg(key)?)? else {
            return Ok(false);
        };
        // SAFETY: the caller's buffer of SHA1_HASH_SIZE (20) bytes, not NULL.
        unsafe { std::ptr::copy_nonoverlapping(d.as_ptr(), digest, 20) };
        Ok(true)
    })
}

/// The digest restorecon kept in `key`'s security.sehash and the one its specifications give
/// now (each NULL when there is none, else the caller's to free), their length (20), and
/// whether both exist and are equal (label_file.c's get_digests_all_partial_matches).
#[no_mangle]
pub extern "C" fn selabel_get_digests_all_partial_matches(
    h: *mut Handle,
    key: *const c_char,
    calc: *mut *mut u8,
    xattr: *mut *mut u8,
    len: *mut usize,
) -> bool {
    ffi::guard(false, || {
        if calc.is_null() || xattr.is_null() || len.is_null() {
            return Err(EINVAL);
        }
        let path = ffi::bytes_arg(key)?;
        // SAFETY: `key` is a NUL-terminated string (bytes_arg checked it is not NULL), the
        // caller's for the call.
        let kept = kept_digest(unsafe { CStr::from_ptr(key) });
        let now = partial_matches_digest(h, path)?;
        ffi::out(xattr, std::ptr::null_mut())?;
        ffi::out(calc, std::ptr::null_mut())?;
        ffi::out(len, 20)?;
        if let Some(k) = &kept {
            ffi::out(xattr, c_digest(k)?)?;
        }
        if let Some(d) = &now {
            ffi::out(calc, c_digest(d)?)?;
        }
        Ok(kept.is_some() && now == kept)
    })
}

/// Statistics: libselinux logs specifications that matched nothing; this engine does not
/// count matches, so there is nothing to report.
#[no_mangle]
pub extern "C" fn selabel_stats(h: *mut Handle) {
    ffi::guard((), || handle(h).map(|_| ()))
}

/// The handles' specifications compared as sets (SELABEL_SUBSET 0, EQUAL 1, SUPERSET 2,
/// INCOMPARABLE 3).
#[no_mangle]
pub extern "C" fn selabel_cmp(a: *mut Handle, b: *mut Handle) -> c_int {
    ffi::guard(3, || {
        let set = |h: &Handle| -> std::collections::BTreeSet<(String, u32, String)> {
            match &h.files {
                Some(fc) => fc
                    .specs()
                    .iter()
                    .map(|s| (s.regex.to_string(), s.mode, s.context.to_string()))
                    .collect(),
                None => h
                    .names
                    .iter()
                    .map(|(t, n, c)| (n.clone(), *t, c.clone()))
                    .collect(),
            }
        };
        let (x, y) = (set(handle(a)?), set(handle(b)?));
        Ok(if x == y {
            1
        } else if x.is_subset(&y) {
            0
        } else if x.is_superset(&y) {
            2
        } else {
            3
        })
    })
}

/// The context of removable media `media` from the media file (`name context` lines; the
/// first whose name is `media`), malloc'ed.
#[no_mangle]
pub extern "C" fn matchmediacon(media: *const c_char, con: *mut *mut c_char) -> c_int {
    ffi::guard(-1, || {
        let m = ffi::str_arg(media)?;
        let names = read_names(Path::new(&under_root("/contexts/files/media")), None)?;
        let c = names
            .iter()
            .find(|(_, n, _)| n == m)
            .map(|(_, _, c)| c.clone())
            .ok_or(ENOENT)?;
        ffi::out(con, ffi::c_string(&c)?)?;
        Ok(0)
    })
}

/// The SHA-1 of the files the handle was read from and their paths (valid until the handle is
/// closed); EINVAL unless opened with SELABEL_OPT_DIGEST.
#[no_mangle]
pub extern "C" fn selabel_digest(
    h: *mut Handle,
    digest: *mut *mut u8,
    len: *mut usize,
    files: *mut *mut *mut c_char,
    nfiles: *mut usize,
) -> c_int {
    ffi::guard(-1, || {
        let (sum, _names, ptrs) = handle(h)?.digest.as_ref().ok_or(EINVAL)?;
        ffi::out(digest, sum.as_ptr() as *mut u8)?;
        ffi::out(len, sum.len())?;
        ffi::out(files, ptrs.as_ptr() as *mut *mut c_char)?;
        ffi::out(nfiles, ptrs.len())?;
        Ok(0)
    })
}
