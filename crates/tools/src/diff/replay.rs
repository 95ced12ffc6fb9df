//! `seaccess diff --replay LOG`: the accesses a machine made (AVC records, granted and denied
//! alike), judged by both policies, as the question a policy update raises: which of them does
//! the new policy decide otherwise, and why. Each side's account of a denial is audit2why's
//! machinery ([`crate::explain`]) on that side; of a grant, the allow rules in effect there.

use super::decisions::{PermChange, Why};
use super::Side;
use crate::audit::{context_type, AvcRecord};
use crate::explain::explain;
use crate::ToolsError;

/// What is wrong with a record on one side, without the line (the caller names it).
fn what(e: ToolsError) -> String {
    match e {
        ToolsError::Record { what, .. } => what,
        other => other.to_string(),
    }
}

/// One side's account of each of the record's permissions (in the record's order, each once).
fn accounts(side: &Side, rec: &AvcRecord) -> Result<Vec<(String, Why)>, ToolsError> {
    let g = side.generation();
    let mut perms: Vec<String> = Vec::new();
    for p in &rec.perms {
        if !perms.contains(p) {
            perms.push(p.clone());
        }
    }
    let (s, t) = (context_type(&rec.scontext), context_type(&rec.tcontext));
    let account =
        |perm: &str, w: &crate::explain::Why| match w.denied.iter().find(|(p, _)| p == perm) {
            Some((_, r)) => Why::Denied {
                kind: r.kind().into(),
                reason: r.to_string(),
            },
            None => Why::Allowed {
                rules: side.granting(s, t, &rec.tclass, perm),
            },
        };
    match explain(&g, rec) {
        Ok(w) => Ok(perms.iter().map(|p| (p.clone(), account(p, &w))).collect()),
        Err(whole) => {
            // One unknown permission must not hide what the side says of the others.
            let mut out = Vec::new();
            let mut any = false;
            for p in &perms {
                let one = AvcRecord {
                    perms: vec![p.clone()],
                    ..rec.clone()
                };
                match explain(&g, &one) {
                    Ok(w) => {
                        any = true;
                        out.push((p.clone(), account(p, &w)));
                    }
                    Err(e) => out.push((
                        p.clone(),
                        Why::Denied {
                            kind: "missing".into(),
                            reason: format!("{} in {}", what(e), side.label),
                        },
                    )),
                }
            }
            if any {
                Ok(out)
            } else {
                Err(whole)
            }
        }
    }
}

/// The record's permissions whose decision differs between `old` and `new`, each with both
/// sides' accounts. A record neither policy can judge (unknown class or permission, invalid
/// contexts in both) is an error naming its line and what is wrong under OLD; one only a side
/// cannot judge is judged `missing` there.
pub fn replay(old: &Side, new: &Side, rec: &AvcRecord) -> Result<Vec<PermChange>, ToolsError> {
    let (a, b) = match (accounts(old, rec), accounts(new, rec)) {
        (Err(e), Err(_)) => return Err(e),
        (Ok(a), Ok(b)) => (a, b),
        (Ok(a), Err(e)) => {
            let b = a
                .iter()
                .map(|(p, _)| {
                    (
                        p.clone(),
                        Why::Denied {
                            kind: "missing".into(),
                            reason: format!("{} in {}", what(e.clone()), new.label),
                        },
                    )
                })
                .collect();
            (a, b)
        }
        (Err(e), Ok(b)) => {
            let a = b
                .iter()
                .map(|(p, _)| {
                    (
                        p.clone(),
                        Why::Denied {
                            kind: "missing".into(),
                            reason: format!("{} in {}", what(e.clone()), old.label),
                        },
                    )
                })
                .collect();
            (a, b)
        }
    };
    Ok(a.into_iter()
        .zip(b)
        .filter(|((_, x), (_, y))| x.allowed() != y.allowed())
        .map(|((perm, old), (_, new))| PermChange { perm, old, new })
        .collect())
}
