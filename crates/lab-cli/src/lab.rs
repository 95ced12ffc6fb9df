//! `seaccess-lab lab`: the classic SELinux performance experiments, each as its seed presented it
//! (vanilla against enforced, overhead in percent, per design), printed as Markdown tables and
//! written to a results directory as JSON and CSV. The experiments live in seaccess_lab; this
//! module picks them, runs them and lays the results out.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seaccess_lab::chatroom::{self, Chatroom};
use seaccess_lab::hackbench::{self, Hackbench};
use seaccess_lab::mediate;
use seaccess_lab::objmgr_bench::{self, ObjmgrBench, Shape};

use crate::output::{CliError, Out};

/// The experiments, in the order they ran historically.
pub(crate) const EXPERIMENTS: &[&str] =
    &["chatroom", "hackbench", "treewalk", "readwrite", "pathwalk"];

#[derive(clap::Args)]
pub(crate) struct LabArgs {
    /// Experiments to run (default: all): chatroom, hackbench, treewalk, readwrite, pathwalk.
    experiments: Vec<String>,
    /// The compiled policy (default: Debian's default policy where installed, else the bundled
    /// example policy).
    #[arg(long, short = 'p')]
    policy: Option<PathBuf>,
    /// Smaller shapes and fewer rounds: every experiment in seconds (for a first look and for
    /// tests, not for figures).
    #[arg(long)]
    quick: bool,
    /// The thread counts chatroom and hackbench run at, comma-separated (default: 2001's 10, 20
    /// and 30 rooms of 20 clients, 600 to 1,800 threads; hackbench's 2, 4 and 8 groups). Each
    /// becomes whole rooms of 3 threads a client and whole groups of 40 threads, at least one.
    #[arg(long, value_delimiter = ',')]
    threads: Vec<usize>,
    /// Run on the first N CPUs only (every thread of the run, the mounts' too): one CPU halves
    /// the spread of chatroom's and hackbench's runs, but cannot show two threads contending.
    #[arg(long)]
    cpus: Option<usize>,
    /// The libselinux AVC peer program (`make peers`): chatroom runs its rooms with libselinux's
    /// own AVC too, where it is built.
    #[arg(long, default_value = "target/peers/libselinux-avc-peer")]
    peer: PathBuf,
    /// Rounds of chatroom and hackbench (each runs every mediator once, back to back).
    #[arg(long)]
    rounds: Option<usize>,
    /// Where the results are written (JSON and CSV, one file each per experiment).
    #[arg(long, default_value = "lab-results")]
    out: PathBuf,
    /// Print the results as one JSON object instead of tables.
    #[arg(long)]
    json: bool,
    /// Also count the instructions each mediator spends per checked send or receive, under
    /// callgrind (valgrind): repeatable where wall time on a shared machine is not.
    #[arg(long)]
    callgrind: bool,
}

/// What a run produced.
#[derive(Default, serde::Serialize)]
struct Results {
    policy: String,
    quick: bool,
    /// The CPUs the run was kept to (--cpus), when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    cpus: Option<Vec<usize>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    chatroom: Option<Chatroom>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hackbench: Option<Hackbench>,
    #[serde(skip_serializing_if = "Option::is_none")]
    objmgr: Option<serde_json::Value>,
    /// The same experiments on a FUSE mount (`seaccess-lab bench mount`), where /dev/fuse exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    mount: Option<crate::mountbench::MountRun>,
    /// Why the mount variants did not run, when they did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    mount_skipped: Option<String>,
    /// (mediator, instructions per checked send or receive), with --callgrind.
    #[serde(skip_serializing_if = "Option::is_none")]
    instructions_per_check: Option<Vec<(String, f64)>>,
}

