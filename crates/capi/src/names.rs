//! Class and permission names and numbers: the policy's own class values and permission bits
//! (what the kernel's selinuxfs gives libselinux when no class map is set), each answer from
//! one snapshot of the current generation.

use std::ffi::{c_char, c_int, CString};
use std::sync::Arc;

use seaccess_security::Generation;
use seaccess_types::{AccessVector, ClassId};

use crate::ffi::{self, static_name, Res, EINVAL};
use crate::mapping::{self, Resolved};
use crate::state;

/// The name of the lowest permission in `av` of class `tclass`, both in the program's
/// numbering when it set a map `m` (libselinux's security_av_perm_to_string).
pub(crate) fn perm_name<'g>(
    g: &'g Generation,
    m: Option<&Resolved>,
    tclass: u16,
    av: u32,
) -> Option<&'g str> {
    let (class, av) = match m {
        Some(m) => (m.unmap_class(tclass), m.unmap_perm(tclass, av)),
        None => (tclass, av),
    };
    g.perm_name(ClassId(class), AccessVector(av).bits().next()?)
}

/// The name of class `tclass`, in the program's numbering when it set a map `m`.
pub(crate) fn class_name_in<'g>(
    g: &'g Generation,
    m: Option<&Resolved>,
    tclass: u16,
) -> Option<&'g str> {
    g.class_name(ClassId(m.map_or(tclass, |m| m.unmap_class(tclass))))
        .ok()
}

/// The names generation `g` gives the permissions in `av`, lowest bit first, stopping at the
/// first bit the class does not name (as libselinux's avc_dump_av); the bits left unnamed.
pub(crate) fn perm_names(
    g: &Generation,
    m: Option<&Resolved>,
    class: u16,
    av: u32,
) -> (Vec<String>, u32) {
    let mut names = Vec::new();
    let mut left = av;
    for bit in AccessVector(av).bits() {
        match perm_name(g, m, class, 1 << bit) {
            Some(n) => {
                names.push(n.to_owned());
                left &= !(1u32 << bit);
            }
            None => break,
        }
    }
    (names, left)
}

/// The current generation and, when the program set one, its map in that generation's numbers.
fn numbering() -> Res<(Arc<Generation>, Option<Arc<Resolved>>)> {
    let g = state::kernel().map_err(|_| EINVAL)?.server.snapshot();
    let m = mapping::in_use(&g);
    Ok((g, m))
}

#[no_mangle]
pub extern "C" fn string_to_security_class(name: *const c_char) -> u16 {
    ffi::guard(0, || {
        let (g, m) = numbering()?;
        class_number(&g, m.as_deref(), ffi::str_arg(name)?)
    })
}

/// The number of class `name` in generation `g`, in the program's numbering when it set a map
/// `m` (its first entry naming the class); EINVAL when the policy or the map lacks it.
pub(crate) fn class_number(g: &Generation, m: Option<&Resolved>, name: &str) -> Res<u16> {
    let c = g.class(name).map_err(|_| EINVAL)?.0;
    match m {
        Some(m) => m.map_class(c).filter(|&c| c != 0).ok_or(EINVAL),
        None => Ok(c),
    }
}

/// The bit(s) of permission `name` of class `tclass` in generation `g`, both in the program's
/// numbering when it set a map `m`; EINVAL when the policy or the map lacks it.
pub(crate) fn perm_bits(g: &Generation, m: Option<&Resolved>, tclass: u16, name: &str) -> Res<u32> {
    let class = m.map_or(tclass, |m| m.unmap_class(tclass));
    let av = g.perms(ClassId(class), &[name]).map_err(|_| EINVAL)?;
    if av.is_empty() {
        return Err(EINVAL);
    }
    match m {
        Some(m) => m.map_perm(tclass, av.0).ok_or(EINVAL),
        None => Ok(av.0),
    }
}

#[no_mangle]
pub extern "C" fn string_to_av_perm(tclass: u16, name: *const c_char) -> u32 {
    ffi::guard(0, || {
        let (g, m) = numbering()?;
        perm_bits(&g, m.as_deref(), tclass, ffi::str_arg(name)?)
    })
}

