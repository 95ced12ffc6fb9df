//! `seaccess-lab bench hit-path`: the instructions of one check answered from a warm cache, at
//! every layer, in one run (callgrind): seaccess's cache, each comparison design, the object
//! manager's hooks, and, through the C library, `avc_has_perm`, `avc_has_perm_noaudit` and
//! `selinux_check_access` against libselinux 3.4's own.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use seaccess_lab::hit_path::ROWS;

use crate::output::{CliError, Out};

#[derive(clap::Args)]
pub(crate) struct HitPathArgs {
    /// The compiled policy whose decisions are cached.
    #[arg(long, short = 'p')]
    policy: PathBuf,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
    /// Leave out the C library's rows (tests/capi/bench-instructions.sh, which needs `make capi
    /// oracle` and the source tree as the working directory).
    #[arg(long)]
    no_capi: bool,
}

/// The checks each in-process row makes in its two runs: the difference is what is divided.
const COUNTS: (u64, u64) = (100_000, 600_000);
/// The C library's checks, their goals (instructions) and the library script's names.
const CAPI: &[(&str, &str, f64)] = &[
    ("avc_has_perm", "has_perm", 60.0),
    ("avc_has_perm_noaudit", "noaudit", 60.0),
    ("selinux_check_access", "check_access", 150.0),
    // systemd's way: the same four buffers, other strings each call (the copies counted).
    (
        "selinux_check_access, other strings in the same buffers (their copies counted)",
        "check_access_one_buffer",
        150.0,
    ),
];

#[derive(serde::Serialize)]
struct Row {
    name: &'static str,
    what: &'static str,
    /// Instructions per check, the loop's subtracted.
    instructions: f64,
}

#[derive(serde::Serialize)]
struct CapiRow {
    check: &'static str,
    libseaccess: f64,
    libselinux: f64,
}

#[derive(serde::Serialize)]
struct Report {
    policy: String,
    command: &'static str,
    /// The Rust loop's own instructions per check, subtracted from every in-process row.
    rust_loop: f64,
    rows: Vec<Row>,
    /// The C harness's loop, subtracted from the C rows of both libraries.
    capi_loop: Option<(f64, f64)>,
    capi: Vec<CapiRow>,
    capi_not_measured: Option<String>,
}

pub(crate) fn run(out: &mut Out, a: &HitPathArgs) -> Result<(), CliError> {
    // Fail early and clearly on a policy that does not load, before valgrind runs anything.
    crate::load_path(&a.policy)?;
    let me = std::env::current_exe().map_err(|e| format!("this program's path: {e}"))?;
    let policy = a.policy.to_string_lossy().into_owned();
    let mut raw = Vec::new();
    for &(name, what) in ROWS {
        let args = [
            "bench", "hit-loop", "--row", name, "--count", "{count}", "--policy", &policy,
        ];
        raw.push((
            name,
            what,
            crate::callgrind::per_op(&me, &args, COUNTS, None, name)?,
        ));
    }
    let rust_loop = raw.iter().find(|r| r.0 == "loop").map_or(0.0, |r| r.2);
    let rows: Vec<Row> = raw
        .into_iter()
        .filter(|r| r.0 != "loop")
        .map(|(name, what, v)| Row {
            name,
            what,
            instructions: v - rust_loop,
        })
        .collect();
    let (capi_loop, capi, capi_not_measured) = if a.no_capi {
        (None, Vec::new(), Some("--no-capi".to_string()))
    } else {
        match capi_rows(&a.policy) {
            Ok((l, rows)) => (Some(l), rows, None),
            Err(e) => (None, Vec::new(), Some(e)),
        }
    };
    let r = Report {
        policy,
        command: "seaccess-lab bench hit-path --policy POLICY",
        rust_loop,
        rows,
        capi_loop,
        capi,
        capi_not_measured,
    };
    if a.json {
        let s = serde_json::to_string(&r).map_err(|e| e.to_string())?;
        writeln!(out, "{s}")?;
        return Ok(());
    }
    print(out, &r)
}