pub(crate) fn run(out: &mut Out, a: &LabArgs) -> Result<bool, CliError> {
    let wanted: Vec<&str> = if a.experiments.is_empty() {
        EXPERIMENTS.to_vec()
    } else {
        a.experiments.iter().map(String::as_str).collect()
    };
    if let Some(bad) = wanted.iter().find(|e| !EXPERIMENTS.contains(e)) {
        return Err(format!(
            "unknown experiment {bad}: expected some of {}",
            EXPERIMENTS.join(", ")
        )
        .into());
    }
    let path = match &a.policy {
        Some(p) => p.clone(),
        None => crate::defaults::policy().ok_or("no policy given, Debian's default policy is not installed, and the bundled example policy is not built (run `make demo`)")?,
    };
    let server = Arc::new(crate::load_path(&path)?);
    let policy = path.to_string_lossy().into_owned();
    let cpus = match a.cpus {
        Some(n) => Some(seaccess_lab::stats::pin_cpus(n).map_err(|e| format!("--cpus {n}: {e}"))?),
        None => None,
    };
    std::fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let mut res = Results {
        policy: policy.clone(),
        quick: a.quick,
        cpus: cpus.clone(),
        ..Results::default()
    };
    let mut text = String::new();
    let online = std::thread::available_parallelism().map_or(0, |n| n.get());
    let _ = writeln!(
        text,
        "seaccess-lab lab{}: policy {policy}; {}.\n",
        if a.quick { " --quick" } else { "" },
        match &cpus {
            Some(c) => format!(
                "kept to CPU {}",
                c.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
            ),
            None => format!("{online} CPUs"),
        }
    );
    // On a terminal, a bar over the experiments, naming the one running.
    let steps = wanted
        .iter()
        .filter(|e| matches!(**e, "chatroom" | "hackbench"))
        .count()
        + 2 * usize::from(
            wanted
                .iter()
                .any(|e| matches!(*e, "treewalk" | "readwrite" | "pathwalk")),
        )
        + usize::from(a.callgrind);
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(steps as u64);
        b.set_style(
            indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} ({elapsed})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b.enable_steady_tick(std::time::Duration::from_millis(200));
        b
    });
    let step = |msg: &str| {
        if let Some(b) = &bar {
            b.set_message(msg.to_string());
        }
    };
    let done = || {
        if let Some(b) = &bar {
            b.inc(1);
        }
    };

    if wanted.contains(&"chatroom") {
        step("chatroom");
        let mut shape = if a.quick {
            chatroom::Shape::quick()
        } else {
            chatroom::Shape::full()
        };
        if !a.threads.is_empty() {
            shape.rooms = a
                .threads
                .iter()
                .map(|t| (t / (shape.clients * 3)).max(1))
                .collect();
        }
        shape.rounds = a.rounds.unwrap_or(shape.rounds);
        let peer = a.peer.exists().then_some(a.peer.as_path());
        if peer.is_none() {
            crate::output::note(&format!(
                "SKIP: seaccess-lab lab: libselinux's AVC in chatroom: {} is not built (make peers)",
                a.peer.display()
            ));
        }
        let r = chatroom::run(server.clone(), &policy, &shape, mediate::DOMAINS, peer)
            .map_err(|e| format!("chatroom: {e}"))?;
        chatroom_table(&mut text, &r);
        write_csv(&a.out.join("chatroom.csv"), &chatroom_csv(&r))?;
        write_json(&a.out.join("chatroom.json"), &r)?;
        res.chatroom = Some(r);
        done();
    }
    if wanted.contains(&"hackbench") {
        step("hackbench");
        let mut shape = if a.quick {
            hackbench::Shape::quick()
        } else {
            hackbench::Shape::full()
        };
        if !a.threads.is_empty() {
            shape.groups = a
                .threads
                .iter()
                .map(|t| (t / (shape.fds * 2)).max(1))
                .collect();
        }
        shape.rounds = a.rounds.unwrap_or(shape.rounds);
        let r = hackbench::run(server.clone(), &policy, &shape, mediate::DOMAINS)
            .map_err(|e| format!("hackbench: {e}"))?;
        hackbench_table(&mut text, &r);
        write_csv(&a.out.join("hackbench.csv"), &hackbench_csv(&r))?;
        write_json(&a.out.join("hackbench.json"), &r)?;
        res.hackbench = Some(r);
        done();
    }
    let objmgr_wanted: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|e| matches!(*e, "treewalk" | "readwrite" | "pathwalk"))
        .collect();
    if !objmgr_wanted.is_empty() {
        step("treewalk, readwrite, pathwalk");
        let dir = std::env::temp_dir();
        let (shape, rw_ops) = if a.quick {
            (Shape::QUICK, 20_000)
        } else {
            (Shape::FULL, 200_000)
        };
        let cfg = objmgr_bench::Config {
            policy: &policy,
            rounds: 6,
            shape,
            rw_ops,
            subject: None,
            object: None,
            dir: &dir,
            control: false,
        };
        let r = objmgr_bench::run(server.clone(), &cfg)
            .map_err(|e| format!("treewalk/readwrite/pathwalk: {e}"))?;
        done();
        step("treewalk, readwrite, pathwalk on a FUSE mount");
        let mount = match crate::mountbench::unavailable() {
            Some(why) => {
                res.mount_skipped = Some(why);
                None
            }
            None => {
                // The subject and files the in-process run chose, so that both ask the same.
                let m = crate::mountbench::MountConfig {
                    policy: &path,
                    subject: Some(&r.subject),
                    object: &r.object,
                    rounds: if a.quick { 2 } else { 5 },
                    quick: a.quick,
                    dir: None,
                    bindfs: true,
                    control: false,
                };
                Some(crate::mountbench::measure(&m).map_err(|e| match e {
                    CliError::Message(m) => {
                        CliError::Message(format!("treewalk/readwrite/pathwalk on the mount: {m}"))
                    }
                    e => e,
                })?)
            }
        };
        if let Some(why) = &res.mount_skipped {
            crate::output::note(&format!(
                "SKIP: seaccess-lab lab: treewalk, readwrite, pathwalk on a FUSE mount: {why}"
            ));
        }
        objmgr_tables(&mut text, &r, mount.as_ref(), &objmgr_wanted);
        write_csv(&a.out.join("objmgr.csv"), &objmgr_csv(&r, mount.as_ref()))?;
        res.mount = mount;
        let json: serde_json::Value =
            serde_json::from_str(&r.to_json()).map_err(|e| e.to_string())?;
        write_json(&a.out.join("objmgr.json"), &json)?;
        res.objmgr = Some(json);
        done();
    }
    if a.callgrind {
        step("callgrind");
        let rows: Vec<(String, f64)> = mediate::ORDER
            .iter()
            .map(|m| instructions_per_check(&path, m).map(|n| (m.to_string(), n)))
            .collect::<Result<_, _>>()?;
        let _ = writeln!(text, "## instructions per checked send or receive (callgrind)\n\none thread, a send and a receive on a socket and on a pipe per round, 100,000 rounds against 20,000 differenced.\n");
        let _ = writeln!(text, "| mediator | instructions |\n|---|---|");
        for (m, n) in &rows {
            let _ = writeln!(text, "| {m} | {n:.1} |");
        }
        let _ = writeln!(text);
        res.instructions_per_check = Some(rows);
        done();
    }
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    write_json(&a.out.join("results.json"), &res)?;
    let bars = overhead_bars(&res, &wanted);
    let (files, note) =
        crate::lab_report::plots(&a.out, res.chatroom.as_ref(), res.hackbench.as_ref(), &bars)
            .map_err(|e| format!("plots: {e}"))?;
    std::fs::write(
        a.out.join("index.html"),
        crate::lab_report::index_html(&text, &files, &policy),
    )
    .map_err(|e| format!("{}: {e}", a.out.join("index.html").display()))?;
    if let Some(n) = note {
        crate::output::note(&format!("seaccess-lab lab: {n}"));
    }
    if a.json {
        writeln!(
            out,
            "{}",
            serde_json::to_string(&res).map_err(|e| e.to_string())?
        )?;
    } else {
        write!(out, "{text}")?;
        writeln!(out, "results: {}", a.out.display())?;
    }
    Ok(true)
}

