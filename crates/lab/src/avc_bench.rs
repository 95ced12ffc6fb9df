//! `seaccess bench avc`: the cache's hit path at 1, 2 and 16 threads against every comparison
//! design, its miss path, and the longest stall a policy reload causes a reader.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::Arc;
use std::time::{Duration, Instant};

use seaccess_avc::{Avc, DEFAULT_CAPACITY, KERNEL_CAPACITY};
use seaccess_security::SecurityServer;
use seaccess_types::{AccessServer, ClassId, Sid};

use crate::designs::*;

/// A working set of (source, target, class) triples over contexts of the policy: the first
/// valid context of up to `per_role` types of every role of every user, at the user's low level.
pub fn working_set(server: &SecurityServer, count: usize, seed: u64) -> Vec<(Sid, Sid, ClassId)> {
    let g = server.snapshot();
    let p = g.policy();
    let mut sids = Vec::new();
    for u in &p.users {
        let level = if p.mls {
            let l = &u.range.low;
            format!(":{}", seaccess_security::range_to_string(p, &seaccess_policy_range(l)))
        } else {
            String::new()
        };
        for r in u.roles.iter() {
            let role = &p.roles[r as usize];
            for t in role.types.iter().take(64) {
                let ctx = format!("{}:{}:{}{level}", u.name, role.name, p.type_names.name(t + 1).unwrap_or("?"));
                if let Ok(s) = g.context_to_sid(&ctx) {
                    sids.push(s);
                }
            }
        }
    }
    let nclass = p.classes.len().max(1) as u64;
    let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut out = Vec::with_capacity(count);
    if sids.is_empty() {
        return out;
    }
    while out.len() < count {
        let s = sids[(next() % sids.len() as u64) as usize];
        let t = sids[(next() % sids.len() as u64) as usize];
        let c = ClassId((next() % nclass) as u16 + 1);
        out.push((s, t, c));
    }
    out
}

fn seaccess_policy_range(l: &seaccess_policy::Level) -> seaccess_policy::Range {
    seaccess_policy::Range { low: l.clone(), high: l.clone() }
}

/// `count` lookups through `cache`, cycling through `keys` from `*i` (left where it stopped),
/// with no division on the way; returns a value that depends on every answer, so that none can
/// be optimised away.
#[inline(always)]
pub fn cycle<C: DecisionCache + ?Sized>(cache: &C, keys: &[(Sid, Sid, ClassId)], i: &mut usize, count: u64) -> u32 {
    let mut sink = 0u32;
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
pub fn hit_rate<C: DecisionCache + ?Sized>(cache: &C, keys: &[(Sid, Sid, ClassId)], threads: usize, dur: Duration) -> (f64, f64) {
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
    (ns_per_call_per_thread, rate_milli.load(Relaxed) as f64 / 1000.0)
}

/// One measurement: (threads, ns per call per thread, calls per second).
pub type Row = (usize, f64, f64);

/// Rounds of the hit-path measurement.
const ROUNDS: usize = 5;

/// Per design and thread count, the round with the median throughput.
fn median_rows(rounds: &[Vec<(String, Vec<Row>)>]) -> Vec<(String, Vec<Row>)> {
    let Some(first) = rounds.first() else { return Vec::new() };
    first
        .iter()
        .enumerate()
        .map(|(d, (name, rows))| {
            let rows = (0..rows.len())
                .map(|r| {
                    let mut v: Vec<Row> = rounds.iter().filter_map(|round| round.get(d)?.1.get(r).copied()).collect();
                    v.sort_by(|a, b| a.2.total_cmp(&b.2));
                    v[v.len() / 2]
                })
                .collect();
            (name.clone(), rows)
        })
        .collect()
}

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

/// Results of one run.
pub struct AvcBench {
    pub policy: String,
    pub capacity: usize,
    pub keys: usize,
    pub hit_ns_1t: f64,
    /// design -> [(threads, ns per call per thread, calls per second)]
    pub designs: Vec<(String, Vec<Row>)>,
    pub miss_ns: f64,
    pub reload: ReloadStall,
    /// (capacity, hit ratio) on a Zipf-distributed stream over many triples.
    pub hit_ratios: Vec<(usize, f64)>,
    /// libselinux's AVC (also among `designs` when it ran), or why it did not run.
    pub libselinux: Option<Result<PeerRun, String>>,
}

/// What to measure.
pub struct Config<'a> {
    /// The policy's name (for the report) and its image (reloaded during the reload storm).
    pub policy: &'a str,
    pub image: &'a [u8],
    pub threads: &'a [usize],
    /// Per measurement.
    pub dur: Duration,
    /// Triples in the working set.
    pub keys: usize,
    /// The production cache's capacity.
    pub capacity: usize,
    /// The libselinux AVC peer program, if built.
    pub peer: Option<&'a std::path::Path>,
}

