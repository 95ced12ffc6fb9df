//! chatroom, as the 2001 AVC scalability work ran it: rooms of clients, every message a client
//! writes delivered to every other client of its room over real Unix stream sockets, with a
//! thread per client's writer, per client's reader and per client's relay on the server side.
//! Every send asks selinux_socket_sendmsg's `{write}` and every receive selinux_socket_recvmsg's
//! `{read}` on the socket used, through the cache under test; the connections are made with
//! the AF_UNIX stream connect hook (`{connectto}`) at set-up, which is not timed.
//!
//! The mediators: vanilla (no check), the object manager's own hooks on seaccess's cache, and
//! each comparison design of [`crate::designs`] asked what the hook asks (the task's SID, the
//! socket's SID and class, the permission's bit). Throughput is messages delivered per second,
//! each figure the median of its rounds, the mediators run in turn within a round.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

use seaccess_objmgr::hooks::socket::family;
use seaccess_objmgr::{ObjectManager, Task};
use seaccess_security::SecurityServer;

use crate::mediate::{self, objmgr, sys, Endpoint, Mediator};
use crate::LabError;

/// How big a run is (defined beside the peer's runner, which the driver here calls, so that
/// the two share it without naming each other).
pub use crate::chatroom_peer::Shape;
pub use crate::mediate::DOMAINS;

/// One row: a room count, and each mediator's messages per second and CPU time per message.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    pub rooms: usize,
    pub threads: usize,
    pub messages: u64,
    /// (mediator, messages per second of wall time)
    pub rates: Vec<(String, f64)>,
    /// (mediator, microseconds of the process's CPU time per message delivered)
    pub cpu_us: Vec<(String, f64)>,
    /// (mediator, wall time over vanilla's in the same round, less one, in percent: the median
    /// over rounds)
    pub overhead_pct: Vec<(String, f64)>,
    /// (mediator, the same for the process's CPU time)
    pub cpu_overhead_pct: Vec<(String, f64)>,
    /// (mediator, the median over rounds of its wall time over vanilla's in the same round)
    pub wall_ratio: Vec<(String, f64)>,
    /// (mediator, a 95% interval of the wall-time ratio's median)
    pub wall_ratio_ci: Vec<(String, (f64, f64))>,
    /// (mediator, every round's (wall, CPU) seconds)
    pub runs: Vec<(String, Vec<(f64, f64)>)>,
    /// seaccess's cache during the hooks' runs (all rounds).
    pub cache: crate::stats::CacheUse,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Chatroom {
    pub policy: String,
    pub domain: String,
    pub shape: ShapeOut,
    pub rows: Vec<Row>,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct ShapeOut {
    pub clients: usize,
    pub messages: usize,
    pub len: usize,
    pub rounds: usize,
}

impl Chatroom {
    /// The percentage by which `mediator`'s run took longer than vanilla's at `rooms` (the
    /// median over rounds of the two runs of a round compared).
    pub fn overhead_pct(&self, rooms: usize, mediator: &str) -> Option<f64> {
        let r = self.rows.iter().find(|r| r.rooms == rooms)?;
        crate::runs::Measured::get(&r.overhead_pct, mediator)
    }

    /// The same for the process's CPU time.
    pub fn cpu_overhead_pct(&self, rooms: usize, mediator: &str) -> Option<f64> {
        let r = self.rows.iter().find(|r| r.rooms == rooms)?;
        crate::runs::Measured::get(&r.cpu_overhead_pct, mediator)
    }
}

/// One client's connection: its end and the server's, each with its socket's labels.
struct Conn {
    client: UnixStream,
    client_sec: Endpoint,
    server: UnixStream,
    server_sec: Endpoint,
}

/// Sets up one room: a listening socket and a connected pair per client, labelled and checked
/// by the object manager's hooks as socket(2), connect(2) and accept(2) are.
fn room(om: &ObjectManager, task: &Task, clients: usize) -> Result<Vec<Conn>, LabError> {
    let listener = om
        .socket_create(task, family::UNIX, libc::SOCK_STREAM, 0, false)
        .map_err(|e| objmgr("socket", e))?;
    om.socket_listen(task, &listener)
        .map_err(|e| objmgr("listen", e))?;
    (0..clients)
        .map(|_| {
            let client_sec = om
                .socket_create(task, family::UNIX, libc::SOCK_STREAM, 0, false)
                .map_err(|e| objmgr("socket", e))?;
            let child = om
                .unix_stream_connect(task, &client_sec, &listener)
                .map_err(|e| objmgr("connect", e))?;
            let server_sec = om
                .unix_accept(task, &listener, child)
                .map_err(|e| objmgr("accept", e))?;
            let (client, server) = UnixStream::pair().map_err(sys("socketpair"))?;
            Ok(Conn {
                client,
                client_sec: Endpoint::Socket(client_sec),
                server,
                server_sec: Endpoint::Socket(server_sec),
            })
        })
        .collect()
}

/// The run's threads, as the 2001 chat server had them: per client a writer, a reader of every
/// other client's messages, and the server's relay of its messages to the room. Each call runs
/// one run's share: `messages` messages written per client.
fn workers<'s>(
    rooms: &'s [Vec<Conn>],
    shape: &Shape,
) -> Result<Vec<crate::runs::Worker<'s>>, LabError> {
    let (n, msgs, len) = (shape.clients, shape.messages, shape.len);
    let io = |e| sys("chat socket")(e);
    let mut v: Vec<crate::runs::Worker<'s>> = Vec::with_capacity(rooms.len() * n * 3);
    for conns in rooms {
        for (i, c) in conns.iter().enumerate() {
            let mut w = c.client.try_clone().map_err(io)?;
            let mut r = c.client.try_clone().map_err(io)?;
            let mut relay_in = c.server.try_clone().map_err(io)?;
            let mut outs: Vec<(UnixStream, &Endpoint)> = conns
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, o)| Ok((o.server.try_clone().map_err(io)?, &o.server_sec)))
                .collect::<Result<_, LabError>>()?;
            // The client's writer.
            let buf = vec![b'm'; len];
            v.push(Box::new(move |m: &dyn Mediator| {
                let mut refused = 0;
                for _ in 0..msgs {
                    refused += u64::from(!m.send(&c.client_sec));
                    w.write_all(&buf)?;
                }
                Ok(refused)
            }));
            // The server's relay for this client: each message to every other client.
            let mut buf = vec![0u8; len];
            v.push(Box::new(move |m: &dyn Mediator| {
                let mut refused = 0;
                for _ in 0..msgs {
                    relay_in.read_exact(&mut buf)?;
                    refused += u64::from(!m.recv(&c.server_sec));
                    for (o, sec) in outs.iter_mut() {
                        refused += u64::from(!m.send(sec));
                        o.write_all(&buf)?;
                    }
                }
                Ok(refused)
            }));
            // The client's reader: every other client's messages.
            let mut buf = vec![0u8; len];
            v.push(Box::new(move |m: &dyn Mediator| {
                let mut refused = 0;
                for _ in 0..msgs * (n - 1) {
                    r.read_exact(&mut buf)?;
                    refused += u64::from(!m.recv(&c.client_sec));
                }
                Ok(refused)
            }));
        }
    }
    Ok(v)
}