/// seaccess's overhead in each experiment run (the largest shape of each), beside the seed's
/// published figure after its fix where it gave one: hackbench 51 s against 53 s without
/// SELinux (2004, -3.8%), read/write 3.6% (2007, x86, the upper end), tree walk 8.4% (2008:
/// the regression the credentials change cost). chatroom (2001) reported throughput won back,
/// not an overhead, and path walk (2025) a profile rank: no figure to set beside ours.
fn overhead_bars(res: &Results, wanted: &[&str]) -> Vec<crate::lab_report::Bar> {
    use crate::lab_report::Bar;
    let mut v = Vec::new();
    if let Some(c) = &res.chatroom {
        if let Some(r) = c.rows.last() {
            if let Some(o) = c.overhead_pct(r.rooms, "seaccess") {
                let ci = ci_of(&r.wall_ratio_ci, "seaccess")
                    .map(|(l, h)| ((l - 1.0) * 100.0, (h - 1.0) * 100.0));
                v.push(Bar {
                    name: "chatroom".into(),
                    ours: o,
                    ci,
                    seed: None,
                });
            }
        }
    }
    if let Some(h) = &res.hackbench {
        for t in ["sockets", "pipes"] {
            if let Some(r) = h.rows.iter().rfind(|r| r.transport.name() == t) {
                if let Some(x) = Hackbench::ratio(r, "seaccess") {
                    let ci = ci_of(&r.wall_ratio_ci, "seaccess")
                        .map(|(l, h)| ((l - 1.0) * 100.0, (h - 1.0) * 100.0));
                    v.push(Bar {
                        name: format!("hackbench {t}"),
                        ours: (x - 1.0) * 100.0,
                        ci,
                        seed: Some((51.0 / 53.0 - 1.0) * 100.0),
                    });
                }
            }
        }
    }
    if let Some(o) = &res.objmgr {
        for (name, seed) in [
            ("treewalk", Some(8.4)),
            ("readwrite", Some(3.6)),
            ("pathwalk", None),
        ] {
            if let (true, Some(x)) = (
                wanted.contains(&name),
                o.get(name)
                    .and_then(|e| e.get("fast_overhead_pct"))
                    .and_then(serde_json::Value::as_f64),
            ) {
                v.push(Bar {
                    name: name.into(),
                    ours: x,
                    ci: None,
                    seed,
                });
            }
        }
    }
    v
}

