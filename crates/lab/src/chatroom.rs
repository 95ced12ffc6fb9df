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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

use seaccess_objmgr::hooks::socket::family;
use seaccess_objmgr::{ObjectManager, Task};
use seaccess_security::SecurityServer;

use crate::mediate::{self, objmgr, spawn, sys, Endpoint, Mediator};
use crate::LabError;

pub use crate::mediate::DOMAINS;

/// How big a run is.
#[derive(Clone, Debug)]
pub struct Shape {
    /// Room counts, one table row each (2001: 10, 20, 30).
    pub rooms: Vec<usize>,
    pub clients: usize,
    /// Messages each client writes.
    pub messages: usize,
    /// Bytes per message.
    pub len: usize,
    pub rounds: usize,
}

impl Shape {
    /// 2001's table: 10, 20 and 30 rooms of 20 clients, 100 messages each.
    pub fn full() -> Shape {
        Shape { rooms: vec![10, 20, 30], clients: 20, messages: 100, len: 100, rounds: 3 }
    }
    /// A few seconds: the same shape, smaller.
    pub fn quick() -> Shape {
        Shape { rooms: vec![2, 4, 6], clients: 10, messages: 100, len: 100, rounds: 3 }
    }
}

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
    /// The percentage by which `mediator`'s throughput falls short of vanilla's at `rooms`
    /// (vanilla's rate over its own, less one).
    pub fn overhead_pct(&self, rooms: usize, mediator: &str) -> Option<f64> {
        let r = self.rows.iter().find(|r| r.rooms == rooms)?;
        let get = |n: &str| r.rates.iter().find(|x| x.0 == n).map(|x| x.1);
        let (v, m) = (get("vanilla")?, get(mediator)?);
        (m > 0.0).then(|| (v / m - 1.0) * 100.0)
    }

    /// The percentage of CPU time per message `mediator` adds to vanilla's at `rooms`.
    pub fn cpu_overhead_pct(&self, rooms: usize, mediator: &str) -> Option<f64> {
        let r = self.rows.iter().find(|r| r.rooms == rooms)?;
        let get = |n: &str| r.cpu_us.iter().find(|x| x.0 == n).map(|x| x.1);
        let (v, m) = (get("vanilla")?, get(mediator)?);
        (v > 0.0).then(|| (m / v - 1.0) * 100.0)
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
    let listener = om.socket_create(task, family::UNIX, libc::SOCK_STREAM, 0, false).map_err(|e| objmgr("socket", e))?;
    om.socket_listen(task, &listener).map_err(|e| objmgr("listen", e))?;
    (0..clients)
        .map(|_| {
            let client_sec = om.socket_create(task, family::UNIX, libc::SOCK_STREAM, 0, false).map_err(|e| objmgr("socket", e))?;
            let child = om.unix_stream_connect(task, &client_sec, &listener).map_err(|e| objmgr("connect", e))?;
            let server_sec = om.unix_accept(task, &listener, child).map_err(|e| objmgr("accept", e))?;
            let (client, server) = UnixStream::pair().map_err(sys("socketpair"))?;
            Ok(Conn { client, client_sec: Endpoint::Socket(client_sec), server, server_sec: Endpoint::Socket(server_sec) })
        })
        .collect()
}

