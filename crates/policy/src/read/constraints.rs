//! Constraint and validatetrans expressions of a class, checked for shape as they are read and
//! turned from the file's numbers into [`ConstraintExpr`] nodes.

use crate::ebitmap::Ebitmap;
use crate::error::Result;
use crate::model::*;
use crate::reader::Reader;

/// The file's numbers for expression kinds (`CEXPR_*`), attributes and operators.
const NOT: u32 = 1;
const AND: u32 = 2;
const OR: u32 = 3;
const ATTR: u32 = 4;
const NAMES: u32 = 5;

const USER: u32 = 1;
const ROLE: u32 = 2;
const TYPE: u32 = 4;
const TARGET: u32 = 8;
const XTARGET: u32 = 16;
const L1L2: u32 = 32;
const L1H2: u32 = 64;
const H1L2: u32 = 128;
const H1H2: u32 = 256;
const L1H1: u32 = 512;
const L2H2: u32 = 1024;

/// The operator a user, type or name test may take.
fn eq_op(op: u32) -> Option<EqOp> {
    match op {
        1 => Some(EqOp::Eq),
        2 => Some(EqOp::Neq),
        _ => None,
    }
}

/// The operator a role or level comparison may take.
fn rel_op(op: u32) -> Option<RelOp> {
    match op {
        1 => Some(RelOp::Eq),
        2 => Some(RelOp::Neq),
        3 => Some(RelOp::Dom),
        4 => Some(RelOp::DomBy),
        5 => Some(RelOp::Incomp),
        _ => None,
    }
}

/// An attribute comparison. The kernel's reader takes any attribute and operator and its
/// constraint_expr_eval BUG()s on one it does not know, so such a policy cannot be used:
/// refused here.
fn comparison(attr: u32, op: u32) -> Option<Comparison> {
    let levels = |pair| rel_op(op).map(|o| Comparison::Levels(pair, o));
    match attr {
        USER => eq_op(op).map(Comparison::User),
        TYPE => eq_op(op).map(Comparison::Type),
        ROLE => rel_op(op).map(Comparison::Role),
        L1L2 => levels(LevelPair::L1L2),
        L1H2 => levels(LevelPair::L1H2),
        H1L2 => levels(LevelPair::H1L2),
        H1H2 => levels(LevelPair::H1H2),
        L1H1 => levels(LevelPair::L1H1),
        L2H2 => levels(LevelPair::L2H2),
        _ => None,
    }
}

pub(super) fn constraints(
    r: &mut Reader<'_>,
    p: &PolicyTables,
    class: &str,
    n: usize,
    xtarget: bool,
) -> Result<Vec<Constraint>> {
    const MAXDEPTH: i32 = ConstraintExpr::MAX_DEPTH as i32;
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
                    expr.push(if kind == AND {
                        ConstraintExpr::And
                    } else {
                        ConstraintExpr::Or
                    });
                }
                ATTR => {
                    if depth == MAXDEPTH - 1 {
                        return Err(bad("expression too deep"));
                    }
                    depth += 1;
                    let Some(c) = comparison(attr, op) else {
                        return Err(bad(&format!("attribute {attr:#x} with operator {op}")));
                    };
                    expr.push(ConstraintExpr::Compare(c));
                }
                NAMES => {
                    if !xtarget && attr & XTARGET != 0 {
                        return Err(bad("refers to a third context outside validatetrans"));
                    }
                    if depth == MAXDEPTH - 1 {
                        return Err(bad("expression too deep"));
                    }
                    depth += 1;
                    let of = match attr & (TARGET | XTARGET) {
                        0 => ConstraintOperand::Source,
                        TARGET => ConstraintOperand::Target,
                        XTARGET => ConstraintOperand::Task,
                        _ => return Err(bad(&format!("name test on attribute {attr:#x}"))),
                    };
                    let field = match attr & !(TARGET | XTARGET) {
                        USER => NameField::User,
                        ROLE => NameField::Role,
                        TYPE => NameField::Type,
                        _ => return Err(bad(&format!("name test on attribute {attr:#x}"))),
                    };
                    let Some(op) = eq_op(op) else {
                        return Err(bad(&format!("name test with operator {op}")));
                    };
                    let names = Ebitmap::read(r)?;
                    if p.version >= crate::read::version::CONSTRAINT_NAMES {
                        // The type set as written in the source, kept by the compiler only for
                        // diagnostics; `names` is already expanded.
                        Ebitmap::read(r)?;
                        Ebitmap::read(r)?;
                        r.u32()?;
                    }
                    expr.push(ConstraintExpr::Names {
                        of,
                        field,
                        op,
                        names,
                    });
                }
                _ => return Err(bad(&format!("unknown expression kind {kind}"))),
            }
        }
        if depth != 0 {
            return Err(r.invalid_at(
                at,
                format!("class {class}: constraint expression does not reduce to one value"),
            ));
        }
        out.push(Constraint { perms, expr });
    }
    Ok(out)
}