/// `count` rounds of checks through `mediator` (the hidden `bench lab-checks`, which
/// --callgrind runs under valgrind).
pub(crate) fn checks(policy: &Path, mediator: &str, count: u64) -> Result<(), CliError> {
    let server = Arc::new(crate::load_path(policy)?);
    mediate::check_loop(server, mediator, count).map_err(|e| e.to_string())?;
    Ok(())
}

/// Instructions per check through `mediator`: callgrind's totals for two round counts,
/// differenced (set-up and policy load cancel), over the four checks of a round.
fn instructions_per_check(policy: &Path, mediator: &str) -> Result<f64, CliError> {
    let me = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let policy = policy.to_string_lossy();
    let args = [
        "bench",
        "lab-checks",
        "--mediator",
        mediator,
        "--count",
        "{count}",
        "--policy",
        &policy,
    ];
    let round = crate::callgrind::per_op(
        &me,
        &args,
        (20_000, 100_000),
        None,
        &format!("--callgrind: {mediator}"),
    )?;
    Ok(round / 4.0)
}

fn write_json(path: &Path, v: &impl serde::Serialize) -> Result<(), CliError> {
    let s = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
    std::fs::write(path, s + "\n").map_err(|e| format!("{}: {e}", path.display()).into())
}

fn write_csv(path: &Path, rows: &[Vec<String>]) -> Result<(), CliError> {
    let s: String = rows.iter().map(|r| r.join(",") + "\n").collect();
    std::fs::write(path, s).map_err(|e| format!("{}: {e}", path.display()).into())
}

/// A ratio to vanilla as an overhead in percent, with its 95% interval.
fn pct_ci(x: f64, ci: Option<(f64, f64)>) -> String {
    match ci {
        Some((lo, hi)) => format!(
            "{:+.1}% [{:+.1}, {:+.1}]",
            (x - 1.0) * 100.0,
            (lo - 1.0) * 100.0,
            (hi - 1.0) * 100.0
        ),
        None => format!("{:+.1}%", (x - 1.0) * 100.0),
    }
}

/// A mediator's entry in a (mediator, interval) list.
fn ci_of(list: &[(String, (f64, f64))], mediator: &str) -> Option<(f64, f64)> {
    list.iter().find(|x| x.0 == mediator).map(|x| x.1)
}