/// Everything, in one process (libselinux's AVC in its own): the production cache and each
/// design, warmed, at each thread count.
pub fn run(server: Arc<SecurityServer>, cfg: &Config) -> AvcBench {
    let Config { policy, image, threads, dur, keys, capacity, peer } = *cfg;
    let work = working_set(&server, keys, 1);
    let dynserver: Arc<dyn AccessServer> = server.clone();
    // Wired to the server as an object manager wires it: decisions recomputed before a change
    // is published, the switch when it is announced.
    let avc = Arc::new(Avc::new(dynserver.clone(), capacity));
    let _following = avc.follow(&*server);
    let avc = &*avc;
    // Each design measured through its own monomorphised loop: no virtual call in any of them.
    fn measure<C: DecisionCache>(c: &C, work: &[(Sid, Sid, ClassId)], threads: &[usize], dur: Duration) -> (String, Vec<Row>) {
        for &(s, t, k) in work {
            let _ = c.decide(s, t, k);
        }
        let rows = threads.iter().map(|&n| {
            let (ns, ops) = hit_rate(c, work, n, dur);
            (n, ns, ops)
        });
        (c.name().to_string(), rows.collect())
    }
    let (gm, grw, bm, brw, blk) = (
        GlobalMutex::new(dynserver.clone()),
        GlobalRwLock::new(dynserver.clone()),
        BucketMutex::new(dynserver.clone()),
        BucketRwLock::new(dynserver.clone()),
        BlockMutex::new(dynserver.clone()),
    );
    // Five rounds over every design in turn, each figure the median of its five: a moment of
    // interference from the machine (the hypervisor, another process) then spoils one round of
    // one design, not the result.
    let rounds: Vec<Vec<(String, Vec<Row>)>> = (0..ROUNDS)
        .map(|_| {
            vec![
                measure(avc, &work, threads, dur),
                measure(&gm, &work, threads, dur),
                measure(&grw, &work, threads, dur),
                measure(&bm, &work, threads, dur),
                measure(&brw, &work, threads, dur),
                measure(&blk, &work, threads, dur),
            ]
        })
        .collect();
    let mut out = median_rows(&rounds);
    // libselinux's AVC, in its own process, on the same triples and decisions.
    let libselinux = peer.map(|p| libselinux_peer(p, &server, &work, threads, dur));
    if let Some(Ok(p)) = &libselinux {
        out.push(("libselinux".into(), p.rows.clone()));
    }
    // The median of five single-thread runs of the production cache.
    let mut singles: Vec<f64> = (0..5).map(|_| hit_rate(avc, &work, 1, dur / 2).0).collect();
    singles.sort_by(f64::total_cmp);
    let hit_ns_1t = singles[2];

    // Miss path: a 16-entry cache cycling through the working set misses every time.
    let small = Avc::new(dynserver.clone(), 16);
    let t0 = Instant::now();
    let mut n = 0u64;
    while t0.elapsed() < dur {
        for &(s, t, c) in work.iter().take(4096) {
            let _ = small.decide(s, t, c);
            n += 1;
        }
    }
    let miss_ns = t0.elapsed().as_nanos() as f64 / n.max(1) as f64;

    let reload = reload_stall(&server, image, avc, &work, (dur * 4).max(Duration::from_millis(500)));

    // How much of a skewed stream each capacity keeps.
    let stream = zipf_stream(&server, 50_000, 1_000_000, 3);
    let hit_ratios = [KERNEL_CAPACITY, 2048, DEFAULT_CAPACITY, 32768]
        .into_iter()
        .map(|cap| {
            let a = Avc::new(dynserver.clone(), cap);
            for &(s, t, c) in &stream {
                let _ = a.decide(s, t, c);
            }
            let st = a.cache_stats();
            (a.capacity(), st.hits as f64 / st.lookups.max(1) as f64)
        })
        .collect();
    AvcBench { policy: policy.into(), capacity: avc.capacity(), keys: work.len(), hit_ns_1t, designs: out, miss_ns, reload, hit_ratios, libselinux }
}

