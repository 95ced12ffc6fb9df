//! The one way a hook asks the cache: our class and permissions translated with the class map
//! of the policy that answers, the check, and its audit record (the kernel's avc_has_perm with
//! the class mapping in between).

use seaccess_avc::{AvcRecord, Verdict};
use seaccess_types::{AccessVector, AvDecision, ClassId, Seqno, Sid};

use crate::audit::AuditData;
use crate::blobs::InodeSec;
use crate::classes::Class;
use crate::counters::Hook;
use crate::cred::Task;
use crate::error::{ObjmgrError, Result};
use crate::grant::{compact, InodeGrant, Seen};
use crate::ObjectManager;

mod unknown;

/// How many times a check translates again when the policy changes under it before it gives
/// up (and refuses: an enforcing path fails closed). Each retry means another policy change
/// was published during the check.
const RETRIES: usize = 8;

/// What [`ObjectManager::settle`] came to.
enum Settled {
    /// A decision of the policy whose class map translated the request.
    Decided(Checked),
    /// The answering policy does not define the class (see [`ObjectManager::unknown_class`]).
    UnknownClass(Checked),
    /// The policy changed [`RETRIES`] times under the check.
    Unsettled,
}

/// The refusal of a check the policy never held still for (an enforcing path fails closed).
fn unsettled(what: String) -> ObjmgrError {
    ObjmgrError::Server(seaccess_types::ServerError::Other(format!(
        "the policy changed {RETRIES} times during one {what}"
    )))
}

/// The state a fast path notes before a check (see [`ObjectManager::may_remember`]).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Window {
    switches: u64,
    enforcing: bool,
}

/// What an extended-permission check decides by: an ioctl command or a netlink message type
/// (the kernel's AVC_EXT_IOCTL and AVC_EXT_NLMSG; the high byte is the driver).
#[derive(Copy, Clone, Debug)]
pub(crate) enum Xperm {
    Ioctl(u16),
    Nlmsg(u16),
}

impl Xperm {
    fn what(self) -> &'static str {
        match self {
            Xperm::Ioctl(_) => "ioctl",
            Xperm::Nlmsg(_) => "netlink message",
        }
    }
}

/// The outcome of one check.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The decision checked against (policy numbering), with its policy's seqno.
    pub decision: AvDecision,
    /// The requested permissions the decision does not allow (policy bits).
    pub denied: AccessVector,
    /// The requested permissions the policy does not define and does not allow (our bits).
    pub unknown: u32,
    /// Whether the denial stands (enforcing mode, no permissive domain).
    pub enforced: bool,
    /// What the audit record lists of the permissions the policy defines (policy bits).
    pub audited: AccessVector,
    /// What the audit record lists of those in `unknown` (our bits): all of them, as the
    /// kernel's map_decision puts every permission the policy lacks in auditdeny under
    /// handle_unknown deny (and avd_init every permission of a class it lacks), unless
    /// access(2)'s dontaudit of `audit_access` silences the record.
    pub audited_unknown: u32,
    /// The policy does not define the class.
    pub unknown_class: bool,
}

impl From<Verdict> for Checked {
    /// The cache's verdict on permissions the policy all defines, of a class it defines.
    #[inline(always)]
    fn from(v: Verdict) -> Checked {
        Checked {
            decision: v.decision,
            denied: v.denied,
            unknown: 0,
            enforced: v.enforced,
            audited: v.audited,
            audited_unknown: 0,
            unknown_class: false,
        }
    }
}

impl Checked {
    /// Whether the operation may go on.
    #[inline(always)]
    pub fn allowed(&self) -> bool {
        !self.enforced
    }

    /// Whether the check writes an audit record.
    #[inline(always)]
    pub fn audits(&self) -> bool {
        !self.audited.is_empty() || self.audited_unknown != 0
    }

    /// Whether everything asked was allowed by the policy itself, with nothing to audit: what a
    /// fast path may remember (never a grant made only because the mode is permissive).
    #[inline(always)]
    pub fn clean(&self) -> bool {
        self.denied.is_empty() && self.unknown == 0 && !self.audits() && !self.unknown_class
    }
}

impl ObjectManager {
    /// Checks that `task` (its subjective SID) may do `perms` (our bits of `class`) to `tsid`,
    /// audited as the decision says with `ad`. Ok with the verdict when the operation may go
    /// on (allowed, or denied but not enforced).
    #[inline]
    pub fn check(
        &self,
        hook: Hook,
        task: &Task,
        tsid: Sid,
        class: Class,
        perms: u32,
        ad: &AuditData,
    ) -> Result<Checked> {
        self.check_sid(hook, task, task.sid(), tsid, class, perms, ad)
    }