/// One run: every room's threads started together; messages delivered per second of wall
/// time and microseconds of CPU time per message, or an error when a check refused (the
/// domain was picked so that none does).
fn run_once(rooms: &[Vec<Conn>], shape: &Shape, m: &dyn Mediator) -> Result<(f64, f64), LabError> {
    let (n, msgs, len) = (shape.clients, shape.messages, shape.len);
    let refused = AtomicU64::new(0);
    let threads = rooms.len() * n * 3;
    let start = Barrier::new(threads + 1);
    let io = |e| sys("chat socket")(e);
    let elapsed = std::thread::scope(|s| -> Result<(f64, f64), LabError> {
        let mut handles = Vec::with_capacity(threads);
        for conns in rooms {
            for (i, c) in conns.iter().enumerate() {
                let (refused, start) = (&refused, &start);
                let mut w = c.client.try_clone().map_err(io)?;
                let mut r = c.client.try_clone().map_err(io)?;
                let mut relay_in = c.server.try_clone().map_err(io)?;
                let outs: Vec<(UnixStream, &Endpoint)> =
                    conns.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, o)| Ok((o.server.try_clone().map_err(io)?, &o.server_sec))).collect::<Result<_, LabError>>()?;
                // The client's writer.
                handles.push(spawn(s, move || {
                    let buf = vec![b'm'; len];
                    start.wait();
                    for _ in 0..msgs {
                        if !m.send(&c.client_sec) {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                        w.write_all(&buf)?;
                    }
                    Ok(())
                })?);
                // The server's relay for this client: each message to every other client.
                let mut outs = outs;
                handles.push(spawn(s, move || {
                    let mut buf = vec![0u8; len];
                    start.wait();
                    for _ in 0..msgs {
                        relay_in.read_exact(&mut buf)?;
                        if !m.recv(&c.server_sec) {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                        for (o, sec) in outs.iter_mut() {
                            if !m.send(sec) {
                                refused.fetch_add(1, Ordering::Relaxed);
                            }
                            o.write_all(&buf)?;
                        }
                    }
                    Ok(())
                })?);
                // The client's reader: every other client's messages.
                handles.push(spawn(s, move || {
                    let mut buf = vec![0u8; len];
                    start.wait();
                    for _ in 0..msgs * (n - 1) {
                        r.read_exact(&mut buf)?;
                        if !m.recv(&c.client_sec) {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    Ok(())
                })?);
            }
        }
        start.wait();
        let (t0, c0) = (Instant::now(), crate::stats::cpu_seconds());
        for h in handles {
            h.join().map_err(|_| LabError::Objmgr { what: "a chat thread panicked".into() })?.map_err(io)?;
        }
        Ok((t0.elapsed().as_secs_f64(), crate::stats::cpu_seconds() - c0))
    })?;
    if refused.load(Ordering::Relaxed) > 0 {
        return Err(LabError::Objmgr { what: format!("{}: {} checks refused", m.name(), refused.load(Ordering::Relaxed)) });
    }
    let (wall, cpu) = elapsed;
    let delivered = (rooms.len() * n * msgs * (n - 1)) as f64;
    Ok((delivered / wall.max(1e-9), cpu * 1e6 / delivered.max(1.0)))
}

/// The whole experiment: each room count's rooms set up once, then `rounds` rounds of every
/// mediator in turn (the order rotating), fresh caches each round.
pub fn run(server: Arc<SecurityServer>, policy: &str, shape: &Shape, domains: &[&str]) -> Result<Chatroom, LabError> {
    let (domain, sid) = mediate::pick_domain(&server, domains)?;
    let asks = mediate::Asks::new(&server)?;
    let mut rows = Vec::new();
    for &nrooms in &shape.rooms {
        let messages = (nrooms * shape.clients * shape.messages * (shape.clients - 1)) as u64;
        let setup = |om: &ObjectManager, task: &Task| (0..nrooms).map(|_| room(om, task, shape.clients)).collect::<Result<Vec<Vec<Conn>>, _>>();
        let m = mediate::measure(&server, sid, "chatroom", &asks, shape.rounds, messages, setup, |rooms, m| run_once(rooms, shape, m))?;
        rows.push(Row { rooms: nrooms, threads: nrooms * shape.clients * 3, messages, rates: m.wall, cpu_us: m.cpu, cache: m.cache });
    }
    Ok(Chatroom {
        policy: policy.into(),
        domain,
        shape: ShapeOut { clients: shape.clients, messages: shape.messages, len: shape.len, rounds: shape.rounds },
        rows,
    })
}
