//! Where audit records go, for every front end (the mount, `seaccess run`'s supervisor,
//! `seaccess enforce`, the C library's default logger): standard error, a file appended to, the
//! system log (`syslog`), or the kernel audit (`audit`, as a userspace AVC record). One record is
//! one line of audit.log's format, `type=AVC msg=audit(1700000000.123:42): avc:  denied ...`, in
//! every destination but the kernel's, which stamps its own `audit(...)` header.
//!
//! A record never holds up the check that wrote it for long: the system log and the kernel are
//! written without blocking, and a record they do not take (no /dev/log, a full queue, a
//! refusal) is lost, counted ([`AuditSink::lost`]) and, the first time, said once on standard
//! error. Nothing here takes a lock, so the C library may write a record in a child between
//! fork and exec.

mod kernel;
mod syslog;

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::{EngineError, Result};

pub use syslog::{DEV_LOG, FACILITY, TAG};

/// Where an [`AuditSink`] writes, as `--audit-log VALUE` or `SEACCESS_AUDIT=VALUE` names it
/// ([`AuditTarget::parse`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AuditTarget {
    /// Standard error (no `--audit-log`).
    Stderr,
    /// A file, created if missing and appended to.
    File(PathBuf),
    /// The system log: one datagram per record to /dev/log ([`syslog`] says the format).
    Syslog,
    /// The kernel audit: one USER_AVC (or USER_SELINUX_ERR, USER_MAC_*) message per record over
    /// the audit netlink, as libselinux-based object managers send them through libaudit's
    /// audit_log_user_avc_message; auditd writes them to audit.log, where `ausearch -m
    /// USER_AVC` and `audit2why` read them (without auditd the kernel prints them to its log).
    /// Needs CAP_AUDIT_WRITE in the initial user namespace.
    Kernel,
}

impl AuditTarget {
    /// The value that names [`AuditTarget::Syslog`]; a file of that name is `./syslog`.
    pub const SYSLOG: &'static str = "syslog";
    /// The value that names [`AuditTarget::Kernel`]; a file of that name is `./audit`.
    pub const KERNEL: &'static str = "audit";

    /// `syslog` and `audit` are the system log and the kernel audit; any other value is a file
    /// (a file named like one of them is reached as `./syslog`, `./audit`).
    pub fn parse(value: impl AsRef<OsStr>) -> AuditTarget {
        let v = value.as_ref();
        if v == Self::SYSLOG {
            AuditTarget::Syslog
        } else if v == Self::KERNEL {
            AuditTarget::Kernel
        } else {
            AuditTarget::File(PathBuf::from(v))
        }
    }

    /// `--audit-log`'s target: standard error without one, else [`AuditTarget::parse`]'s.
    pub fn of(value: Option<impl AsRef<OsStr>>) -> AuditTarget {
        value.map_or(AuditTarget::Stderr, AuditTarget::parse)
    }

    /// The value [`AuditTarget::parse`] reads back as this target (None: standard error), for
    /// passing the choice down in the environment.
    pub fn value(&self) -> Option<OsString> {
        match self {
            AuditTarget::Stderr => None,
            AuditTarget::File(p) if AuditTarget::parse(p) == *self => Some(p.clone().into()),
            AuditTarget::File(p) => Some(PathBuf::from(".").join(p).into()),
            AuditTarget::Syslog => Some(Self::SYSLOG.into()),
            AuditTarget::Kernel => Some(Self::KERNEL.into()),
        }
    }
}

/// A record's syslog severity (RFC 5424's numbers, as <syslog.h>'s LOG_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// LOG_ERR.
    Err = 3,
    /// LOG_WARNING.
    Warning = 4,
    /// LOG_NOTICE: AVC records (see [`syslog::FACILITY`] for why).
    Notice = 5,
    /// LOG_INFO.
    Info = 6,
}

enum Out {
    Stderr,
    File(File),
    Syslog(syslog::Syslog),
    Kernel(kernel::Kernel),
}

/// Audit records' one destination, shared by the threads that write them.
pub struct AuditSink {
    out: Out,
    serial: AtomicU64,
    lost: AtomicU64,
    warned: AtomicBool,
}

