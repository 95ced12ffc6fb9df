//! A task's SELinux attributes as contexts: reading them (/proc/PID/attr/*, getcon(3),
//! lsm_get_self_attr(2)) and setting one's own (setexeccon(3), setfscreatecon(3),
//! setkeycreatecon(3), setsockcreatecon(3), setcon(3), lsm_set_self_attr(2)), as the kernel's
//! selinux_lsm_getattr and selinux_lsm_setattr.
//!
//! Setting an attribute only records it in a new credential, committed at once; the next
//! operation it names is checked when it happens: exec ([`ObjectManager::bprm_creds_for_exec`],
//! with the exec SID), file creation ([`ObjectManager::determine_inode_label`], with the
//! fscreate SID), socket creation ([`ObjectManager::socket_create`], with the sockcreate SID) and
//! key creation (with [`crate::Cred::keycreate_sid`]). Only setcon changes the task's SID here.

use seaccess_types::Sid;

use crate::audit::{untrusted, AuditData};
use crate::classes::{capability2, key, process, Class};
use crate::counters::Hook;
use crate::cred::{Task, TaskRef};
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

/// CAP_MAC_ADMIN's number.
const CAP_MAC_ADMIN: u32 = 32 + capability2::MAC_ADMIN.trailing_zeros();

/// A task attribute: the kernel's LSM_ATTR_* values, and the files of /proc/PID/attr/.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum ProcAttr {
    /// The task's SID (`current`; setcon).
    Current,
    /// The SID the next exec asks for (`exec`; setexeccon).
    Exec,
    /// The SID new files are created with (`fscreate`; setfscreatecon).
    FsCreate,
    /// The SID new keys are created with (`keycreate`; setkeycreatecon).
    KeyCreate,
    /// The SID before the last exec (`prev`; read only).
    Prev,
    /// The SID new sockets are created with (`sockcreate`; setsockcreatecon).
    SockCreate,
}

impl ProcAttr {
    /// Every attribute, in LSM_ATTR_* order.
    pub const ALL: [ProcAttr; 6] = [
        ProcAttr::Current,
        ProcAttr::Exec,
        ProcAttr::FsCreate,
        ProcAttr::KeyCreate,
        ProcAttr::Prev,
        ProcAttr::SockCreate,
    ];

    /// The attribute of a /proc/PID/attr/ file name (the kernel's lsm_name_to_attr).
    pub fn from_name(name: &str) -> Option<ProcAttr> {
        ProcAttr::ALL.into_iter().find(|a| a.name() == name)
    }

    /// The attribute of an LSM_ATTR_* number (include/uapi/linux/lsm.h: 100 current, 101
    /// exec, 102 fscreate, 103 keycreate, 104 prev, 105 sockcreate).
    pub fn from_lsm_attr(n: u32) -> Option<ProcAttr> {
        ProcAttr::ALL.into_iter().find(|a| a.lsm_attr() == n)
    }

    /// The /proc/PID/attr/ file name.
    pub fn name(self) -> &'static str {
        match self {
            ProcAttr::Current => "current",
            ProcAttr::Exec => "exec",
            ProcAttr::FsCreate => "fscreate",
            ProcAttr::KeyCreate => "keycreate",
            ProcAttr::Prev => "prev",
            ProcAttr::SockCreate => "sockcreate",
        }
    }

    /// The LSM_ATTR_* number.
    pub fn lsm_attr(self) -> u32 {
        match self {
            ProcAttr::Current => 100,
            ProcAttr::Exec => 101,
            ProcAttr::FsCreate => 102,
            ProcAttr::KeyCreate => 103,
            ProcAttr::Prev => 104,
            ProcAttr::SockCreate => 105,
        }
    }
}

/// What the kernel reads from the task itself when it sets an attribute, and a caller has to
/// say.
#[derive(Clone, Debug, Default)]
pub struct SetAttrOpts {
    /// The process has other threads (!current_is_single_threaded): setcon is then allowed
    /// only to a type the current one bounds (security_bounded_transition).
    pub multithreaded: bool,
    /// The task's tracer, if it is traced (ptrace_parent): setcon also needs the tracer's
    /// `process {ptrace}` to the new SID.
    pub tracer: Option<TaskRef>,
    /// The task has CAP_MAC_ADMIN in the initial user namespace (the capability check the
    /// kernel's has_cap_mac_admin makes before SELinux's): asked only for a fscreate context
    /// the policy does not define.
    pub cap_mac_admin: bool,
}

