//! sesearch's rule queries over a policy's rules as the binary holds them: the access vector
//! table with its attributes, the conditional rules with their boolean expressions, filename
//! type transitions, role allow and role_transition rules, range_transition rules. Matching
//! follows setools 4.4 (`TERuleQuery`, `RBACRuleQuery`, `MLSRuleQuery` as `sesearch` sets them
//! up), and each rule found carries the line sesearch prints for it, plus what setools 4 no
//! longer says: whether a conditional rule is in effect under the booleans' values.
//!
//! [`listing`] holds seinfo's listings of types, attributes, roles, users, classes and booleans.

pub mod listing;
mod mls;
mod names;
mod rbac;
mod text;

use std::borrow::Cow;

use regex::Regex;
use seaccess_policy::{
    AvKind, AvtabEntry, CondNode, Policy, PolicyTables, RuleKind, TypeRuleKind, XpermsKind,
    XpermsRuleKind,
};
use serde::Serialize;

use crate::ToolsError;
use names::{expansions, lookup, type_name};

/// The kinds of rule sesearch searches, each selected by its own option.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RuleType {
    Allow,
    AllowXperm,
    AuditAllow,
    AuditAllowXperm,
    DontAudit,
    DontAuditXperm,
    NeverAllow,
    NeverAllowXperm,
    TypeTransition,
    TypeChange,
    TypeMember,
    RoleAllow,
    RoleTransition,
    RangeTransition,
}

impl RuleType {
    /// The rule's name, as sesearch's options spell it (`role_allow` for a role allow rule).
    pub fn name(self) -> &'static str {
        match self {
            RuleType::Allow => "allow",
            RuleType::AllowXperm => "allowxperm",
            RuleType::AuditAllow => "auditallow",
            RuleType::AuditAllowXperm => "auditallowxperm",
            RuleType::DontAudit => "dontaudit",
            RuleType::DontAuditXperm => "dontauditxperm",
            RuleType::NeverAllow => "neverallow",
            RuleType::NeverAllowXperm => "neverallowxperm",
            RuleType::TypeTransition => "type_transition",
            RuleType::TypeChange => "type_change",
            RuleType::TypeMember => "type_member",
            RuleType::RoleAllow => "role_allow",
            RuleType::RoleTransition => "role_transition",
            RuleType::RangeTransition => "range_transition",
        }
    }

    /// The word a rule line begins with.
    pub fn keyword(self) -> &'static str {
        match self {
            RuleType::RoleAllow => "allow",
            other => other.name(),
        }
    }

    fn family(self) -> Family {
        match self {
            RuleType::RoleAllow | RuleType::RoleTransition => Family::Rbac,
            RuleType::RangeTransition => Family::Mls,
            _ => Family::Te,
        }
    }

    fn of_kind(kind: RuleKind) -> RuleType {
        match kind {
            RuleKind::Av(AvKind::Allowed) => RuleType::Allow,
            RuleKind::Av(AvKind::AuditAllow) => RuleType::AuditAllow,
            RuleKind::Av(AvKind::AuditDeny) => RuleType::DontAudit,
            RuleKind::Type(TypeRuleKind::Transition) => RuleType::TypeTransition,
            RuleKind::Type(TypeRuleKind::Member) => RuleType::TypeMember,
            RuleKind::Type(TypeRuleKind::Change) => RuleType::TypeChange,
            RuleKind::Xperms(XpermsRuleKind::Allowed) => RuleType::AllowXperm,
            RuleKind::Xperms(XpermsRuleKind::AuditAllow) => RuleType::AuditAllowXperm,
            RuleKind::Xperms(XpermsRuleKind::DontAudit) => RuleType::DontAuditXperm,
        }
    }
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Family {
    Te,
    Rbac,
    Mls,
}

/// Which criteria are regular expressions (sesearch's `-rs -rt -rc -rd -rb`), matched anywhere
/// in a name as Python's `re.search` does.
#[derive(Clone, Debug, Default)]
pub struct Regexes {
    pub source: bool,
    pub target: bool,
    pub class: bool,
    pub default: bool,
    pub bools: bool,
}

