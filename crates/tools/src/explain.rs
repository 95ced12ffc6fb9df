//! audit2why's verdict for an AVC denial, from the security server's reasons: why the current
//! policy denies what the record says was denied, and what would allow it.
//!
//! The verdict follows libselinux's audit2why.c (`analyze`) over libsepol's
//! context_struct_compute_av, whose stages each narrow what the next sees: if the type rules
//! leave out a requested permission, the verdict is `boolean` when flipping one boolean would
//! allow every requested permission (each such boolean listed, with the value it needs), else
//! `dontaudit` when a dontaudit rule covers one of them, else `te`; only when the type rules
//! allow them all do a constraint (`constraint`), a role transition (`role`) or type bounds
//! (`bounds`) account for the denial; `allowed` when the current policy allows them all (the log
//! came from another policy or other boolean values).

use seaccess_security::{DenialReason, Generation};
use seaccess_types::{ClassId, Sid};

use crate::audit::AvcRecord;
use crate::ToolsError;

/// A boolean that would allow the access, and the value it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BooleanFix {
    pub name: String,
    pub value: bool,
}

/// audit2why's verdicts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The current policy allows every requested permission.
    Allowed,
    /// The type rules leave a permission out and no boolean would help, and a dontaudit rule
    /// silences the denial in the current policy.
    Dontaudit,
    /// The type rules leave a permission out and no one boolean would help: an allow rule is
    /// missing.
    Te,
    /// Setting any one of these booleans would allow every requested permission.
    Boolean(Vec<BooleanFix>),
    /// A constraint or MLS constraint of the class forbids it (the reason names which).
    Constraint(DenialReason),
    /// A process transition that changes role, with no role allow rule for the pair.
    Role { from: String, to: String },
    /// The source type's bound is not allowed it.
    Bounds { bound: String },
}

impl Verdict {
    /// The verdict's name in `--json` output.
    pub fn name(&self) -> &'static str {
        match self {
            Verdict::Allowed => "allowed",
            Verdict::Dontaudit => "dontaudit",
            Verdict::Te => "te",
            Verdict::Boolean(_) => "boolean",
            Verdict::Constraint(_) => "constraint",
            Verdict::Role { .. } => "role",
            Verdict::Bounds { .. } => "bounds",
        }
    }
}

/// Why one record's access is denied.
#[derive(Debug, Clone)]
pub struct Why {
    pub verdict: Verdict,
    /// Each requested permission the current policy denies, with the engine's reason.
    pub denied: Vec<(String, DenialReason)>,
    /// The allow rule audit2allow would write for the record (`allow httpd_t etc_t:file { open
    /// read };`): what would allow it where the verdict is `te` or `dontaudit`.
    pub rule: String,
}

/// The verdict for a record's access under `g`. Errors name the record's line and what of it
/// the policy does not know (with the nearest names it does).
pub fn explain(g: &Generation, rec: &AvcRecord) -> Result<Why, ToolsError> {
    let err = |what: String| ToolsError::Record {
        line: rec.line,
        what,
    };
    let ssid = sid(g, &rec.scontext).map_err(|e| err(format!("scontext {e}")))?;
    let tsid = sid(g, &rec.tcontext).map_err(|e| err(format!("tcontext {e}")))?;
    let class = g.class(&rec.tclass).map_err(|e| err(e.to_string()))?;
    let mut want = 0u32;
    let mut bits = Vec::with_capacity(rec.perms.len());
    for p in &rec.perms {
        let v = g
            .perms(class, &[p.as_str()])
            .map_err(|e| err(e.to_string()))?;
        want |= v.0;
        bits.push((p.clone(), v.0.trailing_zeros()));
    }
    let ex = g
        .explain(ssid, tsid, class)
        .map_err(|e| err(e.to_string()))?;
    let mut denied = Vec::new();
    for (name, bit) in &bits {
        if let Some((_, r)) = ex.reasons.iter().find(|(b, _)| b == bit) {
            denied.push((name.clone(), r.clone()));
        }
    }
    let rule = allow_rule(g, rec, ssid, tsid);
    let verdict = verdict(
        g,
        (ssid, tsid, class),
        want,
        ex.decision.auditdeny.0,
        &denied,
    );
    Ok(Why {
        verdict,
        denied,
        rule,
    })
}

fn verdict(
    g: &Generation,
    (ssid, tsid, class): (Sid, Sid, ClassId),
    want: u32,
    auditdeny: u32,
    denied: &[(String, DenialReason)],
) -> Verdict {
    if denied.is_empty() {
        return Verdict::Allowed;
    }
    let te = denied.iter().any(|(_, r)| {
        matches!(
            r,
            DenialReason::NoAllowRule | DenialReason::BooleanOff { .. }
        )
    });
    if te {
        // Only a boolean some conditional rule for a denied permission reads can change what
        // the type rules allow; each is tried alone, as audit2why's check_booleans does, in the
        // policy's order.
        let mut candidates: Vec<&str> = Vec::new();
        for (_, r) in denied {
            if let DenialReason::BooleanOff { booleans } = r {
                for b in booleans {
                    if !candidates.contains(&b.as_str()) {
                        candidates.push(b);
                    }
                }
            }
        }
        let mut fixes = Vec::new();
        let order = if candidates.is_empty() {
            Vec::new()
        } else {
            g.booleans()
        };
        for (name, value) in &order {
            if !candidates.contains(&name.as_str()) {
                continue;
            }
            let allows = g
                .with_booleans(&[(name.as_str(), !value)])
                .ok()
                .and_then(|h| h.compute_av(ssid, tsid, class).ok())
                .is_some_and(|d| d.allowed.0 & want == want);
            if allows {
                fixes.push(BooleanFix {
                    name: name.clone(),
                    value: !value,
                });
            }
        }
        if !fixes.is_empty() {
            return Verdict::Boolean(fixes);
        }
        return if want & !auditdeny != 0 {
            Verdict::Dontaudit
        } else {
            Verdict::Te
        };
    }
    for (_, r) in denied {
        if let DenialReason::Constraint { .. } = r {
            return Verdict::Constraint(r.clone());
        }
    }
    for (_, r) in denied {
        if let DenialReason::RoleAllow { from, to } = r {
            return Verdict::Role {
                from: from.clone(),
                to: to.clone(),
            };
        }
    }
    for (_, r) in denied {
        if let DenialReason::TypeBounds { bound } = r {
            return Verdict::Bounds {
                bound: bound.clone(),
            };
        }
    }
    // Every reason kind is handled above; a new one would land here as the plainest verdict.
    Verdict::Te
}

fn sid(g: &Generation, context: &str) -> Result<Sid, String> {
    g.context_to_sid(context)
        .map_err(|e| format!("{context}: {e}"))
}

/// The allow rule for the record's types, class and permissions, in audit2allow's form.
fn allow_rule(g: &Generation, rec: &AvcRecord, ssid: Sid, tsid: Sid) -> String {
    let ty = |sid: Sid| {
        g.sid_context(sid)
            .ok()
            .and_then(|c| g.policy().type_names.name(c.ty))
            .unwrap_or("?")
            .to_string()
    };
    let mut perms: Vec<&str> = rec.perms.iter().map(String::as_str).collect();
    perms.sort_unstable();
    perms.dedup();
    crate::rule::rule_text(&ty(ssid), &ty(tsid), &rec.tclass, &perms)
}