    /// [`ObjectManager::check`] with a source SID other than the task's (a new inode's SID for
    /// `filesystem associate`, a socket's for `name_bind`); the task is named in the record.
    #[allow(clippy::too_many_arguments)]
    pub fn check_sid(
        &self,
        hook: Hook,
        task: &Task,
        ssid: Sid,
        tsid: Sid,
        class: Class,
        perms: u32,
        ad: &AuditData,
    ) -> Result<Checked> {
        let v = self.check_noaudit(hook, ssid, tsid, class, perms)?;
        self.audit(task, ssid, tsid, class, &v, ad);
        self.outcome(class, &v)
    }

    /// The check without its audit record (the kernel's avc_has_perm_noaudit): the verdict
    /// whether allowed or not, for a hook that audits later or not at all.
    // Inlined into each hook, as `Avc::check_at` is into it, so that the verdict is not passed
    // through memory on the way out: with both, a socket's check went from 282 to 223
    // instructions (bench hit-path), before the socket hooks asked `passes_quietly` first.
    #[inline(always)]
    pub fn check_noaudit(
        &self,
        hook: Hook,
        ssid: Sid,
        tsid: Sid,
        class: Class,
        perms: u32,
    ) -> Result<Checked> {
        // The common case: our bits are the policy's, and the cache answers from the policy
        // the quick translation was noted for. One load, no class map.
        if let Some((pclass, at)) = self.maps.quick(class) {
            self.counters.bump(hook);
            if let Ok(v) = self
                .avc
                .check_at(ssid, tsid, pclass, AccessVector(perms), at)?
            {
                return Ok(Checked::from(v));
            }
        }
        self.check_mapped(hook, ssid, tsid, class, perms)
    }

    /// Whether the check passes silently on a hit of the quick translation's policy (see
    /// [`seaccess_avc::Avc::granted_quietly`]): then the hook goes on and writes nothing, and
    /// the lookup is counted for `hook`. False asks the caller to check the full way
    /// ([`ObjectManager::check_noaudit`]), which counts it then; a false answer decides nothing.
    #[inline(always)]
    pub(crate) fn passes_quietly(
        &self,
        hook: Hook,
        ssid: Sid,
        tsid: Sid,
        class: Class,
        perms: u32,
    ) -> bool {
        let Some((pclass, at)) = self.maps.quick(class) else {
            return false;
        };
        if !self
            .avc
            .granted_quietly(ssid, tsid, pclass, AccessVector(perms), at)
        {
            return false;
        }
        self.counters.bump(hook);
        true
    }

    /// The check through the class maps, for a class translated otherwise than by copying or
    /// a decision of a policy the quick translation is not for.
    #[cold]
    fn check_mapped(
        &self,
        hook: Hook,
        ssid: Sid,
        tsid: Sid,
        class: Class,
        perms: u32,
    ) -> Result<Checked> {
        let settled = self.settle(hook, (ssid, tsid), class, perms, |pclass, av, at| {
            self.avc
                .check_at(ssid, tsid, pclass, av, at)
                .map_err(Into::into)
        })?;
        match settled {
            Settled::Decided(c) | Settled::UnknownClass(c) => Ok(c),
            Settled::Unsettled => Err(unsettled(format!("{} check", class.name()))),
        }
    }

    /// The one-generation rule for a check through the class maps, written once for the plain
    /// and the extended-permission checks: translate with the map of a policy, accept only a
    /// decision of that same policy (`decide` answers `Err(seqno)` when the cache's policy is
    /// another), else translate again with the map of the policy that answered, at most
    /// [`RETRIES`] times. A class the policy lacks is decided for `ssid` on `tsid` by the
    /// same rule (see [`ObjectManager::unknown_class`]).
    fn settle(
        &self,
        hook: Hook,
        (ssid, tsid): (Sid, Sid),
        class: Class,
        perms: u32,
        decide: impl Fn(ClassId, AccessVector, Seqno) -> Result<std::result::Result<Verdict, Seqno>>,
    ) -> Result<Settled> {
        let mut map = self.maps.newest();
        for _ in 0..RETRIES {
            let t = map.translate(class, perms)?;
            let answered = match t.class {
                None => match self.unknown_class(&map, ssid, tsid, perms)? {
                    Ok(c) => return Ok(Settled::UnknownClass(c)),
                    Err(at) => at,
                },
                Some(pclass) => {
                    self.counters.bump(hook);
                    match decide(pclass, t.perms, map.seqno())? {
                        Ok(v) => {
                            self.maps.note_quick(class, &map);
                            return Ok(Settled::Decided(self.mapped_verdict(&map, &t, v)));
                        }
                        Err(at) => at,
                    }
                }
            };
            map = match self.maps.for_seqno(answered) {
                Some(m) => m,
                None => self.maps.catch_up(&*self.server),
            };
        }
        Ok(Settled::Unsettled)
    }

