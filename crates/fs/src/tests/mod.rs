//! Unit tests of the core over a scratch tree, without FUSE: each drives [`Core`]'s methods as
//! the adapter would, as root (uid 0, this test process as the caller), and looks at the
//! backing tree and at what lies outside it. They need root (trusted.* attributes, chown,
//! mount) and Debian's binary policy (`fs_use_xattr ext4`); without them each prints
//! `SKIP: reason` and passes.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod cold;
mod escape;
mod limits;
mod reload;
mod store;
mod writeback;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::core::{Core, Options, Req};
use crate::hot::Hot;

/// The policy the tests load: Debian's, which has `fs_use_xattr ext4`.
const POLICY: &str = "/etc/selinux/default/policy/policy.33";

/// Labels of that policy, used as attribute values (no decision depends on them: the cores
/// are permissive).
pub(crate) const SHADOW: &str = "system_u:object_r:shadow_t:s0";
pub(crate) const ETC: &str = "system_u:object_r:etc_t:s0";
pub(crate) const TMP: &str = "system_u:object_r:tmp_t:s0";

/// The policy, or None (after saying why) where a test cannot run.
pub(crate) fn ready(test: &str) -> Option<PathBuf> {
    if !rustix::process::geteuid().is_root() {
        eprintln!("SKIP: {test}: not root");
        return None;
    }
    if !Path::new(POLICY).exists() {
        eprintln!("SKIP: {test}: no {POLICY}");
        return None;
    }
    Some(POLICY.into())
}

/// A scratch directory with `src/` (the backing tree) and `outside/` (beside it), removed
/// with whatever was mounted in it.
pub(crate) struct Scratch {
    pub dir: PathBuf,
    mounts: Mutex<Vec<PathBuf>>,
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("seaccess-fs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("outside")).unwrap();
        Scratch {
            dir,
            mounts: Mutex::new(Vec::new()),
        }
    }

    pub fn src(&self) -> PathBuf {
        self.dir.join("src")
    }

    pub fn outside(&self) -> PathBuf {
        self.dir.join("outside")
    }

    /// `mount ARGS... AT`; false (after saying why) where it fails.
    pub fn mount(&self, args: &[&str], at: &Path) -> bool {
        let st = std::process::Command::new("mount")
            .args(args)
            .arg(at)
            .status();
        match st {
            Ok(s) if s.success() => {
                self.mounts.lock().unwrap().push(at.to_path_buf());
                true
            }
            other => {
                eprintln!("mount {args:?} {}: {other:?}", at.display());
                false
            }
        }
    }

    pub fn umount(&self, at: &Path) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(at)
            .status();
        self.mounts.lock().unwrap().retain(|m| m != at);
    }

    /// Options for a permissive core over `src/` at `mountpoint`.
    pub fn options(&self, policy: &Path, mountpoint: &Path) -> Options {
        Options {
            source: self.src(),
            mountpoint: mountpoint.to_path_buf(),
            policy: policy.to_path_buf(),
            file_contexts: None,
            path_prefix: self.src(),
            subjects: None,
            booleans: None,
            permissive: true,
            audit_log: Some(self.dir.join("audit.log")),
            fast_paths: true,
            checks: true,
            xattr: None,
            unsafe_xattr: false,
            max_node_fds: None,
        }
    }

    /// A permissive core over `src/`, mounted (as far as it knows) at `mnt/`.
    pub fn core(&self, policy: &Path) -> Core {
        Core::new(self.options(policy, &self.dir.join("mnt"))).unwrap()
    }

    /// The same, its node descriptors counted in a pool of its own (not the process's, which
    /// the tests running at once share), at most `budget` of them.
    pub fn core_with(&self, policy: &Path, budget: usize) -> (Core, Arc<Hot>) {
        let mut o = self.options(policy, &self.dir.join("mnt"));
        o.max_node_fds = Some(budget);
        let hot = Arc::new(Hot::default());
        (Core::with_pool(o, hot.clone()).unwrap(), hot)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for m in self.mounts.lock().unwrap().drain(..).rev() {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&m)
                .status();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// This process as the caller, as root.
pub(crate) fn req() -> Req {
    Req {
        pid: std::process::id(),
        uid: 0,
        gid: 0,
    }
}

/// The errno of a failed result (0 for success).
pub(crate) fn errno<T>(r: crate::Result<T>) -> i32 {
    r.map_or_else(|e| e.errno(), |_| 0)
}

/// An attribute of the backing object at `p` (a link itself), None when it has none.
pub(crate) fn attr_of(p: &Path, name: &str) -> Option<Vec<u8>> {
    let mut buf = vec![0u8; 4096];
    rustix::fs::lgetxattr(p, name, &mut buf[..]).ok().map(|n| {
        buf.truncate(n);
        buf
    })
}

/// Sets an attribute of the backing object at `p` (a link itself).
pub(crate) fn set_attr(p: &Path, name: &str, value: &str) {
    let mut v = value.as_bytes().to_vec();
    v.push(0);
    rustix::fs::lsetxattr(p, name, &v, rustix::fs::XattrFlags::empty()).unwrap();
}

/// A context as getxattr gives it (with its NUL).
pub(crate) fn ctx(c: &str) -> Vec<u8> {
    let mut v = c.as_bytes().to_vec();
    v.push(0);
    v
}

/// Every object under `dir` as bytes: name, type, mode, owner, size, mtime, contents and
/// every attribute, so that any change shows.
pub(crate) fn snapshot(dir: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let mut out = String::new();
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for p in names {
        let m = std::fs::symlink_metadata(&p).unwrap();
        out += &format!(
            "{} {:o} {}:{} {} {}.{}",
            p.display(),
            m.mode(),
            m.uid(),
            m.gid(),
            m.size(),
            m.mtime(),
            m.mtime_nsec()
        );
        if m.is_file() {
            out += &format!(" {:?}", std::fs::read(&p).unwrap());
        }
        let mut list = vec![0u8; 4096];
        let n = rustix::fs::llistxattr(&p, &mut list[..]).unwrap_or(0);
        for name in list[..n].split(|b| *b == 0).filter(|n| !n.is_empty()) {
            let name = String::from_utf8_lossy(name).to_string();
            out += &format!(" {name}={:?}", attr_of(&p, &name));
        }
        out.push('\n');
    }
    out
}
