//! Constraint and validatetrans expressions of a class, checked for shape as they are read.

use crate::ebitmap::Ebitmap;
use crate::error::Result;
use crate::model::*;
use crate::reader::Reader;

pub(super) fn constraints(r: &mut Reader<'_>, p: &Policy, class: &str, n: usize, xtarget: bool) -> Result<Vec<Constraint>> {
    use crate::model::cexpr::*;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let perms = r.u32()?;
        let nexpr = r.count("constraint expression", 12)?;
        let at = r.offset();
        let mut expr = Vec::with_capacity(nexpr);
        let mut depth: i32 = -1;
        for _ in 0..nexpr {
            let eat = r.offset();
            let kind = r.u32()?;
            let attr = r.u32()?;
            let op = r.u32()?;
            let bad = |what: &str| r.invalid_at(eat, format!("class {class}: constraint {what}"));
            match kind {
                NOT => {
                    if depth < 0 {
                        return Err(bad("'not' with an empty stack"));
                    }
                    expr.push(ConstraintExpr::Not);
                }
                AND | OR => {
                    if depth < 1 {
                        return Err(bad("'and'/'or' with fewer than two operands"));
                    }
                    depth -= 1;
                    expr.push(if kind == AND { ConstraintExpr::And } else { ConstraintExpr::Or });
                }
                ATTR => {
                    if depth == MAXDEPTH as i32 - 1 {
                        return Err(bad("expression too deep"));
                    }
                    depth += 1;
                    let ok = match attr {
                        USER | TYPE => matches!(op, EQ | NEQ),
                        ROLE | L1L2 | L1H2 | H1L2 | H1H2 | L1H1 | L2H2 => (EQ..=INCOMP).contains(&op),
                        _ => false,
                    };
                    if !ok {
                        return Err(bad(&format!("attribute {attr:#x} with operator {op}")));
                    }
                    expr.push(ConstraintExpr::Attr { attr, op });
                }
                NAMES => {
                    if !xtarget && attr & XTARGET != 0 {
                        return Err(bad("refers to a third context outside validatetrans"));
                    }
                    if depth == MAXDEPTH as i32 - 1 {
                        return Err(bad("expression too deep"));
                    }
                    depth += 1;
                    let which = attr & !(TARGET | XTARGET);
                    if !matches!(which, USER | ROLE | TYPE) || attr & TARGET != 0 && attr & XTARGET != 0 {
                        return Err(bad(&format!("name test on attribute {attr:#x}")));
                    }
                    if !matches!(op, EQ | NEQ) {
                        return Err(bad(&format!("name test with operator {op}")));
                    }
                    let names = Ebitmap::read(r)?;
                    if p.version >= crate::read::version::CONSTRAINT_NAMES {
                        // The type set as written in the source, kept by the compiler only for
                        // diagnostics; `names` is already expanded.
                        Ebitmap::read(r)?;
                        Ebitmap::read(r)?;
                        r.u32()?;
                    }
                    expr.push(ConstraintExpr::Names { attr, op, names });
                }
                _ => return Err(bad(&format!("unknown expression kind {kind}"))),
            }
        }
        if depth != 0 {
            return Err(r.invalid_at(at, format!("class {class}: constraint expression does not reduce to one value")));
        }
        out.push(Constraint { perms, expr });
    }
    Ok(out)
}