/// `len` queries over `distinct` triples of the policy, triple `i` drawn with probability
/// proportional to 1 / (i + 1) (Zipf, s = 1): a few triples are asked all the time, most rarely,
/// as an object manager's checks are.
pub fn zipf_stream(server: &SecurityServer, distinct: usize, len: usize, seed: u64) -> Vec<(Sid, Sid, ClassId)> {
    let triples = working_set(server, distinct, seed);
    if triples.is_empty() {
        return Vec::new();
    }
    let mut cdf = Vec::with_capacity(triples.len());
    let mut total = 0.0;
    for i in 0..triples.len() {
        total += 1.0 / (i as f64 + 1.0);
        cdf.push(total);
    }
    let mut rng = seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1;
    (0..len)
        .map(|_| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let x = (rng >> 11) as f64 / (1u64 << 53) as f64 * total;
            triples[cdf.partition_point(|&c| c < x).min(triples.len() - 1)]
        })
        .collect()
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
        Histogram { counts: vec![0; 16384], over: 0, max: 0 }
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
    reloads: std::collections::HashSet<u32>,
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
    work: &[(Sid, Sid, ClassId)],
    fresh: &[(Sid, Sid, ClassId)],
    dur: Duration,
    change: bool,
) -> Storm {
    let stop = AtomicBool::new(false);
    let tick = AtomicU64::new(0);
    let names: Vec<String> = server.snapshot().booleans().into_iter().map(|b| b.0).collect();
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
        readers.into_iter().filter_map(|r| r.join().ok()).collect::<Vec<_>>()
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
    let at = |q: f64| v.get(((v.len() as f64 * q) as usize).min(v.len().saturating_sub(1))).copied().unwrap_or(0) as f64;
    (at(0.5), at(0.9))
}

/// The reload stall: a storm with policy changes against the same storm with, instead, an
/// ordinary miss (a triple never asked before) at each tick.
fn reload_stall(server: &Arc<SecurityServer>, image: &[u8], avc: &Avc, work: &[(Sid, Sid, ClassId)], dur: Duration) -> ReloadStall {
    for &(s, t, c) in work {
        let _ = avc.decide(s, t, c);
    }
    // Triples of the same kind as the working set, none in it, each asked once.
    let known: std::collections::HashSet<_> = work.iter().copied().collect();
    let mut fresh = working_set(server, 8192, 0x5eed);
    let mut taken = std::collections::HashSet::new();
    fresh.retain(|k| !known.contains(k) && taken.insert(*k));
    // The storm with changes first, while the cache holds the working set alone: each change
    // then refreshes exactly its decisions.
    let st = storm(server, image, avc, work, &fresh, dur, true);
    let base = storm(server, image, avc, work, &fresh, dur, false);
    let of_kind = |reload: bool| median_p90(st.transitions.iter().filter(|t| st.reloads.contains(&t.1) == reload).map(|t| t.0).collect());
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


/// A JSON string literal.
fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// A JSON number, or null where there is none.
fn json_num(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(v) if v.is_finite() => format!("{v:.decimals$}"),
        _ => "null".into(),
    }
}

