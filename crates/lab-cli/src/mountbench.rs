//! `seaccess-lab bench mount`: the three file experiments on a real FUSE mount. The same tree is
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
use seaccess_lab::stats::median;

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
    /// Leave out the in-process figures of `seaccess-lab bench objmgr` (the same experiments on
    /// the hooks around direct system calls).
    #[arg(long = "no-objmgr")]
    no_objmgr: bool,
    /// A control run: the two enforcing mounts run no checks either, so their "overheads" are
    /// how far from 0 the method lands when nothing differs (this machine's noise, now).
    #[arg(long)]
    control: bool,
}

/// The 2008 tree's shape: directories, the deepest chain, files.
struct Shape {
    dirs: usize,
    depth: usize,
    files: usize,
}

const FULL: Shape = Shape {
    dirs: 266,
    depth: 14,
    files: 19_255,
};
const QUICK: Shape = Shape {
    dirs: 40,
    depth: 13,
    files: 1_500,
};

/// The tree: directories (relative paths, parents first) and each directory's files.
struct Tree {
    dirs: Vec<String>,
    files: Vec<Vec<String>>,
    deep: String,
}

fn io(what: &str, e: impl std::fmt::Display) -> CliError {
    CliError::from(format!("{what}: {e}"))
}

/// Where the mounts read labels: their default store on a tree not mounted over itself.
const STORE: &str = seaccess_label::xattr::TRUSTED;

/// Builds the tree under `root`, every object labelled `ctx` (in the mounts' store).
fn build(root: &Path, shape: &Shape, ctx: &str) -> Result<Tree, CliError> {
    let mut dirs = vec![String::new()];
    // The deepest chain first, then the rest spread under the chain's directories.
    for i in 1..shape.depth {
        dirs.push(
            format!("{}/d{i}", dirs[i - 1])
                .trim_start_matches('/')
                .to_string(),
        );
    }
    let mut k = 0;
    while dirs.len() < shape.dirs {
        let parent = dirs[k % shape.depth].clone();
        dirs.push(if parent.is_empty() {
            format!("w{k}")
        } else {
            format!("{parent}/w{k}")
        });
        k += 1;
    }
    let mut label = ctx.as_bytes().to_vec();
    label.push(0);
    let mut files = vec![Vec::new(); dirs.len()];
    for (i, d) in dirs.iter().enumerate() {
        let p = root.join(d);
        std::fs::create_dir_all(&p).map_err(|e| io(&p.display().to_string(), e))?;
        xattr::set(&p, STORE, &label).map_err(|e| io(&p.display().to_string(), e))?;
        let _ = i;
    }
    for f in 0..shape.files {
        let d = f % dirs.len();
        let name = format!("f{f}");
        let p = root.join(&dirs[d]).join(&name);
        std::fs::write(&p, b"x").map_err(|e| io(&p.display().to_string(), e))?;
        xattr::set(&p, STORE, &label).map_err(|e| io(&p.display().to_string(), e))?;
        files[d].push(name);
    }
    let deep = format!("{}/f-deep", dirs[shape.depth - 1]);
    std::fs::write(root.join(&deep), b"x").map_err(|e| io(&deep, e))?;
    xattr::set(root.join(&deep), STORE, &label).map_err(|e| io(&deep, e))?;
    Ok(Tree { dirs, files, deep })
}

/// The 2008 walk, one unit: directory `d` opened from the root, every file in it stat'ed and
/// opened relative to it (as fts walks). Returns the operations (stat + open per file).
fn tree_walk(root: &Path, t: &Tree, d: usize) -> Result<usize, CliError> {
    let (dir, files) = (&t.dirs[d], &t.files[d]);
    let fd: OwnedFd = rustix::fs::open(
        root.join(dir),
        OFlags::RDONLY | OFlags::DIRECTORY,
        Mode::empty(),
    )
    .map_err(|e| io(dir, e))?;
    for f in files {
        rustix::fs::statat(&fd, f.as_str(), AtFlags::SYMLINK_NOFOLLOW).map_err(|e| io(f, e))?;
        drop(
            rustix::fs::openat(&fd, f.as_str(), OFlags::RDONLY, Mode::empty())
                .map_err(|e| io(f, e))?,
        );
    }
    Ok(files.len())
}

/// The 2007 loop, one unit: 500 one-byte reads and writes on one open file.
fn read_write(root: &Path, t: &Tree, _unit: usize) -> Result<usize, CliError> {
    let f = rustix::fs::open(root.join(&t.deep), OFlags::RDWR, Mode::empty())
        .map_err(|e| io(&t.deep, e))?;
    let mut b = [0u8; 1];
    for _ in 0..250 {
        rustix::io::pread(&f, &mut b, 0).map_err(|e| io("read", e))?;
        rustix::io::pwrite(&f, b"x", 0).map_err(|e| io("write", e))?;
    }
    Ok(500)
}