/// A search, in sesearch's terms: lists are comma-separated strings as sesearch takes them.
#[derive(Clone, Debug, Default)]
pub struct Query {
    pub ruletypes: Vec<RuleType>,
    /// Source type or attribute (a role for role rules).
    pub source: Option<String>,
    pub target: Option<String>,
    /// Match the source as named (`-ds`) instead of by the types it stands for.
    pub source_direct: bool,
    pub target_direct: bool,
    pub classes: Option<String>,
    pub perms: Option<String>,
    /// Rule's permissions equal the list (`-ep`) instead of sharing one with it.
    pub perms_equal: bool,
    /// The list is a subset of the rule's permissions (`-Sp`).
    pub perms_subset: bool,
    /// Ioctl numbers and ranges, hexadecimal: `0x8900-0x8905,0x5401`.
    pub xperms: Option<String>,
    pub xperms_equal: bool,
    /// The new type (type rules), role (role_transition) or range (range_transition).
    pub default: Option<String>,
    /// Booleans of the rule's condition.
    pub bools: Option<String>,
    pub bools_equal: bool,
    pub regex: Regexes,
    /// Boolean values to judge conditional rules by, over the policy's defaults.
    pub values: Vec<(String, bool)>,
}

/// A rule found: its parts, whether it is in effect, and the line sesearch prints for it.
/// Names are borrowed from the policy: a search may find a hundred thousand rules.
#[derive(Clone, Debug, Serialize)]
pub struct Found<'a> {
    pub ruletype: &'static str,
    pub source: &'a str,
    pub target: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<&'a str>,
    /// An access vector rule's permissions, sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub perms: Vec<&'a str>,
    /// An extended-permission rule's kind (`ioctl`) and its numbers as runs (first, last).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub xperm_type: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub xperms: Vec<(u32, u32)>,
    /// The new type, role or range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filename: Option<&'a str>,
    /// The condition, as sesearch prints it, and the branch the rule is in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conditional: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<bool>,
    /// In effect under the booleans' values: always for an unconditional rule; for a
    /// conditional one, when its condition's value is its branch.
    pub enabled: bool,
    pub line: String,
}

impl<'a> Found<'a> {
    /// An unconditional rule of kind `rt` with nothing but its source, target and class: each
    /// kind of rule fills in the rest.
    pub(crate) fn new(
        rt: RuleType,
        source: &'a str,
        target: &'a str,
        class: Option<&'a str>,
    ) -> Found<'a> {
        Found {
            ruletype: rt.name(),
            source,
            target,
            class,
            perms: Vec::new(),
            xperm_type: None,
            xperms: Vec::new(),
            default: None,
            filename: None,
            conditional: None,
            branch: None,
            enabled: true,
            line: String::new(),
        }
    }
}

/// A name criterion: one type, attribute or role, or a regular expression.
enum Crit {
    Type(u32),
    Role(u32),
    Regex(Regex),
}

fn regex(what: &str, s: &str) -> Result<Regex, ToolsError> {
    Regex::new(s)
        .map_err(|e| ToolsError::Query(format!("{what} {s:?} is not a regular expression: {e}")))
}

/// The comma-separated items of a list option, none empty.
fn items<'a>(what: &str, s: &'a str) -> Result<Vec<&'a str>, ToolsError> {
    let v: Vec<&str> = s.split(',').map(str::trim).collect();
    if v.iter().any(|i| i.is_empty()) {
        return Err(ToolsError::Query(format!(
            "{what} {s:?}: empty item in the comma-separated list"
        )));
    }
    Ok(v)
}

/// The rules of `policy` that `q` selects: TE rules, then role rules, then range rules, each
/// part sorted by its line as sesearch sorts them (repeats kept, as sesearch keeps them).
pub fn search<'a>(policy: &'a Policy, q: &Query) -> Result<Vec<Found<'a>>, ToolsError> {
    if q.ruletypes.is_empty() {
        return Err(ToolsError::Query(
            "at least one rule type must be given (e.g. -A, --allow, -T, --role_allow)".into(),
        ));
    }
    let p: &PolicyTables = policy;
    let values = bool_values(p, &q.values)?;
    let exp = expansions(p);
    let mut out = Vec::new();
    let wants = |f: Family| q.ruletypes.iter().any(|r| r.family() == f);
    if wants(Family::Te) {
        out.extend(by_line(te_rules(policy, q, &exp, &values)?));
    }
    if wants(Family::Rbac) {
        out.extend(by_line(rbac::rbac_rules(p, q, &exp)?));
    }
    if wants(Family::Mls) {
        out.extend(by_line(mls::range_rules(p, q, &exp)?));
    }
    Ok(out)
}

