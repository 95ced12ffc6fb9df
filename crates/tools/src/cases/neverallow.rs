//! `[[neverallow]]`: type and attribute names expanded to the types they stand for (the
//! policy's type-to-attribute map), then every (source type, target type, class) asked of the
//! security server's type-level decision, as checkpolicy's assertion check asks the rules.

use std::collections::BTreeSet;

use seaccess_security::Generation;
use seaccess_types::ClassId;
use serde::Serialize;

use super::names::{class_id, perm_bit};
use super::read::Spot;
use crate::suggest::did_you_mean;

/// One (source type, target type, class) a neverallow forbids that the policy allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub source: String,
    pub target: String,
    pub class: String,
    pub perms: Vec<String>,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "allow {} {}:{} {{ {} }};",
            self.source,
            self.target,
            self.class,
            self.perms.join(" ")
        )
    }
}

/// A neverallow with its names resolved.
pub(super) struct Never {
    sources: Vec<u32>,
    targets: Vec<u32>,
    /// Whether `self` is among the targets: each source type against itself.
    with_self: bool,
    /// Each class and the permissions forbidden on it.
    classes: Vec<(ClassId, String, u32)>,
}

pub(super) fn resolve(
    g: &Generation,
    source: &[Spot<String>],
    target: &[Spot<String>],
    classes: &[Spot<String>],
    perms: &[Spot<String>],
    bad: &mut Vec<(usize, String)>,
) -> Option<Never> {
    let sources = types(g, source, false, bad);
    let with_self = target.iter().any(|t| t.value == "self");
    let targets = types(g, target, true, bad);
    let mut cls = Vec::new();
    for c in classes {
        let Some(k) = class_id(g, c, bad) else {
            continue;
        };
        let mut mask = 0u32;
        for p in perms {
            if p.value == "*" {
                mask |= (0..32)
                    .filter(|&b| g.perm_name(k, b).is_some())
                    .fold(0, |m, b| m | 1 << b);
            } else if let Some(b) = perm_bit(g, k, &c.value, p, bad) {
                mask |= 1 << b;
            }
        }
        cls.push((k, c.value.clone(), mask));
    }
    Some(Never {
        sources: sources?,
        targets: targets?,
        with_self,
        classes: cls,
    })
}

/// The types `names` stand for, in value order: each type itself, each attribute its types,
/// less those of names written `-NAME`. `self` is left to the caller where `allow_self`.
fn types(
    g: &Generation,
    names: &[Spot<String>],
    allow_self: bool,
    bad: &mut Vec<(usize, String)>,
) -> Option<Vec<u32>> {
    let p = g.policy();
    let (mut plus, mut minus) = (BTreeSet::new(), BTreeSet::new());
    let mut ok = true;
    for n in names {
        if allow_self && n.value == "self" {
            continue;
        }
        let (set, name) = match n.value.strip_prefix('-') {
            Some(rest) => (&mut minus, rest),
            None => (&mut plus, n.value.as_str()),
        };
        let Some(v) = p.type_names.value(name).filter(|&v| v > 0) else {
            let known = p.type_names.by_value.iter().map(|n| &**n);
            bad.push((
                n.line,
                format!(
                    "unknown type or attribute \"{name}\"{}",
                    did_you_mean(name, known)
                ),
            ));
            ok = false;
            continue;
        };
        let is_attr = p.types.get(v as usize - 1).is_some_and(|t| t.attribute);
        if !is_attr {
            set.insert(v);
            continue;
        }
        for (i, (t, attrs)) in p.types.iter().zip(&p.type_attr_map).enumerate() {
            if !t.attribute && t.name.is_some() && attrs.get(v - 1) {
                set.insert(i as u32 + 1);
            }
        }
    }
    ok.then(|| plus.difference(&minus).copied().collect())
}

/// Every (source type, target type, class) the policy allows any forbidden permission for, in
/// the names' order.
pub(super) fn check(g: &Generation, n: &Never) -> Vec<Violation> {
    let p = g.policy();
    let name = |v: u32| p.type_names.name(v).unwrap_or("?").to_string();
    let mut out = Vec::new();
    for &s in &n.sources {
        let selves = n.with_self.then_some(s);
        for t in n
            .targets
            .iter()
            .copied()
            .chain(selves.filter(|s| n.targets.binary_search(s).is_err()))
        {
            for (class, cname, mask) in &n.classes {
                let got = g.type_allowed(s, t, *class).map_or(0, |v| v.0) & mask;
                if got == 0 {
                    continue;
                }
                let perms = (0..32)
                    .filter(|b| got & (1 << b) != 0)
                    .filter_map(|b| g.perm_name(*class, b))
                    .map(str::to_string)
                    .collect();
                out.push(Violation {
                    source: name(s),
                    target: name(t),
                    class: cname.clone(),
                    perms,
                });
            }
        }
    }
    out.sort_by(|a, b| (&a.source, &a.target, &a.class).cmp(&(&b.source, &b.target, &b.class)));
    out
}
