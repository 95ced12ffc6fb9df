//! The selinuxfs a `seaccess run` session's programs see (mounted over /sys/fs/selinux in the
//! session's mount namespace): the files libselinux's programs read and write, served from
//! the session's state (crate::session_state) with selinuxfs.c's modes, formats and checks.
//! `sestatus`, `avcstat`, `getenforce`, `cat /sys/fs/selinux/booleans/NAME` and `echo 0 >
//! /sys/fs/selinux/enforce` work on it as on a kernel's.
//!
//! Served: enforce, policyvers, mls, deny_unknown, reject_unknown, checkreqprot, status (the
//! first 20 bytes of the session's page: struct selinux_status_t; read, not mapped: FUSE files
//! are not shared mappings of the server's memory, so libselinux's mapping of it fails and it
//! falls back, as libseaccess reads the session's page file itself), load, policy,
//! commit_pending_bools, booleans/NAME, avc/cache_stats. Not served: access, context, create,
//! member, relabel, user, class/, initial_contexts/, policy_capabilities/ (libseaccess
//! answers those calls itself).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo, LockOwner,
    OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyWrite,
    Request, TimeOrNow, WriteFlags,
};

use seaccess_types::lock;

use crate::session_state::{libc_errno, SessionState};

const TTL: Duration = Duration::ZERO;
const ROOT: u64 = 1;
const BOOLEANS: u64 = 12;
const AVC: u64 = 13;
const CACHE_STATS: u64 = 14;
/// booleans/NAME is this plus NAME's index in the sorted names.
const BOOL_BASE: u64 = 1000;
/// The largest policy image `load` takes (selinuxfs.c: 64 MiB).
const MAX_LOAD: usize = 64 << 20;

/// (inode, name, mode) of the root's files, selinuxfs.c's sel_fill_super table.
const FILES: &[(u64, &str, u16)] = &[
    (2, "enforce", 0o644),
    (3, "policyvers", 0o444),
    (4, "mls", 0o444),
    (5, "deny_unknown", 0o444),
    (6, "reject_unknown", 0o444),
    (7, "status", 0o444),
    (8, "load", 0o600),
    (9, "commit_pending_bools", 0o200),
    (10, "checkreqprot", 0o644),
    (11, "policy", 0o400),
];

/// The view.
pub(crate) struct View {
    st: Arc<SessionState>,
    next: AtomicU64,
    /// A policy image being written to `load`, by open file.
    loads: Mutex<HashMap<u64, Vec<u8>>>,
    uid: u32,
    gid: u32,
}

impl View {
    pub(crate) fn new(st: Arc<SessionState>, uid: u32, gid: u32) -> View {
        View {
            st,
            next: AtomicU64::new(1),
            loads: Mutex::new(HashMap::new()),
            uid,
            gid,
        }
    }

    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let (kind, perm) = match ino {
            ROOT | BOOLEANS | AVC => (FileType::Directory, 0o555),
            CACHE_STATS => (FileType::RegularFile, 0o444),
            i if i >= BOOL_BASE && ((i - BOOL_BASE) as usize) < self.st.boolean_names().len() => {
                (FileType::RegularFile, 0o644)
            }
            i => (FileType::RegularFile, FILES.iter().find(|f| f.0 == i)?.2),
        };
        let now = SystemTime::now();
        Some(FileAttr {
            ino: INodeNo(ino),
            size: 0,
            blocks: 0,
            atime: now,
            mtime: now,
            ctime: now,
            crtime: now,
            kind,
            perm,
            nlink: if kind == FileType::Directory { 2 } else { 1 },
            uid: self.uid,
            gid: self.gid,
            rdev: 0,
            blksize: 4096,
            flags: 0,
        })
    }

    /// What a read of `ino` gives.
    fn content(&self, ino: u64) -> Result<Vec<u8>, i32> {
        let (mls, deny, reject) = self.st.facts();
        let text = match ino {
            2 => format!("{}", u8::from(self.st.enforcing())),
            3 => format!("{}", seaccess_policy::VERSION_MAX),
            4 => format!("{}", u8::from(mls)),
            5 => format!("{}", u8::from(deny)),
            6 => format!("{}", u8::from(reject)),
            7 => return Ok(self.st.status_bytes()),
            10 => "0".into(),
            11 => return Ok(self.st.policy_image()),
            CACHE_STATS => self.st.cache_stats(),
            i if i >= BOOL_BASE => {
                let (a, p) = self
                    .st
                    .boolean((i - BOOL_BASE) as usize)
                    .ok_or(libc_errno::EINVAL)?;
                format!("{} {}", u8::from(a), u8::from(p))
            }
            // load and commit_pending_bools are write-only (selinuxfs answers EINVAL).
            _ => return Err(libc_errno::EINVAL),
        };
        Ok(text.into_bytes())
    }

    /// A write of `data` at `offset` to `ino` by process `pid`.
    fn store(&self, pid: u32, ino: u64, fh: u64, offset: u64, data: &[u8]) -> Result<usize, i32> {
        if ino == 8 {
            let mut loads = lock(&self.loads);
            let buf = loads.entry(fh).or_default();
            // The image comes in pieces (the FUSE connection's max_write), in order.
            if offset != buf.len() as u64 || buf.len() + data.len() > MAX_LOAD {
                return Err(libc_errno::EINVAL);
            }
            buf.extend_from_slice(data);
            return Ok(data.len());
        }
        // selinuxfs: a write past the start is EINVAL (no partial writes), as is a page or more.
        if offset != 0 || data.len() >= 4096 {
            return Err(libc_errno::EINVAL);
        }
        let v = parse_int(data).ok_or(libc_errno::EINVAL)?;
        match ino {
            2 => self.st.set_enforcing(pid, v != 0)?,
            9 => {
                if v != 0 {
                    self.st.commit(pid)?;
                } else {
                    self.st.check_setbool(pid)?;
                }
            }
            i if i >= BOOL_BASE => self.st.set_pending(pid, (i - BOOL_BASE) as usize, v != 0)?,
            // checkreqprot cannot be set on kernels since 6.4; the others are read-only.
            _ => return Err(libc_errno::EINVAL),
        }
        Ok(data.len())
    }

    /// The image written to `load` through `fh`, loaded (sel_write_load's work, done once the
    /// writer flushes or syncs: the image arrived in pieces).
    fn finish_load(&self, pid: u32, fh: u64) -> Result<(), i32> {
        let Some(data) = lock(&self.loads).remove(&fh) else {
            return Ok(());
        };
        if data.is_empty() {
            return Ok(());
        }
        self.st.load(pid, &data)
    }
}

