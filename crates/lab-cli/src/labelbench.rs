//! `seaccess-lab bench label`: the labeling crate beside libselinux 3.4 in one run, on the same
//! file_contexts and the same paths (this machine's tree): a handle's open time and memory, a
//! warm lookup, and the tree walks (`--plan` against `find`, `--apply -n` against libselinux's
//! lookups plus `find`, the walk-and-lookup part of restorecon, which exits on a kernel without
//! SELinux). Not a timed test: it prints medians and ratios.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use seaccess_label::{FileContexts, FileKind, OpenOptions};

use crate::output::{CliError, Out};

#[derive(clap::Args)]
pub(crate) struct LabelBenchArgs {
    /// The file_contexts (default: the installed policy's).
    #[arg(long = "file-contexts", short = 'f')]
    file_contexts: Option<PathBuf>,
    /// libselinux's side (tests/label/selabel_query.c, built by `make label-peer`).
    #[arg(long, default_value = "target/label/selabel_query")]
    peer: PathBuf,
    /// Timed rounds; medians are reported.
    #[arg(long, default_value_t = 5)]
    rounds: usize,
    /// The trees whose paths are looked up and walked.
    #[arg(long, default_value = "/usr")]
    tree: Vec<PathBuf>,
    /// Only the open, on every set installed here (/etc/selinux/*/contexts/files): each set's
    /// compiled `.bin` as installed and its text alone (a copy without the `.bin`), each side
    /// in a fresh process, against selabel_open on the same files. No lookups, no walks.
    #[arg(long)]
    sets: bool,
    /// One side of `--sets`: open `-f` in this fresh process and print its open time and
    /// handle memory.
    #[arg(long, hide = true)]
    open_only: bool,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn rss_kib() -> u64 {
    // /proc/self/statm's second field is resident pages.
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|v| v.parse::<u64>().ok())
        })
        .map_or(0, |pages| pages * 4)
}

/// Anonymous resident memory, KiB: smaps_rollup's `Anonymous`, counted by walking the page
/// tables (exact, where statm's count is per-CPU and moves by a few hundred KiB between runs
/// on recent kernels), and without the program's code pages, which a first open faults in
/// (this binary's, a much larger file than libselinux's, spread its open's code over more).
fn anon_kib() -> u64 {
    std::fs::read_to_string("/proc/self/smaps_rollup")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("Anonymous:")
                    .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            })
        })
        .unwrap_or(0)
}

fn tree(roots: &[PathBuf]) -> Vec<(Vec<u8>, FileKind)> {
    let mut out = Vec::new();
    for r in roots {
        for e in walkdir::WalkDir::new(r)
            .follow_links(false)
            .same_file_system(true)
            .into_iter()
            .flatten()
        {
            let p = e.path().as_os_str().as_bytes().to_vec();
            if !p.contains(&b'\t') && !p.contains(&b'\n') {
                // walkdir's entries are lstat'ed (links not followed): the mode is the entry's.
                let kind = e
                    .metadata()
                    .map_or(FileKind::Any, |m| FileKind::from_mode(m.mode()));
                out.push((p, kind));
            }
        }
    }
    out
}

fn time_cmd(rounds: usize, mut make: impl FnMut() -> Command) -> Result<f64, CliError> {
    let mut t = Vec::new();
    for _ in 0..rounds {
        let start = Instant::now();
        // --plan exits 1 when something differs: only the time matters, not the status.
        make()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(|e| format!("running a timed command: {e}"))?;
        t.push(start.elapsed().as_secs_f64());
    }
    Ok(median(t))
}

/// Opened as selabel_open opens without validating: duplicate specifications accepted, not
/// searched; expressions compiled when a lookup first needs them.
const PLAIN: OpenOptions<'static> = OpenOptions {
    base_only: false,
    validate: None,
    allow_duplicates: true,
    check_regexes: false,
};

/// Open time and open-and-one-lookup time (medians of `rounds`, after the first open) and the
/// first open's resident growth (all, and anonymous), of this process: the same figures,
/// measured the same way, as selabel_query's `--bench`.
fn open_here(fc_path: &Path, rounds: usize) -> Result<(f64, f64, (u64, u64), usize), CliError> {
    let before = (rss_kib(), anon_kib());
    let fc = FileContexts::open_with(fc_path, &PLAIN).map_err(|e| e.to_string())?;
    let rss = (
        rss_kib().saturating_sub(before.0),
        anon_kib().saturating_sub(before.1),
    );
    let mut opens = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let h = FileContexts::open_with(fc_path, &PLAIN).map_err(|e| e.to_string())?;
        opens.push(t.elapsed().as_secs_f64() * 1e6);
        drop(h);
    }
    // What a program that labels one file pays: the open, and the first lookup, which builds
    // what the open leaves for it (the prefix index).
    let mut with_lookup = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let h = FileContexts::open_with(fc_path, &PLAIN).map_err(|e| e.to_string())?;
        let _ = h.lookup(b"/etc/hostname", FileKind::File);
        with_lookup.push(t.elapsed().as_secs_f64() * 1e6);
        drop(h);
    }
    Ok((median(opens), median(with_lookup), rss, fc.specs().len()))
}

