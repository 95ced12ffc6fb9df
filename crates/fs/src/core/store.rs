//! Where the mount keeps objects' labels: one extended attribute, its store, and no other.
//!
//! On a kernel without SELinux any owner of a file may write its `security.selinux` and
//! `user.selinux` (`setfattr -n security.selinux` by nobody on its own file succeeds), so a
//! label read from either, on a tree others reach around the mount, is one they could have
//! forged. `trusted.*` needs CAP_SYS_ADMIN, so the store is `trusted.selinux` by default;
//! `security.selinux` when SOURCE is mounted over itself (then the tree is reached only
//! through the mount, whose checks guard the attribute); either of the other two on a tree
//! not mounted over itself only with `unsafe_xattr`. Only the store is read: an object with
//! no label there gets file_contexts' (or the `file` initial SID), whatever else it carries.
//!
//! Through the mount the label is `security.selinux`, as on an SELinux kernel; the store's
//! own name, when it is another, is not an attribute there (refused to set or remove, absent
//! to get, never listed): a caller with CAP_SYS_ADMIN must not relabel around the checks by
//! writing `trusted.selinux`.

use seaccess_label::xattr::{SECURITY, TRUSTED, USER};

use super::Options;
use crate::error::{FsError, Result};

/// The attribute labels are kept in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Store {
    name: &'static str,
}

impl Store {
    /// The store `opts` ask for (`xattr`, else the default for where the tree is mounted),
    /// refused when it is one any file owner can write on a tree others reach around the
    /// mount, unless `unsafe_xattr` says so.
    pub fn choose(opts: &Options) -> Result<Store> {
        let over_itself = opts.source == opts.mountpoint;
        let name = match opts.xattr.as_deref() {
            None if over_itself => SECURITY,
            None => TRUSTED,
            Some(n) => [TRUSTED, SECURITY, USER]
                .into_iter()
                .find(|k| *k == n)
                .ok_or_else(|| FsError::Config {
                    what: format!(
                        "--xattr {n}: labels are kept in {TRUSTED}, {SECURITY} or {USER}"
                    ),
                })?,
        };
        if name != TRUSTED && !over_itself && !opts.unsafe_xattr {
            return Err(FsError::Config {
                what: format!(
                    "--xattr {name}: on a kernel without SELinux any file owner can write {name} on {} outside the mount, and the mount would enforce \
                     the forged label; keep labels in {TRUSTED} (the default), mount the tree over itself (seaccess mount DIR DIR), or pass --unsafe-xattr",
                    opts.source.display()
                ),
            });
        }
        Ok(Store { name })
    }

    /// The attribute's name on the backing tree.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Whether `name`, asked through the mount, is the store under its own name (which is no
    /// attribute of the mount's: the label is `security.selinux` there).
    pub fn hidden(&self, name: &str) -> bool {
        self.name != SECURITY && name == self.name
    }
}
