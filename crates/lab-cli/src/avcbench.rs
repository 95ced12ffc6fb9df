//! `seaccess-lab bench avc`: the production cache against the comparison designs, in one run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use seaccess_lab::avc_bench::AvcBench;

use crate::output::{note, CliError, Out};

#[derive(clap::Args)]
pub(crate) struct AvcArgs {
    /// The compiled policy whose decisions are cached.
    #[arg(long, short = 'p')]
    policy: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Seconds per measurement.
    #[arg(long, default_value_t = 0.5)]
    seconds: f64,
    /// (Source, target, class) triples in the working set. The default fits libselinux 3.4's
    /// cache (410 entries), so that every design is measured on hits alone.
    #[arg(long, default_value_t = 400)]
    keys: usize,
    /// The production cache's capacity.
    #[arg(long, default_value_t = seaccess_avc::DEFAULT_CAPACITY)]
    capacity: usize,
    /// Thread counts to measure.
    #[arg(long, value_delimiter = ',', default_value = "1,2,16")]
    threads: Vec<usize>,
    /// Skip the instruction count (it runs the hit loop under valgrind).
    #[arg(long)]
    no_callgrind: bool,
    /// The libselinux AVC peer (built by `make peers`); measured beside seaccess when present.
    #[arg(long, default_value = "target/peers/libselinux-avc-peer")]
    peer: PathBuf,
}

/// Limits on the sizes asked for: beyond them a run measures memory or the scheduler rather than
/// the cache, or does not fit in memory at all (the libselinux peer is sent each triple as text).
const MAX_KEYS: usize = 1 << 20;
const MAX_CAPACITY: usize = 1 << 22;
const MAX_THREADS: usize = 1024;

pub(crate) fn run(out: &mut Out, a: &AvcArgs) -> Result<(), CliError> {
    if !(a.seconds > 0.0 && a.seconds <= 60.0) {
        return Err(format!(
            "--seconds {}: must be more than 0 and at most 60",
            a.seconds
        )
        .into());
    }
    if a.keys == 0 || a.capacity == 0 || a.threads.is_empty() || a.threads.contains(&0) {
        return Err("--keys, --capacity and every --threads count must be at least 1".into());
    }
    if a.keys > MAX_KEYS {
        return Err(format!("--keys {}: at most {MAX_KEYS}", a.keys).into());
    }
    if a.capacity > MAX_CAPACITY {
        return Err(format!("--capacity {}: at most {MAX_CAPACITY}", a.capacity).into());
    }
    if let Some(t) = a.threads.iter().find(|&&t| t > MAX_THREADS) {
        return Err(format!("--threads {t}: at most {MAX_THREADS}").into());
    }
    let image = seaccess_policy::read_file(&a.policy).map_err(|e| e.to_string())?;
    let server = Arc::new(crate::load_path(&a.policy)?);
    let policy = a.policy.to_string_lossy().into_owned();
    let peer = a.peer.exists().then_some(a.peer.as_path());
    if peer.is_none() {
        note(&format!(
            "note: no libselinux AVC peer at {} (run `make peers`); measuring without it",
            a.peer.display()
        ));
    }
    let cfg = seaccess_lab::avc_bench::Config {
        policy: &policy,
        image: &image,
        threads: &a.threads,
        dur: Duration::from_secs_f64(a.seconds),
        keys: a.keys,
        capacity: a.capacity,
        peer,
    };
    let r = seaccess_lab::avc_bench::run(server, &cfg).map_err(|e| e.to_string())?;
    let ir = if a.no_callgrind {
        None
    } else {
        instructions_per_hit(&a.policy)
    };
    if a.json {
        writeln!(out, "{}", r.to_json(ir))?;
        return Ok(());
    }
    print_table(out, &r, &a.threads, ir)
}