impl AvcBench {
    /// The throughput of `design` at `threads` threads.
    pub fn ops(&self, design: &str, threads: usize) -> Option<f64> {
        self.designs.iter().find(|d| d.0 == design)?.1.iter().find(|r| r.0 == threads).map(|r| r.2)
    }

    /// `a / b`, where both are measured.
    pub fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
        a.zip(b).filter(|(_, b)| *b > 0.0).map(|(a, b)| a / b)
    }

    /// The smallest ratio of seaccess's throughput to any other design's, over every measured
    /// thread count: above 1 means ahead of every design everywhere.
    pub fn lead(&self) -> Option<f64> {
        self.designs
            .iter()
            .filter(|d| d.0 != "seaccess")
            .flat_map(|(name, rows)| rows.iter().filter_map(move |r| Self::ratio(self.ops("seaccess", r.0), self.ops(name, r.0))))
            .min_by(f64::total_cmp)
    }

    /// One JSON object; `extra` fields (already JSON) are appended.
    pub fn to_json(&self, extra: &[(&str, String)]) -> String {
        let mut f: Vec<(String, String)> = vec![
            ("policy".into(), json_str(&self.policy)),
            ("capacity".into(), self.capacity.to_string()),
            ("keys".into(), self.keys.to_string()),
            ("hit_ns_1t".into(), json_num(Some(self.hit_ns_1t), 2)),
            ("miss_ns".into(), json_num(Some(self.miss_ns), 1)),
        ];
        for (name, rows) in &self.designs {
            for (t, _, ops) in rows {
                if name == "seaccess" {
                    f.push((format!("hit_ops_per_s_{t}t"), json_num(Some(*ops), 0)));
                }
            }
        }
        let r = &self.reload;
        f.extend([
            ("ratio_2t_vs_1t".into(), json_num(Self::ratio(self.ops("seaccess", 2), self.ops("seaccess", 1)), 3)),
            ("ratio_16t_vs_2t".into(), json_num(Self::ratio(self.ops("seaccess", 16), self.ops("seaccess", 2)), 3)),
            ("ratio_2t_vs_global_mutex".into(), json_num(Self::ratio(self.ops("seaccess", 2), self.ops("global_mutex", 2)), 2)),
            ("min_ratio_vs_any_design".into(), json_num(self.lead(), 2)),
            (
                "reload".into(),
                format!(
                    "{{\"changes\":{},\"calls\":{},\"transitions\":{},\"transition_median_ns\":{:.0},\"transition_max_ns\":{:.0},\"misses\":{},\"miss_median_ns\":{:.0},\"miss_p90_ns\":{:.0},\"commit_median_ns\":{:.0},\"commit_p90_ns\":{:.0},\"reload_median_ns\":{:.0},\"reload_p90_ns\":{:.0},\"stall_vs_miss_median\":{:.2},\"stall_vs_miss_p90\":{:.2},\"reload_ms\":{:.1},\"commit_us\":{:.1},\"refreshed\":{},\"p9999_ns\":{:.0},\"max_ns\":{:.0},\"no_change_p9999_ns\":{:.0},\"no_change_max_ns\":{:.0}}}",
                    r.changes,
                    r.calls,
                    r.transitions,
                    r.transition_median_ns,
                    r.transition_max_ns,
                    r.misses,
                    r.miss.0,
                    r.miss.1,
                    r.commit.0,
                    r.commit.1,
                    r.reload.0,
                    r.reload.1,
                    r.vs_miss().0,
                    r.vs_miss().1,
                    r.reload_ms,
                    r.commit_us,
                    r.refreshed,
                    r.p9999_ns,
                    r.max_ns,
                    r.baseline_p9999_ns,
                    r.baseline_max_ns
                ),
            ),
            (
                "zipf_hit_ratio".into(),
                format!("{{{}}}", self.hit_ratios.iter().map(|(c, h)| format!("\"{c}\":{h:.4}")).collect::<Vec<_>>().join(",")),
            ),
        ]);
        let designs: Vec<String> = self
            .designs
            .iter()
            .map(|(name, rows)| {
                let r: Vec<String> = rows
                    .iter()
                    .map(|(t, ns, ops)| format!("{{\"threads\":{t},\"hit_ns\":{ns:.2},\"hit_ops_per_s\":{ops:.0}}}"))
                    .collect();
                format!("{}:[{}]", json_str(name), r.join(","))
            })
            .collect();
        f.push(("designs".into(), format!("{{{}}}", designs.join(","))));
        match &self.libselinux {
            Some(Ok(p)) => f.extend([
                ("ratio_1t_vs_libselinux".into(), json_num(Self::ratio(self.ops("seaccess", 1), self.ops("libselinux", 1)), 2)),
                ("libselinux_string_keyed_ns".into(), json_num(p.string_keyed_ns, 2)),
                ("libselinux_misses".into(), p.misses.to_string()),
                ("libselinux_wrong".into(), p.wrong.to_string()),
            ]),
            Some(Err(e)) => f.push(("libselinux_error".into(), json_str(e))),
            None => {}
        }
        f.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
        format!("{{{}}}", f.iter().map(|(k, v)| format!("{}:{v}", json_str(k))).collect::<Vec<_>>().join(","))
    }
}

