//! The decisions that change: for each triple, the engine's allowed vector under each policy
//! (each type in its representative context, [`Side::context_for`]), compared by permission
//! name, and for each permission gained or lost what is responsible on each side: the allow rules
//! in effect that grant it, or the engine's reason for denying it (`DenialReason`: no rule, a
//! boolean, a constraint, a role, a bound), or that the side has no such type or class.

use serde::Serialize;

use super::candidates::{Triple, Universe};
use super::Side;
use seaccess_security::Explanation;
use seaccess_types::{ClassId, Sid};

/// What one side says of one permission.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "lowercase")]
pub enum Why {
    /// Allowed, by these rules (sesearch lines) in effect.
    Allowed { rules: Vec<String> },
    /// Denied: the reason's kind (`DenialReason::kind`, or `missing` when the side has no such
    /// type, class, permission or valid context) and its words.
    Denied { kind: String, reason: String },
}

impl Why {
    pub fn allowed(&self) -> bool {
        matches!(self, Why::Allowed { .. })
    }
}

impl std::fmt::Display for Why {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Why::Allowed { rules } if rules.is_empty() => f.write_str("allowed"),
            Why::Allowed { rules } => write!(f, "allowed by {}", rules.join(" ")),
            Why::Denied { reason, .. } => write!(f, "denied: {reason}"),
        }
    }
}

/// One permission whose decision differs, with each side's account of it.
#[derive(Clone, Debug, Serialize)]
pub struct PermChange {
    pub perm: String,
    pub old: Why,
    pub new: Why,
}

/// A triple whose allowed permissions differ.
#[derive(Clone, Debug, Serialize)]
pub struct DecisionChange {
    pub source: String,
    pub target: String,
    pub class: String,
    pub gained: Vec<PermChange>,
    pub lost: Vec<PermChange>,
}

/// The decision diff: how many triples were computed and those that changed, sorted by source,
/// target and class.
#[derive(Clone, Debug, Serialize)]
pub struct DecisionDiff {
    pub computed: usize,
    pub changes: Vec<DecisionChange>,
}

/// One class on both sides: its id on each, and for each bit of OLD's the bit of NEW's that has
/// the same permission name.
struct ClassPair {
    old: Option<ClassId>,
    new: Option<ClassId>,
    old_to_new: [Option<u32>; 32],
}

fn class_pair(old: &Side, new: &Side, name: &str) -> ClassPair {
    let (o, n) = (old.class(name), new.class(name));
    let mut old_to_new = [None; 32];
    let (po, pn) = (old.tables(), new.tables());
    if let (Some(o), Some(n)) = (o, n) {
        for (b, slot) in old_to_new.iter_mut().enumerate() {
            if let Some(nb) = po
                .perm_name(o.0.into(), b as u32)
                .and_then(|p| pn.perm_bit(n.0.into(), p))
            {
                *slot = Some(nb);
            }
        }
    }
    ClassPair {
        old: o,
        new: n,
        old_to_new,
    }
}

/// A side's allowed vector for a triple, 0 where it lacks the type, context or class.
fn allowed(
    side: &Side,
    g: &seaccess_security::Generation,
    s: &str,
    t: &str,
    c: Option<ClassId>,
) -> u32 {
    match (side.sid(s), side.sid(t), c) {
        (Some(a), Some(b), Some(c)) => g.compute_av(a, b, c).map_or(0, |d| d.allowed.0),
        _ => 0,
    }
}

