//! selinux_set_mapping: a program numbers the classes and permissions it uses itself (an
//! object manager's `struct security_class_mapping` table: class i is entry i-1, permission
//! bit k its k-th name), and from then on every call that takes or returns a class number or a
//! permission bit speaks that numbering, as libselinux 3.4's mapping.c makes it: the string
//! conversions, security_compute_av and the AVC (whose decisions come back mapped, unknown
//! classes and permissions decided by the policy's handle_unknown), security_compute_create,
//! _relabel, _member and validatetrans, and the audit records, which name what the numbers
//! mean.
//!
//! Where libselinux resolves the names once, when the map is set, and keeps the kernel's
//! numbers across a policy load that may renumber them, this keeps the names and resolves them
//! in each generation that answers: a reload that renumbers classes keeps the program's
//! numbering meaning what it named.
//!
//! The map's lock nests in no other lock of the library.

use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Arc, Mutex, RwLock};

use seaccess_security::Generation;
use seaccess_types::{lock, HandleUnknown};

use crate::callbacks;
use crate::decision::AvDecisionC;
use crate::ffi::{self, Res, EINVAL, ENOMEM};

/// libselinux's `struct security_class_mapping`: a class name and up to 32 permission names,
/// each list ending at a NULL.
#[repr(C)]
pub struct SecurityClassMapping {
    pub name: *const c_char,
    pub perms: [*const c_char; 33],
}

/// The program's table, by name: `classes[i - 1]` is its class `i`.
struct Spec {
    classes: Vec<(String, Vec<String>)>,
}

/// A table in one generation's numbers: `classes[i]` is the program's class `i` (entry 0 is
/// class 0, unmapped, as libselinux's calloc'ed record zero).
pub(crate) struct Resolved {
    seqno: u32,
    spec: Arc<Spec>,
    classes: Vec<Class>,
    allow_unknown: bool,
}

#[derive(Default)]
struct Class {
    /// The policy's class number, 0 when it has no such class.
    value: u16,
    /// The policy's bit for each of the program's permissions, 0 when the policy has none
    /// (or the name was empty: libselinux skips it but keeps its place).
    perms: Vec<u32>,
}

/// Whether a map is set: the one load a check pays when none is.
static ACTIVE: AtomicBool = AtomicBool::new(false);
static SPEC: RwLock<Option<Arc<Spec>>> = RwLock::new(None);
/// The map in the last generation asked for.
static RESOLVED: Mutex<Option<Arc<Resolved>>> = Mutex::new(None);

/// Whether a program set a map (checks then take the mapped way).
#[inline(always)]
pub(crate) fn active() -> bool {
    ACTIVE.load(Relaxed)
}

/// The map in generation `g`'s numbers when the program set one: [`current`] behind the one
/// relaxed load a program without a map pays.
#[inline]
pub(crate) fn in_use(g: &Generation) -> Option<Arc<Resolved>> {
    if active() {
        current(g)
    } else {
        None
    }
}

/// The map in generation `g`'s numbers, None when no map is set. A call that takes or returns
/// the program's numbers takes this once and uses the one snapshot for every name and bit it
/// converts: another thread may switch the map at any time, and names resolved with one map
/// and bits read with another answer for a permission nobody asked about.
pub(crate) fn current(g: &Generation) -> Option<Arc<Resolved>> {
    let spec = seaccess_types::lock::read(&SPEC).clone()?;
    let mut cached = lock(&RESOLVED);
    if let Some(r) = cached
        .as_ref()
        .filter(|r| r.seqno == g.seqno().0 && Arc::ptr_eq(&r.spec, &spec))
    {
        return Some(r.clone());
    }
    let r = Arc::new(resolve(g, spec));
    *cached = Some(r.clone());
    Some(r)
}

fn resolve(g: &Generation, spec: Arc<Spec>) -> Resolved {
    let mut classes = vec![Class::default()];
    for (name, perms) in &spec.classes {
        let value = g.class(name).map_or(0, |c| c.0);
        let perms = perms
            .iter()
            .map(|p| {
                if value == 0 || p.is_empty() {
                    0
                } else {
                    g.perms(seaccess_types::ClassId(value), &[p.as_str()])
                        .map_or(0, |av| av.0)
                }
            })
            .collect();
        classes.push(Class { value, perms });
    }
    Resolved {
        seqno: g.seqno().0,
        spec,
        classes,
        allow_unknown: g.handle_unknown() == HandleUnknown::Allow,
    }
}

