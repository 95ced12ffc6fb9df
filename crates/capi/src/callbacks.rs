//! libselinux's callbacks (selinux_set_callback) and the AVC's event callbacks
//! (avc_add_callback): where log lines, audit supplements and policy events go.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering::*};
use std::sync::{Mutex, OnceLock, RwLock};

use seaccess_engine::{AuditSink, AuditTarget};

use seaccess_types::lock;

use crate::ffi::{self, EINVAL};
use crate::sid::SecurityId;

pub(crate) const SELINUX_ERROR: c_int = 0;
pub(crate) const SELINUX_INFO: c_int = 2;
pub(crate) const SELINUX_AVC: c_int = 3;
pub(crate) const SELINUX_POLICYLOAD: c_int = 4;
pub(crate) const SELINUX_SETENFORCE: c_int = 5;

const SELINUX_CB_LOG: c_int = 0;
const SELINUX_CB_AUDIT: c_int = 1;
const SELINUX_CB_VALIDATE: c_int = 2;
const SELINUX_CB_SETENFORCE: c_int = 3;
const SELINUX_CB_POLICYLOAD: c_int = 4;

const AVC_CALLBACK_RESET: u32 = 8;

pub type LogFn = unsafe extern "C" fn(c_int, *const c_char, ...) -> c_int;
pub type AuditFn = unsafe extern "C" fn(*mut c_void, u16, *mut c_char, usize) -> c_int;
pub type ValidateFn = unsafe extern "C" fn(*mut *mut c_char) -> c_int;
pub type SetenforceFn = unsafe extern "C" fn(c_int) -> c_int;
pub type PolicyloadFn = unsafe extern "C" fn(c_int) -> c_int;
pub type AvcEventFn =
    unsafe extern "C" fn(u32, *mut SecurityId, *mut SecurityId, u16, u32, *mut u32) -> c_int;

/// libselinux's `union selinux_callback`: one function pointer, which member by the type.
#[repr(C)]
#[derive(Copy, Clone)]
pub union SelinuxCallback {
    pub func_log: Option<LogFn>,
    pub func_audit: Option<AuditFn>,
    pub func_validate: Option<ValidateFn>,
    pub func_setenforce: Option<SetenforceFn>,
    pub func_policyload: Option<PolicyloadFn>,
}

#[derive(Copy, Clone, Default)]
struct Callbacks {
    log: Option<LogFn>,
    audit: Option<AuditFn>,
    validate: Option<ValidateFn>,
    setenforce: Option<SetenforceFn>,
    policyload: Option<PolicyloadFn>,
}

static CALLBACKS: RwLock<Callbacks> = RwLock::new(Callbacks {
    log: None,
    audit: None,
    validate: None,
    setenforce: None,
    policyload: None,
});

#[derive(Copy, Clone)]
struct AvcEvent {
    f: AvcEventFn,
    events: u32,
}

static AVC_EVENTS: Mutex<Vec<AvcEvent>> = Mutex::new(Vec::new());

/// Whether avc_open has run (and avc_destroy not since): the AVC's own log lines (policy load,
/// setenforce) are written only then, as libselinux's come from the AVC's status polling.
pub(crate) static AVC_OPEN: AtomicBool = AtomicBool::new(false);

fn callbacks() -> Callbacks {
    *seaccess_types::lock::read(&CALLBACKS)
}

/// Writes one log line through the log callback, or by default to standard error as
/// libselinux's default does, except that with `SEACCESS_AUDIT` (as `seaccess run --audit-log
/// syslog` sets it) the audit records among them (AVC denials, policy loads, mode switches) go
/// to that destination ([`seaccess_engine::AuditTarget::parse`]: `syslog`, `audit` or a file) in
/// audit.log's format. The line is passed as `"%s"`'s argument, so a `%` in a context is not a
/// format. Called with no library lock held: the callback may call back into the library.
pub(crate) fn log(kind: c_int, line: &str) {
    match callbacks().log {
        Some(f) => {
            let Ok(c) = std::ffi::CString::new(line.replace('\0', "")) else {
                return;
            };
            // SAFETY: f is the program's log callback, printf-like; the format "%s" takes
            // exactly the one NUL-terminated string we pass, which lives across the call.
            unsafe { f(kind, c"%s".as_ptr(), c.as_ptr()) };
        }
        None => match (audit_sink(), record_kind(kind)) {
            (Some(sink), Some(record)) => sink.record(record, line),
            _ => to_stderr(line.as_bytes()),
        },
    }
}

