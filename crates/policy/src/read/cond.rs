//! Conditional rules: boolean expressions and the rules each enables when true or false.

use super::avtab::{avtab_item, has_rule};
use crate::error::{Result, Section};
use crate::model::*;
use crate::reader::Reader;

pub(super) fn conditionals(r: &mut Reader<'_>, p: &mut Policy) -> Result<()> {
    use crate::model::cond::*;
    r.section = Section::Conditionals;
    let n = r.count("conditional", 12)?;
    let mut xperms = std::mem::take(&mut p.xperms);
    let mut conds = Vec::with_capacity(n);
    for _ in 0..n {
        let _cur_state = r.u32()?;
        let at = r.offset();
        let ne = r.count("boolean expression", 8)?;
        if ne == 0 {
            return Err(r.invalid_at(at, "empty boolean expression"));
        }
        let mut expr = Vec::with_capacity(ne);
        for _ in 0..ne {
            let eat = r.offset();
            let kind = r.u32()?;
            let boolean = r.u32()?;
            if !(BOOL..=NEQ).contains(&kind) {
                return Err(r.invalid_at(eat, format!("unknown boolean operator {kind}")));
            }
            if kind == BOOL && (boolean == 0 || boolean as usize > p.bools.len()) {
                return Err(r.invalid_at(eat, format!("expression names boolean {boolean}, not in the policy")));
            }
            expr.push(CondExpr { kind, boolean: if kind == BOOL { boolean } else { 0 } });
        }
        let mut lists = [Vec::new(), Vec::new()];
        for list in &mut lists {
            let len = r.count("conditional rule", 12)?;
            list.reserve_exact(len);
            for _ in 0..len {
                let eat = r.offset();
                let e = avtab_item(r, p, true, &mut xperms)?;
                if e.specified & crate::model::avtab::TYPE != 0 && has_rule(&p.avtab, &e) {
                    return Err(r.invalid_at(eat, "conditional type rule conflicts with an unconditional one"));
                }
                list.push(e);
            }
        }
        let [true_list, false_list] = lists;
        conds.push(CondNode { expr, true_list, false_list });
    }
    p.conds = conds;
    p.xperms = xperms;
    Ok(())
}
