//! What a policy update changes: `seaccess diff OLD NEW`.
//!
//! Three views, from the cheapest to the one no other tool gives:
//! - the rules each policy holds, as sesearch writes them, compared as sets of lines (type,
//!   attribute, role and class names, not values: two policies number them differently), as
//!   sediff lists rules added and removed, without expanding attributes; and, on request, the
//!   access vector rules as sediff compares them, attributes expanded ([`expanded`]);
//! - what changed in the policy's symbols that decisions read: types, attributes and their
//!   members, classes and permissions, boolean values, permissive types, bounds, constraints;
//! - the decisions that change: the engine's allowed vector for (source type, target type,
//!   class) triples, compared by permission name, with the rule, boolean, constraint or bound
//!   responsible on each side ([`decisions`]). Only triples some change can reach are computed
//!   ([`candidates`]), or a seeded random sample, or every triple of a small policy;
//! - `--replay`: the accesses of an audit log judged by both policies ([`replay`]).
//!
//! Each side is a policy with boolean values ([`Side`]); the two sides may be one policy with
//! different booleans.

pub mod candidates;
pub mod decisions;
pub mod expanded;
pub mod replay;
mod side;

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

pub use side::{Side, AV_KINDS, RULE_TYPES};

/// The rules of one kind that one policy has and the other has not.
#[derive(Clone, Debug, Serialize)]
pub struct RuleChanges {
    pub ruletype: &'static str,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// The rules added and removed, by kind (kinds without a change left out), each list sorted.
/// Repeated lines (sesearch keeps a rule written twice) count once.
pub fn rule_diff(old: &Side, new: &Side) -> Vec<RuleChanges> {
    let lines = |s: &Side, rt: &str| -> BTreeSet<String> {
        s.rules
            .iter()
            .filter(|f| f.ruletype == rt)
            .map(|f| f.line.clone())
            .collect()
    };
    let mut out = Vec::new();
    for rt in RULE_TYPES {
        let (a, b) = (lines(old, rt.name()), lines(new, rt.name()));
        let added: Vec<String> = b.difference(&a).cloned().collect();
        let removed: Vec<String> = a.difference(&b).cloned().collect();
        if !added.is_empty() || !removed.is_empty() {
            out.push(RuleChanges {
                ruletype: rt.name(),
                added,
                removed,
            });
        }
    }
    out
}

/// An attribute whose member types changed (or that exists on one side only).
#[derive(Clone, Debug, Serialize)]
pub struct Membership {
    pub attribute: String,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

/// A value on each side, absent where the side has no such thing.
#[derive(Clone, Debug, Serialize)]
pub struct Change<T> {
    pub name: String,
    pub old: Option<T>,
    pub new: Option<T>,
}

/// What changed in the symbols decisions read.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SymbolChanges {
    pub types_added: Vec<String>,
    pub types_removed: Vec<String>,
    pub attributes_added: Vec<String>,
    pub attributes_removed: Vec<String>,
    pub memberships: Vec<Membership>,
    pub classes_added: Vec<String>,
    pub classes_removed: Vec<String>,
    /// `class:perm`.
    pub perms_added: Vec<String>,
    pub perms_removed: Vec<String>,
    /// Booleans whose value (default, or as --bool sets it) differs, or on one side only.
    pub booleans: Vec<Change<bool>>,
    pub permissive_added: Vec<String>,
    pub permissive_removed: Vec<String>,
    /// Types whose bound changed.
    pub bounds: Vec<Change<String>>,
    /// Classes whose constraints (or MLS constraints) changed.
    pub constraints: Vec<String>,
    /// Role allow rules as `from -> to`.
    pub role_allows_added: Vec<String>,
    pub role_allows_removed: Vec<String>,
}

impl SymbolChanges {
    pub fn is_empty(&self) -> bool {
        self.lines().is_empty()
    }

    /// The changes in words, one a line.
    pub fn lines(&self) -> Vec<String> {
        let mut l = Vec::new();
        let mut list = |what: &str, v: &[String]| {
            if !v.is_empty() {
                l.push(format!("{what} ({}): {}", v.len(), v.join(" ")));
            }
        };
        list("types added", &self.types_added);
        list("types removed", &self.types_removed);
        list("attributes added", &self.attributes_added);
        list("attributes removed", &self.attributes_removed);
        list("classes added", &self.classes_added);
        list("classes removed", &self.classes_removed);
        list("permissions added", &self.perms_added);
        list("permissions removed", &self.perms_removed);
        list("permissive types added", &self.permissive_added);
        list("permissive types removed", &self.permissive_removed);
        list("constraints changed for classes", &self.constraints);
        list("role allow rules added", &self.role_allows_added);
        list("role allow rules removed", &self.role_allows_removed);
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "(none)".into());
        let b = |v: &Option<bool>| v.map_or("(none)".to_string(), |x| x.to_string());
        for m in &self.memberships {
            let mut parts: Vec<String> = m.added.iter().map(|t| format!("+{t}")).collect();
            parts.extend(m.removed.iter().map(|t| format!("-{t}")));
            l.push(format!("attribute {}: {}", m.attribute, parts.join(" ")));
        }
        for c in &self.booleans {
            l.push(format!(
                "boolean {}: {} -> {}",
                c.name,
                b(&c.old),
                b(&c.new)
            ));
        }
        for c in &self.bounds {
            l.push(format!(
                "bounds of {}: {} -> {}",
                c.name,
                opt(&c.old),
                opt(&c.new)
            ));
        }
        l
    }
}