/// The C library's rows: per library, its loop's instructions and each check's with the loop
/// subtracted.
fn capi_rows(policy: &Path) -> Result<((f64, f64), Vec<CapiRow>), String> {
    let script = Path::new("tests/capi/bench-instructions.sh");
    if !script.exists() {
        return Err(format!(
            "{} not found (run from the source tree)",
            script.display()
        ));
    }
    let out = Command::new("bash")
        .arg(script)
        .arg(policy)
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!(
            "{}: {}",
            script.display(),
            err.lines().last().unwrap_or("failed")
        ));
    }
    // Lines "WHAT LIBRARY INSTRUCTIONS".
    let text = String::from_utf8_lossy(&out.stdout);
    let get = |what: &str, lib: &str| -> Result<f64, String> {
        text.lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 3 && f[0] == what && f[1] == lib).then(|| f[2].parse::<f64>().ok())
            })
            .next()
            .flatten()
            .ok_or_else(|| format!("{}: no figure for {what} on {lib}", script.display()))
    };
    let loops = (get("loop", "libseaccess")?, get("loop", "libselinux")?);
    let mut rows = Vec::new();
    for &(check, what, _) in CAPI {
        rows.push(CapiRow {
            check,
            libseaccess: get(what, "libseaccess")? - loops.0,
            libselinux: get(what, "libselinux")? - loops.1,
        });
    }
    Ok((loops, rows))
}

fn print(out: &mut Out, r: &Report) -> Result<(), CliError> {
    writeln!(out, "policy {}; instructions per check on a warm cache (callgrind: the difference of {} and {} checks), the loop's own subtracted ({:.1} in process)\n", r.policy, COUNTS.0, COUNTS.1, r.rust_loop)?;
    writeln!(out, "| check | instructions |\n|---|---:|")?;
    for row in &r.rows {
        writeln!(out, "| {} | {:.1} |", row.what, row.instructions)?;
    }
    let get = |n: &str| r.rows.iter().find(|x| x.name == n).map(|x| x.instructions);
    let designs: Vec<f64> = r
        .rows
        .iter()
        .filter(|x| x.what.starts_with("design:"))
        .map(|x| x.instructions)
        .collect();
    let cheapest = designs.iter().copied().fold(f64::INFINITY, f64::min);
    let dearest = designs.iter().copied().fold(0.0, f64::max);
    if let (Some(hit), Some(hook), Some(warm)) = (
        get("avc_check_at"),
        get("hook_socket"),
        get("hook_socket_grant"),
    ) {
        writeln!(out, "\nthe cache's hit (Avc::check_at): {hit:.1} (goal <= 40); the socket hook on a warm socket: {warm:.1} (its remembered grant, the default), {hook:.1} through the cache, against the cheapest design's {cheapest:.1} (goal: fewer, and at most 100); the designs {cheapest:.1} to {dearest:.1}")?;
    }
    match (&r.capi_loop, &r.capi_not_measured) {
        (Some((ls, ll)), _) => {
            writeln!(out, "\nthrough the C library (tests/capi/bench.c under callgrind, one thread, the same queries for both; its own loop subtracted: {ls:.1} / {ll:.1}):\n")?;
            writeln!(out, "| check | libseaccess | libselinux 3.4 | libselinux / libseaccess | goal |\n|---|---:|---:|---:|---:|")?;
            for (c, &(_, _, goal)) in r.capi.iter().zip(CAPI) {
                writeln!(
                    out,
                    "| {} | {:.1} | {:.1} | {:.1}x | <= {goal:.0} |",
                    c.check,
                    c.libseaccess,
                    c.libselinux,
                    c.libselinux / c.libseaccess
                )?;
            }
        }
        (None, Some(why)) => writeln!(out, "\nthe C library's rows not measured: {why}")?,
        (None, None) => {}
    }
    Ok(())
}

/// `count` checks of one row (the hidden `bench hit-loop`, which `bench hit-path` runs under
/// valgrind).
pub(crate) fn hit_loop(policy: &Path, row: &str, count: u64) -> Result<(), CliError> {
    let server = Arc::new(crate::load_path(policy)?);
    let passed = seaccess_lab::hit_path::run(server, row, count).map_err(|e| e.to_string())?;
    // A refused check would measure the denial's path, not the hit's.
    if passed != count {
        return Err(format!("{row}: {passed} of {count} checks allowed").into());
    }
    Ok(())
}
