//! What the VFS hands the kernel's hooks, and the kernel's translations of it into file
//! permissions (hooks.c's file_mask_to_av and file_to_av): below both the security blobs (a
//! file's blob records what its open granted in these terms) and the hooks that ask them.

use crate::classes::{common_file, dir, Class};

/// The VFS's permission mask bits (linux/fs.h).
pub const MAY_EXEC: u32 = 1;
pub const MAY_WRITE: u32 = 2;
pub const MAY_READ: u32 = 4;
pub const MAY_APPEND: u32 = 8;
pub const MAY_ACCESS: u32 = 16;
pub const MAY_OPEN: u32 = 32;

/// Open flags, as the C library's (x86-64 and most architectures).
pub mod oflags {
    pub const O_RDONLY: i32 = 0;
    pub const O_WRONLY: i32 = 1;
    pub const O_RDWR: i32 = 2;
    pub const O_ACCMODE: i32 = 3;
    pub const O_CREAT: i32 = 0o100;
    pub const O_TRUNC: i32 = 0o1000;
    pub const O_APPEND: i32 = 0o2000;
}

/// The kernel's file_mask_to_av: the permissions a VFS mask asks of an inode of `class`
/// (on a directory, exec is search and append is not asked; elsewhere append replaces write).
pub(crate) fn file_mask_to_av(class: Class, mask: u32) -> u32 {
    let mut av = 0;
    if class == Class::DIR {
        if mask & MAY_EXEC != 0 {
            av |= dir::SEARCH;
        }
        if mask & MAY_WRITE != 0 {
            av |= dir::WRITE;
        }
        if mask & MAY_READ != 0 {
            av |= dir::READ;
        }
        return av;
    }
    if mask & MAY_EXEC != 0 {
        av |= common_file::EXECUTE;
    }
    if mask & MAY_READ != 0 {
        av |= common_file::READ;
    }
    if mask & MAY_APPEND != 0 {
        av |= common_file::APPEND;
    } else if mask & MAY_WRITE != 0 {
        av |= common_file::WRITE;
    }
    av
}

/// The kernel's file_to_av from the open flags: read for a readable file; append (with
/// O_APPEND) or write for a writable one; ioctl for one opened with access mode 3.
pub(crate) fn file_to_av(flags: i32) -> u32 {
    let acc = flags & oflags::O_ACCMODE;
    let (read, write) = match acc {
        oflags::O_RDONLY => (true, false),
        oflags::O_WRONLY => (false, true),
        oflags::O_RDWR => (true, true),
        _ => (false, false),
    };
    let mut av = 0;
    if read {
        av |= common_file::READ;
    }
    if write {
        av |= if flags & oflags::O_APPEND != 0 {
            common_file::APPEND
        } else {
            common_file::WRITE
        };
    }
    if av == 0 {
        av = common_file::IOCTL;
    }
    av
}
