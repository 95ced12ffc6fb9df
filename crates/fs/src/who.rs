//! The credential a caller gets: the subjects file's first rule for its thread as /proc shows
//! it during the request, with the uid and gid of the request itself (see [`crate::callers`]
//! for how long it is kept, [`seaccess_subjects`] for what each rule matches).

use std::sync::Arc;

use seaccess_objmgr::Task;
use seaccess_security::SecurityServer;
use seaccess_subjects::{self as subjects, Match};
use seaccess_types::Sid;

use crate::callers::{Caller, Callers, Computed, ProcInfo};
use crate::request::{Labels, Req};

/// Computes the caller `req` names: its context by the subjects file (the default one without
/// a file), or why it is refused (logged with `log`).
pub fn compute(
    labels: &Labels,
    server: &SecurityServer,
    callers: &Callers,
    req: Req,
    log: &dyn Fn(&str),
) -> Computed {
    let Some(info) = subjects::proc_info(req.pid) else {
        let why = format!(
            "thread {} has no /proc entry (gone, or in another pid namespace)",
            req.pid
        );
        return Computed {
            caller: Arc::new(Caller { who: Err(why) }),
            tgid: None,
            cgroup: None,
        };
    };
    let mut facts = info.info.clone();
    // The uid the kernel checks this request with, not /proc's real uid: a setuid program,
    // setfsuid or an io_uring personality acts with the request's.
    facts.uid = req.uid;
    let (sid, read_cgroup) = match &labels.subjects {
        None => (Ok(labels.default_sid), false),
        Some(s) => {
            let found = s.decide(&facts);
            let sid = match found.rule {
                None => Err(format!(
                    "no subjects rule matches thread {} ({}, uid {}, exe {}, cgroup {:?})",
                    req.pid,
                    info.comm,
                    req.uid,
                    exe_shown(&info),
                    facts.cgroup
                )),
                Some(rule) => server
                    .context_to_sid(&rule.context)
                    .map_err(|e| format!("subjects line {}: {e}", rule.line))
                    .and_then(|sid| {
                        if rule.matches == Match::Transition {
                            exec_transition(labels, server, sid, req.pid, &info).map_err(|e| {
                                format!(
                                    "subjects line {}: thread {} ({}): {e}",
                                    rule.line, req.pid, info.comm
                                )
                            })
                        } else {
                            Ok(sid)
                        }
                    }),
            };
            (sid, found.read_cgroup)
        }
    };
    if let Err(why) = &sid {
        log(why);
    }
    // Audit records name the process (the kernel's task_tgid_nr) and the thread's comm.
    let who = sid.map(|sid| Task::new(info.tgid, &info.comm, callers.cred(sid)));
    Computed {
        caller: Arc::new(Caller { who }),
        tgid: Some(info.tgid),
        cgroup: read_cgroup.then_some(facts.cgroup),
    }
}

fn exe_shown(info: &ProcInfo) -> String {
    match (info.info.exe, &info.no_exe) {
        (Some(id), _) => format!("dev {} ino {}", id.dev, id.ino),
        (None, Some(why)) => format!("none: {why}"),
        (None, None) => "none".into(),
    }
}

/// The SID a process of `sid` gets by executing the caller's executable, labelled by
/// file_contexts for its path (security_transition_sid for class process, as the kernel's
/// selinux_bprm_creds_for_exec; no rule keeps `sid`). The path is the one /proc/TID/exe
/// names, used only when it reaches the very file the caller runs ([`subjects::exe_path`]):
/// otherwise the caller is refused.
fn exec_transition(
    labels: &Labels,
    server: &SecurityServer,
    sid: Sid,
    tid: u32,
    info: &ProcInfo,
) -> std::result::Result<Sid, String> {
    let id = info.info.exe.ok_or_else(|| {
        info.no_exe
            .clone()
            .unwrap_or_else(|| "its executable cannot be read".into())
    })?;
    let exe = subjects::exe_path(tid, id)?;
    let fc = labels
        .file_contexts
        .as_ref()
        .ok_or("a transition rule needs --file-contexts")?;
    let ctx = fc
        .context(exe.as_bytes(), seaccess_label::FileKind::File)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("{exe} has no file context"))?;
    let exe_sid = server
        .context_to_sid(ctx)
        .map_err(|e| format!("{exe}: {e}"))?;
    let g = server.snapshot();
    let class = g.class("process").map_err(|e| e.to_string())?;
    g.compute_create(sid, exe_sid, class, None)
        .map_err(|e| e.to_string())
}

/// Says on standard error, once at start, what an `exe=` or `transition` rule cannot stop:
/// where unprivileged users may create user namespaces, a process can have a child in a new
/// one (sharing its memory) rename the executable both show, with prctl(PR_SET_MM_MAP), to
/// any program it may read and execute.
pub fn warn_forgeable(labels: &Labels, log: &dyn Fn(&str)) {
    let reads_exe = labels.reads_exe;
    let userns = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1);
    if reads_exe && userns > 0 {
        log(&format!(
            "warning: exe= and transition rules name a program its process can rename: user.max_user_namespaces is {userns}, so any user may give its process the \
             executable of a program it can read (prctl PR_SET_MM_MAP from a user namespace); make such programs unreadable to others (mode 0711) or set \
             user.max_user_namespaces=0"
        ));
    }
}
