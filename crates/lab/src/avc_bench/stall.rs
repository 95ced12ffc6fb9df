//! What a storm of policy changes costs the cache's readers: two readers hit the cache, timing
//! every call, while a third thread commits booleans and reloads the policy; the same storm with
//! ordinary misses instead of changes is the yardstick.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::{Duration, Instant};

use seaccess_avc::Avc;
use seaccess_security::SecurityServer;

use super::workload::{working_set, Triple};

/// What a storm of policy changes does to the readers of the cache.
#[derive(Clone, Debug, Default)]
pub struct ReloadStall {
    /// Policy changes made during the storm (boolean commits and full reloads, alternately).
    pub changes: usize,
    /// Reader calls made during the storm.
    pub calls: u64,
    /// Calls in which a reader first met a new policy: what a change costs a reader.
    pub transitions: usize,
    pub transition_median_ns: f64,
    pub transition_max_ns: f64,
    /// The median time of one full reload (ms) and of one boolean commit (µs), each with the
    /// cache's recomputation of its decisions under the new policy: what the changing thread
    /// pays (a commit without a cache to refresh takes about a microsecond).
    pub reload_ms: f64,
    pub commit_us: f64,
    /// The most decisions the cache held (and so recomputed) when a change began.
    pub refreshed: usize,
    /// The same storm without changes, in which each reader asks a triple it never asked
    /// before every 2 ms: how many such misses were timed, and their median and 90th
    /// percentile ns. This is "one miss" as a reader meets it amid hits (its code and the
    /// policy's tables cold in its caches), the unit a change's cost is set against.
    pub misses: usize,
    pub miss: (f64, f64),
    /// The transition calls after boolean commits and after full reloads: median and 90th
    /// percentile ns of each.
    pub commit: (f64, f64),
    pub reload: (f64, f64),
    /// Over all calls that the scheduler did not interrupt: the 99.99th percentile and the
    /// longest, with changes and in the same storm without changes.
    pub p9999_ns: f64,
    pub max_ns: f64,
    pub baseline_p9999_ns: f64,
    pub baseline_max_ns: f64,
}

/// This thread's count of involuntary context switches (the scheduler taking the CPU away),
/// from /proc; 0 where unavailable.
fn preemptions() -> u64 {
    std::fs::read_to_string("/proc/thread-self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("nonvoluntary_ctxt_switches:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// Call durations in 4 ns steps up to 64 µs, and the longest.
struct Histogram {
    counts: Vec<u64>,
    over: u64,
    max: u64,
}

impl Histogram {
    const STEP: u64 = 4;
    fn new() -> Self {
        Histogram {
            counts: vec![0; 16384],
            over: 0,
            max: 0,
        }
    }
    fn add(&mut self, ns: u64) {
        match self.counts.get_mut((ns / Self::STEP) as usize) {
            Some(c) => *c += 1,
            None => self.over += 1,
        }
        self.max = self.max.max(ns);
    }
    fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        self.over += o.over;
        self.max = self.max.max(o.max);
    }
    fn total(&self) -> u64 {
        self.counts.iter().sum::<u64>() + self.over
    }
    /// The duration below which fraction `q` of the calls fall (the upper end of its step).
    fn quantile(&self, q: f64) -> f64 {
        let want = (self.total() as f64 * q).ceil() as u64;
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= want {
                return ((i as u64 + 1) * Self::STEP) as f64;
            }
        }
        self.max as f64
    }
}

struct Storm {
    hist: Histogram,
    /// (ns, seqno) of each call in which a reader first met a new policy.
    transitions: Vec<(u64, u32)>,
    /// The ns of each first lookup of a triple never asked before (storms without changes).
    fresh: Vec<u64>,
    changes: usize,
    /// The seqnos that full reloads made (the others are boolean commits).
    reloads: HashSet<u32>,
    /// The ns of each reload and of each boolean commit, the cache's refresh included.
    reload_ns: Vec<u64>,
    commit_ns: Vec<u64>,
    /// The most decisions the cache held when a change began.
    refreshed: usize,
}

