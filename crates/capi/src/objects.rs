//! The kernel's file and exec hooks for the library's own process: setfilecon and its family
//! (selinux_inode_setxattr), a file created under `seaccess run` (may_create, then
//! selinux_inode_init_security's label) and an exec (selinux_bprm_creds_for_exec), each asked
//! of crates/objmgr's hook of that name, the task being this process in the context
//! [`crate::proccon`] gives it, over the process's kernel and cache.
//!
//! A file's label is what the label store holds (crates/label's rule: `security.selinux`, else
//! `user.selinux`), or, with none, what the kernel gives an inode without one (the
//! filesystem's default, file_t on an xattr filesystem). The filesystem is the one
//! /proc/self/mountinfo names for the file's device, labelled by the policy's fs_use and
//! genfscon statements for its type, as the kernel mounts it; a FUSE filesystem is left to its
//! server (`seaccess mount` makes these checks itself, with the caller's context).
//!
//! The records the hooks write go through the log callback: an AVC record as SELINUX_AVC, the
//! kernel's SELINUX_ERR records (an invalid context) as SELINUX_ERROR.

use std::ffi::{CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::Arc;

use once_cell::race::OnceBox;

use seaccess_label::xattr::{self, Attrs, Object};
use seaccess_objmgr::classes::inode_class;
use seaccess_objmgr::hooks::fs::{MountOpts, MAY_EXEC, MAY_WRITE, XATTR_NAME_SELINUX};
use seaccess_objmgr::hooks::process::ExecOpts;
use seaccess_objmgr::{InodeSec, ObjectManager, ObjmgrError, PreparedCred, SuperSec, Task};
use seaccess_types::LabelServer;

use crate::callbacks;
use crate::ffi::{Errno, Res, EINVAL};
use crate::kernel::Kernel;
use crate::state;

/// Whether the cache's records go to the log callback yet. Set racing (two threads may both set
/// the same callback), not under a `Once`, which a child forked while another thread ran it
/// would wait on forever (see [`crate::fork`]).
static AUDIT_TO_LOG: AtomicBool = AtomicBool::new(false);

/// The object manager over the process's kernel: the engine's, made at the first hook (a
/// program that never labels or executes through the library pays nothing for it). Its records
/// go to the log callback: the library's own checks audit in libselinux's format and never
/// through the cache's callback, so only the hooks' records reach it.
fn om(k: &'static Kernel) -> &'static ObjectManager {
    if !AUDIT_TO_LOG.load(Acquire) {
        k.avc.set_audit_callback(|r| {
            let kind = if r.starts_with("avc:") {
                callbacks::SELINUX_AVC
            } else {
                callbacks::SELINUX_ERROR
            };
            callbacks::log(kind, &format!("{}\n", r.trim_end()));
        });
        AUDIT_TO_LOG.store(true, Release);
    }
    k.engine.object_manager_or_new()
}

fn denied(e: ObjmgrError) -> Errno {
    Errno(e.errno())
}

fn io(e: rustix::io::Errno) -> Errno {
    Errno(e.raw_os_error())
}

/// The kernel, or None when SELinux is off (no policy named); a named policy that cannot be
/// loaded refuses (EACCES: fail closed).
fn kernel() -> Res<Option<&'static Kernel>> {
    state::for_check()
}

/// The process as the hooks' task: its context, and its exec and fscreate attributes.
fn task(k: &Kernel) -> Res<Task> {
    let (cur, exec, fscreate) = crate::proccon::task_contexts()?;
    let sid = |c: &str| k.server.context_to_sid(c).map_err(|_| EINVAL);
    let mut p = PreparedCred::new(sid(&cur)?);
    p.exec_sid = exec.as_deref().map(sid).transpose()?;
    p.create_sid = fscreate.as_deref().map(sid).transpose()?;
    let comm = std::fs::read_to_string("/proc/self/comm").unwrap_or_default();
    Ok(Task::new(std::process::id(), comm.trim_end(), p.build()))
}

/// A filesystem as the kernel mounts it, or None for a FUSE filesystem (its server decides).
fn filesystem(om: &ObjectManager, dev: u64) -> Res<Option<Arc<SuperSec>>> {
    let id = format!("{}:{}", libc::major(dev), libc::minor(dev));
    let info = std::fs::read_to_string("/proc/self/mountinfo")
        .map_err(|e| Errno(e.raw_os_error().unwrap_or(libc::EIO)))?;
    // The last mount of the device: the one on top where mounts stack.
    let mut found = None;
    for line in info.lines() {
        let mut f = line.split(' ');
        if f.nth(2) != Some(id.as_str()) {
            continue;
        }
        let mut rest = line.split(" - ").nth(1).unwrap_or("").split(' ');
        let (fstype, source) = (rest.next().unwrap_or(""), rest.next().unwrap_or(""));
        found = Some((
            fstype.to_string(),
            source.rsplit('/').next().unwrap_or(source).to_string(),
        ));
    }
    let (fstype, source) = found.ok_or(Errno(libc::EOPNOTSUPP))?;
    if fstype == "fuse" || fstype.starts_with("fuse.") || fstype == "fuseblk" {
        return Ok(None);
    }
    om.mount(&source, &fstype, &MountOpts::default())
        .map(Some)
        .map_err(denied)
}

/// The inode's blob: the stored label's SID (kept unmapped if the policy lacks it, as
/// security_context_to_sid_force), else what the kernel gives an inode without one.
fn inode(
    om: &ObjectManager,
    k: &Kernel,
    sb: &Arc<SuperSec>,
    st: &rustix::fs::Stat,
    label: Option<&str>,
    path: &str,
) -> InodeSec {
    let mode = st.st_mode;
    match label.and_then(|l| k.server.context_to_sid_force(l).ok()) {
        Some(sid) => InodeSec::new(sb.clone(), st.st_ino, inode_class(mode), Some(sid)),
        None => om.inode_init(sb, st.st_ino, mode, path, None),
    }
}

/// A path's last component, for the records' name=.
fn last(p: &[u8]) -> String {
    let p = p.strip_suffix(b"/").unwrap_or(p);
    String::from_utf8_lossy(p.rsplit(|&b| b == b'/').next().unwrap_or(p)).into_owned()
}

/// What setfilecon labels.
#[derive(Clone, Copy)]
pub(crate) enum Target<'a> {
    /// A path, a final symbolic link followed or not.
    Path(&'a CStr, bool),
    /// An open file.
    Fd(std::os::fd::BorrowedFd<'a>),
}

/// setfilecon's checks (selinux_inode_setxattr for `security.selinux`, through the object
/// manager's hook): the caller's `{relabelfrom}` on the stored label, a value the policy does
/// not define refused (EINVAL and the kernel's `op=setxattr invalid_context=` record), the
/// caller's `{relabelto}` on the new label, validatetrans, and the new label's `filesystem
/// {associate}`; a filesystem that keeps no per-file labels is EOPNOTSUPP. Nothing is
/// checked with SELinux off or on a FUSE filesystem (whose server checks).
pub(crate) fn check_relabel(t: Target, value: &[u8]) -> Res<()> {
    let Some(k) = kernel()? else { return Ok(()) };
    let om = om(k);
    let (st, label, name) = match t {
        Target::Path(p, follow) => {
            let path = Path::new(OsStr::from_bytes(p.to_bytes()));
            let st = if follow {
                rustix::fs::stat(path)
            } else {
                rustix::fs::lstat(path)
            }
            .map_err(io)?;
            let o = if follow {
                Object::Path(path)
            } else {
                Object::Link(path)
            };
            (
                st,
                xattr::read(o, Attrs::Either).ok().flatten(),
                last(p.to_bytes()),
            )
        }
        Target::Fd(fd) => {
            let st = rustix::fs::fstat(fd).map_err(io)?;
            let name = std::fs::read_link(format!(
                "/proc/self/fd/{}",
                std::os::fd::AsRawFd::as_raw_fd(&fd)
            ))
            .map(|l| last(l.as_os_str().as_bytes()))
            .unwrap_or_default();
            (
                st,
                xattr::read(Object::Fd(fd), Attrs::Either).ok().flatten(),
                name,
            )
        }
    };
    let Some(sb) = filesystem(om, st.st_dev)? else {
        return Ok(());
    };
    let text = std::str::from_utf8(value).map_err(|_| EINVAL)?;
    let node = inode(om, k, &sb, &st, label.as_deref(), &name);
    om.inode_setxattr(&task(k)?, &node, &name, XATTR_NAME_SELINUX, text)
        .map_err(denied)
}

/// A path relative to `dirfd` (AT_FDCWD, or a directory descriptor) as one the process can
/// name by itself.
fn at(dirfd: libc::c_int, path: &[u8]) -> Vec<u8> {
    if dirfd == libc::AT_FDCWD || path.starts_with(b"/") {
        return path.to_vec();
    }
    let mut p = format!("/proc/self/fd/{dirfd}/").into_bytes();
    p.extend_from_slice(path);
    p
}

/// Before `path` (relative to `dirfd`) is created with `mode` (its file type and permission
/// bits) by this process: the kernel's create checks (may_create: `dir {write search}` on the
/// parent as inode_permission asks them, `dir {add_name search}`, `{create}` on the new label
/// and its `filesystem {associate}`, each with its record) and the label
/// selinux_inode_init_security gives the new inode (the fscreate context, else the type
/// transition from this process's context on the parent's label with the name). None when
/// nothing is to be labelled: SELinux off, a FUSE filesystem, a filesystem keeping no
/// per-file labels, a parent that cannot be read (the creation then fails by itself), or no
/// fscreate context and a parent without a label (a tree nobody labelled stays unlabelled).
pub(crate) fn create(dirfd: libc::c_int, path: &CStr, mode: u32) -> Res<Option<String>> {
    let p = path.to_bytes();
    let trimmed = {
        let mut t = p;
        while t.len() > 1 && t.ends_with(b"/") {
            t = &t[..t.len() - 1];
        }
        t
    };
    let (parent, name): (&[u8], &[u8]) = match trimmed.iter().rposition(|&b| b == b'/') {
        Some(0) => (b"/", &trimmed[1..]),
        Some(i) => (&trimmed[..i], &trimmed[i + 1..]),
        None => (b".", trimmed),
    };
    let parent = at(dirfd, parent);
    let parent = Path::new(OsStr::from_bytes(&parent));
    let fscreate = crate::proccon::fscreate_set();
    let label = match xattr::read(Object::Path(parent), Attrs::Either) {
        Ok(l) => l,
        Err(_) => return Ok(None),
    };
    if !fscreate && label.is_none() {
        return Ok(None);
    }
    let Some(k) = kernel()? else { return Ok(None) };
    let om = om(k);
    let Ok(st) = rustix::fs::stat(parent) else {
        return Ok(None);
    };
    if st.st_mode & libc::S_IFMT != libc::S_IFDIR {
        return Ok(None);
    }
    let Some(sb) = filesystem(om, st.st_dev)? else {
        return Ok(None);
    };
    let name = String::from_utf8_lossy(name).into_owned();
    let dir = inode(
        om,
        k,
        &sb,
        &st,
        label.as_deref(),
        &last(parent.as_os_str().as_bytes()),
    );
    let t = task(k)?;
    om.inode_permission(&t, &dir, MAY_WRITE | MAY_EXEC, Some(&name))
        .map_err(denied)?;
    let sid = om.inode_create(&t, &dir, &name, mode).map_err(denied)?;
    if !sb.sblabel {
        return Ok(None);
    }
    om.context_of(sid).map(Some).map_err(denied)
}

/// Writes `con` as the label of what was just created: the open file `fd` if it is one
/// (>= 0), else `path` relative to `dirfd`, a final symbolic link labelled itself. No check:
/// [`create`] made them, as the kernel labels a new inode without relabel checks.
pub(crate) fn label_new(
    fd: libc::c_int,
    dirfd: libc::c_int,
    path: Option<&CStr>,
    con: &str,
) -> Res<()> {
    let r = if fd >= 0 {
        // SAFETY: the interposer's descriptor of the file it just created, open for the call.
        let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
        xattr::write(Object::Fd(fd), con.as_bytes(), Attrs::Either)
    } else {
        let p = at(dirfd, path.ok_or(EINVAL)?.to_bytes());
        xattr::write(
            Object::Link(Path::new(OsStr::from_bytes(&p))),
            con.as_bytes(),
            Attrs::Either,
        )
    };
    r.map(|_| ()).map_err(io)
}

/// Opened racing (two threads asking at once each open one, the second dropped), never waited
/// for: an open takes milliseconds, and a child forked meanwhile would wait forever (see
/// [`crate::fork`]).
static FILE_CONTEXTS: OnceBox<Option<seaccess_label::FileContexts>> = OnceBox::new();

/// The label file_contexts gives the file at `path` (resolved), for an executable with no
/// stored label: off an SELinux system nothing labelled /usr/bin, and on one it would carry
/// this label (the subjects file's `transition` rule reads it the same way).
fn file_contexts_label(path: &Path) -> Option<String> {
    let fc = FILE_CONTEXTS.get_or_init(|| {
        Box::new(
            seaccess_label::FileContexts::open(Path::new(&crate::paths::under_root(
                "/contexts/files/file_contexts",
            )))
            .ok(),
        )
    });
    let real = std::fs::canonicalize(path).ok()?;
    fc.as_ref()?
        .context(real.as_os_str().as_bytes(), seaccess_label::FileKind::File)
        .ok()
        .flatten()
        .map(str::to_string)
}

/// Before this process executes `path`: the kernel's checks (inode_permission's `{execute}`,
/// then selinux_bprm_creds_for_exec: the exec context if setexeccon asked for one, else the
/// policy's type transition on the file's label; `{execute_no_trans}` without a change, else
/// `process {transition}`, `file {entrypoint}`, and the no_new_privs/nosuid rules) and the
/// context the program then runs in, with this process's. None with SELinux off or a file that
/// cannot be reached (the exec then fails by itself). The flag says whether the kernel would
/// run the program in secure mode (AT_SECURE: a change of context `process {noatsecure}` does
/// not allow).
pub(crate) fn exec(path: &CStr) -> Res<Option<(String, String, bool)>> {
    let Some(k) = kernel()? else { return Ok(None) };
    let om = om(k);
    let p = Path::new(OsStr::from_bytes(path.to_bytes()));
    let Ok(st) = rustix::fs::stat(p) else {
        return Ok(None);
    };
    let sb = match filesystem(om, st.st_dev)? {
        Some(sb) => sb,
        // A file on a FUSE filesystem: labelled as that filesystem reports, the filesystem
        // itself as fs_use/genfscon give "fuse".
        None => om
            .mount("fuse", "fuse", &MountOpts::default())
            .map_err(denied)?,
    };
    let label = xattr::read(Object::Path(p), Attrs::Either)
        .ok()
        .flatten()
        .or_else(|| file_contexts_label(p));
    let name = last(path.to_bytes());
    let node = inode(om, k, &sb, &st, label.as_deref(), &name);
    let t = task(k)?;
    om.inode_permission(&t, &node, MAY_EXEC, Some(&name))
        .map_err(denied)?;
    // SAFETY: prctl(PR_GET_NO_NEW_PRIVS) takes no pointer and only reads the thread's flag.
    let nnp = unsafe { libc::prctl(libc::PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) } == 1;
    let nosuid = rustix::fs::statvfs(p)
        .map(|v| v.f_flag.contains(rustix::fs::StatVfsMountFlags::NOSUID))
        .unwrap_or(false);
    let opts = ExecOpts {
        nnp,
        nosuid,
        ..ExecOpts::default()
    };
    let creds = om
        .bprm_creds_for_exec(&t, &node, &String::from_utf8_lossy(path.to_bytes()), &opts)
        .map_err(denied)?;
    let new = om.context_of(creds.cred.sid()).map_err(denied)?;
    let old = om.context_of(t.sid()).map_err(denied)?;
    Ok(Some((new, old, creds.secureexec)))
}