impl Resolved {
    fn class(&self, tclass: u16) -> Option<&Class> {
        self.classes.get(usize::from(tclass))
    }

    /// The policy's class for the program's `tclass`; 0 for one past the map (libselinux sets
    /// EINVAL and goes on with class 0).
    pub(crate) fn unmap_class(&self, tclass: u16) -> u16 {
        self.class(tclass).map_or(0, |c| c.value)
    }

    /// The policy's bits for the program's `tperm` in `tclass`; 0 past the map.
    pub(crate) fn unmap_perm(&self, tclass: u16, tperm: u32) -> u32 {
        let Some(c) = self.class(tclass) else {
            return 0;
        };
        c.perms
            .iter()
            .enumerate()
            .filter(|&(i, _)| tperm & (1 << i) != 0)
            .fold(0, |k, (_, &b)| k | b)
    }

    /// The program's number for the policy's class `kclass`: the first entry naming it, None
    /// when none does.
    pub(crate) fn map_class(&self, kclass: u16) -> Option<u16> {
        self.classes
            .iter()
            .position(|c| c.value == kclass)
            .and_then(|i| u16::try_from(i).ok())
    }

    /// The program's bits for the policy's `kperm` in its class `tclass`: None when none of
    /// its permissions is one of them; `kperm` itself past the map (as libselinux).
    pub(crate) fn map_perm(&self, tclass: u16, kperm: u32) -> Option<u32> {
        let Some(c) = self.class(tclass) else {
            return Some(kperm);
        };
        let t = c
            .perms
            .iter()
            .enumerate()
            .filter(|&(_, &b)| kperm & b != 0)
            .fold(0, |t, (i, _)| t | 1 << i);
        (t != 0).then_some(t)
    }

    /// A decision of the policy's class turned into the program's bits for `tclass`
    /// (libselinux's map_decision): a permission the policy lacks is allowed and decided under
    /// handle_unknown allow, audited when denied otherwise, and bits past the program's
    /// permissions are always audited (asking for one is an object manager's bug).
    pub(crate) fn map_decision(&self, tclass: u16, avd: &mut AvDecisionC) {
        let Some(c) = self.class(tclass) else { return };
        let unknown = |b: u32| b == 0;
        let each = |from: u32, or_unknown: bool| {
            c.perms
                .iter()
                .enumerate()
                .filter(|&(_, &b)| from & b != 0 || (or_unknown && unknown(b)))
                .fold(0u32, |r, (i, _)| r | 1 << i)
        };
        avd.allowed = each(avd.allowed, self.allow_unknown);
        avd.decided = each(avd.decided, self.allow_unknown);
        avd.auditallow = each(avd.auditallow, false);
        let past = if c.perms.len() >= 32 {
            0
        } else {
            u32::MAX << c.perms.len()
        };
        avd.auditdeny = each(avd.auditdeny, !self.allow_unknown) | past;
    }
}

/// The policy's class for the program's `tclass` in generation `g`: itself when no map is set.
pub(crate) fn kernel_class(g: &Generation, tclass: u16) -> u16 {
    in_use(g).map_or(tclass, |m| m.unmap_class(tclass))
}

/// selinux_set_mapping: the program's numbering from now on (see the module's doc). Resets
/// the AVC, as libselinux does; a NULL table or, under handle_unknown reject, a class or
/// permission the policy lacks fails with EINVAL and leaves no map.
///
/// The new map replaces the old one in one step: libselinux frees the old map first, so that a
/// check racing the call sees no map and takes the program's numbers for the policy's (a
/// program numbering class 3 as `file` asking for `write` was granted whatever the policy's
/// class 3 allows). Here a check sees the old map or the new one, never none, and reads it once
/// ([`current`] hands out one snapshot).
#[no_mangle]
pub extern "C" fn selinux_set_mapping(map: *mut SecurityClassMapping) -> c_int {
    ffi::guard(-1, || {
        let g = crate::state::kernel().ok().map(|k| k.server.snapshot());
        let spec = match checked(g.as_deref(), map) {
            Ok(spec) => spec,
            Err(e) => {
                // As libselinux: no map is left, and the cache is reset all the same.
                clear();
                crate::avc_life::avc_reset();
                return Err(e);
            }
        };
        if crate::avc_life::avc_reset() < 0 {
            let e = ffi::Errno(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EINVAL),
            );
            clear();
            return Err(e);
        }
        install(spec);
        Ok(0)
    })
}

