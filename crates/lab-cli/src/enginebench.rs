//! `seaccess-lab bench engine`: seaccess against libsepol (through the sepol-oracle program) on the same
//! machine, in the same run, on the same queries; prints ratios. Never a timed test.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

use seaccess_types::{ClassId, Sid};

use crate::output::{CliError, Out};

#[derive(clap::Args)]
pub(crate) struct BenchArgs {
    /// The compiled policy to measure.
    #[arg(long, short = 'p')]
    policy: PathBuf,
    /// The sepol-oracle program (built by `make oracle`).
    #[arg(long, default_value = "target/oracle/sepol-oracle")]
    oracle: PathBuf,
    /// Random queries for the in-process compute_av comparison.
    #[arg(long, default_value_t = 1_000_000)]
    queries: usize,
    /// Queries for the end-to-end batch comparison.
    #[arg(long, default_value_t = 200_000)]
    batch_queries: usize,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print only the measurements and ratios as one JSON object.
    #[arg(long)]
    json: bool,
}

fn run_capture(cmd: &mut Command, input: Option<&[u8]>) -> Result<(Vec<u8>, String, f64), String> {
    let t0 = Instant::now();
    let mut child = cmd
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    if let (Some(data), Some(mut stdin)) = (input, child.stdin.take()) {
        let data = data.to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&data);
        });
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    let secs = t0.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "{cmd:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok((
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
        secs,
    ))
}

/// Peak resident memory (KiB) of a command, through GNU time.
fn peak_rss_kib(cmd: &[&str]) -> Option<u64> {
    let out = Command::new("/usr/bin/time")
        .arg("-f")
        .arg("%M")
        .args(cmd)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines().last()?.trim().parse().ok()
}

fn field(s: &str, key: &str) -> Option<f64> {
    let mut it = s.split_whitespace();
    while let Some(w) = it.next() {
        if w == key {
            return it.next()?.parse().ok();
        }
    }
    None
}

/// `--json`: the measurements and ratios, in this order.
#[derive(serde::Serialize)]
struct EngineReport<'a> {
    policy: &'a str,
    load_ms: Option<f64>,
    sepol_load_ms: Option<f64>,
    load_ratio: Option<f64>,
    rss_kib: Option<u64>,
    sepol_rss_kib: Option<u64>,
    compute_av_ns: Option<f64>,
    sepol_compute_av_ns: Option<f64>,
    compute_av_speedup: Option<f64>,
    queries: usize,
    batch_s: Option<f64>,
    sepol_batch_s: Option<f64>,
    batch_ratio: Option<f64>,
}

/// `v` rounded to `decimals`, or null where it is not a number (a ratio over a zero time).
fn num(v: f64, decimals: i32) -> Option<f64> {
    let scale = 10f64.powi(decimals);
    Some((v * scale).round() / scale).filter(|v| v.is_finite())
}

/// The queries are held in memory as text (about 100 bytes each), twice.
const MAX_QUERIES: usize = 10_000_000;