    /// [`ObjectManager::check`] of `perms` on `inode` (its SID and class), remembering a clean
    /// grant in the inode for the task's credential when the "nothing beyond POSIX" fast path
    /// is on (see [`crate::grant`]). The caller has found no remembered grant.
    #[inline(never)]
    pub(crate) fn check_inode(
        &self,
        hook: Hook,
        task: &Task,
        inode: &InodeSec,
        perms: u32,
        ad: &AuditData,
    ) -> Result<Checked> {
        let v = self.check_inode_noaudit(hook, task, inode, perms)?;
        self.audit(task, task.sid(), v.1, inode.class(), &v.0, ad);
        self.outcome(inode.class(), &v.0)
    }

    /// [`ObjectManager::check_inode`] without the audit record: the verdict and the inode SID
    /// it was made for.
    pub(crate) fn check_inode_noaudit(
        &self,
        hook: Hook,
        task: &Task,
        inode: &InodeSec,
        perms: u32,
    ) -> Result<(Checked, Sid)> {
        // The relabels are seen before the SID is read, so that a relabel ending after the
        // read makes the record fail (InodeGrant::record), however many come.
        let seen = inode.grant.seen();
        let isid = inode.sid();
        let need = if self.fast.posix() {
            compact(perms)
        } else {
            None
        };
        let v = self.check_remembering(
            hook,
            task,
            (isid, inode.class()),
            perms,
            &inode.grant,
            seen,
            need,
        )?;
        Ok((v, isid))
    }