/// sscanf("%d"): leading white space, a sign, digits; nothing else matters after them.
fn parse_int(data: &[u8]) -> Option<i32> {
    let s = std::str::from_utf8(data).ok()?.trim_start();
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
        .map_or(s.len(), |(i, _)| i);
    s[..end].parse().ok()
}

fn err(e: i32) -> Errno {
    Errno::from_i32(e)
}

impl Filesystem for View {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let name = name.to_string_lossy();
        let ino = match parent.0 {
            ROOT => match &*name {
                "booleans" => Some(BOOLEANS),
                "avc" => Some(AVC),
                n => FILES.iter().find(|f| f.1 == n).map(|f| f.0),
            },
            AVC if name == "cache_stats" => Some(CACHE_STATS),
            BOOLEANS => self
                .st
                .boolean_names()
                .binary_search_by(|b| b.as_str().cmp(&name))
                .ok()
                .map(|k| BOOL_BASE + k as u64),
            _ => None,
        };
        match ino.and_then(|i| self.attr(i)) {
            Some(a) => reply.entry(&TTL, &a, Generation(0)),
            None => reply.error(err(2)),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.attr(ino.0) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(err(2)),
        }
    }

    /// Only a truncation (a shell's `>`), which changes nothing.
    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        _size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        if mode.is_some() || uid.is_some() || gid.is_some() {
            return reply.error(err(1));
        }
        match self.attr(ino.0) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(err(2)),
        }
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        if self.attr(ino.0).is_none() {
            return reply.error(err(2));
        }
        reply.opened(
            FileHandle(self.next.fetch_add(1, Relaxed)),
            FopenFlags::FOPEN_DIRECT_IO,
        );
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.content(ino.0) {
            Ok(v) => {
                let start = (offset as usize).min(v.len());
                let end = start.saturating_add(size as usize).min(v.len());
                reply.data(&v[start..end]);
            }
            Err(e) => reply.error(err(e)),
        }
    }

    fn write(
        &self,
        req: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match self.store(req.pid(), ino.0, fh.0, offset, data) {
            Ok(n) => reply.written(n as u32),
            Err(e) => reply.error(err(e)),
        }
    }

    fn flush(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        match self.finish_load(req.pid(), fh.0) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(err(e)),
        }
    }

    fn fsync(
        &self,
        req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        match self.finish_load(req.pid(), fh.0) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(err(e)),
        }
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        lock(&self.loads).remove(&fh.0);
        reply.ok();
    }

    /// `system.seaccess.current` on the root: libseaccess's setcon publishing the calling
    /// process's new context (crate::session_state::SessionState::setcon checks and keeps it).
    /// selinuxfs has no other attribute to set.
    fn setxattr(
        &self,
        req: &Request,
        ino: INodeNo,
        name: &OsStr,
        value: &[u8],
        _flags: i32,
        _position: u32,
        reply: ReplyEmpty,
    ) {
        if ino.0 != ROOT || name != crate::session_state::CURRENT_XATTR {
            return reply.error(err(libc_errno::EOPNOTSUPP));
        }
        match self.st.setcon(req.pid(), req.uid(), value) {
            Ok(()) => reply.ok(),
            Err(e) => reply.error(err(e)),
        }
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match ino.0 {
            ROOT | BOOLEANS | AVC => reply.opened(FileHandle(0), FopenFlags::empty()),
            _ => reply.error(err(20)),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let mut entries: Vec<(u64, FileType, String)> = vec![
            (ino.0, FileType::Directory, ".".into()),
            (ROOT, FileType::Directory, "..".into()),
        ];
        match ino.0 {
            ROOT => {
                entries.extend(
                    FILES
                        .iter()
                        .map(|f| (f.0, FileType::RegularFile, f.1.to_string())),
                );
                entries.push((BOOLEANS, FileType::Directory, "booleans".into()));
                entries.push((AVC, FileType::Directory, "avc".into()));
            }
            BOOLEANS => entries.extend(
                self.st
                    .boolean_names()
                    .into_iter()
                    .enumerate()
                    .map(|(k, n)| (BOOL_BASE + k as u64, FileType::RegularFile, n)),
            ),
            AVC => entries.push((CACHE_STATS, FileType::RegularFile, "cache_stats".into())),
            _ => return reply.error(err(20)),
        }
        for (k, (i, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(i), (k + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok();
    }
}

#[cfg(test)]
mod tests {
    use super::parse_int;

    #[test]
    fn values_parse_as_sscanf_d() {
        assert_eq!(parse_int(b"1\n"), Some(1));
        assert_eq!(parse_int(b"  0"), Some(0));
        assert_eq!(parse_int(b"-3x"), Some(-3));
        assert_eq!(parse_int(b"on"), None);
        assert_eq!(parse_int(b""), None);
    }
}