fn print_table(
    out: &mut Out,
    r: &AvcBench,
    threads: &[usize],
    ir: Option<f64>,
) -> Result<(), CliError> {
    writeln!(
        out,
        "policy {}: {} triples in the working set, cache capacity {}",
        r.policy, r.keys, r.capacity
    )?;
    writeln!(out, "hit path, ns per call per thread / million calls per second (all threads), median of 5 rounds:")?;
    writeln!(
        out,
        "{:<16}{}",
        "design",
        threads
            .iter()
            .map(|t| format!("{:>22}", format!("{t} thread(s)")))
            .collect::<String>()
    )?;
    for (name, rows) in &r.designs {
        let cells: String = rows
            .iter()
            .map(|(_, ns, ops)| format!("{:>22}", format!("{ns:.1} / {:.1}", ops / 1e6)))
            .collect();
        writeln!(out, "{name:<16}{cells}")?;
    }
    writeln!(
        out,
        "hit path, 1 thread, median of 5: {:.1} ns (goal <= 10 ns)",
        r.hit_ns_1t
    )?;
    match ir {
        Some(ir) => writeln!(out, "instructions per hit (callgrind): {ir:.1}")?,
        None => writeln!(
            out,
            "instructions per hit: not measured (valgrind missing or --no-callgrind)"
        )?,
    }
    writeln!(out, "miss path: {:.0} ns", r.miss_ns)?;
    let s = &r.reload;
    writeln!(
        out,
        "{} policy changes (boolean commits and full reloads) under a 2-thread hit storm, {} calls:",
        s.changes, s.calls
    )?;
    writeln!(
        out,
        "  the call in which a reader first met a new policy ({} of them): median {:.0} ns, longest {:.0} ns",
        s.transitions, s.transition_median_ns, s.transition_max_ns
    )?;
    writeln!(
        out,
        "  after boolean commits: median {:.0} ns, 90th percentile {:.0} ns; after full reloads: {:.0} ns, {:.0} ns",
        s.commit.0, s.commit.1, s.reload.0, s.reload.1
    )?;
    writeln!(
        out,
        "  one ordinary miss amid hits (the same storm without changes, {} triples never asked before): median {:.0} ns, 90th percentile {:.0} ns",
        s.misses, s.miss.0, s.miss.1
    )?;
    writeln!(
        out,
        "  the changing thread, the cache's recomputation of its {} decisions under the new policy included: a boolean commit {:.1} µs, a reload {:.1} ms (medians)",
        s.refreshed, s.commit_us, s.reload_ms
    )?;
    let (m, p) = s.vs_miss();
    writeln!(out, "  a change stalls a reader {m:.2}x one miss at the median, {p:.2}x at the 90th percentile (goal <= 1x)")?;
    writeln!(
        out,
        "  all calls the scheduler did not interrupt: 99.99th percentile {:.0} ns, longest {:.0} ns; the same storm without changes: {:.0} ns, {:.0} ns",
        s.p9999_ns, s.max_ns, s.baseline_p9999_ns, s.baseline_max_ns
    )?;
    let hr: Vec<String> = r
        .hit_ratios
        .iter()
        .map(|(c, h)| format!("{:.1}% at {c}", h * 100.0))
        .collect();
    writeln!(
        out,
        "hit ratio on a Zipf stream over 50,000 triples: {}",
        hr.join(", ")
    )?;
    let f = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.2}x"));
    writeln!(
        out,
        "2 threads vs 1: {} (goal >= 1.8x)",
        f(AvcBench::ratio(r.ops("seaccess", 2), r.ops("seaccess", 1)))
    )?;
    writeln!(
        out,
        "16 threads vs 2: {} (goal >= 0.9x)",
        f(AvcBench::ratio(r.ops("seaccess", 16), r.ops("seaccess", 2)))
    )?;
    writeln!(
        out,
        "2 threads vs the global mutex: {} (goal >= 10x)",
        f(AvcBench::ratio(
            r.ops("seaccess", 2),
            r.ops("global_mutex", 2)
        ))
    )?;
    writeln!(
        out,
        "smallest lead over any design at any thread count: {}",
        f(r.lead())
    )?;
    match &r.libselinux {
        Some(Ok(p)) => {
            writeln!(
                out,
                "libselinux 3.4's AVC (its own process, same triples and decisions): {} misses, {} wrong answers; 1 thread vs libselinux: {} (goal >= 3x)",
                p.misses,
                p.wrong,
                f(AvcBench::ratio(r.ops("seaccess", 1), r.ops("libselinux", 1)))
            )?;
            if let Some(ns) = p.string_keyed_ns {
                writeln!(out, "libselinux keyed on context strings (as selinux_check_access): {ns:.1} ns a check")?;
            }
        }
        Some(Err(e)) => writeln!(out, "libselinux's AVC not measured: {e}")?,
        None => writeln!(out, "libselinux's AVC not measured: no peer (make peers)")?,
    }
    Ok(())
}

/// `count` hits on a warm cache, for callgrind.
pub(crate) fn hits(policy: &Path, count: u64) -> Result<(), CliError> {
    let engine = seaccess_engine::Engine::open(policy).map_err(|e| e.to_string())?;
    let work = seaccess_lab::avc_bench::working_set(engine.server(), 1024, 1);
    if work.is_empty() {
        return Err(format!("{}: no valid contexts to query", policy.display()).into());
    }
    let avc = &**engine.avc();
    for &(s, t, c) in &work {
        let _ = avc.decide(s, t, c);
    }
    let sink = seaccess_lab::avc_bench::cycle(avc, &work, &mut 0, count);
    std::hint::black_box(sink);
    Ok(())
}

/// Instructions per hit: callgrind's totals for two hit counts, differenced (the loop's own
/// few instructions included).
fn instructions_per_hit(policy: &Path) -> Option<f64> {
    let me = std::env::current_exe().ok()?;
    let policy = policy.to_string_lossy();
    let args = [
        "bench", "avc-hits", "--count", "{count}", "--policy", &policy,
    ];
    crate::callgrind::per_op(
        &me,
        &args,
        (100_000, 1_100_000),
        None,
        "instructions per hit",
    )
    .ok()
}
