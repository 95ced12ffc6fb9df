//! The kernel's process events (the proc connector: netlink NETLINK_CONNECTOR, group
//! CN_IDX_PROC), which tell the caller table when a cached credential stops being the caller's.
//!
//! Why the events are in time: the kernel queues an event into every listening socket
//! synchronously, inside the exec (exec_binprm's proc_exec_connector, after the new program
//! is in place), the exit (do_exit's proc_exit_connector) and the credential change
//! (commit_creds' proc_id_connector, for a change of any of the real, effective, saved or
//! filesystem ids), before the task runs on. Any FUSE request the task makes afterwards is
//! queued on /dev/fuse after that, so a server thread that reads the request and then drains
//! this socket sees the event. What cannot be seen is reported as [`Event::Lost`]:
//! - the socket's queue overflowed (recv fails with ENOBUFS), or a message is short, cut or
//!   of an unknown kind;
//! - the kernel could not allocate a message (cn_netlink_send_mult with GFP_NOWAIT drops it
//!   silently): every event carries its CPU's sequence number (send_msg numbers them per CPU,
//!   under the CPU's lock, and queues them in that order), so a gap in a CPU's numbers is a
//!   lost event. The first event seen from a CPU may follow a lost one: it counts as a loss.

use std::collections::VecDeque;
use std::os::fd::{AsFd, OwnedFd};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;
use rustix::net::netlink::{self, SocketAddrNetlink};
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};

/// What the table acts on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A thread group executed a program (every thread but one is gone, and that one may have
    /// taken the group's id).
    Exec { tgid: u32 },
    /// A thread exited.
    Exit { tid: u32 },
    /// A thread's user or group ids changed.
    Ids { tid: u32 },
    /// A thread's command name changed (audit records name it).
    Comm { tid: u32 },
    /// A task was created: `child` of group `child_tgid`. For a new process `parent` is the
    /// thread that forked it (its real_parent); for a new thread the kernel names the
    /// process's parent instead (CLONE_THREAD shares real_parent), so a thread's creator is
    /// not known. Only published task attributes ([`crate::published`]) use it.
    Fork {
        parent: u32,
        child: u32,
        child_tgid: u32,
    },
    /// Events may have been missed: nothing known can be trusted.
    Lost,
}

/// Where events come from: the connector, or a test's queue.
pub trait EventSource: Send {
    /// The next event queued, without waiting; None when there is none now.
    fn next(&mut self) -> Option<Event>;
}

// <linux/connector.h>, <linux/cn_proc.h>, <linux/netlink.h>.
const CN_IDX_PROC: u32 = 1;
const CN_VAL_PROC: u32 = 1;
const PROC_CN_MCAST_LISTEN: u32 = 1;
const PROC_CN_MCAST_IGNORE: u32 = 2;
const NLMSG_NOOP: u16 = 1;
const NLMSG_DONE: u16 = 3;
const NLMSG_HDRLEN: usize = 16;
/// struct cn_msg before its data.
const CN_MSG_LEN: usize = 20;
/// Where struct proc_event's event_data starts (after what, cpu and the 8-aligned timestamp).
const EVENT_DATA: usize = NLMSG_HDRLEN + CN_MSG_LEN + 16;

mod what {
    pub const NONE: u32 = 0;
    pub const FORK: u32 = 1;
    pub const EXEC: u32 = 2;
    pub const UID: u32 = 4;
    pub const GID: u32 = 0x40;
    pub const SID: u32 = 0x80;
    pub const PTRACE: u32 = 0x100;
    pub const COMM: u32 = 0x200;
    pub const COREDUMP: u32 = 0x4000_0000;
    pub const EXIT: u32 = 0x8000_0000;
}

/// The receive buffer asked for (SO_RCVBUFFORCE): room for tens of thousands of events
/// between two drains. Memory is used only while events wait.
const RCVBUF: usize = 16 << 20;

/// A listening proc connector socket.
pub struct Connector {
    fd: OwnedFd,
    /// The last sequence number seen from each CPU.
    seq: FxHashMap<u32, u32>,
    buf: Vec<u8>,
    queue: VecDeque<Event>,
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .and_then(|s| s.try_into().ok())
        .map(u32::from_ne_bytes)
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2)
        .and_then(|s| s.try_into().ok())
        .map(u16::from_ne_bytes)
}

