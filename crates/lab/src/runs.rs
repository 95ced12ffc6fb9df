//! How chatroom and hackbench are timed: their threads made once and held at a gate between
//! runs, every mediator's run in every round back to back, and each run compared with vanilla's
//! run of the same round (medians of those ratios, with their intervals).

use std::sync::Arc;

use seaccess_objmgr::{ObjectManager, Task};
use seaccess_security::SecurityServer;
use seaccess_types::{AccessServer, Sid};

use crate::mediate::{all, spawn, sys, Asks, Designs, Mediator, ORDER};
use crate::LabError;

/// One thread's share of a run: delivers its messages through the mediator given, and says how
/// many checks refused. Called once per run; the thread and its descriptors live across runs.
pub type Worker<'s> = Box<dyn FnMut(&dyn Mediator) -> std::io::Result<u64> + Send + 's>;

/// One shape of an experiment measured: each mediator's median wall and CPU figure, and the
/// median over rounds of its figure over vanilla's in the same round (in the tables' order),
/// every run's figures, and seaccess's cache use over its runs.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Measured {
    pub wall: Vec<(String, f64)>,
    pub cpu: Vec<(String, f64)>,
    /// (mediator, median over rounds of its wall time over vanilla's in that round)
    pub wall_ratio: Vec<(String, f64)>,
    /// (mediator, median over rounds of its CPU time over vanilla's in that round)
    pub cpu_ratio: Vec<(String, f64)>,
    /// (mediator, (low, high)): a 95% confidence interval of `wall_ratio`'s median, from the
    /// order statistics of the rounds' ratios (distribution-free; as wide as the rounds are
    /// noisy, and it narrows as the square root of their number)
    pub wall_ratio_ci: Vec<(String, (f64, f64))>,
    /// (mediator, the same for `cpu_ratio`)
    pub cpu_ratio_ci: Vec<(String, (f64, f64))>,
    /// (mediator, every round's (wall, CPU) seconds, in round order)
    pub runs: Vec<(String, Vec<(f64, f64)>)>,
    pub cache: crate::stats::CacheUse,
}

impl Measured {
    /// `mediator`'s entry in one of the (mediator, figure) lists.
    pub fn get(list: &[(String, f64)], mediator: &str) -> Option<f64> {
        list.iter().find(|x| x.0 == mediator).map(|x| x.1)
    }
}

/// Where the run's threads wait between runs: the coordinator opens run `phase` (1-based; or
/// ABORT) and waits until all `workers` have reported that run done.
struct Gate {
    state: std::sync::Mutex<GateState>,
    go: std::sync::Condvar,
    done: std::sync::Condvar,
}

struct GateState {
    phase: usize,
    finished: usize,
    workers: usize,
}

const ABORT: usize = usize::MAX;

impl Gate {
    fn lock(&self) -> std::sync::MutexGuard<'_, GateState> {
        // A worker never panics holding it (no code between lock and unlock can), so a poisoned
        // lock still holds a consistent state.
        seaccess_types::lock(&self.state)
    }
    /// A worker: waits until run `phase` (or an abort) is open; false on abort.
    fn wait_open(&self, phase: usize) -> bool {
        let mut g = self.lock();
        while g.phase < phase {
            g = seaccess_types::lock::wait(&self.go, g);
        }
        g.phase != ABORT
    }
    /// A worker: its share of the open run is done.
    fn finished(&self) {
        let mut g = self.lock();
        g.finished += 1;
        if g.finished == g.workers {
            self.done.notify_one();
        }
    }
    /// The coordinator: opens `phase` (or ABORT) to every worker.
    fn open(&self, phase: usize) {
        let mut g = self.lock();
        g.phase = phase;
        g.finished = 0;
        self.go.notify_all();
    }
    /// The coordinator: waits until every worker finished the open run.
    fn wait_done(&self) {
        let mut g = self.lock();
        while g.finished < g.workers {
            g = seaccess_types::lock::wait(&self.done, g);
        }
    }
}

