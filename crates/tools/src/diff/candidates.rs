//! Which (source type, target type, class) triples a decision diff computes. Every triple of a
//! policy the size of Debian's is billions; but a decision can only change where something it
//! reads changed, so the smart set is the union of:
//! - every triple an allow rule added or removed covers (its attributes expanded on its side);
//! - every triple a conditional allow rule covers whose condition reads a boolean whose value
//!   differs;
//! - for each touched type (added, removed, joining or leaving an attribute, with a new bound or
//!   another representative context), every triple an allow rule covers with it as source or as
//!   target, on either side;
//! - every triple an allow rule of a class covers whose constraints changed (or that exists on
//!   one side only), and of `process` when role allow rules changed;
//! - then, for each bounded type, the triples its bound's changed triples reach through it.
//!
//! Auditallow and dontaudit rules never change what is allowed, and a permissive type's
//! decisions allow what they allowed (the flag is listed among the symbol changes). A sample
//! (seeded) or every triple can be computed instead, which is also how the smart set is tested.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::side::Rule;
use super::{RuleChanges, Side, SymbolChanges};
use crate::search::RuleType;
use crate::ToolsError;

/// A triple by its place in the [`Universe`]: (source type, target type, class).
pub type Triple = (u32, u32, u32);

/// The type and class names of both policies, numbered once for both.
pub struct Universe {
    pub types: Vec<String>,
    pub classes: Vec<String>,
    type_ix: HashMap<String, u32>,
    class_ix: HashMap<String, u32>,
}

impl Universe {
    pub fn new(old: &Side, new: &Side) -> Universe {
        let types: BTreeSet<&str> = old.type_names().chain(new.type_names()).collect();
        let classes: BTreeSet<&str> = old.class_names().chain(new.class_names()).collect();
        let types: Vec<String> = types.into_iter().map(str::to_string).collect();
        let classes: Vec<String> = classes.into_iter().map(str::to_string).collect();
        let type_ix = types
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        let class_ix = classes
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        Universe {
            types,
            classes,
            type_ix,
            class_ix,
        }
    }

    pub fn ty(&self, name: &str) -> Option<u32> {
        self.type_ix.get(name).copied()
    }

    pub fn class(&self, name: &str) -> Option<u32> {
        self.class_ix.get(name).copied()
    }

    pub fn type_name(&self, i: u32) -> &str {
        self.types.get(i as usize).map_or("?", String::as_str)
    }

    pub fn class_name(&self, i: u32) -> &str {
        self.classes.get(i as usize).map_or("?", String::as_str)
    }

    /// How many triples there are in all.
    pub fn size(&self) -> u128 {
        (self.types.len() as u128).pow(2) * self.classes.len() as u128
    }
}

/// Which triples to compute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// Those some change can reach (see the module's comment).
    Smart,
    /// `count` triples drawn at random (with `seed`) from every triple.
    Sample { count: usize, seed: u64 },
    /// Every triple (small policies only: refused above `limit`).
    All { limit: u128 },
}

/// The triples to compute, sorted.
pub fn triples(
    old: &Side,
    new: &Side,
    u: &Universe,
    scope: Scope,
    rules: &[RuleChanges],
    symbols: &SymbolChanges,
) -> Result<Vec<Triple>, ToolsError> {
    let (nt, nc) = (u.types.len() as u64, u.classes.len() as u64);
    let mut v: Vec<Triple> = match scope {
        Scope::Smart => smart(old, new, u, rules, symbols).into_iter().collect(),
        Scope::Sample { count, seed } => {
            if nt == 0 || nc == 0 {
                return Ok(Vec::new());
            }
            let mut x = seed ^ 0x9e37_79b9_7f4a_7c15;
            let mut next = |n: u64| {
                // splitmix64: a fixed, seedable stream, the same on every platform.
                x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                ((z ^ (z >> 31)) % n) as u32
            };
            let set: HashSet<Triple> = (0..count).map(|_| (next(nt), next(nt), next(nc))).collect();
            set.into_iter().collect()
        }
        Scope::All { limit } => {
            if u.size() > limit {
                return Err(ToolsError::Query(format!(
                    "every triple is {} ({} types squared times {} classes), over the limit of {limit}: use the default (the triples a change can reach) or a sample",
                    u.size(),
                    nt,
                    nc
                )));
            }
            let mut all = Vec::new();
            for s in 0..nt as u32 {
                for t in 0..nt as u32 {
                    all.extend((0..nc as u32).map(|c| (s, t, c)));
                }
            }
            all
        }
    };
    v.sort_unstable();
    Ok(v)
}

/// Adds every triple rule `f` of `side` covers.
pub(crate) fn expand(side: &Side, u: &Universe, f: &Rule, out: &mut HashSet<Triple>) {
    let Some(c) = f.class.as_deref().and_then(|c| u.class(c)) else {
        return;
    };
    let (Some(src), Some(tgt)) = (side.members.get(&f.source), side.members.get(&f.target)) else {
        return;
    };
    let tgt: Vec<u32> = tgt.iter().filter_map(|t| u.ty(t)).collect();
    for s in src.iter().filter_map(|s| u.ty(s)) {
        out.extend(tgt.iter().map(|&t| (s, t, c)));
    }
}

