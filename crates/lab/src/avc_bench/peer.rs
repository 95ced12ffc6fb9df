//! libselinux's own AVC, measured in its own process by the peer program (`make peers`) on the
//! same triples, with this server's decisions as the answers to its misses.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use seaccess_security::SecurityServer;
use serde::Deserialize;

use super::measure::Row;
use super::workload::Triple;
use crate::LabError;

/// libselinux's own AVC measured by the peer program on the same working set.
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

/// One line the peer prints: one measurement.
#[derive(Deserialize)]
struct PeerLine {
    threads: usize,
    hit_ns: f64,
    #[serde(default)]
    hit_ops_per_s: f64,
    #[serde(default)]
    misses: u64,
    #[serde(default)]
    wrong: u64,
    /// Contexts passed as strings rather than SIDs.
    #[serde(default)]
    string_keyed: bool,
}

/// The peer's standard input for `work`: a line per triple, its contexts, class number and
/// this server's decision (`SCON TCON CLASS ALLOWED AUDITALLOW AUDITDENY`, vectors in hex).
pub(crate) fn triple_lines(
    server: &SecurityServer,
    work: &[Triple],
) -> Result<String, seaccess_security::SecurityError> {
    let g = server.snapshot();
    let mut input = String::new();
    for &(s, t, c) in work {
        let d = g.compute_av(s, t, c)?;
        let (sc, tc) = (g.sid_to_context(s)?, g.sid_to_context(t)?);
        input.push_str(&format!(
            "{sc} {tc} {} {:x} {:x} {:x}\n",
            c.0, d.allowed, d.auditallow, d.auditdeny
        ));
    }
    Ok(input)
}

/// Runs the peer program with `args`, `input` on its standard input; its standard output, or
/// an error saying how it failed (its standard error's text when it exited non-zero).
pub(crate) fn run_peer(peer: &Path, args: &[String], input: String) -> Result<String, LabError> {
    let failed = |what: String| LabError::Peer {
        program: peer.to_path_buf(),
        what,
    };
    let mut child = Command::new(peer)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| failed(e.to_string()))?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| failed("no standard input".into()))?;
    // Written from another thread: the peer may answer before it has read everything.
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child
        .wait_with_output()
        .map_err(|e| failed(e.to_string()))?;
    let _ = writer.join();
    if !out.status.success() {
        return Err(failed(format!(
            "failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs the libselinux AVC peer on `work`, with this server's decisions as the answers to its
/// misses, for `dur` per thread count.
pub fn libselinux_peer(
    peer: &Path,
    server: &SecurityServer,
    work: &[Triple],
    threads: &[usize],
    dur: Duration,
) -> Result<PeerRun, LabError> {
    let failed = |what: String| LabError::Peer {
        program: peer.to_path_buf(),
        what,
    };
    let input = triple_lines(server, work).map_err(|e| failed(format!("its answers: {e}")))?;
    let list: Vec<String> = threads.iter().map(|t| t.to_string()).collect();
    let out = run_peer(
        peer,
        &[format!("{}", dur.as_secs_f64()), list.join(",")],
        input,
    )?;
    let mut run = PeerRun::default();
    for line in out.lines() {
        // Anything else the peer prints is not a measurement.
        let Ok(m) = serde_json::from_str::<PeerLine>(line) else {
            continue;
        };
        if m.string_keyed {
            run.string_keyed_ns = Some(m.hit_ns);
            continue;
        }
        run.rows.push((m.threads, m.hit_ns, m.hit_ops_per_s));
        run.misses += m.misses;
        run.wrong += m.wrong;
    }
    if run.rows.len() != threads.len() {
        return Err(failed(format!(
            "printed {} measurements for {} thread counts",
            run.rows.len(),
            threads.len()
        )));
    }
    Ok(run)
}
