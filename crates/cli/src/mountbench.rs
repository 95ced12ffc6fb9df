//! `seaccess bench mount`: the three file experiments on a real FUSE mount. The same tree is
//! served by three seaccess mounts (checks with the fast paths, checks without them, and no
//! checks at all: the baseline that isolates what the checks cost) and by bindfs, Debian's
//! passthrough FUSE filesystem, with the same zero cache timeouts and direct I/O; each
//! experiment runs on each in a rotating order, round after round, and the figures are
//! medians over rounds. Not a timed test: it prints ratios measured in one run.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, Mode, OFlags};
use seaccess_fs::{Core, Options};

use crate::output::{CliError, Out};

#[derive(clap::Args)]
pub(crate) struct MountBenchArgs {
    /// The compiled policy the mounts enforce.
    #[arg(long, short = 'p')]
    policy: PathBuf,
    /// Rounds (each runs every experiment on every mount once, in a rotating order).
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// A small tree and short loops (seconds; for tests, not for figures).
    #[arg(long)]
    quick: bool,
    /// The files' and directories' context (default: user_home_t).
    #[arg(long, default_value = "unconfined_u:object_r:user_home_t:s0")]
    object: String,
    /// Where to build the tree and the mount points (default: the temporary directory).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Leave bindfs out.
    #[arg(long = "no-bindfs")]
    no_bindfs: bool,
}

/// The 2008 tree's shape: directories, the deepest chain, files.
struct Shape {
    dirs: usize,
    depth: usize,
    files: usize,
}

const FULL: Shape = Shape { dirs: 266, depth: 14, files: 19_255 };
const QUICK: Shape = Shape { dirs: 40, depth: 13, files: 1_500 };

/// The tree: directories (relative paths, parents first) and each directory's files.
struct Tree {
    dirs: Vec<String>,
    files: Vec<Vec<String>>,
    deep: String,
}

fn io(what: &str, e: impl std::fmt::Display) -> CliError {
    CliError::from(format!("{what}: {e}"))
}

/// Builds the tree under `root`, every object labelled `ctx` (security.selinux).
fn build(root: &Path, shape: &Shape, ctx: &str) -> Result<Tree, CliError> {
    let mut dirs = vec![String::new()];
    // The deepest chain first, then the rest spread under the chain's directories.
    for i in 1..shape.depth {
        dirs.push(format!("{}/d{i}", dirs[i - 1]).trim_start_matches('/').to_string());
    }
    let mut k = 0;
    while dirs.len() < shape.dirs {
        let parent = dirs[k % shape.depth].clone();
        dirs.push(if parent.is_empty() { format!("w{k}") } else { format!("{parent}/w{k}") });
        k += 1;
    }
    let mut label = ctx.as_bytes().to_vec();
    label.push(0);
    let mut files = vec![Vec::new(); dirs.len()];
    for (i, d) in dirs.iter().enumerate() {
        let p = root.join(d);
        std::fs::create_dir_all(&p).map_err(|e| io(&p.display().to_string(), e))?;
        xattr::set(&p, "security.selinux", &label).map_err(|e| io(&p.display().to_string(), e))?;
        let _ = i;
    }
    for f in 0..shape.files {
        let d = f % dirs.len();
        let name = format!("f{f}");
        let p = root.join(&dirs[d]).join(&name);
        std::fs::write(&p, b"x").map_err(|e| io(&p.display().to_string(), e))?;
        xattr::set(&p, "security.selinux", &label).map_err(|e| io(&p.display().to_string(), e))?;
        files[d].push(name);
    }
    let deep = format!("{}/f-deep", dirs[shape.depth - 1]);
    std::fs::write(root.join(&deep), b"x").map_err(|e| io(&deep, e))?;
    xattr::set(root.join(&deep), "security.selinux", &label).map_err(|e| io(&deep, e))?;
    Ok(Tree { dirs, files, deep })
}