/// 2001's table: messages per second per design and room count; then each design's overhead
/// against vanilla, paired by round, with its interval.
fn chatroom_table(t: &mut String, r: &Chatroom) {
    let _ = writeln!(
        t,
        "## chatroom (2001)\n\n{} clients a room, each run {} messages of {} bytes a client, every message to every other client of its room over Unix stream sockets; 3 threads a client, made once and reused by every run; hooks: sendmsg {{write}}, recvmsg {{read}} as {}. {} rounds, each a run of every mediator back to back in a rotating order. `seaccess` is the object manager's hooks (what an object manager gets); `seaccess_cache` and the designs are the caches alone, asked what the hook asks; `control` is vanilla run again (its overhead is the method's noise); `libselinux`, where the peer is built, is libselinux's AVC (avc_has_perm_noaudit, its global mutex) in the peer program's process, against that process's own unchecked runs.\n",
        r.shape.clients, r.shape.messages, r.shape.len, r.domain, r.shape.rounds
    );
    let names: Vec<&str> = r
        .rows
        .first()
        .map(|row| row.rates.iter().map(|x| x.0.as_str()).collect())
        .unwrap_or_default();
    let _ = writeln!(t, "Messages per second (median of the rounds):\n");
    let _ = writeln!(t, "| rooms | threads | {} |", names.join(" | "));
    let _ = writeln!(t, "|---|---|{}", "---|".repeat(names.len()));
    for row in &r.rows {
        let cells: Vec<String> = row.rates.iter().map(|(_, v)| format!("{v:.0}")).collect();
        let _ = writeln!(
            t,
            "| {} | {} | {} |",
            row.rooms,
            row.threads,
            cells.join(" | ")
        );
    }
    let _ = writeln!(t, "\nOverhead against vanilla: the median over rounds of a run's time over vanilla's run in the same round, [its 95% interval]:\n");
    let _ = writeln!(
        t,
        "| rooms | {} |",
        names
            .iter()
            .skip(1)
            .copied()
            .collect::<Vec<_>>()
            .join(" | ")
    );
    let _ = writeln!(t, "|---|{}", "---|".repeat(names.len().saturating_sub(1)));
    for row in &r.rows {
        let cells: Vec<String> = row
            .wall_ratio
            .iter()
            .filter(|x| x.0 != "vanilla")
            .map(|(n, x)| pct_ci(*x, ci_of(&row.wall_ratio_ci, n)))
            .collect();
        let _ = writeln!(t, "| {} | {} |", row.rooms, cells.join(" | "));
    }
    let _ = writeln!(t);
    for row in &r.rows {
        let c = &row.cache;
        let _ = writeln!(t, "seaccess's cache, {} rooms: {} lookups ({} hits, {} misses, {} reclaims), {:.3} per message", row.rooms, c.lookups, c.hits, c.misses, c.reclaims, c.lookups_per_message);
    }
    let _ = writeln!(t);
}

fn chatroom_csv(r: &Chatroom) -> Vec<Vec<String>> {
    let mut rows = vec![vec![
        "rooms".into(),
        "threads".into(),
        "messages".into(),
        "mediator".into(),
        "messages_per_s".into(),
        "overhead_pct".into(),
        "cpu_us_per_message".into(),
        "cpu_overhead_pct".into(),
    ]];
    for row in &r.rows {
        for (n, v) in &row.rates {
            let o = r
                .overhead_pct(row.rooms, n)
                .map_or(String::new(), |o| format!("{o:.3}"));
            let cpu = row
                .cpu_us
                .iter()
                .find(|x| &x.0 == n)
                .map_or(String::new(), |x| format!("{:.4}", x.1));
            let co = r
                .cpu_overhead_pct(row.rooms, n)
                .map_or(String::new(), |o| format!("{o:.3}"));
            rows.push(vec![
                row.rooms.to_string(),
                row.threads.to_string(),
                row.messages.to_string(),
                n.clone(),
                format!("{v:.1}"),
                o,
                cpu,
                co,
            ]);
        }
    }
    rows
}

