//! The calling thread's fscreate context, told to every `seaccess mount` the process can
//! reach, so that files the thread creates there get it as a kernel would give them (the
//! mount's side, and why the channel cannot be forged: crates/fs/src/published.rs).
//!
//! A kernel keeps the context in the thread's credential and every file system sees it; here
//! each mount is told by a setxattr of `system.seaccess.fscreate` on its root (the context,
//! or empty to clear), which the kernel hands to the mount as a request of this very thread.
//! The mount checks it as the kernel's selinux_setprocattr does; its refusal (EACCES,
//! EINVAL) is setfscreatecon's, and what was already told to other mounts is taken back, so
//! that no mount keeps a context the call did not set. Mounts are found in
//! /proc/self/mountinfo (file system type `fuse.seaccess`) at each call: a mount made after
//! the call was not told (files the thread creates there get the policy's label). A mount
//! is one of type `fuse` named `seaccess` with user_id=0 (a user's own FUSE server, which
//! could take the name, is mounted with its own uid and is never told).
//!
//! sockcreate is not published: the mount never creates a socket object (a socket file bound
//! on the mount is a file, labelled with the fscreate context, as on a kernel).

use std::cell::RefCell;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::ffi::{Errno, Res};

/// The attribute the mount takes as the calling thread's fscreate context.
const FSCREATE_XATTR: &str = "system.seaccess.fscreate";
/// The attribute the session's selinuxfs view takes as the calling process's context.
const CURRENT_XATTR: &str = "system.seaccess.current";

/// setcon's new context `ctx`, already checked here, told to the session (a process of a
/// `seaccess run` session; nothing to tell otherwise): the supervisor checks it again against
/// what it believes this process is (the kernel's selinux_lsm_setattr: `{setcurrent}`,
/// `{dyntransition}`) and checks this process's later selinuxfs writes as `ctx`
/// (crates/cli/src/session_state/procs.rs). Its refusal is setcon's: the process keeps its
/// context rather than be one thing here and another to the session.
pub(crate) fn current(ctx: &str) -> Res<()> {
    let Some(root) = crate::session::selinuxfs() else {
        return Ok(());
    };
    rustix::fs::setxattr(
        root,
        CURRENT_XATTR,
        ctx.as_bytes(),
        rustix::fs::XattrFlags::empty(),
    )
    .map_err(|e| {
        if e != rustix::io::Errno::ACCESS && e != rustix::io::Errno::INVAL {
            crate::callbacks::log(crate::callbacks::SELINUX_ERROR, &format!("seaccess: setcon: the session's selinuxfs view at {} did not take the context: {e}\n", root.display()));
        }
        Errno(e.raw_os_error())
    })
}

/// Whether a thread of this program told a mount a context (a fork copies it with the
/// memory, as the mount copies the context to the child; an exec starts with false, as the
/// kernel clears the context at exec). Until then clearing tells nobody: nothing was set,
/// as libselinux skips writing an attribute it knows unset.
static EVER: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// What this thread last told the mounts: what a refused change puts back.
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Called when attribute `name` (a /proc/self/attr file name) is set to `ctx` (None clears),
/// already checked as a context of the policy: tells the mounts when it is fscreate.
pub(crate) fn attr(name: &str, ctx: Option<&str>) -> Res<()> {
    if name != "fscreate" || (ctx.is_none() && !EVER.load(Ordering::Relaxed)) {
        return Ok(());
    }
    let mounts = seaccess_mounts();
    let value = ctx.unwrap_or("");
    for (i, m) in mounts.iter().enumerate() {
        if let Err(e) = tell(m, value) {
            // Put back what the mounts told before this one had.
            let old = LAST.with(|l| l.borrow().clone());
            for done in mounts.iter().take(i) {
                let _ = tell(done, old.as_deref().unwrap_or(""));
            }
            if e.0 != libc::EACCES && e.0 != libc::EINVAL {
                crate::callbacks::log(crate::callbacks::SELINUX_ERROR, &format!("seaccess: setfscreatecon: the seaccess mount at {} did not take the context: {}\n", m.point, std::io::Error::from_raw_os_error(e.0)));
            }
            return Err(e);
        }
    }
    if ctx.is_some() {
        EVER.store(true, Ordering::Relaxed);
    }
    LAST.with(|l| *l.borrow_mut() = ctx.map(str::to_string));
    Ok(())
}

