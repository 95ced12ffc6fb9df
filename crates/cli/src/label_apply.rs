//! `seaccess label --apply`, `--check` and `--plan`: restorecon and setfiles without an SELinux
//! kernel, and the relabel planner.
//!
//! A tree is walked once, on one thread (the directory reads), while a pool of threads looks
//! each object up and reads and writes its label: the lookups and the attribute calls are the
//! work, and they need no order. The walk (crates/label's walk.rs) goes through directory
//! descriptors: no component beneath a root is resolved by path, so whoever owns a directory
//! in the tree cannot make the walk act outside it by swapping that directory for a link. The
//! label is the `security.selinux` extended attribute, which Linux stores whether or not
//! SELinux runs; where the filesystem or the caller's privilege refuses that namespace,
//! `user.selinux` (what the seaccess mount and library read too).

use std::cell::Cell;
use std::collections::BTreeMap;
use std::io::{IsTerminal, Write as _};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use seaccess_label::walk::{self, Entry, Root};
use seaccess_label::FileContexts;

use crate::label::args::{arg_paths, open, LabelArgs};
use crate::output::{note, CliError, Out};

use seaccess_label::xattr::{Attrs, SECURITY, TRUSTED, USER};

/// Each root to walk with the path file_contexts knows it by: itself made absolute without
/// following its last component (restorecon), or its place under --root (setfiles -r), which
/// it is then opened beneath.
fn roots(a: &LabelArgs) -> Result<Vec<Root>, CliError> {
    let mut args: Vec<PathBuf> = arg_paths(&a.paths)?
        .into_iter()
        .map(|p| PathBuf::from(std::ffi::OsStr::from_bytes(&p)))
        .collect();
    if args.is_empty() {
        match &a.root {
            Some(r) => args.push(r.clone()),
            None => return Err("give the paths to walk (or --root DIR)".into()),
        }
    }
    let abs = |p: &Path| -> Result<PathBuf, CliError> {
        let name = p.file_name().map(|n| n.to_os_string());
        let parent = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let dir = std::fs::canonicalize(&parent).map_err(|e| format!("{}: {e}", p.display()))?;
        Ok(match name {
            Some(n) if n != ".." && n != "." => dir.join(n),
            _ => std::fs::canonicalize(p).map_err(|e| format!("{}: {e}", p.display()))?,
        })
    };
    let root = a
        .root
        .as_deref()
        .map(|r| std::fs::canonicalize(r).map_err(|e| format!("--root {}: {e}", r.display())))
        .transpose()?;
    let mut out = Vec::new();
    for p in args {
        let real = abs(&p)?;
        std::fs::symlink_metadata(&real).map_err(|e| format!("{}: {e}", p.display()))?;
        let key = match &root {
            None => real.as_os_str().as_bytes().to_vec(),
            Some(r) => {
                let rel = real
                    .strip_prefix(r)
                    .map_err(|_| format!("{} is not under --root {}", p.display(), r.display()))?;
                let mut k = b"/".to_vec();
                k.extend_from_slice(rel.as_os_str().as_bytes());
                k
            }
        };
        out.push(Root {
            path: real,
            key,
            beneath: root.clone(),
        });
    }
    Ok(out)
}

/// Walks the roots and runs `work` on every object from `threads` threads; what `work` returns
/// is gathered, with the number of objects walked. Walk errors are reported and counted.
fn walk<R: Send>(
    roots: &[Root],
    one_fs: bool,
    threads: usize,
    errors: &AtomicU64,
    work: &(dyn Fn(&Entry) -> Option<R> + Sync),
) -> (Vec<R>, u64) {
    // A deep tree keeps its open ancestors, and the queue its batches' directories.
    walk::raise_fd_limit();
    let progress = Progress::new();
    let opts = walk::Options {
        one_fs,
        sorted: false,
    };
    let got = walk::walk_parallel(
        roots,
        opts,
        threads,
        work,
        &mut |e| {
            progress.clear();
            note(&format!("seaccess label: {e}"));
            errors.fetch_add(1, Ordering::Relaxed);
        },
        &mut |n| progress.add(n),
    );
    progress.clear();
    got
}

