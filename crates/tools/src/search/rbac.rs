//! Role allow and role_transition rules, whose source and target may be roles or types.

use std::borrow::Cow;

use seaccess_policy::PolicyTables;

use super::names::{lookup, type_name};
use super::{class_hits, regex, type_hits, Crit, Found, Query, RuleType};
use crate::ToolsError;

/// A role rule's source or target criterion: a type or attribute if the policy has one of that
/// name (as setools tries first), else a role.
fn rbac_crit(p: &PolicyTables, what: &str, s: &str, regex_on: bool) -> Result<Crit, ToolsError> {
    if regex_on {
        return Ok(Crit::Regex(regex(what, s)?));
    }
    if let Some(v) = p
        .type_names
        .value(s)
        .filter(|v| p.type_names.is_defined(*v))
    {
        return Ok(Crit::Type(v));
    }
    match p
        .role_names
        .value(s)
        .filter(|v| p.role_names.is_defined(*v))
    {
        Some(r) => Ok(Crit::Role(r)),
        None => {
            let mut known: Vec<&str> = p
                .role_names
                .by_value
                .iter()
                .chain(p.type_names.by_value.iter())
                .map(|s| &**s)
                .filter(|s| !s.is_empty())
                .collect();
            known.sort_unstable();
            Err(ToolsError::Unknown {
                what: "role, type or attribute",
                name: s.to_string(),
                hint: crate::suggest::did_you_mean(s, known),
            })
        }
    }
}

/// Whether role `r` matches a criterion (a role stands for itself alone).
fn role_hit(p: &PolicyTables, crit: Option<&Crit>, r: u32) -> bool {
    match crit {
        None => true,
        Some(Crit::Role(c)) => *c == r,
        Some(Crit::Type(_)) => false,
        Some(Crit::Regex(re)) => p.role_names.name(r).is_some_and(|n| re.is_match(n)),
    }
}

pub(super) fn rbac_rules<'a>(
    p: &'a PolicyTables,
    q: &Query,
    exp: &[Vec<u32>],
) -> Result<Vec<Found<'a>>, ToolsError> {
    let src = q
        .source
        .as_deref()
        .map(|s| rbac_crit(p, "source", s, q.regex.source))
        .transpose()?;
    let tgt = q
        .target
        .as_deref()
        .map(|s| rbac_crit(p, "target", s, q.regex.target))
        .transpose()?;
    let tgt_types = tgt.as_ref().map(|c| type_hits(p, exp, c, q.target_direct));
    let dflt = match q.default.as_deref() {
        None => None,
        Some(s) if q.regex.default => Some(Crit::Regex(regex("default", s)?)),
        Some(s) => Some(Crit::Role(lookup(&p.role_names, "role", s)?)),
    };
    let classes = class_hits(p, q)?;
    let role = |r: u32| p.role_names.name(r).unwrap_or("?");
    let mut out = Vec::new();
    let blank =
        |rt: RuleType, source: &'a str, target: &'a str| Found::new(rt, source, target, None);
    if q.ruletypes.contains(&RuleType::RoleAllow) && classes.is_none() && dflt.is_none() {
        for ra in &p.role_allows {
            if !role_hit(p, src.as_ref(), ra.role) || !role_hit(p, tgt.as_ref(), ra.new_role) {
                continue;
            }
            let mut f = blank(RuleType::RoleAllow, role(ra.role), role(ra.new_role));
            f.line = format!("allow {} {};", f.source, f.target);
            out.push(f);
        }
    }
    if q.ruletypes.contains(&RuleType::RoleTransition) {
        for rt in &p.role_trans {
            let class_ok = classes
                .as_ref()
                .is_none_or(|h| h.get(rt.class as usize).copied().unwrap_or(false));
            let tgt_ok = tgt_types
                .as_ref()
                .is_none_or(|h| h.get(rt.ty as usize).copied().unwrap_or(false));
            if !role_hit(p, src.as_ref(), rt.role)
                || !tgt_ok
                || !class_ok
                || !role_hit(p, dflt.as_ref(), rt.new_role)
            {
                continue;
            }
            let mut f = blank(RuleType::RoleTransition, role(rt.role), type_name(p, rt.ty));
            f.class = Some(p.class_names.name(rt.class).unwrap_or("?"));
            f.default = Some(Cow::Borrowed(role(rt.new_role)));
            f.line = format!(
                "role_transition {} {}:{} {};",
                f.source,
                f.target,
                f.class.unwrap_or("?"),
                role(rt.new_role)
            );
            out.push(f);
        }
    }
    Ok(out)
}