/// A seaccess mount: its mount id and mount point (as this process names it).
struct Mount {
    id: u64,
    point: String,
}

/// Tells mount `m` the context `value` (empty: none). A mount this process cannot reach, one
/// hidden under another mount, or one whose server is gone is skipped: nothing can be created
/// there through that path. Any other failure is the mount's answer.
fn tell(m: &Mount, value: &str) -> Res<()> {
    use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags};
    let Ok(fd) = rustix::fs::open(
        m.point.as_str(),
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return Ok(());
    };
    // DONT_SYNC: the mount id is the VFS's; no request (and no check) reaches the mount.
    match rustix::fs::statx(
        fd.as_fd(),
        "",
        AtFlags::EMPTY_PATH | AtFlags::STATX_DONT_SYNC,
        StatxFlags::MNT_ID,
    ) {
        Ok(st) if st.stx_mnt_id == m.id => {}
        _ => return Ok(()),
    }
    let path = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd));
    match rustix::fs::setxattr(
        path.as_str(),
        FSCREATE_XATTR,
        value.as_bytes(),
        rustix::fs::XattrFlags::empty(),
    ) {
        Ok(()) => Ok(()),
        Err(rustix::io::Errno::NOTCONN) => Ok(()),
        Err(e) => Err(Errno(e.raw_os_error())),
    }
}

/// The seaccess mounts in /proc/self/mountinfo (none if it cannot be read).
fn seaccess_mounts() -> Vec<Mount> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .map(|t| parse_mountinfo(&t))
        .unwrap_or_default()
}

/// The seaccess mounts of a mountinfo text (`ID PARENT MAJ:MIN ROOT POINT OPTS [OPTIONAL...] -
/// FSTYPE SOURCE SUPEROPTS`, the mount point octal-escaped): FUSE mounts named `seaccess`,
/// made by root.
fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|l| {
            let (head, tail) = l.split_once(" - ")?;
            let mut t = tail.split(' ');
            let (fstype, source, opts) = (t.next()?, t.next()?, t.next()?);
            // Mounted by root: a user's own FUSE server may call itself seaccess too.
            if !matches!(fstype, "fuse" | "fuse.seaccess")
                || source != "seaccess"
                || !opts.split(',').any(|o| o == "user_id=0")
            {
                return None;
            }
            let f: Vec<&str> = head.split(' ').collect();
            Some(Mount {
                id: f.first()?.parse().ok()?,
                point: unescape(f.get(4)?),
            })
        })
        .collect()
}

/// A mountinfo field with its `\ooo` escapes (space, tab, newline, backslash) decoded.
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let oct = b
            .get(i + 1..i + 4)
            .filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match oct {
            Some(d) => {
                out.push(
                    d.iter()
                        .fold(0u8, |v, c| v.wrapping_mul(8).wrapping_add(c - b'0')),
                );
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_of_seaccess_mounts_are_found_with_their_escapes() {
        let text = "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n\
                    90 22 0:55 / /tmp/a\\040b rw,nosuid,nodev,relatime shared:50 - fuse seaccess rw,user_id=0,group_id=0,default_permissions,allow_other\n\
                    91 22 0:56 / /mnt/other rw - fuse.sshfs host: rw,user_id=0\n\
                    92 22 0:57 / /home/eve/m rw - fuse seaccess rw,user_id=1000,group_id=1000\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].id, m[0].point.as_str()), (90, "/tmp/a b"));
    }
}