/// The decisions of `triples` that differ between `old` and `new`.
pub fn decision_diff(old: &Side, new: &Side, u: &Universe, triples: &[Triple]) -> DecisionDiff {
    let pairs: Vec<ClassPair> = u.classes.iter().map(|c| class_pair(old, new, c)).collect();
    let (go, gn) = (old.generation(), new.generation());
    let mut changes = Vec::new();
    for &(s, t, c) in triples {
        let Some(pair) = pairs.get(c as usize) else {
            continue;
        };
        let (sn, tn) = (u.type_name(s), u.type_name(t));
        let a = allowed(old, &go, sn, tn, pair.old);
        let b = allowed(new, &gn, sn, tn, pair.new);
        // OLD's vector in NEW's bits, and whatever of it NEW has no name for.
        let mut mapped = 0u32;
        let mut unmatched = false;
        for bit in 0..32 {
            if a & (1 << bit) != 0 {
                match pair.old_to_new.get(bit).copied().flatten() {
                    Some(nb) => mapped |= 1 << nb,
                    None => unmatched = true,
                }
            }
        }
        if mapped == b && !unmatched {
            continue;
        }
        let cn = u.class_name(c);
        let names = |side: &Side, v: u32, id: Option<ClassId>| -> Vec<String> {
            let Some(id) = id else { return Vec::new() };
            (0..32)
                .filter(|b| v & (1 << b) != 0)
                .filter_map(|b| side.tables().perm_name(id.0.into(), b))
                .map(str::to_string)
                .collect()
        };
        let (no, nn) = (names(old, a, pair.old), names(new, b, pair.new));
        let ex_o = explanation(old, &go, sn, tn, pair.old);
        let ex_n = explanation(new, &gn, sn, tn, pair.new);
        let change = |p: &String| PermChange {
            perm: p.clone(),
            old: why(old, ex_o.as_ref(), sn, tn, cn, p),
            new: why(new, ex_n.as_ref(), sn, tn, cn, p),
        };
        let mut gained: Vec<PermChange> =
            nn.iter().filter(|p| !no.contains(p)).map(change).collect();
        let mut lost: Vec<PermChange> = no.iter().filter(|p| !nn.contains(p)).map(change).collect();
        gained.sort_by(|x, y| x.perm.cmp(&y.perm));
        lost.sort_by(|x, y| x.perm.cmp(&y.perm));
        changes.push(DecisionChange {
            source: sn.to_string(),
            target: tn.to_string(),
            class: cn.to_string(),
            gained,
            lost,
        });
    }
    changes.sort_by(|x, y| (&x.source, &x.target, &x.class).cmp(&(&y.source, &y.target, &y.class)));
    DecisionDiff {
        computed: triples.len(),
        changes,
    }
}

fn explanation(
    side: &Side,
    g: &seaccess_security::Generation,
    s: &str,
    t: &str,
    c: Option<ClassId>,
) -> Option<(Sid, Sid, ClassId, Explanation)> {
    let (a, b, c) = (side.sid(s)?, side.sid(t)?, c?);
    g.explain(a, b, c).ok().map(|e| (a, b, c, e))
}

/// One side's account of permission `perm` for the triple.
fn why(
    side: &Side,
    ex: Option<&(Sid, Sid, ClassId, Explanation)>,
    s: &str,
    t: &str,
    c: &str,
    perm: &str,
) -> Why {
    let missing = |reason: String| Why::Denied {
        kind: "missing".into(),
        reason,
    };
    let Some((_, _, cid, ex)) = ex else {
        for ty in [s, t] {
            if !side.covers.contains_key(ty) {
                return missing(format!("type {ty} is not in {}", side.label));
            }
            if side.sid(ty).is_none() {
                return missing(format!(
                    "no valid context for type {ty} in {} ({})",
                    side.label,
                    side.context_for(ty).unwrap_or_default()
                ));
            }
        }
        return missing(format!("class {c} is not in {}", side.label));
    };
    let Some(bit) = side.tables().perm_bit(cid.0.into(), perm) else {
        return missing(format!(
            "class {c} has no permission {perm} in {}",
            side.label
        ));
    };
    if ex.decision.allowed.0 & (1 << bit) != 0 {
        return Why::Allowed {
            rules: side.granting(s, t, c, perm),
        };
    }
    match ex.reasons.iter().find(|(b, _)| *b == bit) {
        Some((_, r)) => Why::Denied {
            kind: r.kind().into(),
            reason: r.to_string(),
        },
        None => Why::Denied {
            kind: "no_allow_rule".into(),
            reason: "no allow rule".into(),
        },
    }
}
