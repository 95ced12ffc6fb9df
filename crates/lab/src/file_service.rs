//! A small file service guarded by the object manager's hooks: a real directory, real system
//! calls, and before each system call the hooks the kernel's SELinux module would run for it,
//! in the kernel's order. It is the example of how an object manager uses `seaccess-objmgr`
//! (crates/lab/examples/file_service.rs runs it on Debian's default policy).
//!
//! Labels are kept in memory, as if the tree were on an ext4 filesystem whose files carry them
//! in `security.selinux` (the policy's fs_use_xattr), from a list of path prefixes and contexts
//! given at start-up: a stand-in for file_contexts labeling, which comes later. The DAC checks
//! the VFS makes before each SELinux hook (owner, mode bits) are left to the real system calls.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use seaccess_objmgr::hooks::fs::{oflags, MountOpts, MAY_APPEND, MAY_EXEC, MAY_READ, MAY_WRITE};
use seaccess_objmgr::hooks::process::exec::ExecOpts;
use seaccess_objmgr::{InodeSec, ObjectManager, ObjmgrError, SuperSec, Task};
use seaccess_security::SecurityServer;
use seaccess_types::lock;

use crate::LabError;

mod names;

/// The example's tree and labels (crates/lab/examples/file_service.rs and its test): a web
/// server's content, /etc with a shadow file, and a user's home.
pub const DEMO_LABELS: &[(&str, &str)] = &[
    ("", "system_u:object_r:root_t:s0"),
    ("www", "system_u:object_r:httpd_sys_content_t:s0"),
    ("etc", "system_u:object_r:etc_t:s0"),
    ("etc/shadow", "system_u:object_r:shadow_t:s0"),
    ("home", "system_u:object_r:home_root_t:s0"),
    ("home/alice", "unconfined_u:object_r:user_home_dir_t:s0"),
    (
        "home/alice/notes.txt",
        "unconfined_u:object_r:user_home_t:s0",
    ),
];

/// Writes the example's tree under `dir` (see [`DEMO_LABELS`]).
pub fn write_demo_tree(dir: &Path) -> std::io::Result<()> {
    for d in ["www", "etc", "home/alice"] {
        std::fs::create_dir_all(dir.join(d))?;
    }
    std::fs::write(dir.join("www/index.html"), "<h1>hello</h1>\n")?;
    std::fs::write(dir.join("etc/shadow"), "root:*:19000:0:99999:7:::\n")?;
    std::fs::write(dir.join("home/alice/notes.txt"), "alice's notes\n")
}

/// The file service: a directory tree, its inodes' blobs, and the object manager guarding it.
pub struct FileService {
    root: PathBuf,
    server: Arc<SecurityServer>,
    om: Arc<ObjectManager>,
    sb: Arc<SuperSec>,
    /// Each inode's blob, by its path relative to the root ("" for the root).
    inodes: Mutex<HashMap<String, Arc<InodeSec>>>,
}

fn io(path: &Path, e: std::io::Error) -> LabError {
    LabError::Io {
        path: path.to_path_buf(),
        what: e.to_string(),
    }
}

fn refused(what: &str, e: ObjmgrError) -> LabError {
    LabError::Refused {
        what: format!("{what}: {e}"),
        errno: e.errno(),
    }
}

/// The name the kernel gives the filesystem holding `path` in audit records (`dev=`, its
/// s_id): the last component of the mount's source in /proc/self/mountinfo (`sda1` for
/// /dev/sda1, `overlay`, `tmpfs`).
pub fn device_name(path: &Path) -> String {
    let dev = std::fs::metadata(path).map(|m| m.dev()).unwrap_or(0);
    let (major, minor) = ((dev >> 8) & 0xfff, (dev & 0xff) | ((dev >> 12) & 0xfff00));
    let want = format!("{major}:{minor}");
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    for line in info.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        if f.get(2) != Some(&want.as_str()) {
            continue;
        }
        // The fields after the optional ones: " - fstype source options".
        if let Some(dash) = f.iter().position(|x| *x == "-") {
            if let Some(src) = f.get(dash + 2) {
                return src.rsplit('/').next().unwrap_or(src).to_string();
            }
        }
    }
    "unknown".into()
}

/// The name of directory `rel` in audit records (its dentry's name; "/" for the root).
fn dir_name(rel: &str) -> &str {
    if rel.is_empty() {
        "/"
    } else {
        rel.rsplit('/').next().unwrap_or("/")
    }
}

impl FileService {
    /// A service over the existing tree at `root` under the policy at `policy`, each inode
    /// labelled with the context of the longest prefix in `labels` that names it or one of its
    /// directories ("" labels the root and is the fallback).
    pub fn new(
        root: &Path,
        policy: &Path,
        labels: &[(&str, &str)],
    ) -> Result<FileService, LabError> {
        FileService::on(root, policy, "ext4", labels)
    }