/// `name value` lines, as both sides print them.
fn field(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| {
            l.strip_prefix(name)
                .and_then(|v| v.strip_prefix(' '))
                .and_then(|v| v.trim().parse().ok())
        })
        .unwrap_or(f64::NAN)
}

fn run_for_output(mut c: Command, what: &str) -> Result<String, CliError> {
    let o = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            if let Some(mut stdin) = child.stdin.take() {
                // selabel_query's bench wants a lookup to time; one is enough here.
                stdin.write_all(b"lookup\tfile\t/etc/hostname\n")?;
            }
            child.wait_with_output()
        })
        .map_err(|e| format!("{what}: {e}"))?;
    if !o.status.success() {
        return Err(format!("{what}: {}", String::from_utf8_lossy(&o.stderr).trim()).into());
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// A copy of a set's text files alone (no `.bin` beside them), so both libraries read text.
fn text_copy(fc: &Path, dir: &Path) -> Result<PathBuf, CliError> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dest = dir.join("file_contexts");
    for suffix in ["", ".homedirs", ".local", ".subs", ".subs_dist"] {
        let mut from = fc.as_os_str().to_os_string();
        from.push(suffix);
        let from = PathBuf::from(from);
        if from.is_file() {
            let mut to = dest.as_os_str().to_os_string();
            to.push(suffix);
            std::fs::copy(&from, PathBuf::from(to))
                .map_err(|e| format!("{}: {e}", from.display()))?;
        }
    }
    Ok(dest)
}

/// `--sets`: every installed set, `.bin` and text, both libraries, each side a fresh process.
fn run_sets(out: &mut Out, a: &LabelBenchArgs, rounds: usize) -> Result<(), CliError> {
    let root = Path::new("/etc/selinux");
    let mut sets: Vec<PathBuf> = std::fs::read_dir(root)
        .map_err(|e| format!("{}: {e}", root.display()))?
        .flatten()
        .map(|e| e.path().join("contexts/files/file_contexts"))
        .filter(|p| p.is_file())
        .collect();
    sets.sort();
    let me = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let tmp = std::env::temp_dir().join(format!("seaccess-bench-sets-{}", std::process::id()));
    writeln!(
        out,
        "open of every installed set, {rounds} rounds, medians; memory: the first open's growth in anonymous resident memory (the handle's pages), and in all resident memory (statm, with the code pages the first open faults in); each side in a fresh process"
    )?;
    writeln!(out, "| set | form | specs | selabel_open, us | seaccess, us | speed | open and one lookup, us (libselinux / seaccess) | speed | libselinux, KiB | seaccess, KiB | memory | resident, KiB (libselinux / seaccess) |")?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|---|")?;
    let result = (|| -> Result<(), CliError> {
        for fc in &sets {
            let name = fc
                .ancestors()
                .nth(3)
                .and_then(|d| d.file_name())
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            let bin = {
                let mut b = fc.as_os_str().to_os_string();
                b.push(".bin");
                PathBuf::from(b)
            };
            let mut forms = Vec::new();
            if bin.is_file() {
                forms.push((".bin", fc.clone()));
            }
            forms.push(("text", text_copy(fc, &tmp.join(&name))?));
            for (form, path) in forms {
                let mut c = Command::new(&a.peer);
                c.arg("--bench").arg(rounds.to_string()).arg(&path);
                let theirs = run_for_output(c, &a.peer.display().to_string())?;
                let mut c = Command::new(&me);
                c.args(["bench", "label", "--open-only", "--rounds"])
                    .arg(rounds.to_string())
                    .arg("-f")
                    .arg(&path);
                let ours = run_for_output(c, "seaccess-lab bench label --open-only")?;
                let (c_us, c_kib) = (field(&theirs, "open_us"), field(&theirs, "open_anon_kib"));
                let (us, kib) = (field(&ours, "open_us"), field(&ours, "open_anon_kib"));
                let (c_lu, lu) = (
                    field(&theirs, "open_lookup_us"),
                    field(&ours, "open_lookup_us"),
                );
                writeln!(
                    out,
                    "| {name} | {form} | {:.0} | {c_us:.0} | {us:.0} | {:.2}x | {c_lu:.0} / {lu:.0} | {:.2}x | {c_kib:.0} | {kib:.0} | {:.2}x | {:.0} / {:.0} |",
                    field(&ours, "specs"),
                    c_us / us,
                    c_lu / lu,
                    kib / c_kib,
                    field(&theirs, "open_rss_kib"),
                    field(&ours, "open_rss_kib"),
                )?;
            }
        }
        Ok(())
    })();
    let _ = std::fs::remove_dir_all(&tmp);
    result
}

