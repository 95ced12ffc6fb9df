//! `seaccess-lab`: the lab's experiments and the benchmarks, a program of their own so that
//! `seaccess`, what a user installs, links neither the comparison designs nor the plotting.
//!
//! The commands are the ones `seaccess lab` and `seaccess bench` were: `seaccess-lab lab ...`,
//! `seaccess-lab bench avc|engine|objmgr|mount|label ...`.

#![forbid(unsafe_code)]

mod avcbench;
mod callgrind;
mod defaults;
mod enginebench;
// The same page and completion generator as `seaccess generate`, not a copy.
#[path = "../../cli/src/generate.rs"]
mod generate;
mod hitpath;
mod lab;
mod lab_report;
mod labelbench;
mod mountbench;
mod objbench;
// One source for both programs' handling of standard output (a closed pipe ends the command
// with 141, never a panic), rather than a copy that drifts; some of it only `seaccess` uses.
#[allow(dead_code)]
#[path = "../../cli/src/output.rs"]
mod output;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use output::{CliError, Out};
use seaccess_security::SecurityServer;

#[derive(Parser)]
#[command(
    name = "seaccess-lab",
    version,
    about = "seaccess's lab and benchmarks: the classic SELinux experiments and seaccess against its peers"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Benchmarks, printing ratios against the peer measured in the same run.
    #[command(subcommand)]
    Bench(BenchCmd),
    /// The classic SELinux performance experiments (chatroom, hackbench, treewalk, readwrite,
    /// pathwalk), each as its seed presented it: Markdown tables, JSON and CSV in --out.
    Lab(lab::LabArgs),
    /// The man pages or a shell's completions, generated from this command's definition
    /// (`make install` runs it).
    #[command(hide = true)]
    Generate(generate::GenerateArgs),
}

#[derive(Subcommand)]
enum BenchCmd {
    /// File labeling against libselinux 3.4 (tests/label/selabel_query.c): open time, memory,
    /// warm lookups, and tree walks, on the same file_contexts and paths.
    Label(labelbench::LabelBenchArgs),
    /// The policy engine against libsepol (through the sepol-oracle program): load time,
    /// memory, compute_av, and the batch command end to end.
    Engine(enginebench::BenchArgs),
    /// The access vector cache against the designs the kernel went through: hit path at 1, 2
    /// and 16 threads, miss path, reload stall, instructions per hit.
    Avc(avcbench::AvcArgs),
    /// The object manager's hooks around real system calls on a generated tree, against the
    /// calls alone: a stat-and-open tree walk, one-byte reads and writes, a deep path walk;
    /// fast paths off and on.
    Objmgr(objbench::ObjmgrArgs),
    /// The file experiments on a real `seaccess mount` (tree walk, one-byte reads and writes,
    /// path walk): enforcing with and without the fast paths against the same FUSE passthrough
    /// without checks, and against bindfs.
    Mount(mountbench::MountBenchArgs),
    /// Instructions per check on a warm cache at every layer, in one run (callgrind): the
    /// cache, the comparison designs, the object manager's hooks, and the C library's checks
    /// against libselinux 3.4's.
    HitPath(hitpath::HitPathArgs),
    /// (For `bench hit-path`) COUNT checks of one row and nothing else.
    #[command(hide = true)]
    HitLoop {
        #[arg(long, short = 'p')]
        policy: PathBuf,
        #[arg(long)]
        row: String,
        #[arg(long)]
        count: u64,
    },
    /// (For the instruction count) COUNT cache hits and nothing else.
    #[command(hide = true)]
    AvcHits {
        #[arg(long, short = 'p')]
        policy: PathBuf,
        #[arg(long)]
        count: u64,
    },
    /// (For the lab's instruction counts) COUNT sends and receives on a socket and a pipe
    /// through one mediator, and nothing else.
    #[command(hide = true)]
    LabChecks {
        #[arg(long, short = 'p')]
        policy: PathBuf,
        #[arg(long)]
        mediator: String,
        #[arg(long)]
        count: u64,
    },
}

/// The security server on the policy at `path`, bare: the benchmarks wire their caches to it
/// (the seaccess design through the engine, the comparison designs by hand).
pub(crate) fn load_path(path: &Path) -> Result<SecurityServer, String> {
    seaccess_engine::load_server(path).map_err(|e| e.to_string())
}

/// Runs one subcommand: Ok(true) when it succeeded, Ok(false) when it ran but something it
/// measured failed.
fn run(cmd: Cmd, out: &mut Out) -> Result<bool, CliError> {
    match cmd {
        Cmd::Lab(a) => lab::run(out, &a),
        Cmd::Generate(a) => generate::run(Cli::command(), &a),
        Cmd::Bench(BenchCmd::Engine(a)) => enginebench::run(out, &a).map(|_| true),
        Cmd::Bench(BenchCmd::Avc(a)) => avcbench::run(out, &a).map(|_| true),
        Cmd::Bench(BenchCmd::Objmgr(a)) => objbench::run(out, &a).map(|_| true),
        Cmd::Bench(BenchCmd::Mount(a)) => mountbench::run(out, &a).map(|_| true),
        Cmd::Bench(BenchCmd::Label(a)) => labelbench::run(out, &a).map(|_| true),
        Cmd::Bench(BenchCmd::HitPath(a)) => hitpath::run(out, &a).map(|_| true),
        Cmd::Bench(BenchCmd::HitLoop { policy, row, count }) => {
            hitpath::hit_loop(&policy, &row, count).map(|_| true)
        }
        Cmd::Bench(BenchCmd::AvcHits { policy, count }) => {
            avcbench::hits(&policy, count).map(|_| true)
        }
        Cmd::Bench(BenchCmd::LabChecks {
            policy,
            mediator,
            count,
        }) => lab::checks(&policy, &mediator, count).map(|_| true),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut out = Out::new();
    // Output written before a failure still goes out, ahead of the failure's status.
    let r = run(cli.cmd, &mut out);
    let flushed = out.flush();
    match r.and_then(|ok| flushed.map(|_| ok)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => e.exit(),
    }
}
