//! A socket's blob as the socket hooks keep it: the shared [`SockSec`] (SID, class, peer SID)
//! with what the kernel's audit records and port checks read from the socket itself (its
//! family, protocol and addresses).

use std::net::SocketAddr;
use std::sync::Mutex;

use seaccess_types::Sid;

use crate::blobs::SockSec;
use crate::classes::Class;
use crate::grant::InodeGrant;

/// An address a socket is bound or connected to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SockAddr {
    Inet(SocketAddr),
    /// An AF_UNIX name: a filesystem path, or an abstract name starting with a NUL byte
    /// (audit records give the latter in hex, as the kernel does).
    Unix(String),
    /// AF_UNSPEC (a connect that dissolves an association).
    Unspec,
}

#[derive(Clone, Debug, Default)]
struct Addrs {
    local: Option<SocketAddr>,
    peer: Option<SocketAddr>,
    unix: Option<String>,
}

/// A socket's blob (sk_security_struct with the parts of struct sock the hooks read).
#[derive(Debug)]
pub struct SocketSec {
    sec: SockSec,
    /// The address family (PF_*).
    pub family: u16,
    /// The protocol the kernel records (sk_protocol): TCP or UDP for protocol 0.
    pub protocol: i32,
    addrs: Mutex<Addrs>,
    /// What the last (credential SID, seqno) was granted on the socket with nothing to audit
    /// (the sockets fast path, [`crate::FastPaths::set_sockets`]). The socket's SID never
    /// changes, so no relabel ever ends a grant: a new seqno or another SID does.
    pub(crate) grant: InodeGrant,
}

impl SocketSec {
    /// A socket of `class` labelled `sid`, with `peer` as its peer SID.
    pub fn new(sid: Sid, class: Class, family: u16, protocol: i32, peer: Sid) -> SocketSec {
        let sec = SockSec::new(sid, class);
        sec.set_peer_sid(peer);
        SocketSec {
            sec,
            family,
            protocol,
            addrs: Mutex::new(Addrs::default()),
            grant: InodeGrant::new(),
        }
    }

    pub fn sid(&self) -> Sid {
        self.sec.sid
    }

    pub fn class(&self) -> Class {
        self.sec.class
    }

    /// The peer's SID (SECSID_NULL where none is known).
    pub fn peer_sid(&self) -> Sid {
        self.sec.peer_sid()
    }

    pub(crate) fn set_peer_sid(&self, sid: Sid) {
        self.sec.set_peer_sid(sid);
    }

    /// The shared blob.
    pub fn sock_sec(&self) -> &SockSec {
        &self.sec
    }

    fn addrs(&self) -> std::sync::MutexGuard<'_, Addrs> {
        // A poisoned lock only means another thread panicked while copying addresses: the
        // addresses are still whole.
        seaccess_types::lock(&self.addrs)
    }

    pub(crate) fn set_local(&self, addr: &SockAddr) {
        let mut a = self.addrs();
        match addr {
            SockAddr::Inet(s) => a.local = Some(*s),
            SockAddr::Unix(p) => a.unix = Some(p.clone()),
            SockAddr::Unspec => {}
        }
    }

    pub(crate) fn set_peer(&self, addr: &SockAddr) {
        let mut a = self.addrs();
        match addr {
            SockAddr::Inet(s) => a.peer = Some(*s),
            SockAddr::Unspec => a.peer = None,
            SockAddr::Unix(_) => {}
        }
    }

    pub(crate) fn copy_addrs_from(&self, other: &SocketSec) {
        let a = other.addrs().clone();
        *self.addrs() = a;
    }

    /// The local address, if bound to one.
    pub fn local(&self) -> Option<SocketAddr> {
        self.addrs().local
    }

    /// The AF_UNIX name the socket is bound to, if any.
    pub fn unix_name(&self) -> Option<String> {
        self.addrs().unix.clone()
    }

    /// What the kernel's audit record says of this socket (LSM_AUDIT_DATA_NET with the sk):
    /// `laddr= lport= faddr= fport=` for INET, each left out when zero or the any-address;
    /// `path=` for a bound AF_UNIX socket.
    pub(crate) fn audit_fields(&self) -> NetFields {
        let a = self.addrs();
        let ip = |s: Option<SocketAddr>| s.map(|s| s.ip()).filter(|i| !i.is_unspecified());
        let port = |s: Option<SocketAddr>| s.map(|s| s.port()).filter(|p| *p != 0);
        NetFields {
            laddr: ip(a.local),
            lport: port(a.local),
            faddr: ip(a.peer),
            fport: port(a.peer),
            path: a.unix.clone(),
        }
    }
}

/// A socket's audit fields, owned so that the audit data can borrow them.
pub(crate) struct NetFields {
    pub laddr: Option<std::net::IpAddr>,
    pub lport: Option<u16>,
    pub faddr: Option<std::net::IpAddr>,
    pub fport: Option<u16>,
    pub path: Option<String>,
}
