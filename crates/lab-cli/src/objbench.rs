//! `seaccess-lab bench objmgr`: the object manager's hooks around real system calls, against the
//! same system calls without them, in three experiments (see seaccess_lab::objmgr_bench).

use std::path::PathBuf;
use std::sync::Arc;

use seaccess_lab::objmgr_bench::{Config, Figures, ObjmgrBench, Shape};

use crate::output::{CliError, Out};

#[derive(clap::Args)]
pub(crate) struct ObjmgrArgs {
    /// The compiled policy the hooks enforce.
    #[arg(long, short = 'p')]
    policy: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Passes over each experiment's work, rounded up to a multiple of 6 (each of the six
    /// orders of the variants once), cut into short units (under a millisecond) each run
    /// vanilla, with fast paths off and with them on, back to back; the overheads are medians
    /// over units and blocks of six passes, and again from each unit's fastest pass.
    #[arg(long, default_value_t = 6)]
    rounds: usize,
    /// A small tree and short passes (seconds rather than a minute; for tests, not for figures).
    #[arg(long)]
    quick: bool,
    /// The subject's context (default: unconfined_t, checked against the policy).
    #[arg(long)]
    subject: Option<String>,
    /// The files' and directories' context (default: user_home_t, checked against the policy).
    #[arg(long)]
    object: Option<String>,
    /// Where to generate the tree (default: the temporary directory); removed afterwards.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// A control run: the "fast" variant calls no hook at all, so its overhead shows how far
    /// from 0 the method lands when nothing differs (this machine's noise, now).
    #[arg(long)]
    control: bool,
}

/// More rounds than this measure patience, not the hooks.
const MAX_ROUNDS: usize = 1000;

pub(crate) fn run(out: &mut Out, a: &ObjmgrArgs) -> Result<(), CliError> {
    if a.rounds == 0 || a.rounds > MAX_ROUNDS {
        return Err(format!("--rounds {}: must be from 1 to {MAX_ROUNDS}", a.rounds).into());
    }
    let server = Arc::new(crate::load_path(&a.policy)?);
    let policy = a.policy.to_string_lossy().into_owned();
    let dir = a.dir.clone().unwrap_or_else(std::env::temp_dir);
    let (shape, rw_ops) = if a.quick {
        (Shape::QUICK, 20_000)
    } else {
        (Shape::FULL, 200_000)
    };
    let cfg = Config {
        policy: &policy,
        rounds: a.rounds,
        shape,
        rw_ops,
        subject: a.subject.as_deref(),
        object: a.object.as_deref(),
        dir: &dir,
        control: a.control,
    };
    let r = seaccess_lab::objmgr_bench::run(server, &cfg).map_err(|e| e.to_string())?;
    if a.json {
        writeln!(out, "{}", r.to_json())?;
        return Ok(());
    }
    print_table(out, &r)
}

fn print_table(out: &mut Out, r: &ObjmgrBench) -> Result<(), CliError> {
    writeln!(out, "policy {}: {} on {}", r.policy, r.subject, r.object)?;
    if r.control {
        writeln!(out, "CONTROL RUN: the \"fast\" variant calls no hook; its overheads are the method's noise, not the hooks'")?;
    }
    writeln!(out, "tree: {} directories, {} files; {} passes of each experiment, each cut into short units run in the three variants back to back", r.dirs, r.files, r.rounds)?;
    writeln!(
        out,
        "ns per operation; slow = every fast path off, fast = all on; % = median overhead over units and blocks of six passes; best % = from each unit's fastest pass; hooks = the hooks alone, without the system calls"
    )?;
    writeln!(
        out,
        "{:<11}{:>10}{:>10}{:>10}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>8}{:>15}",
        "experiment",
        "vanilla",
        "slow",
        "fast",
        "slow %",
        "fast %",
        "best s%",
        "best f%",
        "hooks s",
        "hooks f",
        "hooks%",
        "lookups/op s/f"
    )?;
    let row = |out: &mut Out, name: &str, f: &Figures| {
        writeln!(
            out,
            "{name:<11}{:>10.1}{:>10.1}{:>10.1}{:>+8.2}{:>+8.2}{:>+8.2}{:>+8.2}{:>8.1}{:>8.1}{:>8.2}{:>15}",
            f.vanilla_ns,
            f.slow_ns,
            f.fast_ns,
            f.slow_overhead_pct,
            f.fast_overhead_pct,
            f.slow_best_pct,
            f.fast_best_pct,
            f.slow_hooks_ns,
            f.fast_hooks_ns,
            f.fast_hooks_pct(),
            format!("{:.2}/{:.2}", f.lookups_per_op_slow, f.lookups_per_op_fast)
        )
    };
    row(out, "treewalk", &r.treewalk)?;
    row(out, "readwrite", &r.readwrite)?;
    row(out, "pathwalk", &r.pathwalk)?;
    writeln!(
        out,
        "pathwalk: {} paths, {} to {} directory components; cache lookups per component: {:.3} with fast paths off, {:.3} warm with them on (goal 0)",
        r.deep_paths, r.depth.0, r.depth.1, r.lookups_per_component_slow, r.lookups_per_component_warm
    )?;
    writeln!(out, "goal: fast % at most 1 in every experiment (hooks % is the fast hooks' own time against vanilla)")?;
    Ok(())
}
