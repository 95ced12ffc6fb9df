//! The system log: each record one datagram to /dev/log, in the form glibc's syslog(3) and
//! util-linux's `logger` send there, `<PRI>TAG[PID]: MSG`, which journald (`journalctl -t
//! seaccess`) and rsyslog's imuxsock parse.
//!
//! PRI is `auth.notice` (4 * 8 + 5 = 37). The facility and severity follow the object managers
//! that log AVC records without an audit daemon: systemd's SELinux access checks
//! (src/core/selinux-access.c, log_callback) send them as LOG_AUTH | LOG_NOTICE when the audit
//! netlink is closed to them; dbus-daemon uses LOG_USER | LOG_INFO, which files a security
//! denial with ordinary programs' chatter; and the kernel prints the audit records no daemon
//! took at KERN_NOTICE. `auth` rather than `authpriv`: a record holds contexts and paths, not
//! the secrets authpriv keeps from other readers (Debian's rsyslog files both in auth.log).
//!
//! MSG is the whole audit.log line (`type=AVC msg=audit(SECONDS.MILLIS:SERIAL): avc:  denied
//! ...`): its time is the record's own, and audit2allow reads such lines out of a log. The
//! header carries no TIMESTAMP: RFC 3164 lets a sender leave it out (the receiver stamps the
//! message), journald and rsyslog's imuxsock use their own receive time for the local socket
//! anyway, and a local-time stamp would need the C library's time zone code, which this crate,
//! free of unsafe code, does not call (a UTC one would be wrong wherever the zone is not UTC).
//!
//! The socket is unconnected and non-blocking: each record is sent to the path, so a log
//! daemon restarted (its socket made again) is found on the next record, and a missing socket
//! or a full queue fails the send at once instead of holding the check.

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};

use super::Severity;

/// Where the system log listens.
pub const DEV_LOG: &str = "/dev/log";
/// The records' identifier (SYSLOG_IDENTIFIER in the journal).
pub const TAG: &str = "seaccess";
/// LOG_AUTH, <syslog.h>'s 4 << 3.
pub const FACILITY: u8 = 4 << 3;

pub(super) struct Syslog {
    sock: UnixDatagram,
    path: PathBuf,
}

impl Syslog {
    pub(super) fn new(path: PathBuf) -> std::io::Result<Syslog> {
        let sock = UnixDatagram::unbound()?;
        sock.set_nonblocking(true)?;
        Ok(Syslog { sock, path })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// One record; an error says it was not taken (ENOENT, ECONNREFUSED: no log daemon;
    /// EAGAIN: its queue is full).
    pub(super) fn send(&self, severity: Severity, line: &str) -> std::io::Result<()> {
        let msg = format!(
            "<{}>{TAG}[{}]: {}",
            FACILITY | severity as u8,
            std::process::id(),
            line.trim_end_matches('\n')
        );
        self.sock.send_to(msg.as_bytes(), &self.path).map(drop)
    }
}