/// A connector message to the kernel: PROC_CN_MCAST_LISTEN or _IGNORE, with `tag` as its
/// sequence and acknowledgement numbers.
fn control(op: u32, tag: u32) -> Vec<u8> {
    let mut m = Vec::with_capacity(NLMSG_HDRLEN + CN_MSG_LEN + 4);
    let len = (NLMSG_HDRLEN + CN_MSG_LEN + 4) as u32;
    m.extend_from_slice(&len.to_ne_bytes());
    m.extend_from_slice(&NLMSG_DONE.to_ne_bytes());
    m.extend_from_slice(&0u16.to_ne_bytes());
    m.extend_from_slice(&tag.to_ne_bytes());
    m.extend_from_slice(&std::process::id().to_ne_bytes());
    m.extend_from_slice(&CN_IDX_PROC.to_ne_bytes());
    m.extend_from_slice(&CN_VAL_PROC.to_ne_bytes());
    m.extend_from_slice(&tag.to_ne_bytes()); // cn_msg.seq
    m.extend_from_slice(&tag.to_ne_bytes()); // cn_msg.ack
    m.extend_from_slice(&4u16.to_ne_bytes()); // cn_msg.len
    m.extend_from_slice(&0u16.to_ne_bytes()); // cn_msg.flags
    m.extend_from_slice(&op.to_ne_bytes());
    m
}

/// One datagram, read.
struct Parsed {
    events: Vec<Event>,
    /// Acknowledgements of subscriptions: (cn_msg ack, error).
    acks: Vec<(u32, u32)>,
}