pub(crate) fn run(out: &mut Out, a: &BenchArgs) -> Result<(), CliError> {
    for (name, n) in [
        ("--queries", a.queries),
        ("--batch-queries", a.batch_queries),
    ] {
        if n == 0 || n > MAX_QUERIES {
            return Err(format!("{name} {n}: must be at least 1 and at most {MAX_QUERIES}").into());
        }
    }
    let oracle = a.oracle.to_string_lossy().into_owned();
    let policy = a.policy.to_string_lossy().into_owned();
    // The table, or (with --json) only the JSON object at the end.
    let mut say = |s: String| if a.json { Ok(()) } else { writeln!(out, "{s}") };
    // Queries, from libsepol's own generator: the same set for both engines.
    let (queries, _, _) = run_capture(
        Command::new(&oracle).args([
            "gen",
            &policy,
            &a.seed.to_string(),
            &a.queries.max(a.batch_queries).to_string(),
        ]),
        None,
    )?;
    let text = String::from_utf8(queries).map_err(|_| "oracle printed non-UTF-8 queries")?;
    let lines: Vec<&str> = text.lines().collect();
    let n = a.queries.min(lines.len());
    let in_process: String = lines.iter().take(n).map(|l| format!("{l}\n")).collect();
    let batch: String = lines
        .iter()
        .take(a.batch_queries)
        .map(|l| format!("{l}\n"))
        .collect();

    // 1. libsepol: load time and mean compute_av over the same queries.
    let (_, err, _) = run_capture(
        Command::new(&oracle).args(["time", &policy]),
        Some(in_process.as_bytes()),
    )?;
    let sepol_load_ms =
        field(&err, "load_ms").ok_or_else(|| format!("unexpected oracle output: {err}"))?;
    let sepol_ns = field(&err, "ns_per_compute_av")
        .ok_or_else(|| format!("unexpected oracle output: {err}"))?;

    // 2. seaccess, in this process: load time (best of several), then compute_av without a cache.
    let data = seaccess_policy::read_file(&a.policy).map_err(|e| e.to_string())?;
    let mut best = f64::MAX;
    let mut server = None;
    for _ in 0..5 {
        let t0 = Instant::now();
        // The server built by hand, not by the engine: what is timed is its load alone.
        let s = seaccess_security::SecurityServer::from_bytes(&data).map_err(|e| e.to_string())?;
        best = best.min(t0.elapsed().as_secs_f64() * 1e3);
        server = Some(s);
    }
    let server = server.ok_or("no load")?;
    let g = server.snapshot();
    let mut q: Vec<(Sid, Sid, ClassId)> = Vec::with_capacity(n);
    for l in lines.iter().take(n) {
        let mut f = l.split_whitespace();
        let (Some(s), Some(t), Some(c)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if let (Ok(s), Ok(t), Ok(c)) = (g.context_to_sid(s), g.context_to_sid(t), g.class(c)) {
            q.push((s, t, c));
        }
    }
    let mut sink = 0u32;
    let t0 = Instant::now();
    for &(s, t, c) in &q {
        if let Ok(d) = g.compute_av(s, t, c) {
            sink ^= d.allowed.0;
        }
    }
    let ours_ns = t0.elapsed().as_secs_f64() * 1e9 / q.len().max(1) as f64;
    std::hint::black_box(sink);

    // 3. Memory after load, each in its own process.
    let me = crate::defaults::seaccess_program()?;
    let me = me.to_string_lossy().into_owned();
    let sepol_rss = peak_rss_kib(&[&oracle, "time", &policy]);
    let ours_rss = peak_rss_kib(&[&me, "info", "--policy", &policy]);

    // 4. End to end: the batch command against `sepol-oracle av` on the same queries.
    let (_, _, sepol_batch) = run_capture(
        Command::new(&oracle).args(["av", &policy]),
        Some(batch.as_bytes()),
    )?;
    let (_, _, ours_batch) = run_capture(
        Command::new(&me).args(["compute-av", "--policy", &policy]),
        Some(batch.as_bytes()),
    )?;

    let load_ratio = best / sepol_load_ms;
    let speedup = sepol_ns / ours_ns;
    let batch_ratio = ours_batch / sepol_batch;
    say(format!("policy {policy}"))?;
    say(format!("load: seaccess {best:.2} ms, libsepol {sepol_load_ms:.2} ms, ratio {load_ratio:.2}x (goal <= 0.5x)"))?;
    if let (Some(o), Some(s)) = (ours_rss, sepol_rss) {
        say(format!(
            "peak RSS after load: seaccess {o} KiB, libsepol {s} KiB, ratio {:.2}x (goal <= 0.8x)",
            o as f64 / s as f64
        ))?;
    }
    say(format!(
        "compute_av, {} queries, no cache: seaccess {ours_ns:.0} ns, libsepol {sepol_ns:.0} ns, speed-up {speedup:.1}x (goal >= 20x)",
        q.len()
    ))?;
    say(format!(
        "batch end to end, {} queries: seaccess {ours_batch:.2} s, sepol-oracle av {sepol_batch:.2} s, ratio {batch_ratio:.3}x (goal <= 0.2x)",
        batch.lines().count()
    ))?;
    if a.json {
        let report = EngineReport {
            policy: &policy,
            load_ms: num(best, 3),
            sepol_load_ms: num(sepol_load_ms, 3),
            load_ratio: num(load_ratio, 3),
            rss_kib: ours_rss,
            sepol_rss_kib: sepol_rss,
            compute_av_ns: num(ours_ns, 1),
            sepol_compute_av_ns: num(sepol_ns, 1),
            compute_av_speedup: num(speedup, 2),
            queries: q.len(),
            batch_s: num(ours_batch, 3),
            sepol_batch_s: num(sepol_batch, 3),
            batch_ratio: num(batch_ratio, 4),
        };
        let text = serde_json::to_string(&report).map_err(|e| format!("the JSON report: {e}"))?;
        writeln!(out, "{text}")?;
    }
    Ok(())
}
