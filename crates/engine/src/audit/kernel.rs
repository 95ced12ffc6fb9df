//! The kernel audit: each record one netlink message of a userspace type, as libaudit's
//! audit_log_user_avc_message sends it for libselinux-based object managers (dbus, systemd):
//! the record's text followed by ` exe=... sauid=... hostname=? addr=? terminal=...`. The
//! kernel adds `pid= uid= auid= ses= subj=` and its own `audit(TIME:SERIAL)`, hands the record
//! to auditd (audit.log, `ausearch -m USER_AVC`) and to the audit multicast group (journald),
//! or prints it to its log when no daemon runs.
//!
//! Each message asks for an acknowledgement, read back without blocking: the kernel handles a
//! message from userspace in the sender's own send call, so its answer is queued by the time
//! the send returns. A refusal (EPERM without CAP_AUDIT_WRITE, ECONNREFUSED outside the initial
//! user namespace) loses the record. A record the kernel takes but drops (its backlog full, a
//! rate limit) is counted by the kernel (`auditctl -s`'s lost), not here; so is one the kernel
//! ignores: with auditing disabled (no auditd has enabled it) the kernel logs USER_AVC and
//! drops every other userspace type without an error (kernel/audit.c, audit_receive_msg).

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU32, Ordering};

use rustix::net::netlink::{self, SocketAddrNetlink};
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketFlags, SocketType};

/// <linux/audit.h> and libaudit.h: the userspace record types.
const AUDIT_USER_AVC: u16 = 1107;
const AUDIT_USER_SELINUX_ERR: u16 = 1122;
const AUDIT_USER_MAC_POLICY_LOAD: u16 = 2310;
const AUDIT_USER_MAC_CONFIG_CHANGE: u16 = 2312;
const AUDIT_USER_MAC_STATUS: u16 = 2313;
/// <linux/netlink.h>.
const NLM_F_REQUEST: u16 = 1;
const NLM_F_ACK: u16 = 4;
const NLMSG_ERROR: u16 = 2;
const NLMSG_HDRLEN: usize = 16;
/// libaudit's MAX_AUDIT_MESSAGE_LENGTH less the header: longer text is cut, as its snprintf
/// cuts it.
const MAX_TEXT: usize = 8970 - NLMSG_HDRLEN - 1;
/// CAP_AUDIT_WRITE's bit in /proc/self/status's CapEff.
const CAP_AUDIT_WRITE: u32 = 29;

pub(super) struct Kernel {
    sock: OwnedFd,
    /// ` exe=... sauid=... hostname=? addr=? terminal=...`, fixed for the process.
    suffix: String,
    seq: AtomicU32,
}

/// The netlink type of an audit.log record type: its userspace counterpart.
pub(super) fn user_type(kind: &str) -> u16 {
    match kind {
        "SELINUX_ERR" => AUDIT_USER_SELINUX_ERR,
        "MAC_POLICY_LOAD" => AUDIT_USER_MAC_POLICY_LOAD,
        "MAC_CONFIG_CHANGE" => AUDIT_USER_MAC_CONFIG_CHANGE,
        "MAC_STATUS" => AUDIT_USER_MAC_STATUS,
        _ => AUDIT_USER_AVC,
    }
}

impl Kernel {
    pub(super) fn open() -> std::io::Result<Kernel> {
        if !has_audit_write() {
            return Err(std::io::Error::other(
                "this process lacks CAP_AUDIT_WRITE, which the kernel asks of a userspace record",
            ));
        }
        let sock = rustix::net::socket_with(
            AddressFamily::NETLINK,
            SocketType::RAW,
            SocketFlags::CLOEXEC,
            Some(netlink::AUDIT),
        )?;
        rustix::net::bind(&sock, &SocketAddrNetlink::new(0, 0))?;
        rustix::net::connect(&sock, &SocketAddrNetlink::new(0, 0))?;
        let uid = rustix::process::getuid().as_raw();
        Ok(Kernel {
            sock,
            suffix: format!(
                " exe={} sauid={uid} hostname=? addr=? terminal={}",
                exe(),
                terminal()
            ),
            seq: AtomicU32::new(0),
        })
    }

    pub(super) fn send(&self, kind: &str, text: &str) -> std::io::Result<()> {
        let mut body = format!("{text}{}", self.suffix);
        if body.len() > MAX_TEXT {
            let mut end = MAX_TEXT;
            while !body.is_char_boundary(end) {
                end -= 1;
            }
            body.truncate(end);
        }
        let len = NLMSG_HDRLEN + body.len() + 1;
        let mut msg = Vec::with_capacity(len);
        msg.extend_from_slice(&u32::try_from(len).unwrap_or(u32::MAX).to_ne_bytes());
        msg.extend_from_slice(&user_type(kind).to_ne_bytes());
        msg.extend_from_slice(&(NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
        let seq = self.seq.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        msg.extend_from_slice(&seq.to_ne_bytes());
        msg.extend_from_slice(&0u32.to_ne_bytes());
        msg.extend_from_slice(body.as_bytes());
        msg.push(0);
        rustix::net::send(&self.sock, &msg, SendFlags::DONTWAIT)?;
        self.answer()
    }

    /// The kernel's answer to a message sent: an acknowledgement (error 0), a refusal, or none
    /// yet (taken as accepted; another thread may have read it).
    fn answer(&self) -> std::io::Result<()> {
        let mut buf = [0u8; 64];
        match rustix::net::recv(&self.sock, &mut buf, RecvFlags::DONTWAIT) {
            Ok((_, n)) if n >= NLMSG_HDRLEN + 4 => {
                let word = |at: usize| buf.get(at..at + 4).and_then(|b| b.try_into().ok());
                let kind = buf.get(4..6).and_then(|b| b.try_into().ok());
                match (
                    kind.map(u16::from_ne_bytes),
                    word(16).map(i32::from_ne_bytes),
                ) {
                    (Some(NLMSG_ERROR), Some(e)) if e < 0 => {
                        Err(std::io::Error::from_raw_os_error(-e))
                    }
                    _ => Ok(()),
                }
            }
            Ok(_) | Err(rustix::io::Errno::AGAIN) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

fn has_audit_write() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_AUDIT_WRITE) != 0)
}

/// The executable as libaudit's _get_exename writes it: quoted, or in hex when it holds a
/// quote, a space, a control character or a byte past `~` (audit_value_needs_encoding).
fn exe() -> String {
    use std::os::unix::ffi::OsStrExt;
    let Ok(p) = std::fs::read_link("/proc/self/exe") else {
        return "?".into();
    };
    encode(p.as_os_str().as_bytes())
}

pub(super) fn encode(v: &[u8]) -> String {
    if v.iter().any(|&b| b == b'"' || !(0x21..=0x7e).contains(&b)) {
        v.iter().map(|b| format!("{b:02X}")).collect()
    } else {
        format!("\"{}\"", String::from_utf8_lossy(v))
    }
}

/// The terminal on standard input without its /dev/ (libaudit's _get_tty), else `?`.
fn terminal() -> String {
    std::fs::read_link("/proc/self/fd/0")
        .ok()
        .and_then(|p| {
            p.to_str()
                .and_then(|s| s.strip_prefix("/dev/"))
                .filter(|s| s.starts_with("tty") || s.starts_with("pts/") || *s == "console")
                .map(str::to_string)
        })
        .unwrap_or_else(|| "?".into())
}
