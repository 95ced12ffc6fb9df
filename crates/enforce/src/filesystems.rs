//! What the kernel gives an inode nobody labeled, by its file system's type
//! (inode_doinit_with_dentry, by the labeling behavior security_fs_use chose for the
//! superblock): the filesystems map's entries, which the BPF side uses for every inode without
//! inode storage, and the label walk's default for an object file_contexts leaves alone. One
//! answer for both, so that an inode the daemon labels with its default and one it never
//! reached are decided alike.

use seaccess_security::FsUseBehavior as FsUse;
use seaccess_security::Generation;

use crate::initial::{SECINITSID_FILE, SECINITSID_UNLABELED};
use crate::layout::{FsDef, FsKey, FS_CREATOR, FS_FIXED, FS_UNCHECKED};

/// The default of file system type `fstype` under policy `p`:
/// - fs_use_xattr: the initial SID `file` (the superblock's def_sid, for an inode without a
///   `security.selinux` attribute);
/// - fs_use_trans: the file system's SID;
/// - fs_use_task: the creating task's SID ([`FS_CREATOR`]);
/// - genfscon with one entry (for "/"): that entry's SID; with more, labels by path inside the
///   file system, which the BPF side cannot compute ([`FS_UNCHECKED`]);
/// - nothing: the initial SID `unlabeled` (the kernel's SECURITY_FS_USE_NONE).
///
/// A SID of 0 (the policy lacks the initial SID) is never in a decisions map: the BPF side
/// misses and denies.
pub fn fs_default(p: &Generation, fstype: &str) -> FsDef {
    let initial = |n| p.initial_sid(n).map_or(0, |s| s.0);
    let (sid, kind) = match p.fs_use(fstype) {
        Some((FsUse::Xattr, _)) => (initial(SECINITSID_FILE), FS_FIXED),
        Some((FsUse::Trans, s)) => (s.0, FS_FIXED),
        Some((FsUse::Task, _)) => (0, FS_CREATOR),
        Some((_, s)) => (s.0, FS_FIXED),
        None => match p.genfs_entries(fstype) {
            0 => (initial(SECINITSID_UNLABELED), FS_FIXED),
            1 => {
                let root = p
                    .class("dir")
                    .ok()
                    .and_then(|c| p.genfs_sid(fstype, "/", c));
                match root {
                    Some(s) => (s.0, FS_FIXED),
                    None => (0, FS_UNCHECKED),
                }
            }
            _ => (0, FS_UNCHECKED),
        },
    };
    FsDef { sid, kind }
}

/// The filesystems map of policy `p`: every file system type it names (a name too long for
/// the key is left out: the BPF side decides its inodes as a type the policy does not name,
/// `unlabeled`, as the kernel would not, and the daemon says so when it starts).
pub fn table(p: &Generation) -> (Vec<(FsKey, FsDef)>, Vec<String>) {
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for name in p.fs_types() {
        match FsKey::new(name) {
            Some(k) => out.push((k, fs_default(p, name))),
            None => skipped.push(name.to_string()),
        }
    }
    (out, skipped)
}
