//! The generated directory tree the experiments run their system calls on, and the object
//! manager's inode blobs for it.
//!
//! The shape serves both the 2008 tree walk (a fixed number of directories and files) and the
//! no-change build's path walk (many existing paths 8 to 12 components deep): the directories
//! are chains hanging off the root, each `depth` deep, and the files are dealt out over every
//! directory in turn.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seaccess_objmgr::{InodeSec, ObjectManager, SuperSec};

use crate::LabError;

/// How big a tree to generate.
#[derive(Copy, Clone, Debug)]
pub struct Shape {
    /// Directories, the root included.
    pub dirs: usize,
    /// Directories per chain below the root.
    pub depth: usize,
    pub files: usize,
}

impl Shape {
    /// The 2008 credentials benchmark's tree: 266 directories and 19,255 files.
    pub const FULL: Shape = Shape {
        dirs: 266,
        depth: 14,
        files: 19_255,
    };
    /// A small tree for a quick run (the CLI's test): still deep enough for the path walk.
    pub const QUICK: Shape = Shape {
        dirs: 40,
        depth: 13,
        files: 1_500,
    };
}

/// A file or directory of the tree.
pub struct Entry {
    /// The absolute path the system calls are given.
    pub path: PathBuf,
    /// The path inside the tree's filesystem, for the hooks' audit data.
    pub rel: String,
    /// The directories from the root down to the entry's parent, as indices into
    /// [`Tree::dirs`]: what a lookup of the path searches.
    pub parents: Vec<usize>,
    /// The last component.
    pub name: String,
    /// Its blob's index in [`Tree::blobs`].
    pub blob: usize,
    /// Directory depth below the root (0 for the root and its files).
    pub depth: usize,
}

/// The tree on disk, with one inode blob per inode made when the tree was generated. Removed
/// from disk when dropped.
pub struct Tree {
    pub root: PathBuf,
    pub dirs: Vec<Entry>,
    pub files: Vec<Entry>,
    /// The file the read/write experiment uses (not among `files`).
    pub rw: Entry,
    /// Every inode's blob, in the order the inodes were made: together, as a slab allocator
    /// lays out the kernel's inode blobs, rather than each among its entry's strings, so the
    /// blobs of a chain of directories share cache lines as they do in the kernel.
    pub blobs: Vec<InodeSec>,
}

impl Drop for Tree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn io(path: &Path, e: std::io::Error) -> LabError {
    LabError::Io {
        path: path.to_path_buf(),
        what: e.to_string(),
    }
}

impl Tree {
    /// Generates the tree under `parent` (a fresh directory named after this process) and labels
    /// every inode `context` through `om`'s labeling of an existing inode, on the filesystem `sb`.
    pub fn generate(
        parent: &Path,
        shape: Shape,
        om: &ObjectManager,
        sb: &Arc<SuperSec>,
        context: &str,
    ) -> Result<Tree, LabError> {
        let root = parent.join(format!("seaccess-objbench-{}", std::process::id()));
        if root.exists() {
            std::fs::remove_dir_all(&root).map_err(|e| io(&root, e))?;
        }
        std::fs::create_dir_all(&root).map_err(|e| io(&root, e))?;
        let root_name = root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let label = |path: &Path, rel: &str| -> Result<InodeSec, LabError> {
            let m = std::fs::symlink_metadata(path).map_err(|e| io(path, e))?;
            Ok(om.inode_init(sb, m.ino(), m.mode(), rel, Some(context)))
        };
        let mut tree = Tree {
            dirs: vec![Entry {
                path: root.clone(),
                rel: "/".into(),
                parents: vec![],
                name: root_name,
                blob: 0,
                depth: 0,
            }],
            files: Vec::with_capacity(shape.files),
            rw: Entry {
                path: PathBuf::new(),
                rel: String::new(),
                parents: vec![],
                name: String::new(),
                blob: 0,
                depth: 0,
            },
            blobs: vec![label(&root, "/")?],
            root,
        };
        let depth = shape.depth.max(1);
        let mut chain = 0;
        while tree.dirs.len() < shape.dirs {
            let mut parent = 0;
            for d in 1..=depth {
                if tree.dirs.len() >= shape.dirs {
                    break;
                }
                let name = format!("c{chain}d{d}");
                let entry = tree.child(parent, name, true, &label)?;
                tree.dirs.push(entry);
                parent = tree.dirs.len() - 1;
            }
            chain += 1;
        }
        for i in 0..shape.files {
            let dir = i % tree.dirs.len();
            let entry = tree.child(dir, format!("f{i}.c"), false, &label)?;
            tree.files.push(entry);
        }
        tree.rw = tree.child(0, "rw.dat".into(), false, &label)?;
        Ok(tree)
    }