/// Rules sorted by their lines, as sesearch sorts them; through an index, since moving the
/// rules themselves at every step of a sort of a hundred thousand of them costs more than the
/// search.
fn by_line(v: Vec<Found<'_>>) -> Vec<Found<'_>> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&a, &b| v.get(a).map(|f| &f.line).cmp(&v.get(b).map(|f| &f.line)));
    let mut slots: Vec<Option<Found>> = v.into_iter().map(Some).collect();
    order
        .into_iter()
        .filter_map(|i| slots.get_mut(i).and_then(Option::take))
        .collect()
}

/// Every boolean's value (index = value - 1): the policy's default unless `overrides` sets it.
pub fn bool_values(
    p: &PolicyTables,
    overrides: &[(String, bool)],
) -> Result<Vec<bool>, ToolsError> {
    let mut values: Vec<bool> = p.bools.iter().map(|b| b.state).collect();
    for (name, v) in overrides {
        let b = lookup(&p.bool_names, "boolean", name)?;
        if let Some(slot) = values.get_mut(b as usize - 1) {
            *slot = *v;
        }
    }
    Ok(values)
}

/// A type-or-attribute criterion (setools' `lookup_type_or_attr`), or a regular expression.
fn type_crit(p: &PolicyTables, what: &str, s: &str, regex_on: bool) -> Result<Crit, ToolsError> {
    if regex_on {
        return Ok(Crit::Regex(regex(what, s)?));
    }
    let v = p
        .type_names
        .value(s)
        .filter(|v| p.type_names.is_defined(*v))
        .ok_or_else(|| names::unknown(&p.type_names, "type or attribute", s))?;
    Ok(Crit::Type(v))
}

/// For each type value, whether a rule naming it matches `crit`: with `direct`, the name
/// itself; otherwise whether the types it stands for meet those `crit` stands for (setools'
/// `match_indirect_regex`).
fn type_hits(p: &PolicyTables, exp: &[Vec<u32>], crit: &Crit, direct: bool) -> Vec<bool> {
    let n = p.types.len() + 1;
    let base: Vec<bool> = match crit {
        Crit::Type(c) if direct => return (0..n as u32).map(|v| v == *c).collect(),
        Crit::Type(c) => {
            let mut s = vec![false; n];
            for &t in exp.get(*c as usize).map(Vec::as_slice).unwrap_or(&[]) {
                if let Some(x) = s.get_mut(t as usize) {
                    *x = true;
                }
            }
            s
        }
        Crit::Regex(re) => (0..n as u32)
            .map(|v| v != 0 && p.type_names.is_defined(v) && re.is_match(type_name(p, v)))
            .collect(),
        Crit::Role(_) => return vec![false; n],
    };
    if direct {
        return base;
    }
    exp.iter()
        .map(|ts| {
            ts.iter()
                .any(|&t| base.get(t as usize).copied().unwrap_or(false))
        })
        .collect()
}

/// For each class value, whether it is selected: a comma-separated list of names, or one
/// regular expression.
fn class_hits(p: &PolicyTables, q: &Query) -> Result<Option<Vec<bool>>, ToolsError> {
    let Some(s) = &q.classes else { return Ok(None) };
    let n = p.classes.len() + 1;
    if q.regex.class {
        let re = regex("class", s)?;
        return Ok(Some(
            (0..n as u32)
                .map(|c| p.class_names.name(c).is_some_and(|name| re.is_match(name)))
                .collect(),
        ));
    }
    let mut hits = vec![false; n];
    for name in items("class", s)? {
        let c = lookup(&p.class_names, "class", name)?;
        if let Some(h) = hits.get_mut(c as usize) {
            *h = true;
        }
    }
    Ok(Some(hits))
}