/// The 2008 walk: every directory opened from the root, every file in it stat'ed and opened
/// relative to it (as fts walks). Returns the operations (stat + open per file).
fn tree_walk(root: &Path, t: &Tree) -> Result<usize, CliError> {
    let mut ops = 0;
    for (d, files) in t.dirs.iter().zip(&t.files) {
        let dir: OwnedFd = rustix::fs::open(root.join(d), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).map_err(|e| io(d, e))?;
        for f in files {
            rustix::fs::statat(&dir, f.as_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(|e| io(f, e))?;
            drop(rustix::fs::openat(&dir, f.as_str(), OFlags::RDONLY, Mode::empty()).map_err(|e| io(f, e))?);
            ops += 1;
        }
    }
    Ok(ops)
}

/// The 2007 loop: one-byte reads and writes on one open file.
fn read_write(root: &Path, t: &Tree, n: usize) -> Result<usize, CliError> {
    let f = rustix::fs::open(root.join(&t.deep), OFlags::RDWR, Mode::empty()).map_err(|e| io(&t.deep, e))?;
    let mut b = [0u8; 1];
    for _ in 0..n {
        rustix::io::pread(&f, &mut b, 0).map_err(|e| io("read", e))?;
        rustix::io::pwrite(&f, b"x", 0).map_err(|e| io("write", e))?;
    }
    Ok(2 * n)
}

/// The 2025 path walk: stat of the deepest file by its whole path, again and again.
fn path_walk(root: &Path, t: &Tree, n: usize) -> Result<usize, CliError> {
    let p = root.join(&t.deep);
    for _ in 0..n {
        rustix::fs::stat(&p).map_err(|e| io(&t.deep, e))?;
    }
    Ok(n)
}

/// One mount under test.
struct Target {
    name: &'static str,
    root: PathBuf,
    core: Option<Arc<Core>>,
    session: Option<fuser::BackgroundSession>,
}

/// Unmounts every mount and removes the scratch directory, on every way out.
struct Scratch {
    dir: PathBuf,
    targets: Vec<Target>,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        for t in &mut self.targets {
            match t.session.take() {
                Some(s) => {
                    let _ = s.umount_and_join();
                }
                None => {
                    let _ = std::process::Command::new("fusermount3").arg("-u").arg(&t.root).status();
                }
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn wait_mounted(mp: &Path) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        let want = mp.to_string_lossy().to_string();
        if std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default().lines().any(|l| l.split(' ').nth(4) == Some(want.as_str())) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

pub(crate) fn run(out: &mut Out, a: &MountBenchArgs) -> Result<(), CliError> {
    if a.rounds == 0 || a.rounds > 100 {
        return Err(format!("--rounds {}: must be from 1 to 100", a.rounds).into());
    }
    let server = crate::load_path(&a.policy)?;
    server.context_to_sid(&a.object).map_err(|e| io(&a.object, e))?;
    drop(server);
    let base = a.dir.clone().unwrap_or_else(std::env::temp_dir).join(format!("seaccess-mountbench-{}", std::process::id()));
    let mut s = Scratch { dir: base.clone(), targets: Vec::new() };
    let src = base.join("src");
    std::fs::create_dir_all(&src).map_err(|e| io(&src.display().to_string(), e))?;
    let (shape, loops) = if a.quick { (QUICK, 2_000) } else { (FULL, 20_000) };
    let tree = build(&src, &shape, &a.object)?;
    let variants: [(&str, bool, bool); 3] = [("no checks", false, false), ("enforcing", true, true), ("fast paths off", true, false)];
    for (name, checks, fast) in variants {
        let mp = base.join(name.replace(' ', "-"));
        std::fs::create_dir_all(&mp).map_err(|e| io(&mp.display().to_string(), e))?;
        let opts = Options {
            source: src.clone(),
            mountpoint: mp.clone(),
            policy: a.policy.clone(),
            file_contexts: None,
            path_prefix: src.clone(),
            subjects: None,
            booleans: None,
            permissive: false,
            audit_log: None,
            fast_paths: fast,
            checks,
        };
        let core = Arc::new(Core::new(opts).map_err(|e| CliError::from(e.to_string()))?);
        let session = seaccess_fs::fuse::spawn(core.clone(), &mp, 2).map_err(|e| io(&format!("mounting {}", mp.display()), e))?;
        s.targets.push(Target { name, root: mp, core: Some(core), session: Some(session) });
    }
    if !a.no_bindfs {
        let mp = base.join("bindfs");
        std::fs::create_dir_all(&mp).map_err(|e| io(&mp.display().to_string(), e))?;
        let st = std::process::Command::new("bindfs")
            .args(["--multithreaded", "-o", "attr_timeout=0,entry_timeout=0,negative_timeout=0,direct_io"])
            .arg(&src)
            .arg(&mp)
            .status();
        match st {
            Ok(st) if st.success() && wait_mounted(&mp) => s.targets.push(Target { name: "bindfs", root: mp, core: None, session: None }),
            Ok(st) => writeln!(out, "(bindfs left out: it exited with {st})")?,
            Err(e) => writeln!(out, "(bindfs left out: {e}; `make deps` installs it)")?,
        }
    }
    type Exp = fn(&Path, &Tree, usize) -> Result<usize, CliError>;
    let exps: [(&str, Exp); 3] = [("tree walk (stat+open per file)", |r, t, _| tree_walk(r, t)), ("read/write 1 byte", read_write), ("path walk (stat, depth 14)", path_walk)];
    let nt = s.targets.len();
    // times[e][t] per round, in ns per operation; lookups[e][t] per operation.
    let mut times = vec![vec![Vec::new(); nt]; exps.len()];
    let mut lookups = vec![vec![0.0f64; nt]; exps.len()];
    for (ei, (_, f)) in exps.iter().enumerate() {
        for t in &s.targets {
            f(&t.root, &tree, loops / 10)?; // warm: callers, nodes, the cache
        }
        for r in 0..a.rounds {
            for k in 0..nt {
                let ti = (r + k) % nt;
                let t = &s.targets[ti];
                let before = t.core.as_ref().map(|c| c.object_manager().counters().total());
                let start = Instant::now();
                let ops = f(&t.root, &tree, loops)?;
                let ns = start.elapsed().as_nanos() as f64 / ops as f64;
                times[ei][ti].push(ns);
                if let (Some(b), Some(c)) = (before, &t.core) {
                    lookups[ei][ti] = (c.object_manager().counters().total() - b) as f64 / ops as f64;
                }
            }
        }
    }
    writeln!(out, "seaccess bench mount: {} directories, {} files; {} rounds, medians; {} request threads per seaccess mount, bindfs --multithreaded", tree.dirs.len(), shape.files, a.rounds, 2)?;
    writeln!(out, "| experiment | no checks | enforcing (fast paths) | overhead | lookups/op | fast paths off | overhead | lookups/op | bindfs | enforcing vs bindfs |")?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|---|")?;
    for (ei, (name, _)) in exps.iter().enumerate() {
        let m: Vec<f64> = (0..nt).map(|t| median(&mut times[ei][t].clone())).collect();
        let us = |x: f64| format!("{:.2} µs", x / 1000.0);
        let pct = |x: f64| format!("{:+.1}%", (x / m[0] - 1.0) * 100.0);
        let bind = if nt > 3 { (us(m[3]), format!("{:.2}x", m[1] / m[3])) } else { ("-".into(), "-".into()) };
        writeln!(
            out,
            "| {name} | {} | {} | {} | {:.2} | {} | {} | {:.2} | {} | {} |",
            us(m[0]),
            us(m[1]),
            pct(m[1]),
            lookups[ei][1],
            us(m[2]),
            pct(m[2]),
            lookups[ei][2],
            bind.0,
            bind.1
        )?;
    }
    writeln!(out, "(per operation: a tree walk's is one file's stat and open; \"enforcing vs bindfs\" under 1.00x is faster than bindfs)")?;
    let _ = &s.targets.iter().map(|t| t.name).collect::<Vec<_>>();
    Ok(())
}
