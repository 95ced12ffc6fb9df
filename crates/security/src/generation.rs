//! One immutable policy generation: its compiled policy, SID table and boolean state, and the
//! translations between contexts, SIDs, classes and permissions (the kernel's
//! security_context_to_sid, security_sid_to_context and the class/permission string maps).

use std::sync::Arc;

use seaccess_policy::{CondExpr, Context, PolicyTables};
use seaccess_types::{AccessVector, ClassId, Seqno, Sid};

use crate::compiled::Compiled;
use crate::cond::enabled_branches;
use crate::context::{check_valid, context_to_string, parse_context};
use crate::error::{Result, SecurityError};
use crate::sidtab::{Contexts, SidTable};

/// One policy generation: the compiled policy, its SID table, the boolean values and the
/// conditional branches they enable, and the generation's seqno. Immutable once published.
pub struct Generation {
    pub(crate) c: Arc<Compiled>,
    pub(crate) sids: Arc<SidTable>,
    pub(crate) ctx: Arc<Contexts>,
    pub(crate) bools: Vec<bool>,
    /// Whether each conditional branch applies (see `cond::enabled_branches`).
    pub(crate) enabled: Vec<bool>,
    pub(crate) seqno: Seqno,
}

impl Generation {
    pub(crate) fn new(
        c: Arc<Compiled>,
        sids: Arc<SidTable>,
        ctx: Arc<Contexts>,
        bools: Vec<bool>,
        seqno: Seqno,
    ) -> Generation {
        let enabled = enabled_branches(&c.cond_exprs, &bools);
        Generation {
            c,
            sids,
            ctx,
            bools,
            enabled,
            seqno,
        }
    }

    /// This generation again, sharing its tables (the booleans copied): what its
    /// [`seaccess_types::AccessServer::names`] hands out before it is published in an `Arc`.
    pub(crate) fn share(&self) -> Generation {
        Generation {
            c: self.c.clone(),
            sids: self.sids.clone(),
            ctx: self.ctx.clone(),
            bools: self.bools.clone(),
            enabled: self.enabled.clone(),
            seqno: self.seqno,
        }
    }

    /// The policy's tables. Its rule tables are not among them: the server has taken them
    /// apart into its indexes (their sizes: [`Generation::rule_counts`]), and a generation has
    /// no way to hand out a rule table, emptied or not:
    ///
    /// ```compile_fail
    /// fn rules(g: &seaccess_security::Generation) -> usize { g.policy().avtab.len() }
    /// ```
    /// ```compile_fail
    /// fn rules(g: &seaccess_security::Generation) -> usize { g.policy().rules().avtab().len() }
    /// ```
    pub fn policy(&self) -> &PolicyTables {
        &self.c.policy
    }

    /// The boolean expression of each of the policy's conditionals, in file order.
    pub fn conditionals(&self) -> &[Box<[CondExpr]>] {
        &self.c.cond_exprs
    }

    pub fn seqno(&self) -> Seqno {
        self.seqno
    }

    /// How many rules the policy has: (unconditional, conditional).
    pub fn rule_counts(&self) -> (usize, usize) {
        self.c.rule_counts
    }

    pub fn sid_table(&self) -> &SidTable {
        &self.sids
    }

    pub fn parse_context(&self, s: &str) -> Result<Context> {
        parse_context(&self.c.policy, s)
    }

    pub fn context_to_sid(&self, s: &str) -> Result<Sid> {
        Ok(self.intern(self.parse_context(s)?))
    }

    /// The kernel's security_context_to_sid_force: the SID of `s` if this policy defines it,
    /// else a SID kept for the text as given (its trailing NUL removed), decided as the
    /// unlabeled initial SID under every policy that does not define it, and as the context
    /// itself under one that does (each policy parses a SID's text anew: see
    /// [`Generation::sid_context`]). Only a text that is not a context in any policy's syntax
    /// (empty, or without `user:role:type`) is refused, as the kernel refuses an empty one.
    pub fn context_to_sid_force(&self, s: &str) -> Result<Sid> {
        match self.parse_context(s) {
            Ok(c) => Ok(self.intern(c)),
            Err(e) => {
                let text = s.strip_suffix('\0').unwrap_or(s);
                if text.is_empty() || text.splitn(4, ':').count() < 3 || text.contains('\0') {
                    return Err(e);
                }
                Ok(self.sids.sid_of(text))
            }
        }
    }

    /// The text of a SID kept for a context this policy does not define (the kernel's
    /// security_sid_to_context_inval); None for every other SID. Asked only for audit records:
    /// a SID that maps to the unlabeled SID's context is the only candidate, and its text is
    /// parsed again to tell.
    pub fn sid_to_context_inval(&self, sid: Sid) -> Option<String> {
        if sid.0 == UNLABELED {
            return None;
        }
        let c = self.sid_context(sid).ok()?;
        if Some(c) != self.ctx.get(Sid(UNLABELED)) {
            return None;
        }
        let text = self.sids.text(sid)?;
        parse_context(&self.c.policy, &text)
            .is_err()
            .then(|| text.to_string())
    }