/// The 2025 path walk, one unit: 20 stats of the deepest file by its whole path.
fn path_walk(root: &Path, t: &Tree, _unit: usize) -> Result<usize, CliError> {
    let p = root.join(&t.deep);
    for _ in 0..20 {
        rustix::fs::stat(&p).map_err(|e| io(&t.deep, e))?;
    }
    Ok(20)
}

/// One mount under test.
struct Target {
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
                    let _ = std::process::Command::new("fusermount3")
                        .arg("-u")
                        .arg(&t.root)
                        .status();
                }
            }
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn wait_mounted(mp: &Path) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        let want = mp.to_string_lossy().to_string();
        if std::fs::read_to_string("/proc/self/mountinfo")
            .unwrap_or_default()
            .lines()
            .any(|l| l.split(' ').nth(4) == Some(want.as_str()))
        {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Builds the tree, mounts it three ways (and bindfs, when asked and installed) and runs the
/// three experiments on each, unit by unit in a rotating order. Every mount is gone when this
/// returns, whichever way.
pub(crate) fn measure(cfg: &MountConfig<'_>) -> Result<MountRun, CliError> {
    if cfg.rounds == 0 || cfg.rounds > 100 {
        return Err(format!("--rounds {}: must be from 1 to 100", cfg.rounds).into());
    }
    let server = crate::load_path(cfg.policy)?;
    server
        .context_to_sid(cfg.object)
        .map_err(|e| io(cfg.object, e))?;
    drop(server);
    let base = cfg
        .dir
        .map_or_else(std::env::temp_dir, Path::to_path_buf)
        .join(format!("seaccess-mountbench-{}", std::process::id()));
    let mut s = Scratch {
        dir: base.clone(),
        targets: Vec::new(),
    };
    let src = base.join("src");
    std::fs::create_dir_all(&src).map_err(|e| io(&src.display().to_string(), e))?;
    let (shape, loops) = if cfg.quick {
        (QUICK, 5_000)
    } else {
        (FULL, 40_000)
    };
    let tree = build(&src, &shape, cfg.object)?;
    let subjects = match cfg.subject {
        Some(ctx) => {
            let p = base.join("subjects");
            std::fs::write(&p, format!("default {ctx}\n"))
                .map_err(|e| io(&p.display().to_string(), e))?;
            Some(p)
        }
        None => None,
    };
    let variants: [(&str, bool, bool); 3] = [
        ("no checks", false, false),
        ("enforcing", true, true),
        ("fast paths off", true, false),
    ];
    for (name, checks, fast) in variants {
        let mp = base.join(name.replace(' ', "-"));
        std::fs::create_dir_all(&mp).map_err(|e| io(&mp.display().to_string(), e))?;
        let opts = Options {
            source: src.clone(),
            mountpoint: mp.clone(),
            policy: cfg.policy.to_path_buf(),
            file_contexts: None,
            path_prefix: src.clone(),
            subjects: subjects.clone(),
            booleans: None,
            permissive: false,
            audit_log: None,
            fast_paths: fast,
            checks: checks && !cfg.control,
            xattr: None,
            unsafe_xattr: false,
            max_node_fds: None,
        };
        let core = Arc::new(Core::new(opts).map_err(|e| CliError::from(e.to_string()))?);
        let session = seaccess_fs::fuse::spawn(core.clone(), &mp, 2)
            .map_err(|e| io(&format!("mounting {}", mp.display()), e))?;
        s.targets.push(Target {
            root: mp,
            core: Some(core),
            session: Some(session),
        });
    }
    let mut bindfs_left_out = (!cfg.bindfs).then(|| "--no-bindfs".to_string());
    if cfg.bindfs {
        let mp = base.join("bindfs");
        std::fs::create_dir_all(&mp).map_err(|e| io(&mp.display().to_string(), e))?;
        let st = std::process::Command::new("bindfs")
            .args([
                "--multithreaded",
                "-o",
                "attr_timeout=0,entry_timeout=0,negative_timeout=0,direct_io",
            ])
            .arg(&src)
            .arg(&mp)
            .status();
        match st {
            Ok(st) if st.success() && wait_mounted(&mp) => s.targets.push(Target {
                root: mp,
                core: None,
                session: None,
            }),
            Ok(st) => bindfs_left_out = Some(format!("it exited with {st}")),
            Err(e) => bindfs_left_out = Some(format!("{e}; `make deps` installs it")),
        }
    }
    type Exp = fn(&Path, &Tree, usize) -> Result<usize, CliError>;
    // Each experiment is cut into short units (a directory of the walk, 500 reads and writes,
    // 20 deep stats), and each unit runs on every mount back to back, in an order that
    // rotates from unit to unit and round to round: a slow moment of the machine spoils one
    // unit's comparison, not the experiment's. Overheads are medians over units and rounds of
    // a unit's time on a mount against its time on the mount without checks.
    let units = [tree.dirs.len(), loops / 500, loops / 400];
    let exps: [(&str, &str, Exp); 3] = [
        ("treewalk", "tree walk (stat+open per file)", tree_walk),
        ("readwrite", "read/write 1 byte", read_write),
        ("pathwalk", "path walk (stat, depth 14)", path_walk),
    ];
    let nt = s.targets.len();
    let mut ratios = vec![vec![Vec::new(); nt]; exps.len()];
    let mut per_op = vec![vec![Vec::new(); nt]; exps.len()];
    let mut lookups = vec![vec![0.0f64; nt]; exps.len()];
    for (ei, (_, _, f)) in exps.iter().enumerate() {
        for t in &s.targets {
            for u in 0..units[ei].min(tree.dirs.len()) {
                f(&t.root, &tree, u)?; // warm: callers, nodes, the cache
            }
        }
        let before: Vec<Option<u64>> = s
            .targets
            .iter()
            .map(|t| {
                t.core
                    .as_ref()
                    .map(|c| c.object_manager().counters().total())
            })
            .collect();
        let mut ops_total = 0usize;
        for r in 0..cfg.rounds {
            for u in 0..units[ei] {
                let mut ns = vec![0f64; nt];
                for k in 0..nt {
                    let ti = (r + u + k) % nt;
                    let start = Instant::now();
                    let ops = f(&s.targets[ti].root, &tree, u)?;
                    ns[ti] = start.elapsed().as_nanos() as f64 / ops as f64;
                    if ti == 0 {
                        ops_total += ops;
                    }
                }
                for ti in 0..nt {
                    ratios[ei][ti].push(ns[ti] / ns[0]);
                    per_op[ei][ti].push(ns[ti]);
                }
            }
        }
        for (ti, t) in s.targets.iter().enumerate() {
            if let (Some(b), Some(c)) = (before[ti], &t.core) {
                lookups[ei][ti] =
                    (c.object_manager().counters().total() - b) as f64 / ops_total as f64;
            }
        }
    }
    let rows = exps
        .iter()
        .enumerate()
        .map(|(ei, (name, title, _))| {
            let m: Vec<f64> = (0..nt).map(|t| median(per_op[ei][t].clone())).collect();
            let q: Vec<f64> = (0..nt).map(|t| median(ratios[ei][t].clone())).collect();
            let vs = (nt > 3).then(|| {
                median(
                    ratios[ei][1]
                        .iter()
                        .zip(&ratios[ei][3])
                        .map(|(e, b)| e / b)
                        .collect(),
                )
            });
            MountRow {
                name,
                title,
                none_ns: m[0],
                fast_ns: m[1],
                fast_overhead_pct: (q[1] - 1.0) * 100.0,
                lookups_per_op_fast: lookups[ei][1],
                slow_ns: m[2],
                slow_overhead_pct: (q[2] - 1.0) * 100.0,
                lookups_per_op_slow: lookups[ei][2],
                bindfs_ns: (nt > 3).then(|| m[3]),
                vs_bindfs: vs,
            }
        })
        .collect();
    drop(s);
    Ok(MountRun {
        dirs: tree.dirs.len(),
        files: shape.files,
        rounds: cfg.rounds,
        threads: 2,
        control: cfg.control,
        bindfs_left_out,
        rows,
    })
}

/// One experiment on the mounts: per operation, the medians on each mount, and the overheads
/// (medians of a unit's time on a mount against its time on the mount without checks).
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct MountRow {
    /// The lab's name: treewalk, readwrite or pathwalk.
    pub name: &'static str,
    pub title: &'static str,
    pub none_ns: f64,
    pub fast_ns: f64,
    pub fast_overhead_pct: f64,
    pub lookups_per_op_fast: f64,
    pub slow_ns: f64,
    pub slow_overhead_pct: f64,
    pub lookups_per_op_slow: f64,
    /// bindfs's time per operation, and the enforcing mount's against it (under 1: faster).
    pub bindfs_ns: Option<f64>,
    pub vs_bindfs: Option<f64>,
}

/// A run of the three experiments on the mounts.
#[derive(Clone, Debug, serde::Serialize)]
pub(crate) struct MountRun {
    pub dirs: usize,
    pub files: usize,
    pub rounds: usize,
    pub threads: usize,
    pub control: bool,
    /// Why bindfs is not in the run, when it is not.
    pub bindfs_left_out: Option<String>,
    pub rows: Vec<MountRow>,
}

/// What a mount run needs.
pub(crate) struct MountConfig<'a> {
    pub policy: &'a Path,
    /// The context every caller of the mounts acts with (a subjects file's `default` rule);
    /// None: the mount's own default.
    pub subject: Option<&'a str>,
    pub object: &'a str,
    pub rounds: usize,
    pub quick: bool,
    pub dir: Option<&'a Path>,
    pub bindfs: bool,
    pub control: bool,
}