/// 2004's table: seconds per run per design and group count, each transport its own table;
/// then each design's time over vanilla's, paired by round, with its interval.
fn hackbench_table(t: &mut String, r: &Hackbench) {
    for transport in ["sockets", "pipes"] {
        let rows: Vec<_> = r
            .rows
            .iter()
            .filter(|x| x.transport.name() == transport)
            .collect();
        let Some(first) = rows.first() else { continue };
        let _ = writeln!(
            t,
            "## hackbench (2004), {transport}\n\ngroups of {} senders and {} receivers, each run {} messages of {} bytes from every sender to every receiver of its group, a thread each, made once and reused by every run; every write and read checked as {}. {} rounds, each a run of every mediator back to back in a rotating order.\n",
            r.fds, r.fds, r.loops, r.len, r.domain, r.rounds
        );
        let names: Vec<&str> = first.seconds.iter().map(|x| x.0.as_str()).collect();
        let _ = writeln!(t, "Milliseconds per run (median of the rounds):\n");
        let _ = writeln!(t, "| groups | threads | {} |", names.join(" | "));
        let _ = writeln!(t, "|---|---|{}", "---|".repeat(names.len()));
        for row in &rows {
            let cells: Vec<String> = row
                .seconds
                .iter()
                .map(|(_, v)| format!("{:.2}", v * 1e3))
                .collect();
            let _ = writeln!(
                t,
                "| {} | {} | {} |",
                row.groups,
                row.threads,
                cells.join(" | ")
            );
        }
        let _ = writeln!(t, "\nEnforced over vanilla: the median over rounds of a run's time over vanilla's run in the same round, [its 95% interval]:\n");
        let _ = writeln!(
            t,
            "| groups | {} |",
            names
                .iter()
                .skip(1)
                .copied()
                .collect::<Vec<_>>()
                .join(" | ")
        );
        let _ = writeln!(t, "|---|{}", "---|".repeat(names.len().saturating_sub(1)));
        for row in &rows {
            let cells: Vec<String> = row
                .wall_ratio
                .iter()
                .filter(|x| x.0 != "vanilla")
                .map(|(n, x)| match ci_of(&row.wall_ratio_ci, n) {
                    Some((lo, hi)) => format!("{x:.3}x [{lo:.3}, {hi:.3}]"),
                    None => format!("{x:.3}x"),
                })
                .collect();
            let _ = writeln!(t, "| {} | {} |", row.groups, cells.join(" | "));
        }
        let _ = writeln!(t);
        for row in rows {
            let c = &row.cache;
            let _ = writeln!(t, "seaccess's cache, {} groups: {} lookups ({} hits, {} misses, {} reclaims), {:.3} per message", row.groups, c.lookups, c.hits, c.misses, c.reclaims, c.lookups_per_message);
        }
        let _ = writeln!(t);
    }
}

fn hackbench_csv(r: &Hackbench) -> Vec<Vec<String>> {
    let mut rows = vec![vec![
        "transport".into(),
        "groups".into(),
        "threads".into(),
        "messages".into(),
        "mediator".into(),
        "seconds".into(),
        "ratio_to_vanilla".into(),
        "cpu_seconds".into(),
        "cpu_ratio_to_vanilla".into(),
    ]];
    for row in &r.rows {
        for (n, v) in &row.seconds {
            let x = Hackbench::ratio(row, n).map_or(String::new(), |x| format!("{x:.4}"));
            let cpu = row
                .cpu_seconds
                .iter()
                .find(|y| &y.0 == n)
                .map_or(String::new(), |y| format!("{:.6}", y.1));
            let cx = Hackbench::cpu_ratio(row, n).map_or(String::new(), |x| format!("{x:.4}"));
            rows.push(vec![
                row.transport.name().into(),
                row.groups.to_string(),
                row.threads.to_string(),
                row.messages.to_string(),
                n.clone(),
                format!("{v:.6}"),
                x,
                cpu,
                cx,
            ]);
        }
    }
    rows
}