    pub fn context_struct_to_sid(&self, c: Context) -> Result<Sid> {
        self.check_context(&c)?;
        Ok(self.intern(c))
    }

    /// Refuses a context given from outside that is not valid in this generation's policy: one
    /// built by hand or parsed under another policy may hold values past the end of its tables.
    /// Contexts reached through SIDs were valid when stored and skip this.
    pub(crate) fn check_context(&self, c: &Context) -> Result<()> {
        if self.c.policy.context_is_valid(c) && c.range.is_some() == self.c.policy.mls {
            return Ok(());
        }
        check_valid(&self.c.policy, &self.context_string(c), c)
    }

    /// The SID of a valid context, remembering its parsed form for this policy: its initial
    /// SID if it has one under this policy, else its dynamic SID.
    pub(crate) fn intern(&self, c: Context) -> Sid {
        let text = context_to_string(&self.c.policy, &c);
        if let Some(sid) = self.ctx.initial_sid(&text) {
            return sid;
        }
        let sid = self.sids.sid_of(&text);
        if self.ctx.get(sid).is_none() {
            self.ctx.set(sid, c);
        }
        sid
    }

    /// The context a SID stands for under this policy. A SID first seen under an earlier
    /// policy is parsed anew; if its context is not valid any more, it is treated as the
    /// unlabeled initial SID's context, as the kernel does after a reload.
    pub fn sid_context(&self, sid: Sid) -> Result<&Context> {
        if let Some(c) = self.ctx.get(sid) {
            return Ok(c);
        }
        let text = self.sids.text(sid).ok_or(SecurityError::InvalidSid(sid))?;
        let c = match parse_context(&self.c.policy, &text) {
            Ok(c) => c,
            Err(_) => self
                .ctx
                .get(Sid(UNLABELED))
                .ok_or(SecurityError::InvalidSid(sid))?
                .clone(),
        };
        self.ctx.set(sid, c).ok_or(SecurityError::InvalidSid(sid))
    }

    /// Resolves every SID given so far under this generation's policy, as the kernel converts
    /// its SID table while loading a policy: the cost of a reload falls on the loader, not on
    /// the first access decisions after it.
    pub(crate) fn resolve_all_sids(&self) {
        for sid in self.sids.dynamic() {
            let _ = self.sid_context(sid);
        }
    }

    pub fn sid_to_context(&self, sid: Sid) -> Result<String> {
        Ok(context_to_string(&self.c.policy, self.sid_context(sid)?))
    }

    pub fn context_string(&self, c: &Context) -> String {
        context_to_string(&self.c.policy, c)
    }

    /// What the policy says to do with classes and permissions it does not define.
    pub fn handle_unknown(&self) -> seaccess_types::HandleUnknown {
        match self.c.policy.handle_unknown {
            seaccess_policy::HandleUnknown::Deny => seaccess_types::HandleUnknown::Deny,
            seaccess_policy::HandleUnknown::Reject => seaccess_types::HandleUnknown::Reject,
            seaccess_policy::HandleUnknown::Allow => seaccess_types::HandleUnknown::Allow,
        }
    }

    /// The class with this name.
    pub fn class(&self, name: &str) -> Result<ClassId> {
        match self.c.policy.class_value(name) {
            Some(v) => Ok(ClassId(v as u16)),
            None => Err(SecurityError::UnknownClass(
                name.into(),
                self.c.policy.class_names.did_you_mean(name),
            )),
        }
    }

    pub fn class_name(&self, class: ClassId) -> Result<&str> {
        self.c
            .policy
            .class_names
            .name(class.0.into())
            .ok_or(SecurityError::InvalidClass(class.0.into()))
    }

    /// The access vector of the named permissions of a class.
    pub fn perms(&self, class: ClassId, names: &[&str]) -> Result<AccessVector> {
        let cname = self.class_name(class)?;
        let mut v = 0u32;
        for n in names {
            match self.c.policy.perm_bit(class.0.into(), n) {
                Some(b) => v |= 1 << b,
                None => {
                    let near = seaccess_policy::suggest::did_you_mean(
                        n,
                        (0..32).filter_map(|b| self.c.policy.perm_name(class.0.into(), b)),
                    );
                    return Err(SecurityError::UnknownPermission {
                        class: cname.into(),
                        perm: (*n).into(),
                        near,
                    });
                }
            }
        }
        Ok(AccessVector(v))
    }

    pub fn perm_name(&self, class: ClassId, bit: u32) -> Option<&str> {
        self.c.policy.perm_name(class.0.into(), bit)
    }

    pub(crate) fn check_class(&self, class: ClassId) -> Result<u32> {
        let v = u32::from(class.0);
        if v == 0 || v as usize > self.c.policy.classes.len() {
            return Err(SecurityError::InvalidClass(v));
        }
        Ok(v)
    }
}

/// The kernel's initial SID for objects whose label is missing or no longer valid.
const UNLABELED: u32 = 3;