/// Reads the program's table: entries up to the one whose name is NULL, each's permissions up
/// to a NULL (at most 32).
fn read_table(map: *const SecurityClassMapping) -> Res<Spec> {
    if map.is_null() {
        return Err(EINVAL);
    }
    let mut classes = Vec::new();
    for i in 0..usize::from(u16::MAX) {
        // SAFETY: libselinux's contract: `map` is an array of entries ending with one whose name
        // is NULL; entry i is read only after entry i-1's name was not NULL.
        let e = unsafe { &*map.add(i) };
        let Some(name) = ffi::opt_str_arg(e.name)? else {
            return Ok(Spec { classes });
        };
        let mut perms = Vec::new();
        for &p in e.perms.iter().take(32) {
            match ffi::opt_str_arg(p)? {
                Some(p) => perms.push(p.to_owned()),
                None => break,
            }
        }
        classes.try_reserve(1).map_err(|_| ENOMEM)?;
        classes.push((name.to_owned(), perms));
    }
    // A class number is 16 bits: a longer table cannot be numbered.
    Err(EINVAL)
}

/// The program's table, checked against generation `g` (none before a policy is loaded).
/// Under handle_unknown reject, a class or permission the policy lacks fails the call;
/// otherwise each is logged and decided by handle_unknown.
fn checked(g: Option<&Generation>, map: *const SecurityClassMapping) -> Res<Arc<Spec>> {
    let spec = Arc::new(read_table(map)?);
    if let Some(g) = g {
        let reject = g.handle_unknown() == HandleUnknown::Reject;
        let mut unknown = false;
        for (name, perms) in &spec.classes {
            let Ok(c) = g.class(name) else {
                callbacks::log(
                    callbacks::SELINUX_INFO,
                    &format!("SELinux: Class {name} not defined in policy.\n"),
                );
                if reject {
                    return Err(EINVAL);
                }
                unknown = true;
                continue;
            };
            for p in perms.iter().filter(|p| !p.is_empty()) {
                if g.perms(c, &[p.as_str()]).map_or(true, |av| av.0 == 0) {
                    callbacks::log(
                        callbacks::SELINUX_INFO,
                        &format!(
                            "SELinux:  Permission {p} in class {name} not defined in policy.\n"
                        ),
                    );
                    if reject {
                        return Err(EINVAL);
                    }
                    unknown = true;
                }
            }
        }
        if unknown {
            let how = if g.handle_unknown() == HandleUnknown::Allow {
                "allowed"
            } else {
                "denied"
            };
            callbacks::log(
                callbacks::SELINUX_INFO,
                &format!("SELinux: the above unknown classes and permissions will be {how}\n"),
            );
        }
    }
    Ok(spec)
}

/// Makes `spec` the map, in place of the old one in one write.
fn install(spec: Arc<Spec>) {
    *seaccess_types::lock::write(&SPEC) = Some(spec);
    ACTIVE.store(true, Release);
    // The fronts' grants are keyed by the policy's class numbers, which the program's now
    // replace: the stamp moves. A fill that read the old stamp stores an entry no hit takes;
    // one that read the new stamp then finds the map set (stored first) and fills nothing.
    if let Some(k) = crate::kernel::loaded() {
        crate::front::invalidate(&k.avc);
    }
}

fn clear() {
    ACTIVE.store(false, Release);
    *seaccess_types::lock::write(&SPEC) = None;
    *lock(&RESOLVED) = None;
}

/// The map's locks, held across a fork (see [`crate::fork`]).
pub(crate) struct Held(
    #[allow(dead_code)] std::sync::RwLockWriteGuard<'static, Option<Arc<Spec>>>,
    #[allow(dead_code)] std::sync::MutexGuard<'static, Option<Arc<Resolved>>>,
);

pub(crate) fn hold() -> Held {
    Held(seaccess_types::lock::write(&SPEC), lock(&RESOLVED))
}