/// Measures one shape of chatroom or hackbench: a fresh seaccess cache and object manager
/// (following the server), a task of `sid`, what `setup` builds with them, and the threads
/// `workers` makes of it; then `rounds` rounds, each a run of every mediator back to back
/// (fresh design caches each round, the order rotating), each run timed from opening the
/// threads' gate until the last thread is through. The threads are made once and wait at the
/// gate between runs, so a run costs its messages and not the making of hundreds of threads,
/// and runs can be short and many: a mediator's figure over vanilla's is taken in each round
/// (the two ran seconds apart) and the median of those ratios reported, which a drift of the
/// machine's speed over minutes does not move. `messages` is how many a run delivers.
#[allow(clippy::too_many_arguments)]
pub fn measure<S>(
    server: &Arc<SecurityServer>,
    sid: Sid,
    comm: &str,
    asks: &Asks,
    rounds: usize,
    messages: u64,
    setup: impl FnOnce(&ObjectManager, &Task) -> Result<S, LabError>,
    workers: impl for<'s> FnOnce(&'s mut S) -> Result<Vec<Worker<'s>>, LabError>,
) -> Result<Measured, LabError> {
    use std::sync::atomic::{AtomicU64, Ordering};

    let dynserver: Arc<dyn AccessServer> = server.clone();
    let engine = seaccess_engine::Engine::builder()
        .object_manager(true)
        .over_server(server.clone());
    let om = engine
        .object_manager()
        .map_err(|e| LabError::Objmgr {
            what: e.to_string(),
        })?
        .clone();
    // These experiments measure the cache on every send and receive, as the kernel checks
    // them: a socket's remembered grant would answer them without it.
    om.fast_paths().set_sockets(false);
    let task = Task::new(std::process::id(), comm, seaccess_objmgr::Cred::new(sid));
    let mut state = setup(&om, &task)?;
    let rounds = rounds.max(1);
    let designs: Vec<Designs> = (0..rounds).map(|_| Designs::new(&dynserver)).collect();
    let schedule: Vec<(usize, Box<dyn Mediator + '_>)> = designs
        .iter()
        .enumerate()
        .flat_map(|(r, d)| {
            all(&om, &task, sid, asks, d, r)
                .into_iter()
                .map(move |m| (r, m))
        })
        .collect();
    let workers = workers(&mut state)?;
    let gate = Gate {
        state: std::sync::Mutex::new(GateState {
            phase: 0,
            finished: 0,
            workers: workers.len(),
        }),
        go: Default::default(),
        done: Default::default(),
    };
    let refused = AtomicU64::new(0);
    let failed: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);
    let mut timed: Vec<(usize, String, f64, f64)> = Vec::with_capacity(schedule.len());
    let mut runs = Vec::new();
    std::thread::scope(|s| -> Result<(), LabError> {
        let (gate, schedule, refused, failed) = (&gate, &schedule, &refused, &failed);
        for mut w in workers {
            let spawned = spawn(s, move || {
                for (i, (_, m)) in schedule.iter().enumerate() {
                    if !gate.wait_open(i + 1) {
                        break;
                    }
                    // After an error the thread still passes every gate (the others may not
                    // need it), but sends nothing more.
                    let ok = failed.lock().is_ok_and(|f| f.is_none());
                    if ok {
                        match w(m.as_ref()) {
                            Ok(n) => {
                                refused.fetch_add(n, Ordering::Relaxed);
                            }
                            Err(e) => {
                                if let Ok(mut f) = failed.lock() {
                                    f.get_or_insert(e);
                                }
                            }
                        }
                    }
                    gate.finished();
                }
                Ok(())
            });
            if let Err(e) = spawned {
                gate.open(ABORT);
                return Err(e);
            }
        }
        for (i, (round, m)) in schedule.iter().enumerate() {
            let before = om.avc().cache_stats();
            let (t0, c0) = (std::time::Instant::now(), crate::stats::cpu_seconds());
            gate.open(i + 1);
            gate.wait_done();
            let (wall, cpu) = (t0.elapsed().as_secs_f64(), crate::stats::cpu_seconds() - c0);
            if m.name() == "seaccess" {
                runs.push((before, om.avc().cache_stats()));
            }
            timed.push((*round, m.name(), wall, cpu));
        }
        Ok(())
    })?;
    if let Some(e) = failed.into_inner().ok().flatten() {
        return Err(sys(comm)(e));
    }
    if refused.load(Ordering::Relaxed) > 0 {
        return Err(LabError::Objmgr {
            what: format!("{comm}: {} checks refused", refused.load(Ordering::Relaxed)),
        });
    }
    Ok(summarize(&timed, crate::stats::cache_use(&runs, messages)))
}

/// Medians per mediator, and medians of each round's figure over vanilla's in that round: the
/// runs given as (round, mediator, wall, CPU); [`ORDER`]'s mediators first, then any other in
/// the order met.
pub(crate) fn summarize(
    timed: &[(usize, String, f64, f64)],
    cache: crate::stats::CacheUse,
) -> Measured {
    use crate::stats::median;
    let mut names: Vec<&str> = ORDER
        .iter()
        .copied()
        .filter(|n| timed.iter().any(|t| t.1 == *n))
        .collect();
    for t in timed {
        if !names.contains(&t.1.as_str()) {
            names.push(&t.1);
        }
    }
    let vanilla = |round: usize| timed.iter().find(|t| t.0 == round && t.1 == "vanilla");
    let mut m = Measured {
        cache,
        ..Measured::default()
    };
    for n in names {
        let mine: Vec<&(usize, String, f64, f64)> = timed.iter().filter(|t| t.1 == n).collect();
        let ratios = |pick: fn(&(usize, String, f64, f64)) -> f64| -> Vec<f64> {
            mine.iter()
                .filter_map(|t| vanilla(t.0).map(|v| pick(t) / pick(v).max(1e-12)))
                .collect()
        };
        m.wall
            .push((n.into(), median(mine.iter().map(|t| t.2).collect())));
        m.cpu
            .push((n.into(), median(mine.iter().map(|t| t.3).collect())));
        let (w, c) = (ratios(|t| t.2), ratios(|t| t.3));
        m.wall_ratio_ci
            .push((n.into(), crate::stats::median_ci(&w)));
        m.cpu_ratio_ci.push((n.into(), crate::stats::median_ci(&c)));
        m.wall_ratio.push((n.into(), median(w)));
        m.cpu_ratio.push((n.into(), median(c)));
        m.runs
            .push((n.into(), mine.iter().map(|t| (t.2, t.3)).collect()));
    }
    m
}