impl ObjectManager {
    /// Reads attribute `name` (a /proc/PID/attr/ file name: current, prev, exec, fscreate,
    /// keycreate, sockcreate) of `target` (selinux_getprocattr): for another task than the
    /// reader `process {getattr}` to the target's SID first. The context, or None when the
    /// attribute is not set. An unknown name is EINVAL. The attributes are read from the
    /// target's objective credential, as the kernel reads them (an override does not show).
    pub fn getprocattr(&self, task: &Task, target: &TaskRef, name: &str) -> Result<Option<String>> {
        let attr = ProcAttr::from_name(name)
            .ok_or_else(|| ObjmgrError::Invalid(format!("no task attribute {name:?}")))?;
        self.lsm_getattr(Hook::Getprocattr, task, target, attr)
    }

    /// lsm_get_self_attr(2) of attribute number `attr` (LSM_ATTR_*) (selinux_getselfattr):
    /// the task's own attribute, with no check. An unknown number is EOPNOTSUPP.
    pub fn getselfattr(&self, task: &Task, attr: u32) -> Result<Option<String>> {
        let a = ProcAttr::from_lsm_attr(attr)
            .ok_or_else(|| ObjmgrError::NotSupported(format!("task attribute number {attr}")))?;
        self.lsm_getattr(Hook::Getselfattr, task, task.handle(), a)
    }

    /// selinux_lsm_getattr.
    fn lsm_getattr(
        &self,
        hook: Hook,
        task: &Task,
        target: &TaskRef,
        attr: ProcAttr,
    ) -> Result<Option<String>> {
        let cred = target.objective();
        if !target.same_task(task.handle()) {
            self.check(
                hook,
                task,
                cred.sid(),
                Class::PROCESS,
                process::GETATTR,
                &AuditData::None,
            )?;
        }
        let sid = match attr {
            ProcAttr::Current => Some(cred.sid()),
            ProcAttr::Prev => Some(cred.osid()),
            ProcAttr::Exec => cred.exec_sid(),
            ProcAttr::FsCreate => cred.create_sid(),
            ProcAttr::KeyCreate => cred.keycreate_sid(),
            ProcAttr::SockCreate => cred.sockcreate_sid(),
        };
        match sid.filter(|s| *s != Sid::NULL) {
            None => Ok(None),
            Some(s) => self.context_of(s).map(Some),
        }
    }

    /// Writes attribute `name` of `task` itself (selinux_setprocattr): a /proc/self/attr/
    /// write. `process {setexec}`, `{setfscreate}`, `{setkeycreate}`, `{setsockcreate}` or
    /// `{setcurrent}` from the task to itself; then `value` (a context; a trailing newline is
    /// dropped; empty clears the attribute) must be one the policy defines (else EINVAL, and
    /// for fscreate the kernel's `op=fscreate invalid_context=` record unless the task has
    /// CAP_MAC_ADMIN and `capability2 {mac_admin}`); a keycreate SID also needs `key
    /// {create}` to it; setcon (`current`) needs a value, `process {dyntransition}` from the
    /// old SID to the new (after the bounds check when multithreaded: EPERM and the kernel's
    /// `op=security_bounded_transition` record when the new type is not bounded by the old)
    /// and the tracer's `process {ptrace}` to the new SID. Then the new credential is
    /// committed. `prev` cannot be written (EOPNOTSUPP), an unknown name is EINVAL. Writing
    /// another task's attributes is refused before this, by the caller (EACCES, as procfs).
    pub fn setprocattr(
        &self,
        task: &mut Task,
        name: &str,
        value: &str,
        opts: &SetAttrOpts,
    ) -> Result<()> {
        let attr = ProcAttr::from_name(name)
            .ok_or_else(|| ObjmgrError::Invalid(format!("no task attribute {name:?}")))?;
        self.lsm_setattr(Hook::Setprocattr, task, attr, value, opts)
    }

    /// lsm_set_self_attr(2) of attribute number `attr` (LSM_ATTR_*) (selinux_setselfattr):
    /// as [`ObjectManager::setprocattr`]; an unknown number is EOPNOTSUPP.
    pub fn setselfattr(
        &self,
        task: &mut Task,
        attr: u32,
        value: &str,
        opts: &SetAttrOpts,
    ) -> Result<()> {
        let a = ProcAttr::from_lsm_attr(attr)
            .ok_or_else(|| ObjmgrError::NotSupported(format!("task attribute number {attr}")))?;
        self.lsm_setattr(Hook::Setselfattr, task, a, value, opts)
    }