impl AuditSink {
    /// The sink writing to `target`. A file that cannot be opened for appending and a kernel
    /// audit this process cannot write to are errors here, before anything is checked; a
    /// missing /dev/log is not (the system log may start later), its records are counted lost.
    pub fn open(target: &AuditTarget) -> Result<AuditSink> {
        let out = match target {
            AuditTarget::Stderr => Out::Stderr,
            AuditTarget::File(p) => Out::File(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|e| EngineError::Audit(format!("{}: {e}", p.display())))?,
            ),
            AuditTarget::Syslog => Out::Syslog(
                syslog::Syslog::new(PathBuf::from(DEV_LOG))
                    .map_err(|e| EngineError::Audit(format!("the system log: {e}")))?,
            ),
            AuditTarget::Kernel => Out::Kernel(
                kernel::Kernel::open()
                    .map_err(|e| EngineError::Audit(format!("the kernel audit: {e}")))?,
            ),
        };
        Ok(AuditSink::with(out))
    }

    /// Standard error.
    pub fn stderr() -> AuditSink {
        AuditSink::with(Out::Stderr)
    }

    /// The system log at `socket` instead of /dev/log (for tests with a listener of their own).
    pub fn syslog_at(socket: impl Into<PathBuf>) -> Result<AuditSink> {
        let s = syslog::Syslog::new(socket.into())
            .map_err(|e| EngineError::Audit(format!("the system log: {e}")))?;
        Ok(AuditSink::with(Out::Syslog(s)))
    }

    fn with(out: Out) -> AuditSink {
        AuditSink {
            out,
            serial: AtomicU64::new(0),
            lost: AtomicU64::new(0),
            warned: AtomicBool::new(false),
        }
    }

    /// A record the cache or the object manager wrote ([`crate::Builder::audit`]'s text): an
    /// AVC record, or a SELINUX_ERR one (an invalid context, a validatetrans failure).
    pub fn avc(&self, text: &str) {
        let kind = if text.starts_with("avc:") {
            "AVC"
        } else {
            "SELINUX_ERR"
        };
        self.record(kind, text);
    }

    /// One record of audit type `kind` (AVC, SELINUX_ERR, MAC_STATUS, MAC_CONFIG_CHANGE,
    /// MAC_POLICY_LOAD), at [`Severity::Notice`].
    pub fn record(&self, kind: &str, text: &str) {
        self.record_at(Severity::Notice, kind, text);
    }

    /// One record of audit type `kind` at `severity` (which only the system log keeps).
    pub fn record_at(&self, severity: Severity, kind: &str, text: &str) {
        let text = text.trim_end_matches('\n');
        let n = self.serial.fetch_add(1, Ordering::Relaxed) + 1;
        if let Out::Kernel(k) = &self.out {
            // The kernel stamps its own time and serial.
            if let Err(e) = k.send(kind, text) {
                self.lose(&e);
            }
            return;
        }
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let line = format!(
            "type={kind} msg=audit({}.{:03}:{n}): {text}\n",
            now.as_secs(),
            now.subsec_millis()
        );
        match &self.out {
            Out::Stderr => to_stderr(line.as_bytes()),
            Out::File(f) => {
                // As before the sinks were one: a line the file refuses (a full disk) is not
                // lost but written to standard error.
                let mut f: &File = f;
                if f.write_all(line.as_bytes()).is_err() {
                    to_stderr(line.as_bytes());
                }
            }
            Out::Syslog(s) => {
                if let Err(e) = s.send(severity, &line) {
                    self.lose(&e);
                }
            }
            Out::Kernel(_) => {}
        }
    }

    /// How many records the system log or the kernel did not take.
    pub fn lost(&self) -> u64 {
        self.lost.load(Ordering::Relaxed)
    }

    /// What a front end says when it stops if records were lost: how many, and that the
    /// destination did not take them. None when none was lost.
    pub fn lost_note(&self) -> Option<String> {
        let n = self.lost();
        (n > 0).then(|| {
            format!("{n} audit records were lost (not taken by --audit-log's destination)")
        })
    }

    fn lose(&self, e: &std::io::Error) {
        self.lost.fetch_add(1, Ordering::Relaxed);
        if !self.warned.swap(true, Ordering::Relaxed) {
            let to = match &self.out {
                Out::Kernel(_) => "the kernel audit".to_string(),
                Out::Syslog(s) => s.path().display().to_string(),
                _ => String::new(),
            };
            to_stderr(
                format!(
                    "seaccess: an audit record could not be written to {to} ({e}); records it \
                     does not take are lost and counted, this is said once\n"
                )
                .as_bytes(),
            );
        }
    }
}

/// Writes `line` to file descriptor 2 without the standard library's lock on it (which a
/// thread of a forking program may hold at the fork) and without panicking: a closed or full
/// standard error loses the line, as libselinux's `fprintf(stderr, ...)` does.
pub fn to_stderr(mut line: &[u8]) {
    let fd = std::io::stderr();
    while !line.is_empty() {
        match rustix::io::write(&fd, line) {
            Ok(0) => return,
            Ok(n) => line = line.get(n..).unwrap_or_default(),
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => return,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
