//! New contexts for new objects and relabels: the kernel's security_compute_sid behind
//! security_transition_sid, security_change_sid and security_member_sid.

use seaccess_policy::{Context, DefaultSide, RuleKind, TypeRuleKind, OBJECT_R};
use seaccess_types::{ClassId, Sid};

use crate::error::{Result, SecurityError};
use crate::generation::Generation;

impl Generation {
    /// The kernel's security_transition_sid (with an object name: filename transitions too).
    pub fn compute_create(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        name: Option<&str>,
    ) -> Result<Sid> {
        self.compute_sid(ssid, tsid, class, TypeRuleKind::Transition, name)
    }

    /// The kernel's security_change_sid (type_change rules).
    pub fn compute_relabel(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Sid> {
        self.compute_sid(ssid, tsid, class, TypeRuleKind::Change, None)
    }

    /// The kernel's security_member_sid (type_member rules).
    /// The object names whose filename transition can change what [`Generation::compute_create`]
    /// answers for `ssid` creating an object of `class` under `tsid`: the rules for the
    /// target's type and the class that name the source's type, each name once, sorted.
    pub fn filename_names(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Vec<Box<str>>> {
        let s = self.sid_context(ssid)?;
        let t = self.sid_context(tsid)?;
        let c = &*self.c;
        if !c.ftrans_ttypes.get(t.ty) {
            return Ok(Vec::new());
        }
        let cl = u32::from(class.0);
        let mut out: Vec<Box<str>> = c
            .ftrans
            .iter()
            .filter(|((tt, k, _), rules)| {
                *tt == t.ty
                    && *k == cl
                    && rules
                        .iter()
                        .any(|(stypes, _)| s.ty >= 1 && stypes.get(s.ty - 1))
            })
            .map(|((_, _, name), _)| name.clone())
            .collect();
        out.sort_unstable();
        Ok(out)
    }

    pub fn compute_member(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Sid> {
        self.compute_sid(ssid, tsid, class, TypeRuleKind::Member, None)
    }

    fn compute_sid(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        kind: TypeRuleKind,
        name: Option<&str>,
    ) -> Result<Sid> {
        let s = self.sid_context(ssid)?;
        let t = self.sid_context(tsid)?;
        let new = self.new_context(s, t, class, kind, name)?;
        if !self.c.policy.context_is_valid(&new) {
            return Err(SecurityError::InvalidComputedContext(
                self.context_string(&new),
            ));
        }
        // The kernel answers with the caller's own SID when the context is unchanged: a SID
        // the caller already holds, not another SID (an alias) for the same context.
        if new == *s {
            return Ok(ssid);
        }
        if new == *t {
            return Ok(tsid);
        }
        Ok(self.intern(new))
    }

    /// The new context, before the validity check. Errors when `s` or `t` is not valid in this
    /// generation's policy.
    pub fn compute_context(
        &self,
        s: &Context,
        t: &Context,
        class: ClassId,
        kind: TypeRuleKind,
        name: Option<&str>,
    ) -> Result<Context> {
        self.check_context(s)?;
        self.check_context(t)?;
        self.new_context(s, t, class, kind, name)
    }

    fn new_context(
        &self,
        s: &Context,
        t: &Context,
        class: ClassId,
        kind: TypeRuleKind,
        name: Option<&str>,
    ) -> Result<Context> {
        let c = &*self.c;
        let p = &c.policy;
        let cl = u32::from(class.0);
        let cladatum = p.classes.get((cl as usize).wrapping_sub(1));
        let sock = c.is_socket(cl);
        let objectish = !(cl == c.process_class || sock);
        let default = |f: fn(&seaccess_policy::Class) -> Option<DefaultSide>| cladatum.and_then(f);
        // type_member rules take the target's user whatever the class says.
        let user = match (kind, default(|d| d.default_user)) {
            (TypeRuleKind::Member, _) | (_, Some(DefaultSide::Target)) => t.user,
            (TypeRuleKind::Transition | TypeRuleKind::Change, Some(DefaultSide::Source) | None) => {
                s.user
            }
        };
        let mut role = match default(|d| d.default_role) {
            Some(DefaultSide::Source) => s.role,
            Some(DefaultSide::Target) => t.role,
            None if objectish => OBJECT_R,
            None => s.role,
        };
        let mut ty = match default(|d| d.default_type) {
            Some(DefaultSide::Source) => s.ty,
            Some(DefaultSide::Target) => t.ty,
            None if objectish => t.ty,
            None => s.ty,
        };
        if let (Ok(st), Ok(tt), Ok(k)) =
            (u16::try_from(s.ty), u16::try_from(t.ty), u16::try_from(cl))
        {
            let run = c.types.run(st, k);
            let from = run.partition_point(|r| r.target < tt);
            let hit = run[from..]
                .iter()
                .take_while(|r| r.target == tt)
                .find(|r| r.kind == RuleKind::Type(kind) && self.on(r.branch));
            if let Some(r) = hit {
                ty = r.data;
            }
        }
        if let Some(name) = name {
            if c.ftrans_ttypes.get(t.ty) {
                if let Some(list) = c.ftrans.get(&(t.ty, cl, Box::<str>::from(name))) {
                    if let Some((_, otype)) = list.iter().find(|(stypes, _)| stypes.get(s.ty - 1)) {
                        ty = *otype;
                    }
                }
            }
        }
        if kind == TypeRuleKind::Transition {
            if let Some(&nr) = c.role_trans.get(&(s.role, t.ty, cl)) {
                role = nr;
            }
        }
        let range = if p.mls {
            Some(self.mls_compute(s, t, cl, kind, sock)?)
        } else {
            None
        };
        Ok(Context {
            user,
            role,
            ty,
            range,
        })
    }
}