/// libselinux's own AVC measured by the peer program (`make peers`) on the same working set.
#[derive(Clone, Debug, Default)]
pub struct PeerRun {
    pub rows: Vec<Row>,
    /// One thread, contexts given as strings on every call (as selinux_check_access does).
    pub string_keyed_ns: Option<f64>,
    /// Calls that missed libselinux's cache, and answers that differed from ours: both must be 0
    /// for the rows to be hit-path numbers on the same decisions.
    pub misses: u64,
    pub wrong: u64,
}

/// The numeric field `key` of a one-line JSON object the peer printed.
fn field(line: &str, key: &str) -> Option<f64> {
    let at = line.find(&format!("\"{key}\":"))? + key.len() + 3;
    let rest = &line[at..];
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok()
}

/// Runs the libselinux AVC peer on `work`, with this server's decisions as the answers to its
/// misses, for `dur` per thread count.
pub fn libselinux_peer(peer: &std::path::Path, server: &SecurityServer, work: &[(Sid, Sid, ClassId)], threads: &[usize], dur: Duration) -> Result<PeerRun, String> {
    use std::io::Write;
    let g = server.snapshot();
    let mut input = String::new();
    for &(s, t, c) in work {
        let d = g.compute_av(s, t, c).map_err(|e| e.to_string())?;
        let (sc, tc) = (g.sid_to_context(s).map_err(|e| e.to_string())?, g.sid_to_context(t).map_err(|e| e.to_string())?);
        input.push_str(&format!("{sc} {tc} {} {:x} {:x} {:x}\n", c.0, d.allowed, d.auditallow, d.auditdeny));
    }
    let list: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
    let mut child = std::process::Command::new(peer)
        .arg(format!("{}", dur.as_secs_f64()))
        .arg(list.join(","))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| format!("{}: {e}", peer.display()))?;
    let mut stdin = child.stdin.take().ok_or("the peer's standard input")?;
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| format!("{}: {e}", peer.display()))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(format!("{} failed: {}", peer.display(), String::from_utf8_lossy(&out.stderr).trim()));
    }
    let mut run = PeerRun::default();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let (Some(t), Some(ns)) = (field(line, "threads"), field(line, "hit_ns")) else { continue };
        if line.contains("\"string_keyed\":true") {
            run.string_keyed_ns = Some(ns);
            continue;
        }
        run.rows.push((t as usize, ns, field(line, "hit_ops_per_s").unwrap_or(0.0)));
        run.misses += field(line, "misses").unwrap_or(0.0) as u64;
        run.wrong += field(line, "wrong").unwrap_or(0.0) as u64;
    }
    if run.rows.len() != threads.len() {
        return Err(format!("{} printed {} measurements for {} thread counts", peer.display(), run.rows.len(), threads.len()));
    }
    Ok(run)
}