impl Connector {
    /// Opens the socket and subscribes to every process event. Fails (saying why) without
    /// CAP_NET_ADMIN, outside the initial user and pid namespaces (the kernel ignores the
    /// subscription there: no acknowledgement comes), or on a kernel without the connector.
    pub fn open() -> std::result::Result<Connector, String> {
        let fd = rustix::net::socket_with(
            AddressFamily::NETLINK,
            SocketType::DGRAM,
            SocketFlags::CLOEXEC | SocketFlags::NONBLOCK,
            Some(netlink::CONNECTOR),
        )
        .map_err(|e| format!("netlink connector socket: {e}"))?;
        rustix::net::bind(&fd, &SocketAddrNetlink::new(0, CN_IDX_PROC))
            .map_err(|e| format!("bind to the proc connector group: {e}"))?;
        rustix::net::sockopt::set_socket_recv_buffer_size_force(&fd, RCVBUF)
            .map_err(|e| format!("SO_RCVBUFFORCE: {e}"))?;
        let mut c = Connector {
            fd,
            seq: FxHashMap::default(),
            buf: vec![0; 16 << 10],
            queue: VecDeque::new(),
        };
        // A number of our own, to tell our acknowledgement from another listener's (they
        // go to the whole group): the kernel answers with it plus one.
        let tag = std::process::id() ^ 0x5eac_0000;
        rustix::net::sendto(
            &c.fd,
            &control(PROC_CN_MCAST_LISTEN, tag),
            SendFlags::empty(),
            &SocketAddrNetlink::new(0, 0),
        )
        .map_err(|e| format!("PROC_CN_MCAST_LISTEN: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(2);
        'wait: loop {
            while let Some(r) = c.recv() {
                // Events before the acknowledgement concern nothing cached yet.
                let Ok(p) = r else { continue };
                if let Some(&(_, err)) = p.acks.iter().find(|(ack, _)| *ack == tag.wrapping_add(1))
                {
                    if err != 0 {
                        return Err(format!(
                            "PROC_CN_MCAST_LISTEN refused: {}",
                            std::io::Error::from_raw_os_error(err as i32)
                        ));
                    }
                    break 'wait;
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err("the proc connector did not acknowledge PROC_CN_MCAST_LISTEN (another user or pid namespace?)".into());
            }
            let mut p = [rustix::event::PollFd::new(
                &c.fd,
                rustix::event::PollFlags::IN,
            )];
            let ts = rustix::event::Timespec {
                tv_sec: left.as_secs() as i64,
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            let _ = rustix::event::poll(&mut p, Some(&ts));
        }
        c.seq.clear();
        c.queue.clear();
        Ok(c)
    }

    /// The socket, for a thread that waits until events are there.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// One datagram, if one is there: None when the queue is empty.
    fn recv(&mut self) -> Option<Result<Parsed, ()>> {
        match rustix::net::recvfrom(
            &self.fd,
            &mut self.buf[..],
            RecvFlags::DONTWAIT | RecvFlags::TRUNC,
        ) {
            Err(rustix::io::Errno::AGAIN) => None,
            Err(rustix::io::Errno::INTR) => self.recv(),
            // ENOBUFS (the queue overflowed) and anything else: events were lost.
            Err(_) => Some(Err(())),
            Ok((got, len, from)) => {
                // Only the kernel (port 0) speaks for the connector; root alone could send
                // from another port, and what it sends is not believed.
                let kernel = from
                    .and_then(|a| SocketAddrNetlink::try_from(a).ok())
                    .is_some_and(|a| a.pid() == 0);
                if !kernel {
                    return Some(Ok(Parsed {
                        events: Vec::new(),
                        acks: Vec::new(),
                    }));
                }
                if len > got {
                    return Some(Err(()));
                }
                Some(self.parse(got))
            }
        }
    }

    /// The messages in the first `n` bytes of the buffer.
    fn parse(&mut self, n: usize) -> Result<Parsed, ()> {
        let mut out = Vec::new();
        let mut acks = Vec::new();
        let mut at = 0;
        while at < n {
            let b = self.buf.get(at..n).ok_or(())?;
            let len = u32_at(b, 0).ok_or(())? as usize;
            let kind = u16_at(b, 4).ok_or(())?;
            if len < NLMSG_HDRLEN || len > b.len() {
                return Err(());
            }
            let m = b.get(..len).ok_or(())?;
            match kind {
                NLMSG_NOOP => {}
                NLMSG_DONE => {
                    if u32_at(m, NLMSG_HDRLEN).ok_or(())? != CN_IDX_PROC
                        || u32_at(m, NLMSG_HDRLEN + 4).ok_or(())? != CN_VAL_PROC
                    {
                        return Err(());
                    }
                    let seq = u32_at(m, NLMSG_HDRLEN + 8).ok_or(())?;
                    let ack = u32_at(m, NLMSG_HDRLEN + 12).ok_or(())?;
                    let what = u32_at(m, NLMSG_HDRLEN + CN_MSG_LEN).ok_or(())?;
                    let cpu = u32_at(m, NLMSG_HDRLEN + CN_MSG_LEN + 4).ok_or(())?;
                    let word = |i: usize| u32_at(m, EVENT_DATA + 4 * i).ok_or(());
                    // Each kind's event_data must be there whole (its last word read).
                    let event = match what {
                        // An acknowledgement of a subscription (ours or another listener's).
                        what::NONE => word(0).map(|_| None)?,
                        what::EXEC => Some(Event::Exec { tgid: word(1)? }),
                        // pid, tgid, exit code and signal, parent pid and tgid.
                        what::EXIT => word(5).and(word(0)).map(|tid| Some(Event::Exit { tid }))?,
                        // pid, tgid, real and effective id.
                        what::UID | what::GID => {
                            word(3).and(word(0)).map(|tid| Some(Event::Ids { tid }))?
                        }
                        // pid, tgid, 16 bytes of name.
                        what::COMM => word(5).and(word(0)).map(|tid| Some(Event::Comm { tid }))?,
                        what::SID => word(1).map(|_| None)?,
                        // parent pid and tgid, child pid and tgid.
                        what::FORK => Some(Event::Fork {
                            parent: word(0)?,
                            child: word(2)?,
                            child_tgid: word(3)?,
                        }),
                        what::PTRACE | what::COREDUMP => word(3).map(|_| None)?,
                        _ => return Err(()),
                    };
                    // Kernels since 6.6 send acknowledgements through send_msg too, numbered
                    // with the events of their CPU; older ones with cpu -1 and the asker's
                    // number, outside any CPU's sequence.
                    if cpu != u32::MAX {
                        match self.seq.insert(cpu, seq) {
                            Some(last) if last.wrapping_add(1) == seq => {}
                            _ => out.push(Event::Lost),
                        }
                    }
                    out.extend(event);
                    if what == what::NONE {
                        acks.push((ack, word(0)?));
                    }
                }
                // NLMSG_ERROR, NLMSG_OVERRUN, anything else: not an event we can read.
                _ => return Err(()),
            }
            at += (len + 3) & !3;
        }
        Ok(Parsed { events: out, acks })
    }
}

impl EventSource for Connector {
    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(e) = self.queue.pop_front() {
                return Some(e);
            }
            match self.recv()? {
                Err(()) => return Some(Event::Lost),
                Ok(p) => self.queue.extend(p.events),
            }
        }
    }
}

impl Drop for Connector {
    fn drop(&mut self) {
        // The kernel counts listeners, and numbers events only while there is one.
        let _ = rustix::net::sendto(
            &self.fd,
            &control(PROC_CN_MCAST_IGNORE, 0),
            SendFlags::empty(),
            &SocketAddrNetlink::new(0, 0),
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;

    /// A message as the kernel sends it.
    fn message(seq: u32, what: u32, cpu: u32, data: &[u32]) -> Vec<u8> {
        let len = EVENT_DATA + 4 * data.len();
        let mut m = Vec::new();
        m.extend_from_slice(&(len as u32).to_ne_bytes());
        m.extend_from_slice(&NLMSG_DONE.to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        m.extend_from_slice(&seq.to_ne_bytes());
        m.extend_from_slice(&0u32.to_ne_bytes());
        for w in [CN_IDX_PROC, CN_VAL_PROC, seq, 0] {
            m.extend_from_slice(&w.to_ne_bytes());
        }
        m.extend_from_slice(&((16 + 4 * data.len()) as u16).to_ne_bytes());
        m.extend_from_slice(&0u16.to_ne_bytes());
        m.extend_from_slice(&what.to_ne_bytes());
        m.extend_from_slice(&cpu.to_ne_bytes());
        m.extend_from_slice(&0u64.to_ne_bytes());
        for w in data {
            m.extend_from_slice(&w.to_ne_bytes());
        }
        assert_eq!(m.len(), len);
        m
    }

    fn parse(c: &mut Connector, m: &[u8]) -> Result<Vec<Event>, ()> {
        c.buf[..m.len()].copy_from_slice(m);
        c.parse(m.len()).map(|p| p.events)
    }

    fn detached() -> Connector {
        let fd = rustix::net::socket(
            AddressFamily::NETLINK,
            SocketType::DGRAM,
            Some(netlink::CONNECTOR),
        )
        .unwrap();
        Connector {
            fd,
            seq: FxHashMap::default(),
            buf: vec![0; 4096],
            queue: VecDeque::new(),
        }
    }

    #[test]
    fn messages_become_events_and_gaps_are_losses() {
        let mut c = detached();
        // The first event of a CPU may follow a lost one.
        assert_eq!(
            parse(&mut c, &message(10, what::EXEC, 0, &[55, 50])),
            Ok(vec![Event::Lost, Event::Exec { tgid: 50 }])
        );
        assert_eq!(
            parse(&mut c, &message(11, what::EXIT, 0, &[56, 50, 0, 17, 1, 1])),
            Ok(vec![Event::Exit { tid: 56 }])
        );
        assert_eq!(
            parse(&mut c, &message(12, what::UID, 0, &[57, 50, 0, 0])),
            Ok(vec![Event::Ids { tid: 57 }])
        );
        assert_eq!(
            parse(&mut c, &message(13, what::FORK, 0, &[1, 1, 2, 2])),
            Ok(vec![Event::Fork {
                parent: 1,
                child: 2,
                child_tgid: 2
            }])
        );
        // Another CPU numbers its own.
        assert_eq!(
            parse(&mut c, &message(500, what::GID, 1, &[58, 50, 0, 0])),
            Ok(vec![Event::Lost, Event::Ids { tid: 58 }])
        );
        assert_eq!(
            parse(&mut c, &message(14, what::COMM, 0, &[59, 50, 0, 0, 0, 0])),
            Ok(vec![Event::Comm { tid: 59 }])
        );
        // 15 never came.
        assert_eq!(
            parse(&mut c, &message(16, what::EXIT, 0, &[60, 60, 0, 0, 1, 1])),
            Ok(vec![Event::Lost, Event::Exit { tid: 60 }])
        );
        // An acknowledgement is numbered with its CPU's events (6.6 and later).
        assert_eq!(parse(&mut c, &message(17, what::NONE, 0, &[0])), Ok(vec![]));
        assert_eq!(
            parse(&mut c, &message(0x3333, what::NONE, u32::MAX, &[0])),
            Ok(vec![]),
            "an older kernel's, outside the sequence"
        );
        // An unknown kind, a short message.
        assert_eq!(parse(&mut c, &message(18, 0x800, 0, &[1, 1])), Err(()));
        let short = message(19, what::EXIT, 0, &[61, 61, 0, 0, 1, 1]);
        let mut cut = short[..short.len() - 4].to_vec();
        cut[0..4].copy_from_slice(&((short.len() - 4) as u32).to_ne_bytes());
        assert_eq!(parse(&mut c, &cut), Err(()));
    }

    #[test]
    fn the_real_connector_sees_a_child_exec_and_exit() {
        let mut c = match Connector::open() {
            Ok(c) => c,
            Err(why) => {
                eprintln!("SKIP: no proc connector here: {why}");
                return;
            }
        };
        let mut child = std::process::Command::new("/bin/sh")
            .args(["-c", "exec /bin/true"])
            .spawn()
            .unwrap();
        let pid = child.id();
        child.wait().unwrap();
        let (mut exec, mut exit) = (0, false);
        let deadline = Instant::now() + Duration::from_secs(5);
        while !exit && Instant::now() < deadline {
            match c.next() {
                Some(Event::Exec { tgid }) if tgid == pid => exec += 1,
                Some(Event::Exit { tid }) if tid == pid => exit = true,
                Some(_) => {}
                None => std::thread::sleep(Duration::from_millis(5)),
            }
        }
        assert_eq!(exec, 2, "two execs of {pid}: the shell, then true");
        assert!(exit, "the exit of {pid}");
    }
}