    /// [`FileService::new`] with the tree on a filesystem of type `fstype` (its labeling
    /// behaviour and SID from the policy's fs_use statements; "tmpfs", for a tree labelled as
    /// setfiles labels a tmpfs, by setxattr over the labels tmpfs gives at allocation).
    pub fn on(
        root: &Path,
        policy: &Path,
        fstype: &str,
        labels: &[(&str, &str)],
    ) -> Result<FileService, LabError> {
        let parts = seaccess_engine::Engine::builder()
            .object_manager(true)
            .open(policy)
            .map_err(|e| LabError::Objmgr {
                what: e.to_string(),
            })?
            .into_parts();
        let server = parts.server;
        let om = parts.object_manager.ok_or_else(|| LabError::Objmgr {
            what: "the engine was built without its object manager".into(),
        })?;
        let sb = om
            .mount(&device_name(root), fstype, &MountOpts::default())
            .map_err(|e| refused("mount", e))?;
        let svc = FileService {
            root: root.to_path_buf(),
            server,
            om,
            sb,
            inodes: Mutex::new(HashMap::new()),
        };
        svc.label_tree("", labels)?;
        Ok(svc)
    }

    /// The object manager (its cache, counters and fast-path switches).
    pub fn om(&self) -> &ObjectManager {
        &self.om
    }

    /// The security server (booleans, reloads).
    pub fn server(&self) -> &Arc<SecurityServer> {
        &self.server
    }

    /// A task acting as `context`, for audit records `pid` and `comm`.
    pub fn task(&self, pid: u32, comm: &str, context: &str) -> Result<Task, LabError> {
        let sid = self
            .server
            .context_to_sid(context)
            .map_err(|e| LabError::Objmgr {
                what: format!("{context}: {e}"),
            })?;
        Ok(Task::new(pid, comm, seaccess_objmgr::Cred::new(sid)))
    }

    fn label_tree(&self, rel: &str, labels: &[(&str, &str)]) -> Result<(), LabError> {
        let path = self.root.join(rel);
        let meta = std::fs::symlink_metadata(&path).map_err(|e| io(&path, e))?;
        let ctx = labels
            .iter()
            .filter(|(p, _)| p.is_empty() || rel == *p || rel.starts_with(&format!("{p}/")))
            .max_by_key(|(p, _)| p.len())
            .map(|(_, c)| *c);
        let inode = self
            .om
            .inode_init(&self.sb, meta.ino(), meta.mode(), &format!("/{rel}"), ctx);
        // Where the filesystem does not read labels from xattrs (tmpfs: fs_use_trans), the
        // label is the one setfiles wrote (selinux_inode_post_setxattr).
        if let Some(c) = ctx {
            self.om
                .inode_post_setxattr(&inode, "security.selinux", c)
                .map_err(|e| refused(&format!("label /{rel}"), e))?;
        }
        lock(&self.inodes).insert(rel.to_string(), Arc::new(inode));
        if meta.is_dir() {
            let mut names: Vec<String> = std::fs::read_dir(&path)
                .map_err(|e| io(&path, e))?
                .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect();
            names.sort();
            for n in names {
                let child = if rel.is_empty() {
                    n
                } else {
                    format!("{rel}/{n}")
                };
                self.label_tree(&child, labels)?;
            }
        }
        Ok(())
    }

    /// The inode at `rel`; ENOENT, as the lookup's, where there is none.
    fn inode(&self, rel: &str) -> Result<Arc<InodeSec>, LabError> {
        lock(&self.inodes)
            .get(rel)
            .cloned()
            .ok_or_else(|| LabError::Refused {
                what: format!("/{rel}: no such file or directory"),
                errno: libc::ENOENT,
            })
    }

    /// The path walk to `rel`: search on the root and every directory on the way, each named
    /// by its own last component (may_lookup's inode_permission with MAY_EXEC); the inode.
    fn walk(&self, task: &Task, rel: &str) -> Result<Arc<InodeSec>, LabError> {
        let mut dir = String::new();
        let parts: Vec<&str> = rel.split('/').filter(|p| !p.is_empty()).collect();
        for part in parts {
            let d = self.inode(&dir)?;
            self.om
                .inode_permission(task, &d, MAY_EXEC, Some(dir_name(&dir)))
                .map_err(|e| {
                    refused(
                        &format!("search {}", if dir.is_empty() { "/" } else { &dir }),
                        e,
                    )
                })?;
            dir = if dir.is_empty() {
                part.to_string()
            } else {
                format!("{dir}/{part}")
            };
        }
        self.inode(&dir)
    }