/// The permission criterion, per class: the bits of the listed permissions the class has, and
/// whether it has them all.
struct PermCrit {
    count: usize,
    per_class: Vec<(u32, bool)>,
}

fn perm_crit(
    p: &PolicyTables,
    q: &Query,
    classes: Option<&Vec<bool>>,
) -> Result<Option<PermCrit>, ToolsError> {
    let Some(s) = &q.perms else { return Ok(None) };
    let mut list = items("permission", s)?;
    list.sort_unstable();
    list.dedup();
    let selected = |c: usize| classes.is_none_or(|h| h.get(c + 1).copied().unwrap_or(false));
    // setools refuses a permission no selected class has (any class, when none is selected).
    for perm in &list {
        if !p
            .classes
            .iter()
            .enumerate()
            .any(|(i, c)| selected(i) && c.perms.value(perm).is_some())
        {
            let known: Vec<&str> = p
                .classes
                .iter()
                .enumerate()
                .filter(|(i, _)| selected(*i))
                .flat_map(|(_, c)| c.perms.by_value.iter().map(|s| &**s))
                .collect();
            let mut known = known;
            known.sort_unstable();
            known.dedup();
            let where_ = if classes.is_some() {
                " in the selected classes"
            } else {
                ""
            };
            return Err(ToolsError::Unknown {
                what: "permission",
                name: format!("{perm}{where_}"),
                hint: crate::suggest::did_you_mean(perm, known),
            });
        }
    }
    let mut per_class = vec![(0u32, false)];
    for c in &p.classes {
        let mut mask = 0u32;
        let mut all = true;
        for perm in &list {
            match c.perms.value(perm) {
                Some(v) if (1..=32).contains(&v) => mask |= 1 << (v - 1),
                _ => all = false,
            }
        }
        per_class.push((mask, all));
    }
    Ok(Some(PermCrit {
        count: list.len(),
        per_class,
    }))
}

/// The ioctl numbers of sesearch's `-x`: hexadecimal numbers and ranges, comma-separated.
fn xperm_crit(q: &Query) -> Result<Option<Vec<u32>>, ToolsError> {
    let Some(s) = &q.xperms else { return Ok(None) };
    let num = |t: &str| {
        let t = t.trim();
        let h = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        u32::from_str_radix(h, 16)
            .ok()
            .filter(|v| *v <= 0xffff)
            .ok_or_else(|| {
                ToolsError::Query(format!(
                    "-x {s:?}: {t:?} is not an ioctl number (hexadecimal, at most 0xffff)"
                ))
            })
    };
    let mut v = Vec::new();
    for item in items("extended permission", s)? {
        let (lo, hi) = match item.split_once('-') {
            Some((a, b)) => (num(a)?, num(b)?),
            None => (num(item)?, num(item)?),
        };
        v.extend(lo.min(hi)..=lo.max(hi));
    }
    v.sort_unstable();
    v.dedup();
    Ok(Some(v))
}

/// The booleans criterion: for each conditional, whether its expression's booleans match.
fn cond_hits(
    p: &PolicyTables,
    q: &Query,
    conds: &[CondNode],
) -> Result<Option<Vec<bool>>, ToolsError> {
    let Some(s) = &q.bools else { return Ok(None) };
    if q.regex.bools {
        let re = regex("boolean", s)?;
        return Ok(Some(
            conds
                .iter()
                .map(|c| {
                    text::cond_bools(&c.expr)
                        .iter()
                        .any(|&b| p.bool_names.name(b).is_some_and(|n| re.is_match(n)))
                })
                .collect(),
        ));
    }
    let mut want: Vec<u32> = items("boolean", s)?
        .into_iter()
        .map(|b| lookup(&p.bool_names, "boolean", b))
        .collect::<Result<_, _>>()?;
    want.sort_unstable();
    want.dedup();
    Ok(Some(
        conds
            .iter()
            .map(|c| {
                let have = text::cond_bools(&c.expr);
                if q.bools_equal {
                    have == want
                } else {
                    have.iter().any(|b| want.binary_search(b).is_ok())
                }
            })
            .collect(),
    ))
}

