//! Where the policy's files are: /etc/selinux/config's SELINUXTYPE and SELINUX, the policy
//! root (/etc/selinux/TYPE) and each configuration file under it, as libselinux names them
//! (selinux_config.c; the suffixes are its file_path_suffixes.h's), and the selinuxfs mount
//! point, which a kernel without SELinux does not have.
//!
//! Paths are handed to C as `const char *` that stay valid for the process's life: libselinux's
//! stay valid until the next selinux_set_policy_root or selinux_reset_config, so a caller
//! cannot tell the difference except that old pointers still read their old text.

use std::ffi::{c_char, c_int};
use std::sync::Mutex;

use seaccess_policy::installed;
use seaccess_types::lock;

use crate::ffi::{self, static_name, EINVAL};

/// The configuration file libselinux reads (SELINUXCONFIG).
pub(crate) const CONFIG: &str = "/etc/selinux/config";

struct Config {
    /// The policy root (`/etc/selinux/TYPE`, or what selinux_set_policy_root set).
    root: String,
    /// The policy type (the root's last component).
    kind: String,
    /// SELINUX= as a number: 1 enforcing, 0 permissive, -1 disabled; None when absent.
    mode: Option<c_int>,
}

static CONFIG_STATE: Mutex<Option<Config>> = Mutex::new(None);