/// Adds every triple a rule of kind `kind` covers with type `t` as its source or its target.
pub(crate) fn touch(
    side: &Side,
    u: &Universe,
    kind: &'static str,
    t: &str,
    out: &mut HashSet<Triple>,
) {
    let (Some(ti), Some(cov)) = (u.ty(t), side.covers.get(t)) else {
        return;
    };
    for a in cov {
        for &i in side
            .av_from
            .get(&(kind, a.clone()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let Some(f) = side.rules.get(i) else { continue };
            let (Some(c), Some(tgt)) = (
                f.class.as_deref().and_then(|c| u.class(c)),
                side.members.get(&f.target),
            ) else {
                continue;
            };
            out.extend(tgt.iter().filter_map(|x| u.ty(x)).map(|x| (ti, x, c)));
        }
        for &i in side
            .av_to
            .get(&(kind, a.clone()))
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            let Some(f) = side.rules.get(i) else { continue };
            let (Some(c), Some(src)) = (
                f.class.as_deref().and_then(|c| u.class(c)),
                side.members.get(&f.source),
            ) else {
                continue;
            };
            out.extend(src.iter().filter_map(|x| u.ty(x)).map(|x| (x, ti, c)));
        }
    }
}

fn is_allow(f: &Rule) -> bool {
    f.ruletype == RuleType::Allow.name()
}

fn smart(
    old: &Side,
    new: &Side,
    u: &Universe,
    rules: &[RuleChanges],
    symbols: &SymbolChanges,
) -> HashSet<Triple> {
    let mut out = HashSet::new();
    let sides = [old, new];
    // Allow rules added or removed.
    if let Some(r) = rules.iter().find(|r| r.ruletype == RuleType::Allow.name()) {
        let (removed, added): (HashSet<&str>, HashSet<&str>) = (
            r.removed.iter().map(String::as_str).collect(),
            r.added.iter().map(String::as_str).collect(),
        );
        for (side, lines) in [(old, &removed), (new, &added)] {
            for f in side
                .rules
                .iter()
                .filter(|f| is_allow(f) && lines.contains(f.line.as_str()))
            {
                expand(side, u, f, &mut out);
            }
        }
    }
    // Conditional allow rules reading a boolean whose value differs.
    let flipped: HashSet<&str> = symbols.booleans.iter().map(|b| b.name.as_str()).collect();
    if !flipped.is_empty() {
        for side in sides {
            for f in side.rules.iter().filter(|f| is_allow(f)) {
                if f.conditional
                    .as_deref()
                    .is_some_and(|c| c.split_whitespace().any(|w| flipped.contains(w)))
                {
                    expand(side, u, f, &mut out);
                }
            }
        }
    }
    // Types whose attributes, existence, bound or representative context changed.
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
    touched.extend(symbols.bounds.iter().map(|b| b.name.as_str()));
    for t in &u.types {
        if old.context_for(t) != new.context_for(t) || old.sid(t).is_some() != new.sid(t).is_some()
        {
            touched.insert(t);
        }
    }
    for side in sides {
        for t in &touched {
            touch(side, u, RuleType::Allow.name(), t, &mut out);
        }
    }
    // Classes whose constraints changed or that one side lacks; process, if role allows changed.
    let mut classes: BTreeSet<&str> = symbols
        .constraints
        .iter()
        .chain(&symbols.classes_added)
        .chain(&symbols.classes_removed)
        .map(String::as_str)
        .collect();
    if !symbols.role_allows_added.is_empty() || !symbols.role_allows_removed.is_empty() {
        classes.insert("process");
    }
    if !classes.is_empty() {
        for side in sides {
            for f in side
                .rules
                .iter()
                .filter(|f| is_allow(f) && f.class.as_deref().is_some_and(|c| classes.contains(c)))
            {
                expand(side, u, f, &mut out);
            }
        }
    }
    bounded(old, new, u, &mut out);
    out
}

/// A bounded type's decision is masked by its bound's (with the target's bound for a bounded
/// target): each triple of a bound that may change brings the bounded types' triples it masks.
fn bounded(old: &Side, new: &Side, u: &Universe, out: &mut HashSet<Triple>) {
    // bound -> types it bounds, on either side.
    let mut children: HashMap<u32, BTreeSet<u32>> = HashMap::new();
    for side in [old, new] {
        for t in side.type_names() {
            if let (Some(b), Some(ti)) = (side.bound(t).and_then(|b| u.ty(b)), u.ty(t)) {
                children.entry(b).or_default().insert(ti);
            }
        }
    }
    if children.is_empty() {
        return;
    }
    let mut todo: Vec<Triple> = out.iter().copied().collect();
    while let Some((s, t, c)) = todo.pop() {
        let Some(kids) = children.get(&s) else {
            continue;
        };
        let mut targets = vec![t];
        targets.extend(children.get(&t).into_iter().flatten().copied());
        for &k in kids {
            for &y in &targets {
                if out.insert((k, y, c)) {
                    todo.push((k, y, c));
                }
            }
        }
    }
}