    /// Creates `name` in directory `parent` and makes its entry and its blob.
    fn child(
        &mut self,
        parent: usize,
        name: String,
        dir: bool,
        label: &dyn Fn(&Path, &str) -> Result<InodeSec, LabError>,
    ) -> Result<Entry, LabError> {
        let p = self.dirs.get(parent).ok_or_else(|| LabError::Io {
            path: self.root.clone(),
            what: format!("no directory {parent}"),
        })?;
        let path = p.path.join(&name);
        if dir {
            std::fs::create_dir(&path).map_err(|e| io(&path, e))?;
        } else {
            // A byte of content, so the read/write experiment's file has one to read.
            std::fs::write(&path, b"x").map_err(|e| io(&path, e))?;
        }
        let rel = if p.rel == "/" {
            format!("/{name}")
        } else {
            format!("{}/{name}", p.rel)
        };
        let mut parents = p.parents.clone();
        parents.push(parent);
        let depth = if dir { p.depth + 1 } else { p.depth };
        self.blobs.push(label(&path, &rel)?);
        Ok(Entry {
            blob: self.blobs.len() - 1,
            path,
            rel,
            parents,
            name,
            depth,
        })
    }

    /// Every directory and file in the order a recursive walk (find, or the 2008 benchmark's
    /// walk) visits them: each directory, then the files in it, the directories in pre-order
    /// (the order they were made, a chain at a time). Files were dealt out over the
    /// directories in turn, so their creation order would send each stat to another directory.
    pub fn in_walk_order(&self) -> Vec<&Entry> {
        let mut children: Vec<Vec<&Entry>> = vec![Vec::new(); self.dirs.len()];
        for f in &self.files {
            if let Some(c) = f.parents.last().and_then(|&p| children.get_mut(p)) {
                c.push(f);
            }
        }
        self.dirs
            .iter()
            .zip(children)
            .flat_map(|(d, files)| std::iter::once(d).chain(files))
            .collect()
    }

    /// The blob of entry `e`.
    pub fn sec(&self, e: &Entry) -> Result<&InodeSec, LabError> {
        self.blobs.get(e.blob).ok_or_else(|| LabError::Io {
            path: e.path.clone(),
            what: format!("no blob {}", e.blob),
        })
    }

    /// The directories a lookup of `e` searches, with their names, as the path-walk hook takes
    /// them. Built once per experiment, outside the timed loops, so the hooked variants' blob
    /// lookup is reading a prepared list: an object manager finds an inode's blob through the
    /// inode it already holds (the kernel's inode->i_security), never by searching a map per
    /// call, and this list plays that pointer.
    pub fn walk<'t>(&'t self, e: &Entry) -> Result<Vec<(&'t InodeSec, &'t str)>, LabError> {
        e.parents
            .iter()
            .filter_map(|&i| self.dirs.get(i))
            .map(|d| Ok((self.sec(d)?, d.name.as_str())))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, parents: Vec<usize>) -> Entry {
        Entry {
            path: PathBuf::from(name),
            rel: name.into(),
            parents,
            name: name.into(),
            blob: 0,
            depth: 0,
        }
    }

    // Each directory comes before the files in it, every entry once, the directories in the
    // order they were made; files dealt out in turn are gathered under their directory.
    #[test]
    fn a_walk_visits_each_directory_then_its_files() {
        let tree = Tree {
            root: std::env::temp_dir().join("seaccess-walk-order-test-never-made"),
            dirs: vec![
                entry("/", vec![]),
                entry("a", vec![0]),
                entry("b", vec![0, 1]),
            ],
            files: (0..7)
                .map(|i| {
                    entry(
                        &format!("f{i}"),
                        [vec![0], vec![0, 1], vec![0, 1, 2]][i % 3].clone(),
                    )
                })
                .collect(),
            rw: entry("rw", vec![0]),
            blobs: Vec::new(),
        };
        let names: Vec<&str> = tree
            .in_walk_order()
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(
            names,
            ["/", "f0", "f3", "f6", "a", "f1", "f4", "b", "f2", "f5"]
        );
    }
}