/// An extended-permission rule's kind word and ioctl numbers, as setools reads them: a
/// function map is of one driver; a driver map stands for every function of each driver.
fn xperm_numbers(x: &seaccess_policy::Xperms) -> (&'static str, Vec<u32>) {
    let bits = (0..256u32).filter(|b| {
        x.perms
            .get((b / 32) as usize)
            .is_some_and(|w| w & (1 << (b % 32)) != 0)
    });
    match x.kind {
        XpermsKind::IoctlFunction => (
            "ioctl",
            bits.map(|b| u32::from(x.driver) << 8 | b).collect(),
        ),
        XpermsKind::IoctlDriver => (
            "ioctl",
            bits.flat_map(|d| (d << 8)..((d << 8) + 256)).collect(),
        ),
        XpermsKind::Nlmsg => (
            "nlmsg",
            bits.map(|b| u32::from(x.driver) << 8 | b).collect(),
        ),
        XpermsKind::Unknown(_) => ("unknown", bits.collect()),
    }
}

fn te_rules<'a>(
    policy: &'a Policy,
    q: &Query,
    exp: &[Vec<u32>],
    values: &[bool],
) -> Result<Vec<Found<'a>>, ToolsError> {
    let p: &'a PolicyTables = policy;
    let rules = policy.rules();
    let src = q
        .source
        .as_deref()
        .map(|s| type_crit(p, "source", s, q.regex.source))
        .transpose()?
        .map(|c| type_hits(p, exp, &c, q.source_direct));
    let tgt = q
        .target
        .as_deref()
        .map(|s| type_crit(p, "target", s, q.regex.target))
        .transpose()?
        .map(|c| type_hits(p, exp, &c, q.target_direct));
    let dflt = q
        .default
        .as_deref()
        .map(|s| type_crit(p, "default", s, q.regex.default))
        .transpose()?
        .map(|c| type_hits(p, exp, &c, false));
    let classes = class_hits(p, q)?;
    let perms = perm_crit(p, q, classes.as_ref())?;
    let xperms = xperm_crit(q)?;
    let conds = rules.conds();
    let cond_ok = cond_hits(p, q, conds)?;
    let wanted = |r: RuleType| q.ruletypes.contains(&r);
    let hit = |h: &Option<Vec<bool>>, v: u32| {
        h.as_ref()
            .is_none_or(|h| h.get(v as usize).copied().unwrap_or(false))
    };
    let cond_texts: Vec<String> = conds.iter().map(|c| text::cond_text(p, &c.expr)).collect();

    let mut out = Vec::new();
    let mut consider = |e: &AvtabEntry, cond: Option<(usize, bool)>| {
        let rt = RuleType::of_kind(e.kind);
        if !wanted(rt)
            || !hit(&src, e.source_type.into())
            || !hit(&tgt, e.target_type.into())
            || !hit(&classes, e.class.into())
        {
            return;
        }
        if cond_ok.is_some() {
            match cond {
                Some((i, _))
                    if cond_ok
                        .as_ref()
                        .is_some_and(|c| c.get(i).copied().unwrap_or(false)) => {}
                _ => return,
            }
        }
        let class_perms = p.classes.get(usize::from(e.class).wrapping_sub(1));
        let mut f = Found::new(
            rt,
            type_name(p, e.source_type.into()),
            type_name(p, e.target_type.into()),
            Some(p.class_names.name(e.class.into()).unwrap_or("?")),
        );
        let body = match e.kind {
            RuleKind::Av(k) => {
                if xperms.is_some() || dflt.is_some() {
                    return;
                }
                let defined: u32 = class_perms
                    .map(|c| {
                        (1..=c.perms.len().min(32) as u32)
                            .filter(|v| c.perms.is_defined(*v))
                            .fold(0, |m, v| m | 1 << (v - 1))
                    })
                    .unwrap_or(0);
                let bits = if k == AvKind::AuditDeny {
                    !e.data
                } else {
                    e.data
                } & defined;
                if let Some(pc) = &perms {
                    let (mask, all) = pc
                        .per_class
                        .get(usize::from(e.class))
                        .copied()
                        .unwrap_or((0, false));
                    let ok = if q.perms_subset {
                        all && bits & mask == mask
                    } else if q.perms_equal {
                        all && bits == mask
                    } else {
                        bits & mask != 0
                    };
                    if !ok {
                        return;
                    }
                }
                let mut names: Vec<&str> = (0..32u32)
                    .filter(|b| bits & (1 << b) != 0)
                    .filter_map(|b| p.perm_name(e.class.into(), b))
                    .collect();
                names.sort_unstable();
                let body = if names.len() == 1 {
                    names.concat()
                } else {
                    format!("{{ {} }}", names.join(" "))
                };
                f.perms = names;
                body
            }
            RuleKind::Type(_) => {
                if perms.is_some() || xperms.is_some() || !hit(&dflt, e.data) {
                    return;
                }
                let d = type_name(p, e.data);
                f.default = Some(Cow::Borrowed(d));
                d.to_string()
            }
            RuleKind::Xperms(_) => {
                if dflt.is_some() {
                    return;
                }
                let Some(x) = rules.xperms().get(e.data as usize) else {
                    return;
                };
                let (kind, nums) = xperm_numbers(x);
                if let Some(pc) = &perms {
                    // setools: an extended rule matches a permission list by its kind's name.
                    if (q.perms_equal && pc.count > 1)
                        || q.perms
                            .as_deref()
                            .is_some_and(|s| !s.split(',').any(|i| i.trim() == kind))
                    {
                        return;
                    }
                }
                if let Some(want) = &xperms {
                    let ok = if q.xperms_equal {
                        &nums == want
                    } else {
                        nums.iter().any(|n| want.binary_search(n).is_ok())
                    };
                    if !ok {
                        return;
                    }
                }
                let (set, braces) = text::ioctl_text(&nums);
                f.xperm_type = Some(kind);
                f.xperms = text::runs(nums.iter().copied());
                if braces {
                    format!("{kind} {{ {set} }}")
                } else {
                    format!("{kind} {set}")
                }
            }
        };
        let mut line = format!(
            "{} {} {}:{} {body};",
            rt.keyword(),
            f.source,
            f.target,
            f.class.unwrap_or("?")
        );
        if let Some((i, branch)) = cond {
            let Some(c) = conds.get(i) else { return };
            let expr = cond_texts.get(i).cloned().unwrap_or_default();
            // setools 4.4 writes an extended-permission rule's line without its condition.
            if !matches!(e.kind, RuleKind::Xperms(_)) {
                line.push_str(&format!(
                    " [ {expr} ]:{}",
                    if branch { "True" } else { "False" }
                ));
            }
            f.enabled = text::cond_eval(&c.expr, values) == branch;
            f.conditional = Some(expr);
            f.branch = Some(branch);
        }
        f.line = line;
        out.push(f);
    };
    for e in rules.avtab() {
        consider(e, None);
    }
    for (i, c) in conds.iter().enumerate() {
        for e in &c.true_list {
            consider(e, Some((i, true)));
        }
        for e in &c.false_list {
            consider(e, Some((i, false)));
        }
    }
    // Filename type transitions: one rule per source type; never conditional, no permissions.
    if wanted(RuleType::TypeTransition) && cond_ok.is_none() && perms.is_none() && xperms.is_none()
    {
        for ft in &p.filename_trans {
            if !hit(&tgt, ft.ttype) || !hit(&classes, ft.class) || !hit(&dflt, ft.otype) {
                continue;
            }
            for s in ft.stypes.iter().map(|b| b + 1) {
                if !hit(&src, s) {
                    continue;
                }
                let (source, target, class, default) = (
                    type_name(p, s),
                    type_name(p, ft.ttype),
                    p.class_names.name(ft.class).unwrap_or("?"),
                    type_name(p, ft.otype),
                );
                let line = format!(
                    "type_transition {source} {target}:{class} {default} {};",
                    ft.name
                );
                out.push(Found {
                    default: Some(Cow::Borrowed(default)),
                    filename: Some(&ft.name),
                    line,
                    ..Found::new(RuleType::TypeTransition, source, target, Some(class))
                });
            }
        }
    }
    Ok(out)
}
