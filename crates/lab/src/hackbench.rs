//! hackbench, as the 2004 RCU work measured the AVC with it: groups of 20 senders and 20
//! receivers, every sender writing its messages to every receiver of its group, over Unix
//! stream socket pairs or over pipes, a thread each. Every write and every read is checked by
//! the hooks through the cache under test (see [`crate::mediate`]); the result is seconds for
//! the whole run, vanilla against each design, at several group counts.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;

use seaccess_objmgr::hooks::fs::MountOpts;
use seaccess_objmgr::hooks::socket::family;
use seaccess_objmgr::{ObjectManager, SuperSec, Task};
use seaccess_security::SecurityServer;

use crate::mediate::{self, objmgr, sys, Endpoint, Mediator};
use crate::LabError;

/// Over what the messages go.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Transport {
    Sockets,
    Pipes,
}

impl Transport {
    pub fn name(self) -> &'static str {
        match self {
            Transport::Sockets => "sockets",
            Transport::Pipes => "pipes",
        }
    }
}

/// How big a run is.
#[derive(Clone, Debug)]
pub struct Shape {
    /// Group counts, one table row each per transport.
    pub groups: Vec<usize>,
    /// Senders and receivers per group (hackbench: 20 each).
    pub fds: usize,
    /// Messages each sender writes to each receiver in a run (hackbench: 100).
    pub loops: usize,
    /// Bytes per message (hackbench: 100).
    pub len: usize,
    pub rounds: usize,
}

impl Shape {
    /// hackbench's groups of 20 and 20 at 2, 4 and 8 groups (80 to 320 threads). A run is 20
    /// messages from each sender to each receiver (hackbench's 100 in five runs), for the
    /// reason chatroom's runs are short.
    pub fn full() -> Shape {
        Shape {
            groups: vec![2, 4, 8],
            fds: 20,
            loops: 20,
            len: 100,
            rounds: 30,
        }
    }
    pub fn quick() -> Shape {
        Shape {
            groups: vec![1, 2],
            fds: 20,
            loops: 10,
            len: 100,
            rounds: 10,
        }
    }
}

/// One row: a transport and group count, and each mediator's seconds.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    pub transport: Transport,
    pub groups: usize,
    pub threads: usize,
    pub messages: u64,
    /// (mediator, seconds of wall time for the run)
    pub seconds: Vec<(String, f64)>,
    /// (mediator, seconds of the process's CPU time for the run)
    pub cpu_seconds: Vec<(String, f64)>,
    /// (mediator, the median over rounds of its wall time over vanilla's in the same round)
    pub wall_ratio: Vec<(String, f64)>,
    /// (mediator, the same for CPU time)
    pub cpu_ratio: Vec<(String, f64)>,
    /// (mediator, a 95% interval of the wall-time ratio's median)
    pub wall_ratio_ci: Vec<(String, (f64, f64))>,
    /// (mediator, every round's (wall, CPU) seconds)
    pub runs: Vec<(String, Vec<(f64, f64)>)>,
    /// seaccess's cache during the hooks' runs (all rounds).
    pub cache: crate::stats::CacheUse,
}

#[derive(Clone, Debug, serde::Serialize)]
pub struct Hackbench {
    pub policy: String,
    pub domain: String,
    pub fds: usize,
    pub loops: usize,
    pub len: usize,
    pub rounds: usize,
    pub rows: Vec<Row>,
}

impl Hackbench {
    /// `mediator`'s time over vanilla's for a row (1.0: no cost): the median over rounds of
    /// the two runs of a round compared.
    pub fn ratio(row: &Row, mediator: &str) -> Option<f64> {
        crate::runs::Measured::get(&row.wall_ratio, mediator)
    }

    /// The same for the process's CPU time.
    pub fn cpu_ratio(row: &Row, mediator: &str) -> Option<f64> {
        crate::runs::Measured::get(&row.cpu_ratio, mediator)
    }
}

/// A receiver's channel: the senders' write ends (each its own descriptor) and its read end.
struct Channel {
    writers: Vec<(Box<dyn Write + Send + Sync>, Endpoint)>,
    reader: (Box<dyn Read + Send + Sync>, Endpoint),
}

/// A receiver's channel over a socket pair: one connected pair, its sending end shared by the
/// group's senders (hackbench's socketpair per receiver), labelled as socket(2) and connect(2).
fn socket_channel(om: &ObjectManager, task: &Task, senders: usize) -> Result<Channel, LabError> {
    let listener = om
        .socket_create(task, family::UNIX, libc::SOCK_STREAM, 0, false)
        .map_err(|e| objmgr("socket", e))?;
    let out_sec = om
        .socket_create(task, family::UNIX, libc::SOCK_STREAM, 0, false)
        .map_err(|e| objmgr("socket", e))?;
    let child = om
        .unix_stream_connect(task, &out_sec, &listener)
        .map_err(|e| objmgr("connect", e))?;
    let in_sec = om
        .unix_accept(task, &listener, child)
        .map_err(|e| objmgr("accept", e))?;
    let (out, inp) = UnixStream::pair().map_err(sys("socketpair"))?;
    let out_sid = out_sec.sid();
    let mut writers = Vec::with_capacity(senders);
    for _ in 0..senders {
        let w: Box<dyn Write + Send + Sync> = Box::new(out.try_clone().map_err(sys("dup"))?);
        // Every sender's descriptor is the same socket.
        let sec = seaccess_objmgr::hooks::socket::SocketSec::new(
            out_sid,
            out_sec.class(),
            family::UNIX,
            0,
            in_sec.sid(),
        );
        writers.push((w, Endpoint::Socket(sec)));
    }
    Ok(Channel {
        writers,
        reader: (Box::new(inp), Endpoint::Socket(in_sec)),
    })
}

