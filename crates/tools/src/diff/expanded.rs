//! sediff's view of access vector rules (allow, auditallow, dontaudit): every rule's attributes
//! expanded to types, the permissions of one (source type, target type, class) in one
//! conditional branch (or none) unioned, what an unconditional rule grants taken out of the
//! conditional ones, then each key added, removed or modified (setools 4.4's
//! `_avrule_expand_generator`, `_av_remove_redundant_rules`, `_av_generate_diffs`). sediff
//! expands every rule of both policies, which takes hours on a Fedora policy; here only the keys
//! a change can reach are expanded: those of rules added or removed, and those of rules that
//! cover a type which joined or left an attribute, or exists on one side only.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde::Serialize;

use super::candidates::{expand, touch, Triple, Universe};
use super::{RuleChanges, Side, SymbolChanges, AV_KINDS};

/// One expanded rule key whose permissions differ.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ExpandedChange {
    pub ruletype: &'static str,
    pub source: String,
    pub target: String,
    pub class: String,
    /// The condition as sesearch writes it, and the branch; none for an unconditional rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditional: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<bool>,
    /// `added`, `removed` (the key on one side only) or `modified`.
    pub status: &'static str,
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// The permissions both sides have (modified keys only).
    pub kept: Vec<String>,
}

impl ExpandedChange {
    /// The change as sediff prints it: `allow a_t b_t:file { read -write };`.
    pub fn line(&self) -> String {
        let mut words: Vec<String> = self.kept.clone();
        let sign = self.status == "modified";
        words.extend(
            self.added
                .iter()
                .map(|p| if sign { format!("+{p}") } else { p.clone() }),
        );
        words.extend(
            self.removed
                .iter()
                .map(|p| if sign { format!("-{p}") } else { p.clone() }),
        );
        let body = if words.len() == 1 {
            words.concat()
        } else {
            format!("{{ {} }}", words.join(" "))
        };
        let mut l = format!(
            "{} {} {}:{} {body};",
            self.ruletype, self.source, self.target, self.class
        );
        if let (Some(c), Some(b)) = (&self.conditional, self.branch) {
            l.push_str(&format!(" [ {c} ]:{}", if b { "True" } else { "False" }));
        }
        l
    }
}

/// (condition, branch) -> permissions, for one key on one side; `None` is unconditional.
type Blocks = BTreeMap<Option<(String, bool)>, BTreeSet<String>>;

fn blocks(side: &Side, kind: &'static str, s: &str, t: &str, c: &str) -> Blocks {
    let mut out: Blocks = BTreeMap::new();
    let (Some(scov), Some(tcov)) = (side.covers.get(s), side.covers.get(t)) else {
        return out;
    };
    for a in scov {
        for &i in side
            .av_from
            .get(&(kind, a.clone()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let Some(f) = side.rules.get(i) else { continue };
            if f.class.as_deref() != Some(c) || !tcov.contains(&f.target) {
                continue;
            }
            let key = f.conditional.clone().zip(f.branch);
            out.entry(key).or_default().extend(f.perms.iter().cloned());
        }
    }
    let uncond = out.get(&None).cloned().unwrap_or_default();
    for (k, v) in out.iter_mut() {
        if k.is_some() {
            v.retain(|p| !uncond.contains(p));
        }
    }
    out.retain(|_, v| !v.is_empty());
    out
}

/// The expanded access vector rules that differ, sorted by kind, source, target, class, condition.
pub fn expanded_diff(
    old: &Side,
    new: &Side,
    u: &Universe,
    rules: &[RuleChanges],
    symbols: &SymbolChanges,
) -> Vec<ExpandedChange> {
    let mut touched: BTreeSet<&str> = BTreeSet::new();
    for m in &symbols.memberships {
        touched.extend(m.added.iter().chain(&m.removed).map(String::as_str));
    }
    touched.extend(
        symbols
            .types_added
            .iter()
            .chain(&symbols.types_removed)
            .map(String::as_str),
    );
    let mut out = Vec::new();
    for kind in AV_KINDS.map(|k| k.name()) {
        let mut keys: HashSet<Triple> = HashSet::new();
        if let Some(r) = rules.iter().find(|r| r.ruletype == kind) {
            for (side, lines) in [(old, &r.removed), (new, &r.added)] {
                let lines: HashSet<&str> = lines.iter().map(String::as_str).collect();
                for f in side
                    .rules
                    .iter()
                    .filter(|f| f.ruletype == kind && lines.contains(f.line.as_str()))
                {
                    expand(side, u, f, &mut keys);
                }
            }
        }
        for side in [old, new] {
            for t in &touched {
                touch(side, u, kind, t, &mut keys);
            }
        }
        let mut keys: Vec<Triple> = keys.into_iter().collect();
        keys.sort_unstable();
        for (s, t, c) in keys {
            let (sn, tn, cn) = (u.type_name(s), u.type_name(t), u.class_name(c));
            let (a, b) = (blocks(old, kind, sn, tn, cn), blocks(new, kind, sn, tn, cn));
            let conds: BTreeSet<&Option<(String, bool)>> = a.keys().chain(b.keys()).collect();
            let empty = BTreeSet::new();
            for cond in conds {
                let (pa, pb) = (a.get(cond).unwrap_or(&empty), b.get(cond).unwrap_or(&empty));
                if pa == pb {
                    continue;
                }
                let status = if pa.is_empty() {
                    "added"
                } else if pb.is_empty() {
                    "removed"
                } else {
                    "modified"
                };
                out.push(ExpandedChange {
                    ruletype: kind,
                    source: sn.to_string(),
                    target: tn.to_string(),
                    class: cn.to_string(),
                    conditional: cond.as_ref().map(|(c, _)| c.clone()),
                    branch: cond.as_ref().map(|(_, b)| *b),
                    status,
                    added: pb.difference(pa).cloned().collect(),
                    removed: pa.difference(pb).cloned().collect(),
                    kept: pa.intersection(pb).cloned().collect(),
                });
            }
        }
    }
    out
}