    /// The check of `perms` on `target` (its SID and class) without its audit record; its grant
    /// remembered in `grant` for the task's credential (`need`: `perms` compacted, None when
    /// nothing is to be remembered) if [`ObjectManager::may_remember`] allows and the decision
    /// is of the policy the credential's epoch id is for. `seen` was taken from `grant` before
    /// the target's SID was read. What an inode's and a socket's grants are recorded by.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check_remembering(
        &self,
        hook: Hook,
        task: &Task,
        (tsid, class): (Sid, Class),
        perms: u32,
        grant: &InodeGrant,
        seen: Seen,
        need: Option<u16>,
    ) -> Result<Checked> {
        let w = self.window();
        let v = self.check_noaudit(hook, task.sid(), tsid, class, perms)?;
        if let Some(c) = need {
            if self.may_remember(w, &v) {
                let (id, seqno) = self.epoch(task.cred());
                if seqno == v.decision.seqno {
                    grant.record(seen, id, c);
                }
            }
        }
        Ok(v)
    }

    /// The ioctl check (the kernel's ioctl_has_perm through avc_has_extended_perms): `perms`
    /// (our `ioctl` bit) of `class` for command `cmd`, decided with the policy's allowxperm
    /// rules for the command's driver when it has any, and audited with `ioctlcmd=`.
    #[allow(clippy::too_many_arguments)]
    pub fn check_ioctl(
        &self,
        hook: Hook,
        task: &Task,
        tsid: Sid,
        class: Class,
        perms: u32,
        cmd: u16,
        ad: &AuditData,
    ) -> Result<Checked> {
        self.check_xperm(hook, task, tsid, class, perms, Xperm::Ioctl(cmd), ad)
    }

    /// A check decided with extended permissions (avc_has_extended_perms): `perms` of `class`
    /// for the ioctl command or netlink message type `x`, audited with `ad` (and `ioctlcmd=`
    /// for an ioctl). A class the policy lacks has no extended permissions to decide by and
    /// is answered as any check of it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn check_xperm(
        &self,
        hook: Hook,
        task: &Task,
        tsid: Sid,
        class: Class,
        perms: u32,
        x: Xperm,
        ad: &AuditData,
    ) -> Result<Checked> {
        let ssid = task.sid();
        // The quick translation first (one load, no class map), as check_noaudit takes it.
        if let Some((pclass, at)) = self.maps.quick(class) {
            self.counters.bump(hook);
            if let Ok(v) = self.xperm_at(x, ssid, tsid, pclass, AccessVector(perms), at)? {
                let c = Checked::from(v);
                return self.xperm_outcome(task, tsid, class, &c, x, ad);
            }
        }
        self.check_xperm_mapped(hook, task, tsid, class, perms, x, ad)
    }

    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn check_xperm_mapped(
        &self,
        hook: Hook,
        task: &Task,
        tsid: Sid,
        class: Class,
        perms: u32,
        x: Xperm,
        ad: &AuditData,
    ) -> Result<Checked> {
        let ssid = task.sid();
        let settled = self.settle(hook, (ssid, tsid), class, perms, |pclass, av, at| {
            self.xperm_at(x, ssid, tsid, pclass, av, at)
        })?;
        match settled {
            Settled::Decided(c) => self.xperm_outcome(task, tsid, class, &c, x, ad),
            Settled::UnknownClass(v) => {
                self.audit(task, ssid, tsid, class, &v, ad);
                self.outcome(class, &v)
            }
            Settled::Unsettled => Err(unsettled(format!("{} {} check", class.name(), x.what()))),
        }
    }

    /// The cache's extended-permission check of the kind `x` is, made only if it answers from
    /// policy `at`.
    fn xperm_at(
        &self,
        x: Xperm,
        ssid: Sid,
        tsid: Sid,
        pclass: ClassId,
        perms: AccessVector,
        at: Seqno,
    ) -> Result<std::result::Result<Verdict, Seqno>> {
        Ok(match x {
            Xperm::Ioctl(cmd) => self
                .avc
                .check_ioctl_at(ssid, tsid, pclass, perms, cmd, at)?,
            Xperm::Nlmsg(ty) => self.avc.check_nlmsg_at(ssid, tsid, pclass, perms, ty, at)?,
        })
    }

    /// An extended-permission verdict's record, if it asks for one, and its outcome.
    fn xperm_outcome(
        &self,
        task: &Task,
        tsid: Sid,
        class: Class,
        c: &Checked,
        x: Xperm,
        ad: &AuditData,
    ) -> Result<Checked> {
        match x {
            Xperm::Ioctl(cmd) if c.audits() => {
                // As the cache's audit_ioctl writes it, named with this decision's map.
                let aux = format!("{} ioctlcmd={cmd:#x}", ad.render(task.pid(), task.comm()));
                self.audit_text(task.sid(), tsid, class, c, &aux);
            }
            Xperm::Ioctl(_) => {}
            Xperm::Nlmsg(_) => self.audit(task, task.sid(), tsid, class, c, ad),
        }
        self.outcome(class, c)
    }

    /// What a fast path notes before a check whose grant it may remember.
    #[inline(always)]
    pub(crate) fn window(&self) -> Window {
        let switches = self.fast.switches();
        Window {
            switches,
            enforcing: self.avc.enforcing(),
        }
    }

    /// Whether a fast path may remember the grant `v` made in window `w`: granted by the
    /// policy itself with nothing to audit, not a permissive domain's, and decided in enforcing
    /// mode with no enforcing switch while the check ran (a decision read in permissive mode
    /// may hold a grant made only because the mode was permissive).
    #[inline(always)]
    pub(crate) fn may_remember(&self, w: Window, v: &Checked) -> bool {
        v.clean()
            && !v.decision.flags.permissive()
            && w.enforcing
            && self.avc.enforcing()
            && self.fast.switches() == w.switches
    }

    /// Whether an open's grant `v`, checked in window `w`, may be kept for the revalidation
    /// skip: what [`ObjectManager::may_remember`] asks but an audit record, since the kernel's
    /// selinux_file_permission skips a read or write of an auditallow'ed open too. Never a
    /// grant made only because the mode or the domain is permissive.
    #[inline(always)]
    pub(crate) fn may_keep_open(&self, w: Window, v: &Checked) -> bool {
        v.denied.is_empty()
            && v.unknown == 0
            && !v.unknown_class
            && !v.decision.flags.permissive()
            && w.enforcing
            && self.avc.enforcing()
            && self.fast.switches() == w.switches
    }

    /// The policy's number for our `class`, from the map of the policy the server answers
    /// from now, with `f` run on it; again if the policy changed meanwhile (for the labeling
    /// calls, whose class numbers must be the answering policy's).
    pub(crate) fn with_policy_class<T>(
        &self,
        class: Class,
        f: impl Fn(seaccess_types::ClassId) -> Result<T>,
    ) -> Result<T> {
        for _ in 0..RETRIES {
            let seqno = self.server.seqno();
            let map = match self.maps.for_seqno(seqno) {
                Some(m) => m,
                None => self.maps.catch_up(&*self.server),
            };
            let Some(pclass) = map.translate(class, 0)?.class else {
                return Err(ObjmgrError::Rejected(format!(
                    "the policy does not define class {}",
                    class.name()
                )));
            };
            let r = f(pclass)?;
            if self.server.seqno() == seqno {
                return Ok(r);
            }
        }
        Err(unsettled(format!("labeling of a {}", class.name())))
    }

    /// Writes the verdict's audit record, if it asks for one, to the cache's audit callback.
    pub fn audit(
        &self,
        task: &Task,
        ssid: Sid,
        tsid: Sid,
        class: Class,
        v: &Checked,
        ad: &AuditData,
    ) {
        if !v.audits() {
            return;
        }
        self.audit_text(ssid, tsid, class, v, &ad.render(task.pid(), task.comm()));
    }

    /// [`ObjectManager::audit`] with the audit data already rendered (`aux`).
    pub(crate) fn audit_text(&self, ssid: Sid, tsid: Sid, class: Class, v: &Checked, aux: &str) {
        if !v.audits() {
            return;
        }
        let denied = !v.denied.is_empty() || v.unknown != 0;
        let ours = class.def().map_or(&[][..], |d| d.perms);
        if v.unknown_class {
            // No policy class to name the permissions by: ours name them.
            let perms = AccessVector(v.audited_unknown)
                .bits()
                .map(|b| ours.get(b as usize).copied().unwrap_or("?"));
            let names = self.server.names();
            let line = AvcRecord {
                denied: true,
                permissive: !v.enforced,
                aux: Some(aux),
                names: Some(&*names),
                ssid,
                tsid,
                tclass: class.name(),
            }
            .render(perms, 0);
            self.avc.emit_audit_line(&line);
            return;
        }
        let Some(map) = self.maps.for_seqno(v.decision.seqno) else {
            return;
        };
        let Some(pclass) = map.translate(class, 0).ok().and_then(|t| t.class) else {
            return;
        };
        // The cache names the class and permissions with the policy the server has now; that
        // is the decision's only if no reload came between (seqnos only grow).
        let at = self.server.seqno();
        if at == v.decision.seqno && v.audited_unknown == 0 {
            let line = self.avc.audit_record(
                ssid,
                tsid,
                pclass,
                v.decision.seqno,
                v.audited,
                denied,
                !v.enforced,
                Some(aux),
            );
            if self.server.seqno() == at {
                self.avc.emit_audit_line(&line);
                return;
            }
        }
        // Otherwise our names for the decision's bits, in that policy's bit order; with
        // permissions the policy lacks, all in our bit order, which is the kernel's (its
        // avc_dump_av walks the kernel's bits).
        let mut named: Vec<(u32, &str)> = Vec::new();
        for (i, name) in ours.iter().enumerate() {
            let bit = map.translate(class, 1 << i).map_or(0, |t| t.perms.0);
            if bit != 0 && v.audited.0 & bit != 0 {
                named.push((bit, name));
            } else if v.audited_unknown & (1 << i) != 0 {
                named.push((0, name));
            }
        }
        if v.audited_unknown == 0 {
            named.sort_unstable();
        }
        let names = self.server.names();
        let line = AvcRecord {
            denied,
            permissive: !v.enforced,
            aux: Some(aux),
            names: Some(&*names),
            ssid,
            tsid,
            tclass: class.name(),
        }
        .render(named.iter().map(|(_, n)| n), 0);
        self.avc.emit_audit_line(&line);
    }

    /// Ok if the operation goes on.
    #[inline(always)]
    pub(crate) fn outcome(&self, class: Class, v: &Checked) -> Result<Checked> {
        if v.allowed() {
            Ok(*v)
        } else {
            Err(self.denied_error(class, v))
        }
    }

    /// The error of an enforced denial, naming the class and the denied permissions as the
    /// audit record does (in the policy's bit order, then those the policy does not define).
    #[cold]
    #[inline(never)]
    fn denied_error(&self, class: Class, v: &Checked) -> ObjmgrError {
        let map = if v.unknown_class {
            None
        } else {
            self.maps.for_seqno(v.decision.seqno)
        };
        let mut named: Vec<(u64, &str)> = Vec::new();
        for (i, name) in class.def().map_or(&[][..], |d| d.perms).iter().enumerate() {
            let ours = 1u32 << i;
            if v.unknown & ours != 0 {
                named.push((u64::from(ours) << 32, name));
                continue;
            }
            let bit = map
                .as_ref()
                .and_then(|m| m.translate(class, ours).ok())
                .map_or(0, |t| t.perms.0);
            if bit != 0 && v.denied.0 & bit != 0 {
                named.push((u64::from(bit), name));
            }
        }
        named.sort_unstable();
        let perms: String = named.iter().map(|(_, n)| format!(" {n}")).collect();
        ObjmgrError::Denied {
            what: format!("{} {{{perms} }}", class.name()),
        }
    }
}