/// The audit record type of a log line of `kind` (None: a diagnostic, not a record).
fn record_kind(kind: c_int) -> Option<&'static str> {
    match kind {
        SELINUX_AVC => Some("AVC"),
        SELINUX_POLICYLOAD => Some("MAC_POLICY_LOAD"),
        SELINUX_SETENFORCE => Some("MAC_STATUS"),
        _ => None,
    }
}

/// The variable naming where the default logger's audit records go.
pub const AUDIT_ENV: &str = "SEACCESS_AUDIT";

/// `SEACCESS_AUDIT`'s sink, opened with the first policy ([`open_audit_sink`]): None before,
/// without the variable, or when its destination cannot be opened. The sink takes no lock, so
/// a child between fork and exec writes through it safely.
static SINK: OnceLock<Option<AuditSink>> = OnceLock::new();

fn audit_sink() -> Option<&'static AuditSink> {
    SINK.get().and_then(Option::as_ref)
}

/// Opens the sink `value` (`SEACCESS_AUDIT`'s, read by the caller as a policy variable) names,
/// once; one that cannot be opened is said once and the records go to standard error. Called
/// when the policy is installed, before any record, rather than at the first denial, which may
/// come in a child forked while another thread was opening it.
pub(crate) fn open_audit_sink(value: Option<std::ffi::OsString>) {
    SINK.get_or_init(|| {
        let value = value.filter(|v| !v.is_empty())?;
        match AuditSink::open(&AuditTarget::parse(&value)) {
            Ok(s) => Some(s),
            Err(e) => {
                to_stderr(
                    format!(
                        "libselinux (seaccess): {AUDIT_ENV}: {e}; audit records go to standard error\n"
                    )
                    .as_bytes(),
                );
                None
            }
        }
    });
}

/// The default logger: the line written to file descriptor 2, write errors ignored, as
/// libselinux's `fprintf(stderr, ...)` ignores them (a daemon's standard error may be a closed
/// pipe, with SIGPIPE ignored); without the standard library's lock on it, which a thread of the
/// parent may hold at a fork.
fn to_stderr(line: &[u8]) {
    seaccess_engine::audit::to_stderr(line);
}

/// The callbacks' locks, held across a fork (see [`crate::fork`]).
pub(crate) struct Held {
    _callbacks: std::sync::RwLockWriteGuard<'static, Callbacks>,
    _events: std::sync::MutexGuard<'static, Vec<AvcEvent>>,
}

pub(crate) fn hold() -> Held {
    Held {
        _callbacks: seaccess_types::lock::write(&CALLBACKS),
        _events: lock(&AVC_EVENTS),
    }
}

/// The audit callback's text for `auditdata` (libselinux's avc_suppl_audit), at most `room`
/// bytes; none without a callback (libselinux's default writes nothing).
pub(crate) fn audit_supplement(auditdata: *mut c_void, class: u16, room: usize) -> String {
    let Some(f) = callbacks().audit else {
        return String::new();
    };
    if room == 0 {
        return String::new();
    }
    let mut buf = vec![0u8; room];
    // SAFETY: f is the program's audit callback: it writes at most `room` bytes, NUL included,
    // into the buffer we own; auditdata is the program's own pointer passed back untouched.
    unsafe { f(auditdata, class, buf.as_mut_ptr() as *mut c_char, room) };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(room);
    String::from_utf8_lossy(buf.get(..end).unwrap_or_default()).into_owned()
}

/// The policy changed (load, reload or boolean commit), as libselinux's AVC learns from the
/// kernel's netlink or status page: log it, reset-callbacks, then the policyload callback.
pub(crate) fn policy_loaded(seqno: u32) {
    if AVC_OPEN.load(Acquire) {
        log(
            SELINUX_POLICYLOAD,
            &format!("avc:  op=load_policy lsm=selinux seqno={seqno} res=1"),
        );
        run_reset_callbacks();
    }
    if let Some(f) = callbacks().policyload {
        // SAFETY: the program's policyload callback, given the seqno as libselinux does.
        unsafe { f(seqno as c_int) };
    }
}

/// security_setenforce switched the mode (libselinux's avc_process_setenforce).
pub(crate) fn enforcing_changed(on: bool) {
    if AVC_OPEN.load(Acquire) {
        log(
            SELINUX_SETENFORCE,
            &format!(
                "avc:  op=setenforce lsm=selinux enforcing={} res=1",
                u8::from(on)
            ),
        );
        if on {
            run_reset_callbacks();
        }
    }
    if let Some(f) = callbacks().setenforce {
        // SAFETY: the program's setenforce callback, given the new mode.
        unsafe { f(c_int::from(on)) };
    }
}

