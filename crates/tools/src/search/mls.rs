//! range_transition rules, and the MLS ranges a search names (`-D s0 - s0:c0.c1023`).

use seaccess_policy::{Ebitmap, Level, PolicyTables, Range};

use super::names::{lookup, type_name};
use super::{class_hits, text, type_crit, type_hits, Found, Query, RuleType};
use crate::ToolsError;

/// A level as written in policy and by setools: `s0`, `s0:c0.c3,c5`, aliases allowed.
fn parse_level(p: &PolicyTables, s: &str) -> Result<Level, ToolsError> {
    let s = s.trim();
    let (sens, cats) = match s.split_once(':') {
        Some((a, b)) => (a.trim(), Some(b.trim())),
        None => (s, None),
    };
    let sens = lookup(&p.sens_names, "sensitivity", sens)?;
    let mut bits = Ebitmap::new();
    for item in cats
        .map(|c| c.split(',').collect::<Vec<_>>())
        .unwrap_or_default()
    {
        let (lo, hi) = match item.split_once('.') {
            Some((a, b)) => (
                lookup(&p.cat_names, "category", a.trim())?,
                lookup(&p.cat_names, "category", b.trim())?,
            ),
            None => {
                let c = lookup(&p.cat_names, "category", item.trim())?;
                (c, c)
            }
        };
        if hi < lo {
            return Err(ToolsError::Query(format!(
                "level {s:?}: category range {item:?} runs backwards"
            )));
        }
        for c in lo..=hi {
            bits.set(c - 1);
        }
    }
    Ok(Level { sens, cats: bits })
}

/// A range: `LOW` or `LOW - HIGH`.
pub(crate) fn parse_range(p: &PolicyTables, s: &str) -> Result<Range, ToolsError> {
    let (low, high) = match s.split_once('-') {
        Some((a, b)) => (parse_level(p, a)?, parse_level(p, b)?),
        None => {
            let l = parse_level(p, s)?;
            (l.clone(), l)
        }
    };
    Ok(Range { low, high })
}

pub(super) fn range_rules<'a>(
    p: &'a PolicyTables,
    q: &Query,
    exp: &[Vec<u32>],
) -> Result<Vec<Found<'a>>, ToolsError> {
    if !q.ruletypes.contains(&RuleType::RangeTransition) {
        return Ok(Vec::new());
    }
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
        .map(|s| parse_range(p, s))
        .transpose()?;
    let classes = class_hits(p, q)?;
    let hit = |h: &Option<Vec<bool>>, v: u32| {
        h.as_ref()
            .is_none_or(|h| h.get(v as usize).copied().unwrap_or(false))
    };
    let mut out = Vec::new();
    for r in &p.range_trans {
        if !hit(&src, r.source_type)
            || !hit(&tgt, r.target_type)
            || !hit(&classes, r.class)
            || dflt.as_ref().is_some_and(|d| *d != r.range)
        {
            continue;
        }
        let (source, target, class, range) = (
            type_name(p, r.source_type),
            type_name(p, r.target_type),
            p.class_names.name(r.class).unwrap_or("?"),
            text::range_text(p, &r.range),
        );
        let line = format!("range_transition {source} {target}:{class} {range};");
        out.push(Found {
            default: Some(range.into()),
            line,
            ..Found::new(RuleType::RangeTransition, source, target, Some(class))
        });
    }
    Ok(out)
}