pub(crate) fn run(out: &mut Out, a: &LabelBenchArgs) -> Result<(), CliError> {
    let fc_path = a
        .file_contexts
        .clone()
        .unwrap_or_else(crate::defaults::file_contexts);
    let rounds = a.rounds.max(1);
    if a.open_only {
        let (us, lookup_us, kib, specs) = open_here(&fc_path, rounds)?;
        writeln!(
            out,
            "open_us {us:.0}\nopen_lookup_us {lookup_us:.0}\nopen_rss_kib {}\nopen_anon_kib {}\nspecs {specs}",
            kib.0, kib.1
        )?;
        return Ok(());
    }
    if a.sets {
        return run_sets(out, a, rounds);
    }
    let paths = tree(&a.tree);
    let mut queries = Vec::new();
    for (p, k) in &paths {
        queries.extend_from_slice(format!("lookup\t{}\t", k.name()).as_bytes());
        queries.extend_from_slice(p);
        queries.push(b'\n');
    }
    writeln!(
        out,
        "file_contexts {} ; {} paths under {:?} ; {rounds} rounds, medians",
        fc_path.display(),
        paths.len(),
        a.tree
    )?;

    // libselinux's side.
    let mut child = Command::new(&a.peer)
        .arg("--bench")
        .arg(rounds.to_string())
        .arg(&fc_path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e} (run `make label-peer`)", a.peer.display()))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(&queries)
            .map_err(|e| format!("feeding {}: {e}", a.peer.display()))?;
    }
    let o = child
        .wait_with_output()
        .map_err(|e| format!("{}: {e}", a.peer.display()))?;
    let text = String::from_utf8_lossy(&o.stdout);
    let (c_open_us, c_rss, c_lookup_ns) = (
        field(&text, "open_us"),
        field(&text, "open_rss_kib"),
        field(&text, "lookup_ns"),
    );

    // Ours: open (text or .bin, as libselinux chooses), the compiled form, lookups.
    let (open_us, _, (rss, _), _) = open_here(&fc_path, rounds)?;
    let fc = FileContexts::open_with(&fc_path, &PLAIN).map_err(|e| e.to_string())?;
    let compiled = std::env::temp_dir().join(format!("seaccess-bench-{}.fc", std::process::id()));
    seaccess_label::compiled::write(&fc, &compiled).map_err(|e| e.to_string())?;
    let mut copens = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let h = seaccess_label::compiled::load(&compiled).map_err(|e| e.to_string())?;
        copens.push(t.elapsed().as_secs_f64() * 1e6);
        drop(h);
    }
    let _ = std::fs::remove_file(&compiled);
    let compiled_us = median(copens);
    let pass = |fc: &FileContexts| -> Result<f64, CliError> {
        let t = Instant::now();
        for (p, k) in &paths {
            std::hint::black_box(fc.lookup(p, *k).map_err(|e| e.to_string())?);
        }
        Ok(t.elapsed().as_secs_f64() * 1e9 / paths.len().max(1) as f64)
    };
    pass(&fc)?;
    let mut looks = Vec::new();
    for _ in 0..rounds {
        looks.push(pass(&fc)?);
    }
    let lookup_ns = median(looks);

    // Walks: find, --plan (two lookups an object), --apply -n.
    let me = crate::defaults::seaccess_program()?;
    let find = time_cmd(rounds, || {
        let mut c = Command::new("find");
        c.args(&a.tree);
        c
    })?;
    let plan = time_cmd(rounds, || {
        let mut c = Command::new(&me);
        c.arg("label")
            .arg("--plan")
            .arg("--from")
            .arg(&fc_path)
            .arg("-f")
            .arg(&fc_path)
            .arg("-x")
            .args(&a.tree);
        c
    })?;
    let dry = time_cmd(rounds, || {
        let mut c = Command::new(&me);
        c.arg("label")
            .arg("--apply")
            .arg("-n")
            .arg("-f")
            .arg(&fc_path)
            .arg("-x")
            .args(&a.tree);
        c
    })?;
    let c_walk = find + c_lookup_ns * paths.len() as f64 / 1e9;

    writeln!(out, "| measure | libselinux 3.4 | seaccess | ratio |")?;
    writeln!(out, "|---|---|---|---|")?;
    writeln!(out, "| warm lookup, ns (mean over the tree) | {c_lookup_ns:.0} | {lookup_ns:.0} | {:.1}x faster |", c_lookup_ns / lookup_ns)?;
    writeln!(
        out,
        "| open, us (selabel_open / FileContexts::open) | {c_open_us:.0} | {open_us:.0} | {:.1}x |",
        c_open_us / open_us
    )?;
    writeln!(out, "| open of seaccess's compiled form, us | {c_open_us:.0} | {compiled_us:.0} | {:.1}x faster |", c_open_us / compiled_us)?;
    writeln!(
        out,
        "| memory of an open handle, KiB | {c_rss:.0} | {rss} | {:.1}x |",
        c_rss / rss.max(1) as f64
    )?;
    writeln!(
        out,
        "| label --plan vs find, s | find {find:.2} | {plan:.2} | {:.2}x find's time |",
        plan / find
    )?;
    writeln!(out, "| label --apply -n vs find + libselinux lookups, s | {c_walk:.2} | {dry:.2} | {:.1}x faster |", c_walk / dry)?;
    Ok(())
}
