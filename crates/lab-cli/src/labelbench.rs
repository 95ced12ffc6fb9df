//! `seaccess-lab bench label`: the labeling crate beside libselinux 3.4 in one run, on the same
//! file_contexts and the same paths (this machine's tree): a handle's open time and memory, a
//! warm lookup, and the tree walks (`--plan` against `find`, `--apply -n` against libselinux's
//! lookups plus `find`, the walk-and-lookup part of restorecon, which exits on a kernel without
//! SELinux). Not a timed test: it prints medians and ratios.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
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

pub(crate) fn run(out: &mut Out, a: &LabelBenchArgs) -> Result<(), CliError> {
    let fc_path = a
        .file_contexts
        .clone()
        .unwrap_or_else(crate::defaults::file_contexts);
    let rounds = a.rounds.max(1);
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
    let field = |name: &str| -> f64 {
        text.lines()
            .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
            .unwrap_or(f64::NAN)
    };
    let (c_open_us, c_rss, c_lookup_ns) = (
        field("open_us "),
        field("open_rss_kib "),
        field("lookup_ns "),
    );

    // Ours: open (text or .bin, as libselinux chooses), the compiled form, lookups. Opened as
    // selabel_open opens without validating: duplicate specifications accepted, not searched.
    let plain = OpenOptions {
        allow_duplicates: true,
        ..Default::default()
    };
    let before = rss_kib();
    let fc = FileContexts::open_with(&fc_path, &plain).map_err(|e| e.to_string())?;
    let rss = rss_kib().saturating_sub(before);
    let mut opens = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let h = FileContexts::open_with(&fc_path, &plain).map_err(|e| e.to_string())?;
        opens.push(t.elapsed().as_secs_f64() * 1e6);
        drop(h);
    }
    let open_us = median(opens);
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