/// Names in `a` and not in `b`, sorted.
fn minus<'a>(a: impl IntoIterator<Item = &'a str>, b: &BTreeSet<&str>) -> Vec<String> {
    let mut v: Vec<String> = a
        .into_iter()
        .filter(|x| !b.contains(x))
        .map(str::to_string)
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The symbols that changed from `old` to `new`.
pub fn symbol_diff(old: &Side, new: &Side) -> SymbolChanges {
    let mut c = SymbolChanges::default();
    let types = |s: &Side| -> BTreeSet<String> { s.covers.keys().cloned().collect() };
    let attrs = |s: &Side| -> BTreeSet<String> {
        s.members
            .keys()
            .filter(|k| !s.covers.contains_key(*k))
            .cloned()
            .collect()
    };
    let (to, tn) = (types(old), types(new));
    c.types_added = tn.difference(&to).cloned().collect();
    c.types_removed = to.difference(&tn).cloned().collect();
    let (ao, an) = (attrs(old), attrs(new));
    c.attributes_added = an.difference(&ao).cloned().collect();
    c.attributes_removed = ao.difference(&an).cloned().collect();
    let empty = BTreeSet::new();
    for a in ao.union(&an) {
        let (mo, mn) = (
            old.members.get(a).unwrap_or(&empty),
            new.members.get(a).unwrap_or(&empty),
        );
        if mo != mn {
            c.memberships.push(Membership {
                attribute: a.clone(),
                added: mn.difference(mo).cloned().collect(),
                removed: mo.difference(mn).cloned().collect(),
            });
        }
    }
    let (co, cn): (BTreeSet<&str>, BTreeSet<&str>) =
        (old.class_names().collect(), new.class_names().collect());
    c.classes_added = minus(cn.iter().copied(), &co);
    c.classes_removed = minus(co.iter().copied(), &cn);
    for class in co.intersection(&cn) {
        let perms = |s: &Side| -> BTreeSet<String> {
            perm_names(s, class)
                .into_iter()
                .map(|p| format!("{class}:{p}"))
                .collect()
        };
        let (po, pn) = (perms(old), perms(new));
        c.perms_added.extend(pn.difference(&po).cloned());
        c.perms_removed.extend(po.difference(&pn).cloned());
        if old.constraint_texts(class) != new.constraint_texts(class) {
            c.constraints.push(class.to_string());
        }
    }
    let names: BTreeSet<&String> = old.bools.keys().chain(new.bools.keys()).collect();
    for n in names {
        let (o, v) = (old.bools.get(n).copied(), new.bools.get(n).copied());
        if o != v {
            c.booleans.push(Change {
                name: n.clone(),
                old: o,
                new: v,
            });
        }
    }
    for t in to.union(&tn) {
        match (old.permissive(t), new.permissive(t)) {
            (false, true) => c.permissive_added.push(t.clone()),
            (true, false) => c.permissive_removed.push(t.clone()),
            _ => {}
        }
        let (bo, bn) = (
            old.bound(t).map(str::to_string),
            new.bound(t).map(str::to_string),
        );
        if bo != bn {
            c.bounds.push(Change {
                name: t.clone(),
                old: bo,
                new: bn,
            });
        }
    }
    let (ro, rn) = (old.role_allows(), new.role_allows());
    c.role_allows_added = rn
        .difference(&ro)
        .map(|(a, b)| format!("{a} -> {b}"))
        .collect();
    c.role_allows_removed = ro
        .difference(&rn)
        .map(|(a, b)| format!("{a} -> {b}"))
        .collect();
    c
}

/// The permissions of a class on one side, by name (bit 0 first).
pub fn perm_names(s: &Side, class: &str) -> Vec<String> {
    let p = s.tables();
    let Some(cv) = p.class_value(class) else {
        return Vec::new();
    };
    (0..32)
        .filter_map(|b| p.perm_name(cv, b))
        .map(str::to_string)
        .collect()
}

/// The rule diff's counts by kind, for summaries: (added, removed).
pub fn rule_counts(rules: &[RuleChanges]) -> BTreeMap<&'static str, (usize, usize)> {
    rules
        .iter()
        .map(|r| (r.ruletype, (r.added.len(), r.removed.len())))
        .collect()
}