/// A receiver's channel over a pipe, labelled as pipefs labels it (the creating task's SID)
/// and opened as pipe(2) opens its two ends.
fn pipe_channel(
    om: &ObjectManager,
    task: &Task,
    sb: &Arc<SuperSec>,
    ino: u64,
    senders: usize,
) -> Result<Channel, LabError> {
    let (r, w) = rustix::pipe::pipe().map_err(|e| sys("pipe")(e.into()))?;
    let inode = || om.inode_init_as(task, sb, ino, libc::S_IFIFO | 0o600, "pipe:", None);
    let open = |flags| {
        om.file_open(task, &inode(), "pipe:", flags)
            .map_err(|e| objmgr("open a pipe", e))
    };
    let mut writers = Vec::with_capacity(senders);
    let wfile = std::fs::File::from(w);
    for _ in 0..senders {
        let d: Box<dyn Write + Send + Sync> = Box::new(wfile.try_clone().map_err(sys("dup"))?);
        writers.push((
            d,
            Endpoint::Pipe {
                inode: inode(),
                file: open(libc::O_WRONLY)?,
            },
        ));
    }
    let reader: Box<dyn Read + Send + Sync> = Box::new(std::fs::File::from(r));
    Ok(Channel {
        writers,
        reader: (
            reader,
            Endpoint::Pipe {
                inode: inode(),
                file: open(libc::O_RDONLY)?,
            },
        ),
    })
}

/// The run's threads: per group, each sender writing through its descriptor of every channel,
/// and each receiver reading its channel. Each call runs one run's share: `loops` messages
/// from every sender to every receiver of its group.
fn workers<'s>(groups: &'s mut [Vec<Channel>], shape: &Shape) -> Vec<crate::runs::Worker<'s>> {
    let (fds, loops, len) = (shape.fds, shape.loops, shape.len);
    let mut v: Vec<crate::runs::Worker<'s>> = Vec::with_capacity(groups.len() * fds * 2);
    for group in groups.iter_mut() {
        // Sender k writes through writers[k] of every channel.
        let mut per_sender: Vec<Vec<(&mut Box<dyn Write + Send + Sync>, &Endpoint)>> =
            (0..fds).map(|_| Vec::with_capacity(fds)).collect();
        let mut readers = Vec::with_capacity(fds);
        for ch in group.iter_mut() {
            for (k, (w, e)) in ch.writers.iter_mut().enumerate() {
                if let Some(v) = per_sender.get_mut(k) {
                    v.push((w, &*e));
                }
            }
            readers.push((&mut ch.reader.0, &ch.reader.1));
        }
        for mut outs in per_sender {
            let buf = vec![b'h'; len];
            v.push(Box::new(move |m: &dyn Mediator| {
                let mut refused = 0;
                for _ in 0..loops {
                    for (w, e) in outs.iter_mut() {
                        refused += u64::from(!m.send(e));
                        w.write_all(&buf)?;
                    }
                }
                Ok(refused)
            }));
        }
        for (r, e) in readers {
            let mut buf = vec![0u8; len];
            v.push(Box::new(move |m: &dyn Mediator| {
                let mut refused = 0;
                for _ in 0..loops * fds {
                    r.read_exact(&mut buf)?;
                    refused += u64::from(!m.recv(e));
                }
                Ok(refused)
            }));
        }
    }
    v
}

/// The whole experiment, sockets then pipes: each group count's channels set up once, then
/// `rounds` rounds of every mediator in turn (the order rotating), fresh caches each round.
pub fn run(
    server: Arc<SecurityServer>,
    policy: &str,
    shape: &Shape,
    domains: &[&str],
) -> Result<Hackbench, LabError> {
    let (domain, sid) = mediate::pick_domain(&server, domains)?;
    let asks = mediate::Asks::new(&server)?;
    let mut rows = Vec::new();
    for transport in [Transport::Sockets, Transport::Pipes] {
        for &ngroups in &shape.groups {
            let messages = (ngroups * shape.fds * shape.fds * shape.loops) as u64;
            let setup = |om: &ObjectManager, task: &Task| {
                let sb = om
                    .mount("pipefs", "pipefs", &MountOpts::default())
                    .map_err(|e| objmgr("pipefs", e))?;
                (0..ngroups)
                    .map(|g| {
                        (0..shape.fds)
                            .map(|i| match transport {
                                Transport::Sockets => socket_channel(om, task, shape.fds),
                                Transport::Pipes => pipe_channel(
                                    om,
                                    task,
                                    &sb,
                                    (g * shape.fds + i + 1) as u64,
                                    shape.fds,
                                ),
                            })
                            .collect::<Result<Vec<_>, _>>()
                    })
                    .collect::<Result<Vec<Vec<Channel>>, _>>()
            };
            let m = crate::runs::measure(
                &server,
                sid,
                "hackbench",
                &asks,
                shape.rounds,
                messages,
                setup,
                |groups| Ok(workers(groups, shape)),
            )?;
            rows.push(Row {
                transport,
                groups: ngroups,
                threads: ngroups * shape.fds * 2,
                messages,
                seconds: m.wall,
                cpu_seconds: m.cpu,
                wall_ratio: m.wall_ratio,
                wall_ratio_ci: m.wall_ratio_ci,
                cpu_ratio: m.cpu_ratio,
                runs: m.runs,
                cache: m.cache,
            });
        }
    }
    Ok(Hackbench {
        policy: policy.into(),
        domain,
        fds: shape.fds,
        loops: shape.loops,
        len: shape.len,
        rounds: shape.rounds,
        rows,
    })
}