/// The object manager's experiments as their seeds presented them: time per operation without
/// checks, with every fast path off, with them on, and the overheads; in process, and on the
/// mount where it ran.
fn objmgr_tables(
    t: &mut String,
    r: &ObjmgrBench,
    mount: Option<&crate::mountbench::MountRun>,
    wanted: &[&str],
) {
    let seeds = [
        (
            "treewalk",
            "tree walk (2008): stat and open over the tree",
            &r.treewalk,
        ),
        (
            "readwrite",
            "read/write (2007): 1-byte reads and writes on open files",
            &r.readwrite,
        ),
        (
            "pathwalk",
            "path walk (2025): stat of deep paths",
            &r.pathwalk,
        ),
    ];
    for (name, title, f) in seeds.iter().filter(|(n, _, _)| wanted.contains(n)) {
        let _ = writeln!(
            t,
            "## {title}\n\n{} directories, {} files; {} as {} on {}. In process: the hooks around direct system calls.\n",
            r.dirs, r.files, name, r.subject, r.object
        );
        let _ = writeln!(
            t,
            "| variant | ns per operation | overhead | cache lookups per operation |"
        );
        let _ = writeln!(t, "|---|---|---|---|");
        let _ = writeln!(t, "| vanilla | {:.1} | | |", f.vanilla_ns);
        let _ = writeln!(
            t,
            "| fast paths off | {:.1} | {:+.2}% | {:.2} |",
            f.slow_ns, f.slow_overhead_pct, f.lookups_per_op_slow
        );
        let _ = writeln!(
            t,
            "| fast paths on | {:.1} | {:+.2}% | {:.2} |",
            f.fast_ns, f.fast_overhead_pct, f.lookups_per_op_fast
        );
        let _ = writeln!(t);
        if let Some(m) = mount.and_then(|m| m.rows.iter().find(|x| x.name == *name).map(|x| (m, x)))
        {
            let (run, x) = m;
            let _ = writeln!(
                t,
                "On a FUSE mount (`seaccess mount`, {} request threads; {} directories, {} files; {} rounds; the same subject and files):\n",
                run.threads, run.dirs, run.files, run.rounds
            );
            let _ = writeln!(
                t,
                "| variant | ns per operation | overhead | cache lookups per operation |"
            );
            let _ = writeln!(t, "|---|---|---|---|");
            let _ = writeln!(t, "| no checks | {:.1} | | |", x.none_ns);
            let _ = writeln!(
                t,
                "| fast paths off | {:.1} | {:+.2}% | {:.2} |",
                x.slow_ns, x.slow_overhead_pct, x.lookups_per_op_slow
            );
            let _ = writeln!(
                t,
                "| fast paths on | {:.1} | {:+.2}% | {:.2} |",
                x.fast_ns, x.fast_overhead_pct, x.lookups_per_op_fast
            );
            if let (Some(b), Some(v)) = (x.bindfs_ns, x.vs_bindfs) {
                let _ = writeln!(t, "| bindfs (Debian's passthrough FUSE filesystem) | {b:.1} | fast paths on: {v:.2}x of bindfs | |");
            }
            let _ = writeln!(t);
        }
    }
}

fn objmgr_csv(r: &ObjmgrBench, mount: Option<&crate::mountbench::MountRun>) -> Vec<Vec<String>> {
    let mut rows = vec![vec![
        "experiment".into(),
        "where".into(),
        "variant".into(),
        "ns_per_op".into(),
        "overhead_pct".into(),
        "lookups_per_op".into(),
    ]];
    // A variant's row: its time, and for a checking variant its overhead and lookups.
    let mut row = |name: &str, place: &str, variant: &str, ns: f64, checked: Option<(f64, f64)>| {
        let (o, l) = checked.map_or((String::new(), String::new()), |(o, l)| {
            (format!("{o:.3}"), format!("{l:.3}"))
        });
        rows.push(vec![
            name.into(),
            place.into(),
            variant.into(),
            format!("{ns:.2}"),
            o,
            l,
        ]);
    };
    for (name, f) in [
        ("treewalk", &r.treewalk),
        ("readwrite", &r.readwrite),
        ("pathwalk", &r.pathwalk),
    ] {
        row(name, "in_process", "vanilla", f.vanilla_ns, None);
        row(
            name,
            "in_process",
            "fast_paths_off",
            f.slow_ns,
            Some((f.slow_overhead_pct, f.lookups_per_op_slow)),
        );
        row(
            name,
            "in_process",
            "fast_paths_on",
            f.fast_ns,
            Some((f.fast_overhead_pct, f.lookups_per_op_fast)),
        );
    }
    for x in mount.map(|m| m.rows.as_slice()).unwrap_or_default() {
        row(x.name, "mount", "no_checks", x.none_ns, None);
        row(
            x.name,
            "mount",
            "fast_paths_off",
            x.slow_ns,
            Some((x.slow_overhead_pct, x.lookups_per_op_slow)),
        );
        row(
            x.name,
            "mount",
            "fast_paths_on",
            x.fast_ns,
            Some((x.fast_overhead_pct, x.lookups_per_op_fast)),
        );
        if let Some(b) = x.bindfs_ns {
            row(x.name, "mount", "bindfs", b, None);
        }
    }
    rows
}
