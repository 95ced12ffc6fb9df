//! Conditional rules: boolean expressions and the rules each enables when true or false.

use rustc_hash::FxHashMap as HashMap;

use super::avtab::{avtab_item, has_rule};
use crate::error::{Result, Section};
use crate::model::*;
use crate::reader::Reader;
use crate::rules::*;

/// A type rule's source, target, class and kind.
type TypeRuleKey = (u16, u16, u16, TypeRuleKind);

/// For a key with conditional type rules: the conditional holding the first, whether that one
/// is in a true list, and how many there are so far.
type FirstRule = (usize, bool, u32);

/// The conditionals, whose rules go on numbering extended-permission payloads in `xperms`
/// and may not repeat a type rule of the unconditional table `avtab`.
pub(super) fn conditionals(
    r: &mut Reader<'_>,
    p: &PolicyTables,
    avtab: &[AvtabEntry],
    xperms: &mut Vec<Xperms>,
) -> Result<Vec<CondNode>> {
    r.enter(Section::Conditionals);
    let n = r.count("conditional", 12)?;
    let mut conds = Vec::with_capacity(n);
    let mut type_rules: HashMap<TypeRuleKey, FirstRule> = HashMap::default();
    for node in 0..n {
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
            // The kernel's expr_node_isvalid refuses a kind it does not know.
            let e = match kind {
                1 => CondExpr::Bool(boolean),
                2 => CondExpr::Not,
                3 => CondExpr::Or,
                4 => CondExpr::And,
                5 => CondExpr::Xor,
                6 => CondExpr::Eq,
                7 => CondExpr::Neq,
                _ => return Err(r.invalid_at(eat, format!("unknown boolean operator {kind}"))),
            };
            if e == CondExpr::Bool(boolean) && (boolean == 0 || boolean as usize > p.bools.len()) {
                return Err(r.invalid_at(
                    eat,
                    format!("expression names boolean {boolean}, not in the policy"),
                ));
            }
            expr.push(e);
        }
        let mut lists = [Vec::new(), Vec::new()];
        for (li, list) in lists.iter_mut().enumerate() {
            let in_true = li == 0;
            let len = r.count("conditional rule", 12)?;
            list.reserve_exact(len);
            for _ in 0..len {
                let eat = r.offset();
                let e = avtab_item(r, p, true, xperms)?;
                if let RuleKind::Type(tk) = e.kind {
                    if has_rule(avtab, &e) {
                        return Err(r.invalid_at(
                            eat,
                            "conditional type rule conflicts with an unconditional one",
                        ));
                    }
                    // The kernel's cond_insertf: a key may have one conditional type rule, or
                    // two when the second is in the false list of the conditional whose true
                    // list holds the first.
                    let seen = type_rules
                        .entry((e.source_type, e.target_type, e.class, tk))
                        .or_insert((node, in_true, 0));
                    seen.2 += 1;
                    let pair = seen.2 == 2 && seen.0 == node && seen.1 && !in_true;
                    if seen.2 > 1 && !pair {
                        return Err(r.invalid_at(eat, format!(
                            "conditional type rule (kind {:#x}) for source type {}, target type {}, class {} given twice",
                            e.kind.specified(), e.source_type, e.target_type, e.class
                        )));
                    }
                }
                list.push(e);
            }
        }
        let [true_list, false_list] = lists;
        conds.push(CondNode {
            expr,
            true_list,
            false_list,
        });
    }
    Ok(conds)
}
