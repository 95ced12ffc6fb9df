//! The MLS range of a new context: the kernel's mls_compute_sid and mls_context_glblub.

use seaccess_policy::{Context, DefaultRange, Ebitmap, Level, Range, TypeRuleKind};

use crate::error::{Result, SecurityError};
use crate::generation::Generation;

impl Generation {
    /// The range of a new context (before the validity check).
    pub(crate) fn mls_compute(
        &self,
        s: &Context,
        t: &Context,
        class: u32,
        kind: TypeRuleKind,
        sock: bool,
    ) -> Result<Range> {
        let c = &*self.c;
        let (Some(sr), Some(tr)) = (&s.range, &t.range) else {
            return Err(SecurityError::InvalidComputedContext(
                "context without a level in an MLS policy".into(),
            ));
        };
        let low = |r: &Range| Range {
            low: r.low.clone(),
            high: r.low.clone(),
        };
        let high = |r: &Range| Range {
            low: r.high.clone(),
            high: r.high.clone(),
        };
        if kind == TypeRuleKind::Transition {
            if let Some(r) = c.range_trans.get(&(s.ty, t.ty, class)) {
                return Ok(r.clone());
            }
            let dr = c
                .policy
                .classes
                .get((class as usize).wrapping_sub(1))
                .and_then(|d| d.default_range);
            match dr {
                Some(DefaultRange::SourceLow) => return Ok(low(sr)),
                Some(DefaultRange::SourceHigh) => return Ok(high(sr)),
                Some(DefaultRange::SourceLowHigh) => return Ok(sr.clone()),
                Some(DefaultRange::TargetLow) => return Ok(low(tr)),
                Some(DefaultRange::TargetHigh) => return Ok(high(tr)),
                Some(DefaultRange::TargetLowHigh) => return Ok(tr.clone()),
                Some(DefaultRange::Glblub) => return glblub(sr, tr),
                None => {}
            }
        }
        if kind != TypeRuleKind::Member && (class == c.process_class || sock) {
            Ok(sr.clone())
        } else {
            Ok(low(sr))
        }
    }
}

/// The kernel's mls_context_glblub: the greatest lower bound of the low levels and the least
/// upper bound of the high levels; an empty intersection is an error.
fn glblub(a: &Range, b: &Range) -> Result<Range> {
    let low_sens = a.low.sens.max(b.low.sens);
    let low_cats = Ebitmap::from_bits(a.low.cats.iter().filter(|c| b.low.cats.get(*c)));
    let high_sens = a.high.sens.min(b.high.sens);
    let high_cats = Ebitmap::from_bits(a.high.cats.iter().filter(|c| b.high.cats.get(*c)));
    let r = Range {
        low: Level {
            sens: low_sens,
            cats: low_cats,
        },
        high: Level {
            sens: high_sens,
            cats: high_cats,
        },
    };
    if !seaccess_policy::level_dom(&r.high, &r.low) {
        return Err(SecurityError::InvalidComputedContext(
            "default_range glblub: the ranges do not overlap".into(),
        ));
    }
    Ok(r)
}