    /// stat(2): the walk, then `{getattr}` (selinux_inode_getattr); the file's size.
    pub fn stat(&self, task: &Task, rel: &str) -> Result<u64, LabError> {
        let inode = self.walk(task, rel)?;
        let p = self.root.join(rel);
        self.om
            .inode_getattr(task, &inode, &p.to_string_lossy())
            .map_err(|e| refused(&format!("stat {rel}"), e))?;
        Ok(std::fs::metadata(&p).map_err(|e| io(&p, e))?.len())
    }

    /// open(2) for reading and read(2) to the end: the walk, inode_permission with MAY_READ
    /// (may_open), file_open, then file_permission before each read.
    pub fn read(&self, task: &Task, rel: &str) -> Result<Vec<u8>, LabError> {
        let inode = self.walk(task, rel)?;
        let p = self.root.join(rel);
        let ps = p.to_string_lossy();
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let what = format!("read {rel}");
        self.om
            .inode_permission(task, &inode, MAY_READ, Some(name))
            .map_err(|e| refused(&what, e))?;
        let fsec = self
            .om
            .file_open(task, &inode, &ps, oflags::O_RDONLY)
            .map_err(|e| refused(&what, e))?;
        let mut f = std::fs::File::open(&p).map_err(|e| io(&p, e))?;
        let mut out = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            self.om
                .file_permission(task, &fsec, &inode, MAY_READ, &ps)
                .map_err(|e| refused(&what, e))?;
            let n = f.read(&mut buf).map_err(|e| io(&p, e))?;
            if n == 0 {
                return Ok(out);
            }
            out.extend_from_slice(buf.get(..n).unwrap_or_default());
        }
    }

    /// open(2) with O_WRONLY|O_APPEND and one write(2): the walk, inode_permission with
    /// MAY_WRITE|MAY_APPEND (so `{append}`), file_open, file_permission.
    pub fn append(&self, task: &Task, rel: &str, data: &[u8]) -> Result<(), LabError> {
        let inode = self.walk(task, rel)?;
        let p = self.root.join(rel);
        let ps = p.to_string_lossy();
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let what = format!("append to {rel}");
        self.om
            .inode_permission(task, &inode, MAY_WRITE | MAY_APPEND, Some(name))
            .map_err(|e| refused(&what, e))?;
        let fsec = self
            .om
            .file_open(task, &inode, &ps, oflags::O_WRONLY | oflags::O_APPEND)
            .map_err(|e| refused(&what, e))?;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&p)
            .map_err(|e| io(&p, e))?;
        self.om
            .file_permission(task, &fsec, &inode, MAY_WRITE, &ps)
            .map_err(|e| refused(&what, e))?;
        f.write_all(data).map_err(|e| io(&p, e))
    }

    /// execve(2) of `rel` by `task`, up to the new credential: do_open_execat's walk and open
    /// (may_open's inode_permission with MAY_EXEC, so `{execute}`; file_open of a file opened
    /// for reading, so `{read open}`), then selinux_bprm_creds_for_exec. The context the task
    /// has after the exec. (What follows the commit, with the new credential, is not modelled:
    /// the ELF loader's mmap and the descriptors the exec hands on.)
    pub fn exec(&self, task: &Task, rel: &str) -> Result<String, LabError> {
        let inode = self.walk(task, rel)?;
        let p = self.root.join(rel);
        let ps = p.to_string_lossy();
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let what = format!("exec {rel}");
        self.om
            .inode_permission(task, &inode, MAY_EXEC, Some(name))
            .map_err(|e| refused(&what, e))?;
        self.om
            .file_open(task, &inode, &ps, oflags::O_RDONLY)
            .map_err(|e| refused(&what, e))?;
        let creds = self
            .om
            .bprm_creds_for_exec(task, &inode, &ps, &ExecOpts::default())
            .map_err(|e| refused(&what, e))?;
        self.server
            .sid_to_context(creds.cred.sid())
            .map_err(|e| LabError::Objmgr {
                what: e.to_string(),
            })
    }

    /// chcon: setxattr(2) of `security.selinux` (selinux_inode_setxattr's relabel checks, then
    /// post_setxattr gives the inode its new SID; the label is kept in memory, see the module
    /// docs).
    pub fn relabel(&self, task: &Task, rel: &str, context: &str) -> Result<(), LabError> {
        let inode = self.walk(task, rel)?;
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let what = format!("relabel {rel}");
        self.om
            .inode_setxattr(task, &inode, name, "security.selinux", context)
            .map_err(|e| refused(&what, e))?;
        self.om
            .inode_post_setxattr(&inode, "security.selinux", context)
            .map_err(|e| refused(&what, e))
    }

    /// The SID of an inode, as its context.
    pub fn label(&self, rel: &str) -> Result<String, LabError> {
        let inode = self.inode(rel)?;
        self.server
            .sid_to_context(inode.sid())
            .map_err(|e| LabError::Objmgr {
                what: e.to_string(),
            })
    }
}