/// The configuration's lock, held across a fork (see [`crate::fork`]): it nests in no other lock.
pub(crate) struct Held(#[allow(dead_code)] std::sync::MutexGuard<'static, Option<Config>>);

pub(crate) fn hold() -> Held {
    Held(lock(&CONFIG_STATE))
}

fn read_config() -> Config {
    let dir = std::path::Path::new(installed::SELINUX_DIR);
    let c = installed::read_config(dir);
    Config {
        root: installed::type_root(dir, &c.kind)
            .to_string_lossy()
            .into_owned(),
        kind: c.kind,
        mode: c.mode,
    }
}

fn with_config<T>(f: impl FnOnce(&Config) -> T) -> T {
    let mut c = lock(&CONFIG_STATE);
    f(c.get_or_insert_with(read_config))
}

/// The policy root, e.g. `/etc/selinux/default`.
pub(crate) fn policy_root() -> String {
    with_config(|c| c.root.clone())
}

/// The policy root joined with one of libselinux's file suffixes.
pub(crate) fn under_root(suffix: &str) -> String {
    format!("{}{suffix}", policy_root())
}

/// The installed binary policy: `policy/policy.N` under the policy root, the highest N this
/// library reads that exists.
pub(crate) fn installed_policy() -> Option<String> {
    installed::binary_policy(std::path::Path::new(&policy_root()))
        .map(|p| p.to_string_lossy().into_owned())
}

macro_rules! root_paths {
    ($($(#[$m:meta])* $name:ident => $suffix:literal),* $(,)?) => {
        $(
            $(#[$m])*
            #[no_mangle]
            pub extern "C" fn $name() -> *const c_char {
                ffi::guard(std::ptr::null(), || Ok(static_name(&under_root($suffix))))
            }
        )*
    };
}

root_paths! {
    /// The binary policy without its version suffix.
    selinux_binary_policy_path => "/policy/policy",
    selinux_contexts_path => "/contexts",
    selinux_file_context_path => "/contexts/files/file_contexts",
    selinux_file_context_homedir_path => "/contexts/files/file_contexts.homedirs",
    selinux_file_context_local_path => "/contexts/files/file_contexts.local",
    selinux_file_context_subs_path => "/contexts/files/file_contexts.subs",
    selinux_file_context_subs_dist_path => "/contexts/files/file_contexts.subs_dist",
    selinux_homedir_context_path => "/contexts/files/homedir_template",
    selinux_media_context_path => "/contexts/files/media",
    selinux_default_context_path => "/contexts/default_contexts",
    selinux_user_contexts_path => "/contexts/users/",
    selinux_failsafe_context_path => "/contexts/failsafe_context",
    selinux_default_type_path => "/contexts/default_type",
    selinux_securetty_types_path => "/contexts/securetty_types",
    selinux_removable_context_path => "/contexts/removable_context",
    selinux_customizable_types_path => "/contexts/customizable_types",
    selinux_netfilter_context_path => "/contexts/netfilter_contexts",
    selinux_x_context_path => "/contexts/x_contexts",
    selinux_virtual_domain_context_path => "/contexts/virtual_domain_context",
    selinux_virtual_image_context_path => "/contexts/virtual_image_context",
    selinux_lxc_contexts_path => "/contexts/lxc_contexts",
    selinux_openrc_contexts_path => "/contexts/openrc_contexts",
    selinux_openssh_contexts_path => "/contexts/openssh_contexts",
    selinux_snapperd_contexts_path => "/contexts/snapperd_contexts",
    selinux_systemd_contexts_path => "/contexts/systemd_contexts",
    selinux_sepgsql_context_path => "/contexts/sepgsql_contexts",
    /// Deprecated in libselinux (booleans live in the policy), still answered.
    selinux_booleans_path => "/booleans",
    selinux_booleans_subs_path => "/booleans.subs_dist",
    selinux_users_path => "/users/",
    selinux_usersconf_path => "/seusers",
    selinux_translations_path => "/setrans.conf",
    selinux_colors_path => "/secolor.conf",
}

/// The directory every policy lives under.
#[no_mangle]
pub extern "C" fn selinux_path() -> *const c_char {
    ffi::guard(std::ptr::null(), || Ok(static_name("/etc/selinux/")))
}

/// The policy root (`/etc/selinux/TYPE`).
#[no_mangle]
pub extern "C" fn selinux_policy_root() -> *const c_char {
    ffi::guard(std::ptr::null(), || Ok(static_name(&policy_root())))
}

/// Makes `path` the policy root; its last component is the policy type.
#[no_mangle]
pub extern "C" fn selinux_set_policy_root(path: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let p = ffi::str_arg(path)?;
        let kind = p
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .filter(|k| !k.is_empty())
            .ok_or(EINVAL)?
            .to_string();
        let mode = with_config(|c| c.mode);
        *lock(&CONFIG_STATE) = Some(Config {
            root: p.trim_end_matches('/').to_string(),
            kind,
            mode,
        });
        Ok(0)
    })
}

/// Reads /etc/selinux/config again.
#[no_mangle]
pub extern "C" fn selinux_reset_config() {
    ffi::guard((), || {
        *lock(&CONFIG_STATE) = Some(read_config());
        Ok(())
    })
}

/// The policy type (SELINUXTYPE), in memory from malloc.
#[no_mangle]
pub extern "C" fn selinux_getpolicytype(kind: *mut *mut c_char) -> c_int {
    ffi::guard(-1, || {
        if kind.is_null() {
            return Err(EINVAL);
        }
        let s = ffi::c_string(&with_config(|c| c.kind.clone()))?;
        // SAFETY: `kind` is a non-NULL pointer the caller gives for one `char *`.
        unsafe { *kind = s };
        Ok(0)
    })
}

/// SELINUX= of the configuration: 1 enforcing, 0 permissive, -1 disabled; -1 (and nothing
/// set) when the configuration names none.
#[no_mangle]
pub extern "C" fn selinux_getenforcemode(enforce: *mut c_int) -> c_int {
    ffi::guard(-1, || {
        let m = with_config(|c| c.mode).ok_or(crate::ffi::ENOENT)?;
        if !enforce.is_null() {
            // SAFETY: a non-NULL pointer the caller gives for one int.
            unsafe { *enforce = m };
        }
        Ok(0)
    })
}

/// The selinuxfs mount point: NULL, as libselinux leaves it on a kernel without SELinux
/// (`set_selinuxmnt` sets it, as there).
#[no_mangle]
#[allow(non_upper_case_globals)]
pub static mut selinux_mnt: *mut c_char = std::ptr::null_mut();

/// Sets [`selinux_mnt`] to a copy of `mnt`.
#[no_mangle]
pub extern "C" fn set_selinuxmnt(mnt: *const c_char) {
    ffi::guard((), || {
        let s = ffi::c_string(ffi::str_arg(mnt)?)?;
        fini_selinuxmnt();
        // SAFETY: libselinux's contract: selinux_mnt is set and read by the program's own
        // initialisation, not raced by other threads; the old value was freed above.
        unsafe { selinux_mnt = s };
        Ok(())
    })
}

/// Frees [`selinux_mnt`] and sets it to NULL.
#[no_mangle]
pub extern "C" fn fini_selinuxmnt() {
    ffi::guard((), || {
        // SAFETY: as in set_selinuxmnt; the pointer is NULL or came from malloc (c_string).
        unsafe {
            let p = selinux_mnt;
            selinux_mnt = std::ptr::null_mut();
            libc::free(p as *mut libc::c_void);
        }
        Ok(())
    })
}

/// Whether a selinuxfs is known to the kernel (/proc/filesystems): 1 or 0.
#[no_mangle]
pub extern "C" fn selinuxfs_exists() -> c_int {
    ffi::guard(0, || {
        Ok(std::fs::read_to_string("/proc/filesystems")
            .unwrap_or_default()
            .lines()
            .any(|l| l.split_whitespace().last() == Some("selinuxfs")) as c_int)
    })
}

/// Whether the type of `tty_context` is listed in securetty_types: 0 if it is, -1 if not.
#[no_mangle]
pub extern "C" fn selinux_check_securetty_context(tty_context: *const c_char) -> c_int {
    ffi::guard(-1, || {
        let ctx = ffi::str_arg(tty_context)?;
        let ty = ctx.split(':').nth(2).ok_or(EINVAL)?;
        let text = std::fs::read_to_string(under_root("/contexts/securetty_types"))
            .map_err(|e| ffi::Errno(e.raw_os_error().unwrap_or(libc::ENOENT)))?;
        let listed = text
            .lines()
            .map(|l| l.split('#').next().unwrap_or("").trim())
            .any(|l| l == ty);
        Ok(if listed { 0 } else { -1 })
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::ffi::{CStr, CString};

    fn s(p: *const c_char) -> String {
        // SAFETY: the functions under test return interned NUL-terminated strings.
        unsafe { CStr::from_ptr(p) }.to_str().unwrap().to_string()
    }

    #[test]
    fn paths_follow_the_policy_root() {
        let root = s(selinux_policy_root());
        assert!(root.starts_with("/etc/selinux/"), "{root}");
        assert_eq!(
            s(selinux_file_context_path()),
            format!("{root}/contexts/files/file_contexts")
        );
        let c = CString::new("/tmp/x/mypolicy").unwrap();
        assert_eq!(selinux_set_policy_root(c.as_ptr()), 0);
        assert_eq!(s(selinux_usersconf_path()), "/tmp/x/mypolicy/seusers");
        let mut k: *mut c_char = std::ptr::null_mut();
        assert_eq!(selinux_getpolicytype(&mut k), 0);
        assert_eq!(s(k), "mypolicy");
        // SAFETY: k came from malloc.
        unsafe { libc::free(k as *mut libc::c_void) };
        selinux_reset_config();
        assert_eq!(s(selinux_policy_root()), root);
    }
}
