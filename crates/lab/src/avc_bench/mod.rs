//! `seaccess-lab bench avc`: the cache's hit path at 1, 2 and 16 threads against every comparison
//! design, its miss path, and the longest stall a policy reload causes a reader.
//!
//! What is asked is in `workload`, how it is timed in `measure` (hit and miss paths) and
//! `stall` (policy changes under load), libselinux's own AVC in `peer`, and the JSON report in
//! `report`; this module runs them in order.

mod measure;
mod peer;
mod report;
mod stall;
mod workload;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use seaccess_avc::{DEFAULT_CAPACITY, KERNEL_CAPACITY};
use seaccess_security::SecurityServer;
use seaccess_types::AccessServer;

pub use measure::{cycle, hit_rate, Row};
pub use peer::{libselinux_peer, PeerRun};
pub(crate) use peer::{run_peer, triple_lines};
pub use stall::ReloadStall;
pub use workload::{working_set, zipf_stream, Triple, XorShift};

use crate::designs::*;
use crate::LabError;

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
    pub peer: Option<&'a Path>,
}

/// Everything, in one process (libselinux's AVC in its own): the production cache and each
/// design, warmed, at each thread count.
pub fn run(server: Arc<SecurityServer>, cfg: &Config) -> Result<AvcBench, LabError> {
    let Config {
        policy,
        image,
        threads,
        dur,
        keys,
        capacity,
        peer,
    } = *cfg;
    let work = working_set(&server, keys, 1);
    if work.is_empty() {
        return Err(LabError::NoQueries {
            policy: policy.into(),
        });
    }
    let dynserver: Arc<dyn AccessServer> = server.clone();
    // Wired to the server as an object manager wires it, by the engine: decisions recomputed
    // before a change is published, the switch when it is announced.
    let engine = seaccess_engine::Engine::builder()
        .capacity(capacity)
        .over_server(server.clone());
    let avc = &**engine.avc();
    let (gm, grw, bm, brw, blk) = (
        GlobalMutex::new(dynserver.clone()),
        GlobalRwLock::new(dynserver.clone()),
        BucketMutex::new(dynserver.clone()),
        BucketRwLock::new(dynserver.clone()),
        BlockMutex::new(dynserver.clone()),
    );
    // Rounds over every design in turn, each figure the median of its rounds: a moment of
    // interference from the machine (the hypervisor, another process) then spoils one round of
    // one design, not the result.
    let rounds: Vec<Vec<(String, Vec<Row>)>> = (0..measure::ROUNDS)
        .map(|_| {
            vec![
                measure::design(avc, &work, threads, dur),
                measure::design(&gm, &work, threads, dur),
                measure::design(&grw, &work, threads, dur),
                measure::design(&bm, &work, threads, dur),
                measure::design(&brw, &work, threads, dur),
                measure::design(&blk, &work, threads, dur),
            ]
        })
        .collect();
    let mut designs = measure::median_rows(&rounds);
    // libselinux's AVC, in its own process, on the same triples and decisions.
    let libselinux =
        peer.map(|p| libselinux_peer(p, &server, &work, threads, dur).map_err(|e| e.to_string()));
    if let Some(Ok(p)) = &libselinux {
        designs.push(("libselinux".into(), p.rows.clone()));
    }
    let hit_ns_1t = measure::single_thread_ns(avc, &work, 5, dur / 2);
    let miss_ns = measure::miss_ns(&dynserver, &work, dur);
    let reload = stall::reload_stall(
        &server,
        image,
        avc,
        &work,
        (dur * 4).max(Duration::from_millis(500)),
    );
    // How much of a skewed stream each capacity keeps.
    let stream = zipf_stream(&server, 50_000, 1_000_000, 3);
    let hit_ratios = measure::hit_ratios(
        &dynserver,
        &stream,
        &[KERNEL_CAPACITY, 2048, DEFAULT_CAPACITY, 32768],
    );
    Ok(AvcBench {
        policy: policy.into(),
        capacity: avc.capacity(),
        keys: work.len(),
        hit_ns_1t,
        designs,
        miss_ns,
        reload,
        hit_ratios,
        libselinux,
    })
}

impl AvcBench {
    /// The throughput of `design` at `threads` threads.
    pub fn ops(&self, design: &str, threads: usize) -> Option<f64> {
        self.designs
            .iter()
            .find(|d| d.0 == design)?
            .1
            .iter()
            .find(|r| r.0 == threads)
            .map(|r| r.2)
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
            .flat_map(|(name, rows)| {
                rows.iter().filter_map(move |r| {
                    Self::ratio(self.ops("seaccess", r.0), self.ops(name, r.0))
                })
            })
            .min_by(f64::total_cmp)
    }
}
