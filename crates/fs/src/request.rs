//! What a request is and holds, shared by the core and the modules it calls (the caller
//! table, the locks, the subject lookup): declared here, below all of them, so that none of
//! those modules names the core back.

use std::sync::{Arc, Mutex};

use seaccess_label::FileContexts;
use seaccess_objmgr::FileSec;
use seaccess_types::Sid;

use crate::nodes::Node;
use crate::subjects::Subjects;

/// Who makes a request: the calling thread and its filesystem user and group ids, as FUSE
/// gives them.
#[derive(Debug, Clone, Copy)]
pub struct Req {
    pub pid: u32,
    pub uid: u32,
    pub gid: u32,
}

/// An open file or directory of the mount.
pub struct Handle {
    pub node: Arc<Node>,
    /// The open's blob (none on a mount without checks).
    pub fsec: Option<FileSec>,
    pub file: std::fs::File,
    /// Its path as the caller opened it, for audit records (the kernel's f_path).
    pub shown: String,
    /// A directory's entries, read at the first readdir.
    pub entries: Mutex<Option<Vec<DirEntry>>>,
}

/// A directory entry as readdir gives it (its mode is its file type bits).
#[derive(Debug, Clone)]
pub struct DirEntry {
    pub ino: u64,
    pub mode: u32,
    pub name: std::ffi::OsString,
}

/// What labels subjects and objects, swapped whole on a reload.
pub struct Labels {
    pub file_contexts: Option<Arc<FileContexts>>,
    pub subjects: Option<Subjects>,
    /// Every caller's SID without a subjects file.
    pub default_sid: Sid,
    /// Whether a subjects rule reads the executable (`exe=`, `transition`): then callers are
    /// looked up after the process events (an exec changes what they read). Read once here, not
    /// at each request.
    pub reads_exe: bool,
}

/// Entries in all of the caller table ([`crate::callers`]): a thread id space's worth of
/// threads on most systems (pid_max is 32768 unless raised); about 200 bytes each.
pub const MAX_ENTRIES: usize = 65_536;
/// Entries one uid may hold in the caller table, and publish in the fscreate table
/// ([`crate::published`]): a quarter, so that a user with many threads cannot take the cache
/// from the others (its threads beyond it are computed at each request).
pub const MAX_PER_UID: usize = MAX_ENTRIES / 4;