/// The count of objects walked, on standard error when that is a terminal: redrawn at most ten
/// times a second, and cleared before a note and at the end so that no line is left half
/// overwritten. Cells, because the walk's two callbacks (a note, a count) both update it.
struct Progress {
    tty: bool,
    seen: Cell<u64>,
    drawn: Cell<Option<Instant>>,
}

impl Progress {
    fn new() -> Self {
        Progress {
            tty: std::io::stderr().is_terminal(),
            seen: Cell::new(0),
            drawn: Cell::new(None),
        }
    }

    fn add(&self, n: u64) {
        let seen = self.seen.get() + n;
        self.seen.set(seen);
        let due = self
            .drawn
            .get()
            .is_none_or(|t| t.elapsed() >= Duration::from_millis(100));
        if self.tty && due {
            self.drawn.set(Some(Instant::now()));
            // A failed write to a terminal only loses the count.
            let _ = write!(std::io::stderr().lock(), "\r{seen} objects");
        }
    }

    fn clear(&self) {
        if self.drawn.take().is_some() {
            // Back to the line's start, erase it (ECMA-48 EL 2).
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}

/// --threads, or the machine's cores.
fn threads(a: &LabelArgs) -> usize {
    a.threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// The attributes a label is read from and written to: the one asked for, or
/// `security.selinux` and then `user.selinux` (crates/label's rule, shared with the mount and
/// libseaccess).
fn attrs(only: Option<&'static str>) -> Attrs {
    only.map_or(Attrs::Either, Attrs::Only)
}

enum Outcome {
    Line(String),
    Used(&'static str),
}

pub(crate) fn apply(out: &mut Out, a: &LabelArgs, fc: &FileContexts) -> Result<bool, CliError> {
    let roots = roots(a)?;
    let threads = threads(a);
    let errors = AtomicU64::new(0);
    let changed = AtomicU64::new(0);
    let (check, dry) = (a.check, a.dry_run || a.check);
    let only = match a.xattr.as_deref() {
        None => None,
        Some(SECURITY) => Some(SECURITY),
        Some(USER) => Some(USER),
        Some(TRUSTED) => Some(TRUSTED),
        Some(other) => {
            return Err(format!("--xattr {other}: expected {SECURITY}, {USER} or {TRUSTED}").into())
        }
    };
    let work = |it: &Entry| -> Option<Vec<Outcome>> {
        let path = it.path();
        let name = path.display();
        let new = match fc.lookup(&it.key(), it.kind()) {
            Ok(Some(s)) => s.context.clone(),
            Ok(None) => return None, // <<none>>: left alone
            Err(e) => {
                note(&format!("seaccess label: {name}: {e}"));
                errors.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        };
        let current = match it.read_label(attrs(only)) {
            Ok(c) => c,
            Err(e) => {
                note(&format!("seaccess label: reading the label of {name}: {e}"));
                errors.fetch_add(1, Ordering::Relaxed);
                return None;
            }
        };
        if check {
            if current.as_deref() == Some(&*new) {
                return None;
            }
            changed.fetch_add(1, Ordering::Relaxed);
            let cur = current.as_deref().unwrap_or("<no label>");
            return Some(vec![Outcome::Line(format!(
                "{name} has context {cur}, should be {new}"
            ))]);
        }
        let target = seaccess_label::restorecon::target(current.as_deref(), &new, a.force)?;
        changed.fetch_add(1, Ordering::Relaxed);
        let mut res = Vec::new();
        if !dry {
            match it
                .write_label(target.as_bytes(), attrs(only))
                .map_err(std::io::Error::from)
            {
                Ok(used) => res.push(Outcome::Used(used)),
                Err(e) => {
                    note(&format!(
                        "seaccess label: could not set context for {name}: {e}"
                    ));
                    errors.fetch_add(1, Ordering::Relaxed);
                    return None;
                }
            }
        }
        if a.verbose || dry {
            let verb = if dry { "Would relabel" } else { "Relabeled" };
            let cur = current.as_deref().unwrap_or("(null)");
            res.push(Outcome::Line(format!(
                "{verb} {name} from {cur} to {target}"
            )));
        }
        Some(res)
    };
    let (results, _) = walk(&roots, a.one_fs, threads, &errors, &work);
    let mut used = BTreeMap::new();
    for o in results.into_iter().flatten() {
        match o {
            Outcome::Line(l) => writeln!(out, "{l}")?,
            Outcome::Used(u) => *used.entry(u).or_insert(0u64) += 1,
        }
    }
    for (attr, n) in &used {
        let why = if *attr == USER && only.is_none() {
            " (the filesystem or your privilege refused security.selinux)"
        } else {
            ""
        };
        note(&format!("seaccess label: wrote {n} labels as {attr}{why}"));
    }
    let errs = errors.load(Ordering::Relaxed);
    if errs > 0 {
        return Err(format!("{errs} objects could not be labeled (see above)").into());
    }
    Ok(!(check && changed.load(Ordering::Relaxed) > 0))
}

/// `--plan`: the objects whose file_contexts label differs between the old set and the new.
pub(crate) fn plan(out: &mut Out, a: &LabelArgs) -> Result<bool, CliError> {
    let from = a
        .from
        .as_deref()
        .ok_or("--plan needs --from OLD_FILE_CONTEXTS")?;
    let old = open(Some(from), a.from_policy.as_deref(), true)?;
    let new = open(a.file_contexts.as_deref(), a.policy.as_deref(), true)?;
    let roots = roots(a)?;
    let threads = threads(a);
    let errors = AtomicU64::new(0);
    let work = |it: &Entry| -> Option<(Option<String>, Option<String>, PathBuf)> {
        let key = it.key();
        let ctx = |fc: &'_ FileContexts| match fc.lookup(&key, it.kind()) {
            Ok(s) => Some(s.map(|s| s.context.clone())),
            Err(e) => {
                note(&format!("seaccess label: {}: {e}", it.path().display()));
                errors.fetch_add(1, Ordering::Relaxed);
                None
            }
        };
        let (o, n) = (ctx(&old)?, ctx(&new)?);
        (o != n).then(|| {
            (
                o.map(|c| c.to_string()),
                n.map(|c| c.to_string()),
                it.path(),
            )
        })
    };
    let (changes, walked) = walk(&roots, a.one_fs, threads, &errors, &work);
    let mut groups: BTreeMap<(String, String), Vec<PathBuf>> = BTreeMap::new();
    let none = |c: Option<String>| c.unwrap_or_else(|| "<<none>>".into());
    for (o, n, p) in changes {
        groups.entry((none(o), none(n))).or_default().push(p);
    }
    let total: usize = groups.values().map(Vec::len).sum();
    if a.json {
        let g: Vec<_> = groups
            .iter_mut()
            .map(|((o, n), ps)| {
                ps.sort();
                serde_json::json!({"from": o, "to": n, "count": ps.len(), "paths": ps.iter().map(|p| p.display().to_string()).collect::<Vec<_>>()})
            })
            .collect();
        let v = serde_json::json!({"walked": walked, "changes": total, "groups": g});
        writeln!(out, "{v}")?;
    } else {
        for ((o, n), ps) in groups.iter_mut() {
            ps.sort();
            writeln!(out, "{o} -> {n}: {} objects", ps.len())?;
            for p in ps.iter() {
                writeln!(out, "  {}", p.display())?;
            }
        }
        writeln!(out, "{total} of {walked} objects would be relabeled")?;
    }
    let errs = errors.load(Ordering::Relaxed);
    if errs > 0 {
        return Err(format!("{errs} objects could not be looked up (see above)").into());
    }
    Ok(total == 0)
}