/// Why the mounts cannot be measured here, if they cannot (no /dev/fuse, no fusermount3).
pub(crate) fn unavailable() -> Option<String> {
    if !Path::new("/dev/fuse").exists() {
        return Some("no /dev/fuse".into());
    }
    let found = std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join("fusermount3").exists()));
    (!found).then(|| "no fusermount3 (`make deps` installs fuse3)".into())
}

pub(crate) fn run(out: &mut Out, a: &MountBenchArgs) -> Result<(), CliError> {
    let cfg = MountConfig {
        policy: &a.policy,
        subject: None,
        object: &a.object,
        rounds: a.rounds,
        quick: a.quick,
        dir: a.dir.as_deref(),
        bindfs: !a.no_bindfs,
        control: a.control,
    };
    let r = measure(&cfg)?;
    if let Some(why) = &r.bindfs_left_out {
        writeln!(out, "(bindfs left out: {why})")?;
    }
    writeln!(
        out,
        "seaccess-lab bench mount: {} directories, {} files; {} rounds of units run on each mount back to back; medians; {} request threads per seaccess mount, bindfs --multithreaded",
        r.dirs, r.files, r.rounds, r.threads
    )?;
    if r.control {
        writeln!(out, "CONTROL RUN: the enforcing mounts run no checks; their overheads are the method's noise")?;
    }
    writeln!(out, "| experiment | no checks | enforcing (fast paths) | overhead | lookups/op | fast paths off | overhead | lookups/op | bindfs | enforcing vs bindfs |")?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|---|")?;
    let us = |x: f64| format!("{:.2} µs", x / 1000.0);
    for m in &r.rows {
        writeln!(
            out,
            "| {} | {} | {} | {:+.1}% | {:.2} | {} | {:+.1}% | {:.2} | {} | {} |",
            m.title,
            us(m.none_ns),
            us(m.fast_ns),
            m.fast_overhead_pct,
            m.lookups_per_op_fast,
            us(m.slow_ns),
            m.slow_overhead_pct,
            m.lookups_per_op_slow,
            m.bindfs_ns.map_or("-".into(), us),
            m.vs_bindfs.map_or("-".into(), |x| format!("{x:.2}x"))
        )?;
    }
    writeln!(out, "(per operation: a tree walk's is one file's stat and open; \"enforcing vs bindfs\" under 1.00x is faster than bindfs)")?;
    if !a.no_objmgr {
        let server = Arc::new(crate::load_path(&a.policy)?);
        let policy = a.policy.to_string_lossy().into_owned();
        let dir = a.dir.clone().unwrap_or_else(std::env::temp_dir);
        let cfg = seaccess_lab::objmgr_bench::Config {
            policy: &policy,
            rounds: 6,
            shape: if a.quick {
                seaccess_lab::objmgr_bench::Shape::QUICK
            } else {
                seaccess_lab::objmgr_bench::Shape::FULL
            },
            rw_ops: if a.quick { 20_000 } else { 200_000 },
            subject: None,
            object: Some(&a.object),
            dir: &dir,
            control: false,
        };
        let r = seaccess_lab::objmgr_bench::run(server, &cfg).map_err(|e| e.to_string())?;
        writeln!(out, "in process (`seaccess-lab bench objmgr`, the same tree shape: hooks around direct system calls, no FUSE):")?;
        writeln!(out, "| experiment | vanilla | fast paths | overhead | lookups/op | fast paths off | overhead | lookups/op |")?;
        writeln!(out, "|---|---|---|---|---|---|---|---|")?;
        for (name, f) in [
            ("tree walk", &r.treewalk),
            ("read/write 1 byte", &r.readwrite),
            ("path walk", &r.pathwalk),
        ] {
            writeln!(
                out,
                "| {name} | {:.0} ns | {:.0} ns | {:+.2}% | {:.2} | {:.0} ns | {:+.2}% | {:.2} |",
                f.vanilla_ns,
                f.fast_ns,
                f.fast_overhead_pct,
                f.lookups_per_op_fast,
                f.slow_ns,
                f.slow_overhead_pct,
                f.lookups_per_op_slow
            )?;
        }
    }
    Ok(())
}
