//! libselinux's own AVC in chatroom: the peer program (`make peers`,
//! `crates/lab/peers/libselinux-avc/chatroom.c`) runs the same rooms in its own process, asking
//! avc_has_perm_noaudit at every send and receive, with this server's decision as the answer
//! to its one miss. Its runs are paired with the peer's own unchecked runs of the same round,
//! as seaccess's mediators are with vanilla in this process.

use std::path::Path;

use seaccess_security::SecurityServer;
use seaccess_types::Sid;
use serde::Deserialize;

use crate::LabError;

/// How big a run is.
#[derive(Clone, Debug)]
pub struct Shape {
    /// Room counts, one table row each (2001: 10, 20, 30).
    pub rooms: Vec<usize>,
    pub clients: usize,
    /// Messages each client writes in a run.
    pub messages: usize,
    /// Bytes per message.
    pub len: usize,
    pub rounds: usize,
}

impl Shape {
    /// 2001's table: 10, 20 and 30 rooms of 20 clients. A run is 10 messages a client (2001's
    /// 100 in ten runs), so that the mediators alternate every few tenths of a second and 30
    /// rounds fit in minutes: the figures are medians over rounds of runs seconds apart.
    pub fn full() -> Shape {
        Shape {
            rooms: vec![10, 20, 30],
            clients: 20,
            messages: 10,
            len: 100,
            rounds: 30,
        }
    }
    /// A few seconds: the same shape, smaller.
    pub fn quick() -> Shape {
        Shape {
            rooms: vec![2, 4, 6],
            clients: 10,
            messages: 10,
            len: 100,
            rounds: 10,
        }
    }
}

/// One line the peer prints: a run, or a room count's closing counts.
#[derive(Deserialize)]
struct Line {
    rooms: usize,
    #[serde(default)]
    round: usize,
    #[serde(default)]
    mediator: Option<String>,
    #[serde(default)]
    wall: f64,
    #[serde(default)]
    cpu: f64,
    #[serde(default)]
    refused: Option<u64>,
}

/// Each room count's runs as the peer timed them: (round, mediator, wall s, CPU s).
pub type PeerRuns = Vec<(usize, Vec<(usize, String, f64, f64)>)>;

/// Runs the peer's chatroom for every room count of `shape`, as `sid` (the domain the lab
/// picked) on its own Unix stream sockets.
pub fn run(
    peer: &Path,
    server: &SecurityServer,
    sid: Sid,
    shape: &Shape,
) -> Result<PeerRuns, LabError> {
    let failed = |what: String| LabError::Peer {
        program: peer.to_path_buf(),
        what,
    };
    let g = server.snapshot();
    let class = g
        .class("unix_stream_socket")
        .map_err(|e| failed(format!("unix_stream_socket: {e}")))?;
    let bit = |p: &str| {
        g.perms(class, &[p])
            .map(|a| format!("{:x}", a.0))
            .map_err(|e| failed(format!("unix_stream_socket {p}: {e}")))
    };
    let (read, write) = (bit("read")?, bit("write")?);
    let input = crate::avc_bench::triple_lines(server, &[(sid, sid, class)])
        .map_err(|e| failed(format!("its answers: {e}")))?;
    let rooms: Vec<String> = shape.rooms.iter().map(usize::to_string).collect();
    let mut args = vec!["chatroom".to_string(), rooms.join(",")];
    args.extend([shape.clients, shape.messages, shape.len, shape.rounds].map(|n| n.to_string()));
    args.extend([read, write]);
    let out = crate::avc_bench::run_peer(peer, &args, input)?;
    let mut runs: PeerRuns = shape.rooms.iter().map(|r| (*r, Vec::new())).collect();
    let mut closed = 0;
    for line in out.lines() {
        let l: Line =
            serde_json::from_str(line).map_err(|e| failed(format!("printed {line:?}: {e}")))?;
        let Some(slot) = runs.iter_mut().find(|r| r.0 == l.rooms) else {
            return Err(failed(format!(
                "printed a run of {} rooms, which was not asked",
                l.rooms
            )));
        };
        match (l.mediator, l.refused) {
            (Some(m), _) => slot.1.push((l.round, m, l.wall, l.cpu)),
            (None, Some(0)) => closed += 1,
            (None, Some(n)) => {
                return Err(failed(format!(
                    "{} rooms: {n} checks refused or sends failed",
                    l.rooms
                )))
            }
            (None, None) => return Err(failed(format!("printed {line:?}"))),
        }
    }
    if closed != shape.rooms.len() || runs.iter().any(|r| r.1.len() != 2 * shape.rounds) {
        return Err(failed(format!(
            "printed {} runs for {} room counts of {} rounds",
            runs.iter().map(|r| r.1.len()).sum::<usize>(),
            shape.rooms.len(),
            shape.rounds
        )));
    }
    Ok(runs)
}
