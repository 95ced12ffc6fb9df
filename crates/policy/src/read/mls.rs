//! MLS levels and ranges as the format stores them, and range transitions.

use rustc_hash::FxHashSet as HashSet;

use super::{class_ok, type_ok};
use crate::ebitmap::Ebitmap;
use crate::error::{Result, Section};
use crate::model::*;
use crate::reader::Reader;

pub(super) fn level(r: &mut Reader<'_>) -> Result<Level> {
    let sens = r.u32()?;
    let cats = Ebitmap::read(r)?;
    Ok(Level { sens, cats })
}

pub(super) fn range(r: &mut Reader<'_>) -> Result<Range> {
    let at = r.offset();
    let items = r.u32()?;
    if items == 0 || items > 2 {
        return Err(r.invalid_at(at, format!("range with {items} sensitivities")));
    }
    let low_sens = r.u32()?;
    let high_sens = if items > 1 { r.u32()? } else { low_sens };
    let low_cats = Ebitmap::read(r)?;
    let high_cats = if items > 1 {
        Ebitmap::read(r)?
    } else {
        low_cats.clone()
    };
    Ok(Range {
        low: Level {
            sens: low_sens,
            cats: low_cats,
        },
        high: Level {
            sens: high_sens,
            cats: high_cats,
        },
    })
}

pub(super) fn range_transitions(r: &mut Reader<'_>, p: &mut PolicyTables) -> Result<()> {
    r.enter(Section::RangeTransitions);
    let n = r.count("range transition", 24)?;
    let mut seen = HashSet::default();
    for _ in 0..n {
        let at = r.offset();
        let source_type = r.u32()?;
        let target_type = r.u32()?;
        let class = r.u32()?;
        let range = range(r)?;
        if !type_ok(p, source_type) || !type_ok(p, target_type) || !class_ok(p, class) {
            return Err(r.invalid_at(
                at,
                "range transition names a type or class not in the policy",
            ));
        }
        if p.mls && !p.range_is_valid(&range) {
            return Err(r.invalid_at(at, "range transition to an invalid range"));
        }
        if !seen.insert((source_type, target_type, class)) {
            return Err(r.invalid_at(at, "two range transitions for one source, target and class"));
        }
        p.range_trans.push(RangeTrans {
            source_type,
            target_type,
            class,
            range,
        });
    }
    Ok(())
}
