//! Timing a cache: the hit path at several thread counts (rounds, medians), the miss path, and
//! how much of a skewed stream a capacity keeps.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::{Duration, Instant};

use seaccess_avc::Avc;
use seaccess_types::AccessServer;

use super::workload::Triple;
use crate::designs::DecisionCache;

/// One measurement: (threads, ns per call per thread, calls per second).
pub type Row = (usize, f64, f64);

/// Rounds of the hit-path measurement.
pub(super) const ROUNDS: usize = 5;

/// `count` lookups through `cache`, cycling through `keys` from `*i` (left where it stopped),
/// with no division on the way; returns a value that depends on every answer, so that none can
/// be optimised away. No lookups when `keys` is empty.
#[inline(always)]
pub fn cycle<C: DecisionCache + ?Sized>(
    cache: &C,
    keys: &[Triple],
    i: &mut usize,
    count: u64,
) -> u32 {
    let mut sink = 0u32;
    if keys.is_empty() {
        return sink;
    }
    if *i >= keys.len() {
        *i = 0;
    }
    for _ in 0..count {
        let (s, t, c) = keys[*i];
        if let Ok(d) = cache.decide(s, t, c) {
            sink ^= d.allowed.0;
        }
        *i += 1;
        if *i == keys.len() {
            *i = 0;
        }
    }
    sink
}

/// Runs `threads` threads for `dur`, each calling `decide` on the working set from its own
/// offset; returns (ns per call per thread, total calls per second).
pub fn hit_rate<C: DecisionCache + ?Sized>(
    cache: &C,
    keys: &[Triple],
    threads: usize,
    dur: Duration,
) -> (f64, f64) {
    let stop = AtomicBool::new(false);
    let total = AtomicU64::new(0);
    let busy = AtomicU64::new(0);
    // Calls per second, summed over threads, each thread's over its own running time (so that
    // thread start-up skew is not counted as idle time), in thousandths.
    let rate_milli = AtomicU64::new(0);
    std::thread::scope(|sc| {
        for th in 0..threads {
            let (stop, total, busy, rate_milli) = (&stop, &total, &busy, &rate_milli);
            sc.spawn(move || {
                let mut i = (th * 7919) % keys.len().max(1);
                let mut n = 0u64;
                let mut sink = 0u32;
                let t0 = Instant::now();
                while !stop.load(Relaxed) {
                    sink ^= cycle(cache, keys, &mut i, 256);
                    n += 256;
                }
                std::hint::black_box(sink);
                let ns = t0.elapsed().as_nanos().max(1) as u64;
                busy.fetch_add(ns, Relaxed);
                total.fetch_add(n, Relaxed);
                rate_milli.fetch_add(((n as f64) * 1e12 / ns as f64) as u64, Relaxed);
            });
        }
        std::thread::sleep(dur);
        stop.store(true, Relaxed);
    });
    let n = total.load(Relaxed).max(1) as f64;
    let ns_per_call_per_thread = busy.load(Relaxed) as f64 / n;
    (
        ns_per_call_per_thread,
        rate_milli.load(Relaxed) as f64 / 1000.0,
    )
}

/// One design, warmed on the working set, then measured at each thread count through its own
/// monomorphised loop (no virtual call on the measured path).
pub(super) fn design<C: DecisionCache>(
    c: &C,
    work: &[Triple],
    threads: &[usize],
    dur: Duration,
) -> (String, Vec<Row>) {
    for &(s, t, k) in work {
        let _ = c.decide(s, t, k);
    }
    let rows = threads.iter().map(|&n| {
        let (ns, ops) = hit_rate(c, work, n, dur);
        (n, ns, ops)
    });
    (c.name().to_string(), rows.collect())
}

/// Per design and thread count, the round with the median throughput.
pub(super) fn median_rows(rounds: &[Vec<(String, Vec<Row>)>]) -> Vec<(String, Vec<Row>)> {
    let Some(first) = rounds.first() else {
        return Vec::new();
    };
    first
        .iter()
        .enumerate()
        .map(|(d, (name, rows))| {
            let rows = rows
                .iter()
                .enumerate()
                .map(|(r, &fallback)| {
                    let mut v: Vec<Row> = rounds
                        .iter()
                        .filter_map(|round| round.get(d)?.1.get(r).copied())
                        .collect();
                    v.sort_by(|a, b| a.2.total_cmp(&b.2));
                    v.get(v.len() / 2).copied().unwrap_or(fallback)
                })
                .collect();
            (name.clone(), rows)
        })
        .collect()
}

/// The median of `n` single-thread hit-path runs of `dur` each, ns per call.
pub(super) fn single_thread_ns<C: DecisionCache + ?Sized>(
    c: &C,
    work: &[Triple],
    n: usize,
    dur: Duration,
) -> f64 {
    let mut v: Vec<f64> = (0..n).map(|_| hit_rate(c, work, 1, dur).0).collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// The miss path, ns per call: a 16-entry cache cycling through the working set misses every
/// time.
pub(super) fn miss_ns(server: &Arc<dyn AccessServer>, work: &[Triple], dur: Duration) -> f64 {
    // Built by hand, not by the engine: a comparison cache sized to miss, following nothing.
    let small = Avc::new(server.clone(), 16);
    let t0 = Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < dur {
        for &(s, t, c) in work.iter().take(4096) {
            let _ = small.decide(s, t, c);
            n += 1;
        }
        if work.is_empty() {
            break;
        }
    }
    t0.elapsed().as_nanos() as f64 / n.max(1) as f64
}

/// (capacity, hit ratio) of a cache of each capacity fed `stream` once.
pub(super) fn hit_ratios(
    server: &Arc<dyn AccessServer>,
    stream: &[Triple],
    capacities: &[usize],
) -> Vec<(usize, f64)> {
    capacities
        .iter()
        .map(|&cap| {
            // Built by hand, not by the engine: one comparison cache per capacity swept.
            let a = Avc::new(server.clone(), cap);
            for &(s, t, c) in stream {
                let _ = a.decide(s, t, c);
            }
            let st = a.cache_stats();
            (a.capacity(), st.hits as f64 / st.lookups.max(1) as f64)
        })
        .collect()
}