/// The whole experiment: each room count's rooms set up once, then `rounds` rounds of every
/// mediator in turn (the order rotating), fresh caches each round; and, with `peer`, the same
/// rooms with libselinux's AVC in the peer program's process (a `libselinux` column, its
/// overhead against the peer's own unchecked runs).
pub fn run(
    server: Arc<SecurityServer>,
    policy: &str,
    shape: &Shape,
    domains: &[&str],
    peer: Option<&std::path::Path>,
) -> Result<Chatroom, LabError> {
    let (domain, sid) = mediate::pick_domain(&server, domains)?;
    let asks = mediate::Asks::new(&server)?;
    let mut rows = Vec::new();
    for &nrooms in &shape.rooms {
        let messages = (nrooms * shape.clients * shape.messages * (shape.clients - 1)) as u64;
        let setup = |om: &ObjectManager, task: &Task| {
            (0..nrooms)
                .map(|_| room(om, task, shape.clients))
                .collect::<Result<Vec<Vec<Conn>>, _>>()
        };
        let m = crate::runs::measure(
            &server,
            sid,
            "chatroom",
            &asks,
            shape.rounds,
            messages,
            setup,
            |rooms| workers(rooms, shape),
        )?;
        let mut row = Row {
            rooms: nrooms,
            threads: nrooms * shape.clients * 3,
            messages,
            rates: Vec::new(),
            cpu_us: Vec::new(),
            overhead_pct: Vec::new(),
            cpu_overhead_pct: Vec::new(),
            wall_ratio: Vec::new(),
            wall_ratio_ci: Vec::new(),
            runs: Vec::new(),
            cache: m.cache,
        };
        row.add(&m, |_| true);
        rows.push(row);
    }
    if let Some(peer) = peer {
        for (nrooms, timed) in crate::chatroom_peer::run(peer, &server, sid, shape)? {
            let m = crate::runs::summarize(&timed, crate::stats::CacheUse::default());
            if let Some(row) = rows.iter_mut().find(|r| r.rooms == nrooms) {
                row.add(&m, |n| n == "libselinux");
            }
        }
    }
    Ok(Chatroom {
        policy: policy.into(),
        domain,
        shape: ShapeOut {
            clients: shape.clients,
            messages: shape.messages,
            len: shape.len,
            rounds: shape.rounds,
        },
        rows,
    })
}

impl Row {
    /// The figures of `m`'s mediators that `keep` names, appended.
    fn add(&mut self, m: &crate::runs::Measured, keep: impl Fn(&str) -> bool) {
        let delivered = self.messages as f64;
        let pick = |v: &[(String, f64)], f: &dyn Fn(f64) -> f64| {
            v.iter()
                .filter(|(n, _)| keep(n))
                .map(|(n, x)| (n.clone(), f(*x)))
                .collect::<Vec<_>>()
        };
        self.rates
            .extend(pick(&m.wall, &|w| delivered / w.max(1e-9)));
        self.cpu_us
            .extend(pick(&m.cpu, &|c| c * 1e6 / delivered.max(1.0)));
        self.overhead_pct
            .extend(pick(&m.wall_ratio, &|x| (x - 1.0) * 100.0));
        self.cpu_overhead_pct
            .extend(pick(&m.cpu_ratio, &|x| (x - 1.0) * 100.0));
        self.wall_ratio.extend(pick(&m.wall_ratio, &|x| x));
        self.wall_ratio_ci
            .extend(m.wall_ratio_ci.iter().filter(|(n, _)| keep(n)).cloned());
        self.runs
            .extend(m.runs.iter().filter(|(n, _)| keep(n)).cloned());
    }
}
