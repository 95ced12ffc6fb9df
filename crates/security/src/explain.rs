//! Why a decision denies what it denies: the reasons `audit2why` gives, computed alongside the
//! kernel's context_struct_compute_av.

use seaccess_policy::{CondExpr, Constraint, Context};
use seaccess_types::{AccessVector, AvDecision, ClassId, Sid};

use crate::constraint;
use crate::error::Result;
use crate::generation::Generation;

/// Why a permission was denied.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DenialReason {
    /// No allow rule grants it.
    NoAllowRule,
    /// Only conditional rules grant it, and their conditions are false now; the booleans named
    /// are those the conditions read.
    BooleanOff { booleans: Vec<String> },
    /// A constraint (or, when `mls`, an MLS constraint) of the class forbids it: its expression,
    /// and the values it read from the two contexts (`u1=user_u u2=system_u`).
    Constraint {
        index: usize,
        mls: bool,
        expression: String,
        values: String,
    },
    /// A process transition that changes role, with no role allow rule for the pair.
    RoleAllow { from: String, to: String },
    /// The source type is bounded and its bound does not have the permission.
    TypeBounds { bound: String },
}

impl DenialReason {
    /// A short stable name for the kind of reason, for programs that branch on it (the Python
    /// bindings' `Reason.kind`).
    pub fn kind(&self) -> &'static str {
        match self {
            DenialReason::NoAllowRule => "no_allow_rule",
            DenialReason::BooleanOff { .. } => "boolean_off",
            DenialReason::Constraint { .. } => "constraint",
            DenialReason::RoleAllow { .. } => "role_allow",
            DenialReason::TypeBounds { .. } => "type_bounds",
        }
    }
}

/// The one wording of a reason, shared by `seaccess check`, the tour and the bindings, so that
/// they never explain the same denial two ways.
impl std::fmt::Display for DenialReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DenialReason::NoAllowRule => f.write_str("no allow rule"),
            DenialReason::BooleanOff { booleans } => {
                write!(
                    f,
                    "allowed only by a conditional rule whose condition is false (booleans: {})",
                    booleans.join(", ")
                )
            }
            DenialReason::Constraint {
                index,
                mls,
                expression,
                values,
            } => {
                write!(
                    f,
                    "{} #{index}: {expression} is false with {values}",
                    if *mls { "mlsconstrain" } else { "constrain" }
                )
            }
            DenialReason::RoleAllow { from, to } => {
                write!(f, "role change {from} -> {to} has no role allow rule")
            }
            DenialReason::TypeBounds { bound } => {
                write!(f, "type bounds: its bound {bound} is not allowed this")
            }
        }
    }
}

/// A decision with a reason for each denied permission bit.
#[derive(Clone, Debug)]
pub struct Explanation {
    pub decision: AvDecision,
    pub reasons: Vec<(u32, DenialReason)>,
}

impl Generation {
    /// The decision together with a reason for each permission it denies.
    pub fn explain(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<Explanation> {
        let s = self.sid_context(ssid)?;
        let t = self.sid_context(tsid)?;
        let cl = self.check_class(class)?;
        let mut reasons = Vec::new();
        let r = self.compute(s, t, cl, Some(&mut reasons));
        reasons.sort_by_key(|(b, _)| *b);
        Ok(Explanation {
            decision: self.decision(s, &r),
            reasons,
        })
    }

    /// Why each permission the rules leave out is missing: no allow rule at all, or only
    /// allow rules in conditional branches that are off (`disabled`: their branch and
    /// permissions), naming the booleans those conditions read.
    pub(crate) fn rule_reasons(
        &self,
        allowed: u32,
        disabled: &[(u32, u32)],
        w: &mut Vec<(u32, DenialReason)>,
    ) {
        let p = &self.c.policy;
        let missing = !allowed;
        for bit in AccessVector(missing).bits() {
            let mut bools: Vec<String> = Vec::new();
            for (branch, data) in disabled {
                if data & (1 << bit) != 0 {
                    let expr = self
                        .c
                        .cond_exprs
                        .get((*branch / 2) as usize)
                        .map_or(&[][..], |e| &e[..]);
                    for e in expr {
                        if let CondExpr::Bool(b) = *e {
                            let n = p.bool_names.name(b).unwrap_or("?").to_string();
                            if !bools.contains(&n) {
                                bools.push(n);
                            }
                        }
                    }
                }
            }
            w.push((
                bit,
                if bools.is_empty() {
                    DenialReason::NoAllowRule
                } else {
                    DenialReason::BooleanOff { booleans: bools }
                },
            ));
        }
    }

    /// The reason for the permissions the class's constraint number `index` removes.
    pub(crate) fn constraint_reason(
        &self,
        index: usize,
        k: &Constraint,
        s: &Context,
        t: &Context,
    ) -> DenialReason {
        let p = &self.c.policy;
        let (mls, expression, values) = (
            constraint::is_mls(&k.expr),
            constraint::describe(p, &k.expr),
            constraint::operands(p, &k.expr, s, t),
        );
        DenialReason::Constraint {
            index,
            mls,
            expression,
            values,
        }
    }

    /// The reason for a process transition the role allow rules do not permit.
    pub(crate) fn role_reason(&self, s: &Context, t: &Context) -> DenialReason {
        let p = &self.c.policy;
        DenialReason::RoleAllow {
            from: p.role_names.name(s.role).unwrap_or("?").into(),
            to: p.role_names.name(t.role).unwrap_or("?").into(),
        }
    }
}
