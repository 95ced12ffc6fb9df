//! Where a file's label is kept: the `security.selinux` extended attribute, as on an SELinux
//! system, or `user.selinux` where the security namespace is refused (no privilege for it, or a
//! file system that keeps no such attribute). One rule for reading and one for writing, shared
//! by `seaccess label --apply`, the mount and libseaccess's getfilecon/setfilecon family, so
//! that what one writes the others read.

use std::ffi::CStr;
use std::os::fd::BorrowedFd;
use std::path::Path;

use rustix::io::Errno;
use rustix::path::Arg;

/// The attribute an SELinux kernel keeps labels in.
pub const SECURITY: &str = "security.selinux";
/// Where labels are kept where `security.selinux` is refused.
pub const USER: &str = "user.selinux";
/// Where `seaccess mount` keeps labels on a kernel without SELinux: only a process with
/// CAP_SYS_ADMIN can write it, where any file owner can write the other two.
pub const TRUSTED: &str = "trusted.selinux";

/// The file a label is read from or written to.
#[derive(Clone, Copy, Debug)]
pub enum Object<'a> {
    /// A path, its final symbolic link followed (getfilecon, setfilecon).
    Path(&'a Path),
    /// A path, a final symbolic link labelled itself (lgetfilecon, lsetfilecon).
    Link(&'a Path),
    /// An open file (fgetfilecon, fsetfilecon).
    Fd(BorrowedFd<'a>),
    /// One name in a directory held open, a symbolic link there labelled itself: nothing on
    /// the way is resolved by path, so a component swapped for a link cannot lead elsewhere
    /// (getxattrat/setxattrat, or `/proc/self/fd/DIR/NAME` before Linux 6.13). `name` is
    /// one component: no `/`.
    At(BorrowedFd<'a>, &'a CStr),
}

/// Which attributes to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attrs {
    /// `security.selinux`, else `user.selinux`.
    Either,
    /// Only the one named.
    Only(&'static str),
}

/// Values longer than this are refused (a context is a few hundred bytes at most).
const MAX_VALUE: usize = 1 << 20;

fn get(o: Object<'_>, name: &str) -> Result<Vec<u8>, Errno> {
    let mut buf = vec![0u8; 256];
    loop {
        let r = match o {
            Object::Path(p) => rustix::fs::getxattr(p, name, &mut buf[..]),
            Object::Link(p) => rustix::fs::lgetxattr(p, name, &mut buf[..]),
            Object::Fd(fd) => rustix::fs::fgetxattr(fd, name, &mut buf[..]),
            Object::At(dir, entry) => {
                name.into_with_c_str(|n| crate::xattrat::get(dir, entry, n, &mut buf[..]))
            }
        };
        match r {
            Ok(n) => {
                buf.truncate(n);
                return Ok(buf);
            }
            Err(Errno::RANGE) if buf.len() < MAX_VALUE => buf.resize(buf.len() * 4, 0),
            Err(e) => return Err(e),
        }
    }
}

fn set(o: Object<'_>, name: &str, value: &[u8]) -> Result<(), Errno> {
    let f = rustix::fs::XattrFlags::empty();
    match o {
        Object::Path(p) => rustix::fs::setxattr(p, name, value, f),
        Object::Link(p) => rustix::fs::lsetxattr(p, name, value, f),
        Object::Fd(fd) => rustix::fs::fsetxattr(fd, name, value, f),
        Object::At(dir, entry) => {
            name.into_with_c_str(|n| crate::xattrat::set(dir, entry, n, value))
        }
    }
}

/// The object has no such attribute (ENODATA), or its file system keeps none (ENOTSUP).
fn absent(e: Errno) -> bool {
    e == Errno::NODATA || e == Errno::NOTSUP
}

/// The stored value, as written (a NUL included), and the attribute holding it. When neither
/// attribute holds one, the error of reading `security.selinux` (ENODATA, or ENOTSUP on a file
/// system without it), which is what libselinux's getfilecon reports.
pub fn read_raw(o: Object<'_>, attrs: Attrs) -> Result<(Vec<u8>, &'static str), Errno> {
    match attrs {
        Attrs::Only(name) => get(o, name).map(|v| (v, name)),
        Attrs::Either => match get(o, SECURITY) {
            Ok(v) => Ok((v, SECURITY)),
            Err(e) if absent(e) => match get(o, USER) {
                Ok(v) => Ok((v, USER)),
                Err(e2) if absent(e2) => Err(e),
                Err(e2) => Err(e2),
            },
            Err(e) => Err(e),
        },
    }
}

/// The label as text, without the NUL it is stored with; None when no attribute holds one. A
/// value that is not UTF-8 is an error (InvalidData), never a guess.
pub fn read(o: Object<'_>, attrs: Attrs) -> std::io::Result<Option<String>> {
    match read_raw(o, attrs) {
        Ok((mut v, _)) => {
            while v.last() == Some(&0) {
                v.pop();
            }
            String::from_utf8(v).map(Some).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, "the label is not UTF-8")
            })
        }
        Err(e) if absent(e) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Writes `context` with a NUL after it, as libselinux's setfilecon does: to
/// `security.selinux`, or to `user.selinux` where that is refused (EPERM, EACCES: no privilege
/// for the security namespace; ENOTSUP: not kept there); or only to the attribute asked for.
/// The attribute written; when both are refused, the error of `security.selinux`.
pub fn write(o: Object<'_>, context: &[u8], attrs: Attrs) -> Result<&'static str, Errno> {
    let mut v = Vec::with_capacity(context.len() + 1);
    v.extend_from_slice(context);
    v.push(0);
    match attrs {
        Attrs::Only(name) => set(o, name, &v).map(|()| name),
        Attrs::Either => match set(o, SECURITY, &v) {
            Ok(()) => Ok(SECURITY),
            Err(e) if e == Errno::PERM || e == Errno::ACCESS || e == Errno::NOTSUP => {
                set(o, USER, &v).map(|()| USER).map_err(|_| e)
            }
            Err(e) => Err(e),
        },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!(
            "seaccess-label-xattr-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&d);
        std::fs::write(&d, b"x").unwrap();
        d
    }

    // What is written is read back, with its NUL stored as libselinux stores it; `user.selinux`
    // alone is read when `security.selinux` is absent; `security.selinux` wins when both are
    // there; a file with neither has no label (ENODATA from read_raw). Skipped where the
    // file system keeps no user attributes (tmpfs without them).
    #[test]
    fn what_is_written_is_read_back() {
        let f = scratch("rw");
        let o = Object::Path(&f);
        if let Err(e) = rustix::fs::setxattr(&f, USER, b"probe", rustix::fs::XattrFlags::empty()) {
            eprintln!(
                "SKIP what_is_written_is_read_back: {} keeps no user attributes ({e})",
                f.display()
            );
            return;
        }
        rustix::fs::removexattr(&f, USER).unwrap();
        assert_eq!(read(o, Attrs::Either).unwrap(), None);
        assert_eq!(read_raw(o, Attrs::Either).map(|_| ()), Err(Errno::NODATA));
        let used = write(o, b"u:object_r:a_t:s0", Attrs::Only(USER)).unwrap();
        assert_eq!(used, USER);
        assert_eq!(
            read_raw(o, Attrs::Either).unwrap(),
            (b"u:object_r:a_t:s0\0".to_vec(), USER)
        );
        assert_eq!(
            read(o, Attrs::Either).unwrap().as_deref(),
            Some("u:object_r:a_t:s0")
        );
        if write(o, b"u:object_r:b_t:s0", Attrs::Only(SECURITY)).is_ok() {
            assert_eq!(
                read(o, Attrs::Either).unwrap().as_deref(),
                Some("u:object_r:b_t:s0")
            );
            assert_eq!(
                read(o, Attrs::Only(USER)).unwrap().as_deref(),
                Some("u:object_r:a_t:s0")
            );
        }
        rustix::fs::setxattr(&f, USER, b"\xff\xfe", rustix::fs::XattrFlags::empty()).unwrap();
        assert_eq!(
            read(o, Attrs::Only(USER)).map_err(|e| e.kind()),
            Err(std::io::ErrorKind::InvalidData)
        );
        std::fs::remove_file(&f).unwrap();
    }
}
