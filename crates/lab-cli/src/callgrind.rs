//! Instruction counts under callgrind (valgrind): repeatable where wall time on a shared
//! machine is not. Every count here is a difference of two runs of the same program asking for
//! different numbers of operations, so that start-up, policy load and set-up cancel.

use std::path::Path;
use std::process::{Command, Stdio};

/// The instructions callgrind counted in one run of `program` with `args` (standard input from
/// `stdin`, if given); Err says what failed, naming `what`.
pub(crate) fn total(
    program: &Path,
    args: &[&str],
    stdin: Option<&Path>,
    what: &str,
) -> Result<f64, String> {
    let input = match stdin {
        Some(p) => Stdio::from(
            std::fs::File::open(p).map_err(|e| format!("{what}: {}: {e}", p.display()))?,
        ),
        None => Stdio::null(),
    };
    let out = Command::new("valgrind")
        .args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
        .arg(program)
        .args(args)
        .stdin(input)
        .output()
        .map_err(|e| format!("{what}: valgrind: {e} (make deps installs it)"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!(
            "{what}: {}",
            err.lines().last().unwrap_or("failed under valgrind")
        ));
    }
    let line = err
        .lines()
        .find(|l| l.contains("Collected :"))
        .ok_or_else(|| format!("{what}: no instruction total in valgrind's output"))?;
    line.rsplit(':')
        .next()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .ok_or_else(|| format!("{what}: cannot read {line:?}"))
}

/// Instructions per operation: the totals of runs asking `small` and `large` operations (the
/// argument `{count}` in `args` stands for the number), differenced and divided by the
/// difference.
pub(crate) fn per_op(
    program: &Path,
    args: &[&str],
    (small, large): (u64, u64),
    stdin: Option<&Path>,
    what: &str,
) -> Result<f64, String> {
    let run = |n: u64| {
        let n = n.to_string();
        let args: Vec<&str> = args
            .iter()
            .map(|&a| if a == "{count}" { n.as_str() } else { a })
            .collect();
        total(program, &args, stdin, what)
    };
    let (a, b) = (run(small)?, run(large)?);
    Ok((b - a) / (large - small) as f64)
}