    /// selinux_lsm_setattr.
    fn lsm_setattr(
        &self,
        hook: Hook,
        task: &mut Task,
        attr: ProcAttr,
        value: &str,
        opts: &SetAttrOpts,
    ) -> Result<()> {
        // The kernel would BUG committing over an override; refuse before asking anything.
        if task.overridden() {
            return Err(ObjmgrError::Invalid(format!(
                "setting {} while the credentials are overridden",
                attr.name()
            )));
        }
        let mysid = task.sid();
        let perm = match attr {
            ProcAttr::Exec => process::SETEXEC,
            ProcAttr::FsCreate => process::SETFSCREATE,
            ProcAttr::KeyCreate => process::SETKEYCREATE,
            ProcAttr::SockCreate => process::SETSOCKCREATE,
            ProcAttr::Current => process::SETCURRENT,
            ProcAttr::Prev => {
                return Err(ObjmgrError::NotSupported(
                    "the prev attribute cannot be set".into(),
                ))
            }
        };
        self.check(hook, task, mysid, Class::PROCESS, perm, &AuditData::None)?;
        let sid = self.attr_sid(task, attr, value, opts)?;
        let mut new = task.cred().prepare();
        match attr {
            ProcAttr::Exec => new.exec_sid = sid,
            ProcAttr::FsCreate => new.create_sid = sid,
            ProcAttr::SockCreate => new.sockcreate_sid = sid,
            ProcAttr::KeyCreate => {
                if let Some(s) = sid {
                    self.check(hook, task, s, Class::KEY, key::CREATE, &AuditData::None)?;
                }
                new.keycreate_sid = sid;
            }
            ProcAttr::Current => {
                let Some(s) = sid else {
                    return Err(ObjmgrError::Invalid("setcon to an empty context".into()));
                };
                let old = new.sid;
                if opts.multithreaded && !self.bounded_transition(old, s)? {
                    return Err(ObjmgrError::NotPermitted(format!("a multithreaded setcon from SID {old} to SID {s}, which its type does not bound")));
                }
                self.check_sid(
                    hook,
                    task,
                    old,
                    s,
                    Class::PROCESS,
                    process::DYNTRANSITION,
                    &AuditData::None,
                )?;
                if let Some(tracer) = &opts.tracer {
                    self.check_sid(
                        hook,
                        task,
                        tracer.sid(),
                        s,
                        Class::PROCESS,
                        process::PTRACE,
                        &AuditData::None,
                    )?;
                }
                new.sid = s;
            }
            ProcAttr::Prev => {
                return Err(ObjmgrError::NotSupported(
                    "the prev attribute cannot be set".into(),
                ))
            }
        }
        task.commit_creds(new.build())
    }

    /// The SID a written attribute value names, None for an empty value (which clears it).
    fn attr_sid(
        &self,
        task: &Task,
        attr: ProcAttr,
        value: &str,
        opts: &SetAttrOpts,
    ) -> Result<Option<Sid>> {
        if value.is_empty() || value.starts_with(['\0', '\n']) {
            return Ok(None);
        }
        let value = value.strip_suffix('\n').unwrap_or(value);
        // The kernel copies the value with a NUL after it and parses it as a C string.
        let ctx = value.split('\0').next().unwrap_or(value);
        let err = match self.server().context_to_sid(ctx) {
            Ok(s) => return Ok(Some(s)),
            Err(e) => ObjmgrError::InvalidContext {
                context: ctx.to_string(),
                why: e.to_string(),
            },
        };
        if attr != ProcAttr::FsCreate {
            return Err(err);
        }
        // has_cap_mac_admin(true): the capability, then `capability2 {mac_admin}`, audited.
        if opts.cap_mac_admin && self.capable(task, CAP_MAC_ADMIN).is_ok() {
            // Kept unmapped, as security_context_to_sid_force keeps it: decided as unlabeled
            // until a policy defines it.
            return self
                .server()
                .context_to_sid_force(ctx)
                .map(Some)
                .map_err(|e| ObjmgrError::InvalidContext {
                    context: ctx.to_string(),
                    why: e.to_string(),
                });
        }
        // The AUDIT_SELINUX_ERR record, without one trailing NUL.
        let mut line = String::from("op=fscreate");
        untrusted(
            &mut line,
            "invalid_context",
            value.strip_suffix('\0').unwrap_or(value),
        );
        self.avc().emit_audit_line(&line);
        Err(err)
    }
}