/// Calls every avc_add_callback callback registered for AVC_CALLBACK_RESET; returns the first
/// non-zero result (libselinux's avc_reset).
pub(crate) fn run_reset_callbacks() -> c_int {
    let list: Vec<AvcEvent> = lock(&AVC_EVENTS).clone();
    let mut rc = 0;
    for c in list
        .iter()
        .rev()
        .filter(|c| c.events & AVC_CALLBACK_RESET != 0)
    {
        // SAFETY: a callback the program registered with avc_add_callback, called as
        // libselinux's avc_reset calls it (no SIDs, no class, no retained-permissions pointer).
        let r = unsafe {
            (c.f)(
                AVC_CALLBACK_RESET,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                0,
                0,
                std::ptr::null_mut(),
            )
        };
        if r != 0 && rc == 0 {
            rc = r;
        }
    }
    rc
}

pub(crate) fn forget_avc_callbacks() {
    lock(&AVC_EVENTS).clear();
}

#[no_mangle]
pub extern "C" fn selinux_set_callback(kind: c_int, cb: SelinuxCallback) {
    ffi::guard((), || {
        crate::fork::register();
        let mut c = seaccess_types::lock::write(&CALLBACKS);
        // SAFETY: every member of the union is one function pointer (or NULL), and the type
        // says which one the program stored; Option<fn> has fn's layout, NULL being None.
        unsafe {
            match kind {
                SELINUX_CB_LOG => c.log = cb.func_log,
                SELINUX_CB_AUDIT => c.audit = cb.func_audit,
                SELINUX_CB_VALIDATE => c.validate = cb.func_validate,
                SELINUX_CB_SETENFORCE => c.setenforce = cb.func_setenforce,
                SELINUX_CB_POLICYLOAD => c.policyload = cb.func_policyload,
                _ => return Err(EINVAL),
            }
        }
        Ok(())
    })
}

extern "C" {
    // src/defaults.c: libselinux's default callbacks, for selinux_get_callback to hand back.
    fn seaccess_default_log(kind: c_int, fmt: *const c_char, ...) -> c_int;
    fn seaccess_default_audit(data: *mut c_void, class: u16, buf: *mut c_char, len: usize)
        -> c_int;
    fn seaccess_default_validate(ctx: *mut *mut c_char) -> c_int;
    fn seaccess_default_setenforce(enforcing: c_int) -> c_int;
    fn seaccess_default_policyload(seqno: c_int) -> c_int;
}

/// The callback of `kind`: the program's, or the default libselinux would use (a program may
/// call what it gets back, or chain its own to it).
#[no_mangle]
pub extern "C" fn selinux_get_callback(kind: c_int) -> SelinuxCallback {
    ffi::guard(SelinuxCallback { func_log: None }, || {
        let c = callbacks();
        Ok(match kind {
            SELINUX_CB_LOG => SelinuxCallback {
                func_log: Some(c.log.unwrap_or(seaccess_default_log)),
            },
            SELINUX_CB_AUDIT => SelinuxCallback {
                func_audit: Some(c.audit.unwrap_or(seaccess_default_audit)),
            },
            SELINUX_CB_VALIDATE => SelinuxCallback {
                func_validate: Some(c.validate.unwrap_or(seaccess_default_validate)),
            },
            SELINUX_CB_SETENFORCE => SelinuxCallback {
                func_setenforce: Some(c.setenforce.unwrap_or(seaccess_default_setenforce)),
            },
            SELINUX_CB_POLICYLOAD => SelinuxCallback {
                func_policyload: Some(c.policyload.unwrap_or(seaccess_default_policyload)),
            },
            _ => return Err(EINVAL),
        })
    })
}

/// libselinux's avc_add_callback. The seaccess cache never revokes or grants single entries,
/// so only AVC_CALLBACK_RESET events are ever delivered (on avc_reset, policy loads and
/// switches to enforcing); the SID, class and permission filters are kept for no use.
#[no_mangle]
pub extern "C" fn avc_add_callback(
    callback: Option<AvcEventFn>,
    events: u32,
    _ssid: *mut SecurityId,
    _tsid: *mut SecurityId,
    _tclass: u16,
    _perms: u32,
) -> c_int {
    ffi::guard(-1, || {
        let f = callback.ok_or(EINVAL)?;
        crate::fork::register();
        lock(&AVC_EVENTS).push(AvcEvent { f, events });
        Ok(0)
    })
}
