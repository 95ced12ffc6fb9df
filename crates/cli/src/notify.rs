//! Readiness for systemd (sd_notify(3)'s protocol, without libsystemd): a service started with
//! `Type=notify` is "started" only when the mount is there, and a reload is seen as one.
//!
//! Under systemd, NOTIFY_SOCKET names a datagram socket (a path, or an abstract name written with
//! a leading `@`); each message is one datagram of NAME=VALUE lines. Elsewhere the variable is
//! unset and nothing is sent. A message that cannot be sent is not an error of the mount: the
//! service manager then reports the start as timed out, which says more than a failed mount.

use std::os::unix::net::{SocketAddr, UnixDatagram};

/// Sends `state` (e.g. "READY=1") to the service manager, if one is listening.
pub(crate) fn notify(state: &str) {
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return;
    };
    let bytes = std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str());
    let addr = match bytes.strip_prefix(b"@") {
        Some(name) => <SocketAddr as std::os::linux::net::SocketAddrExt>::from_abstract_name(name),
        None => SocketAddr::from_pathname(&path),
    };
    let Ok(addr) = addr else { return };
    if let Ok(sock) = UnixDatagram::unbound() {
        let _ = sock.send_to_addr(state.as_bytes(), &addr);
    }
}

/// The monotonic clock in microseconds, which a RELOADING=1 message carries (systemd 253 and
/// later match it against their own reload request).
pub(crate) fn monotonic_usec() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec
        .unsigned_abs()
        .saturating_mul(1_000_000)
        .saturating_add(t.tv_nsec.unsigned_abs() / 1_000)
}