#[no_mangle]
pub extern "C" fn security_class_to_string(tclass: u16) -> *const c_char {
    ffi::guard(std::ptr::null(), || {
        let Ok((g, m)) = numbering() else {
            return Ok(std::ptr::null());
        };
        Ok(class_name_in(&g, m.as_deref(), tclass).map_or(std::ptr::null(), static_name))
    })
}

/// The name of the lowest permission in `av` (libselinux's security_av_perm_to_string).
#[no_mangle]
pub extern "C" fn security_av_perm_to_string(tclass: u16, av: u32) -> *const c_char {
    ffi::guard(std::ptr::null(), || {
        let Ok((g, m)) = numbering() else {
            return Ok(std::ptr::null());
        };
        Ok(perm_name(&g, m.as_deref(), tclass, av).map_or(std::ptr::null(), static_name))
    })
}

/// `{ read write }`, or `null` for an empty vector; unnamed bits are left out (libselinux's
/// security_av_string). The string is the caller's to free.
#[no_mangle]
pub extern "C" fn security_av_string(tclass: u16, av: u32, res: *mut *mut c_char) -> c_int {
    ffi::guard(-1, || {
        if res.is_null() {
            return Err(EINVAL);
        }
        let text = if av == 0 {
            "null".to_owned()
        } else {
            let mut t = String::from("{ ");
            if let Ok((g, m)) = numbering() {
                for bit in AccessVector(av).bits() {
                    if let Some(n) = perm_name(&g, m.as_deref(), tclass, 1 << bit) {
                        t.push_str(n);
                        t.push(' ');
                    }
                }
            }
            t.push('}');
            t
        };
        ffi::out(res, ffi::c_string(&text)?)?;
        Ok(0)
    })
}

/// Frees a context this library returned (`free`).
#[no_mangle]
pub extern "C" fn freecon(con: *mut c_char) {
    ffi::guard((), || {
        ffi::c_free(con as *mut libc::c_void);
        Ok(())
    })
}

/// Frees a NULL-terminated array of contexts or names this library returned.
#[no_mangle]
pub extern "C" fn freeconary(con: *mut *mut c_char) {
    ffi::guard((), || {
        ffi::free_string_array(con);
        Ok(())
    })
}

/// Writes ` { read write }` (` null` for an empty vector; an unnamed bit ends the list and the
/// rest is printed in hex) to the C library's standard output, as libselinux's
/// print_access_vector does: through stdio, so that it lands in order with the program's own
/// printf output.
#[no_mangle]
pub extern "C" fn print_access_vector(tclass: u16, av: u32) {
    ffi::guard((), || {
        let mut text = String::new();
        if av == 0 {
            text.push_str(" null");
        } else {
            text.push_str(" {");
            // One generation and one map for every bit: a map switched meanwhile by another
            // thread does not name half the bits by one numbering and half by the other.
            let (names, rest) = match numbering() {
                Ok((g, m)) => perm_names(&g, m.as_deref(), tclass, av),
                Err(_) => (Vec::new(), av),
            };
            for n in &names {
                text.push(' ');
                text.push_str(n);
            }
            if rest != 0 {
                text.push_str(&format!(" 0x{rest:x}"));
            }
            text.push_str(" }");
        }
        let c = CString::new(text).map_err(|_| EINVAL)?;
        // SAFETY: printf with a "%s" format and one NUL-terminated string argument.
        unsafe { libc::printf(c"%s".as_ptr(), c.as_ptr()) };
        Ok(())
    })
}

/// The class of an inode of mode `m` (libselinux's mode_to_security_class); 0 and EINVAL for
/// a mode of no file type.
#[no_mangle]
pub extern "C" fn mode_to_security_class(m: libc::mode_t) -> u16 {
    ffi::guard(0, || {
        let name = match m & libc::S_IFMT {
            libc::S_IFREG => "file",
            libc::S_IFDIR => "dir",
            libc::S_IFCHR => "chr_file",
            libc::S_IFBLK => "blk_file",
            libc::S_IFIFO => "fifo_file",
            libc::S_IFLNK => "lnk_file",
            libc::S_IFSOCK => "sock_file",
            _ => return Err(EINVAL),
        };
        let (g, m) = numbering()?;
        let c = g.class(name).map_err(|_| EINVAL)?.0;
        match m {
            Some(m) => m.map_class(c).filter(|&c| c != 0).ok_or(EINVAL),
            None => Ok(c),
        }
    })
}