/// Two readers hit the cache for `dur`, timing every call, while another thread acts every 2 ms:
/// if `change`, it changes the policy (boolean commits and full reloads of `image`,
/// alternately); if not, it tells each reader to ask its next triple from `fresh` (never asked
/// before), so that the storm without changes holds the same number of ordinary misses, each
/// taken amid hits, as a change causes. Calls during which the scheduler took a reader's CPU
/// away are left out (three busy threads share two cores here: such a call measures the
/// scheduler).
fn storm(
    server: &SecurityServer,
    image: &[u8],
    avc: &Avc,
    work: &[Triple],
    fresh: &[Triple],
    dur: Duration,
    change: bool,
) -> Storm {
    let stop = AtomicBool::new(false);
    let tick = AtomicU64::new(0);
    let names: Vec<String> = server
        .snapshot()
        .booleans()
        .into_iter()
        .map(|b| b.0)
        .collect();
    let mut changes = 0;
    let mut out = Storm {
        hist: Histogram::new(),
        transitions: Vec::new(),
        fresh: Vec::new(),
        changes: 0,
        reloads: Default::default(),
        reload_ns: Vec::new(),
        commit_ns: Vec::new(),
        refreshed: 0,
    };
    let results = std::thread::scope(|sc| {
        let readers: Vec<_> = (0..2)
            .map(|th| {
                let (stop, tick) = (&stop, &tick);
                sc.spawn(move || {
                    let mut hist = Histogram::new();
                    let mut transitions = Vec::new();
                    let mut fresh_ns = Vec::new();
                    let mut i = th * 101 % work.len().max(1);
                    let mut next_fresh = th;
                    let mut seen_tick = 0;
                    let mut last = avc.seqno();
                    let mut seen = preemptions();
                    while !stop.load(Relaxed) {
                        let now_tick = tick.load(Relaxed);
                        let probe = !change && now_tick != seen_tick && next_fresh < fresh.len();
                        seen_tick = now_tick;
                        let (s, t, c) = if probe { fresh[next_fresh] } else { work[i] };
                        let t0 = Instant::now();
                        let d = avc.decide(s, t, c);
                        let ns = t0.elapsed().as_nanos() as u64;
                        let preempted = ns > 2_000 && {
                            let now = preemptions();
                            std::mem::replace(&mut seen, now) != now
                        };
                        if !preempted {
                            hist.add(ns);
                            if probe {
                                fresh_ns.push(ns);
                            }
                            if let Ok(d) = d {
                                if d.seqno != last {
                                    last = d.seqno;
                                    transitions.push((ns, d.seqno.0));
                                }
                            }
                        }
                        if probe {
                            next_fresh += 2;
                        } else {
                            i = (i + 1) % work.len();
                        }
                    }
                    (hist, transitions, fresh_ns)
                })
            })
            .collect();
        let t0 = Instant::now();
        while t0.elapsed() < dur {
            std::thread::sleep(Duration::from_millis(2));
            if change {
                // The cache learns of the change from the server's listeners (see `run`).
                out.refreshed = out.refreshed.max(avc.hash_stats().entries);
                let t = Instant::now();
                if changes % 2 == 0 {
                    if let Some(n) = names.get(changes / 2 % names.len().max(1)) {
                        let v = server.pending_boolean(n).unwrap_or(false);
                        let _ = server.set_boolean(n, !v);
                    }
                    server.commit_booleans();
                    out.commit_ns.push(t.elapsed().as_nanos() as u64);
                } else {
                    let seq = server.reload(image).ok();
                    out.reload_ns.push(t.elapsed().as_nanos() as u64);
                    out.reloads.extend(seq.map(|s| s.0));
                }
                changes += 1;
            }
            tick.fetch_add(1, Relaxed);
        }
        stop.store(true, Relaxed);
        readers
            .into_iter()
            .filter_map(|r| r.join().ok())
            .collect::<Vec<_>>()
    });
    for (h, t, f) in results {
        out.hist.merge(&h);
        out.transitions.extend(t);
        out.fresh.extend(f);
    }
    out.changes = changes;
    out
}

/// The median and the 90th percentile of `v`.
fn median_p90(mut v: Vec<u64>) -> (f64, f64) {
    v.sort_unstable();
    let at = |q: f64| {
        v.get(((v.len() as f64 * q) as usize).min(v.len().saturating_sub(1)))
            .copied()
            .unwrap_or(0) as f64
    };
    (at(0.5), at(0.9))
}

/// The reload stall: a storm with policy changes against the same storm with, instead, an
/// ordinary miss (a triple never asked before) at each tick.
pub(super) fn reload_stall(
    server: &Arc<SecurityServer>,
    image: &[u8],
    avc: &Avc,
    work: &[Triple],
    dur: Duration,
) -> ReloadStall {
    if work.is_empty() {
        return ReloadStall::default();
    }
    for &(s, t, c) in work {
        let _ = avc.decide(s, t, c);
    }
    // Triples of the same kind as the working set, none in it, each asked once.
    let known: HashSet<_> = work.iter().copied().collect();
    let mut fresh = working_set(server, 8192, 0x5eed);
    let mut taken = HashSet::new();
    fresh.retain(|k| !known.contains(k) && taken.insert(*k));
    // The storm with changes first, while the cache holds the working set alone: each change
    // then refreshes exactly its decisions.
    let st = storm(server, image, avc, work, &fresh, dur, true);
    let base = storm(server, image, avc, work, &fresh, dur, false);
    let of_kind = |reload: bool| {
        median_p90(
            st.transitions
                .iter()
                .filter(|t| st.reloads.contains(&t.1) == reload)
                .map(|t| t.0)
                .collect(),
        )
    };
    let mut tns: Vec<u64> = st.transitions.iter().map(|t| t.0).collect();
    tns.sort_unstable();
    ReloadStall {
        changes: st.changes,
        calls: st.hist.total(),
        transitions: tns.len(),
        transition_median_ns: tns.get(tns.len() / 2).copied().unwrap_or(0) as f64,
        transition_max_ns: tns.last().copied().unwrap_or(0) as f64,
        reload_ms: median_p90(st.reload_ns).0 / 1e6,
        commit_us: median_p90(st.commit_ns).0 / 1e3,
        refreshed: st.refreshed,
        misses: base.fresh.len(),
        miss: median_p90(base.fresh),
        commit: of_kind(false),
        reload: of_kind(true),
        p9999_ns: st.hist.quantile(0.9999),
        max_ns: st.hist.max as f64,
        baseline_p9999_ns: base.hist.quantile(0.9999),
        baseline_max_ns: base.hist.max as f64,
    }
}

impl ReloadStall {
    /// How long a change stalls a reader in units of one ordinary miss amid hits: the larger of
    /// the two ratios (commits, reloads) at the median and at the 90th percentile.
    pub fn vs_miss(&self) -> (f64, f64) {
        let r = |a: f64, b: f64| if b > 0.0 { a / b } else { 0.0 };
        (
            r(self.commit.0, self.miss.0).max(r(self.reload.0, self.miss.0)),
            r(self.commit.1, self.miss.1).max(r(self.reload.1, self.miss.1)),
        )
    }
}
