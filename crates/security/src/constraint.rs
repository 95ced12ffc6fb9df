//! Constraint expression evaluation, as the kernel's constraint_expr_eval, and their text for
//! explanations.

use crate::context::level_to_string;
use seaccess_policy::{
    level_dom, Comparison, ConstraintExpr, ConstraintOperand, Context, EqOp, Level, LevelPair,
    NameField, PolicyTables, RelOp,
};

fn level_eq(a: &Level, b: &Level) -> bool {
    a.sens == b.sens && a.cats == b.cats
}

/// Evaluates a postfix constraint expression over source `s`, target `t` and, for validatetrans,
/// the task context `x`. The reader has checked the stack discipline; a stack that still goes
/// wrong, or a task context asked for outside validatetrans, yields "false" (deny), as the
/// kernel's BUG() paths do.
pub(crate) fn eval(
    p: &PolicyTables,
    expr: &[ConstraintExpr],
    s: &Context,
    t: &Context,
    x: Option<&Context>,
) -> bool {
    const MAXDEPTH: usize = ConstraintExpr::MAX_DEPTH;
    let mut stack = [false; MAXDEPTH];
    let mut sp: usize = 0;
    for e in expr {
        let v = match e {
            ConstraintExpr::Not => {
                let Some(top) = sp.checked_sub(1) else {
                    return false;
                };
                stack[top] = !stack[top];
                continue;
            }
            ConstraintExpr::And | ConstraintExpr::Or => {
                if sp < 2 {
                    return false;
                }
                sp -= 1;
                let b = stack[sp];
                let a = &mut stack[sp - 1];
                *a = if matches!(e, ConstraintExpr::And) {
                    *a && b
                } else {
                    *a || b
                };
                continue;
            }
            ConstraintExpr::Compare(c) => compare(p, *c, s, t),
            ConstraintExpr::Names {
                of,
                field,
                op,
                names,
            } => {
                let c = match of {
                    ConstraintOperand::Source => s,
                    ConstraintOperand::Target => t,
                    ConstraintOperand::Task => match x {
                        Some(x) => x,
                        None => return false,
                    },
                };
                let val = match field {
                    NameField::User => c.user,
                    NameField::Role => c.role,
                    NameField::Type => c.ty,
                };
                eq(*op, names.get(val - 1), true)
            }
        };
        if sp == MAXDEPTH {
            return false;
        }
        stack[sp] = v;
        sp += 1;
    }
    sp == 1 && stack[0]
}

/// `a == b` or `a != b`.
fn eq<T: PartialEq>(op: EqOp, a: T, b: T) -> bool {
    match op {
        EqOp::Eq => a == b,
        EqOp::Neq => a != b,
    }
}

fn compare(p: &PolicyTables, c: Comparison, s: &Context, t: &Context) -> bool {
    match c {
        Comparison::User(op) => eq(op, s.user, t.user),
        Comparison::Type(op) => eq(op, s.ty, t.ty),
        Comparison::Role(op) => {
            let (r1, r2) = (&p.roles[s.role as usize - 1], &p.roles[t.role as usize - 1]);
            match op {
                RelOp::Eq => s.role == t.role,
                RelOp::Neq => s.role != t.role,
                RelOp::Dom => r1.dominates.get(t.role - 1),
                RelOp::DomBy => r2.dominates.get(s.role - 1),
                RelOp::Incomp => !r1.dominates.get(t.role - 1) && !r2.dominates.get(s.role - 1),
            }
        }
        Comparison::Levels(pair, op) => {
            let (Some(sr), Some(tr)) = (&s.range, &t.range) else {
                return false;
            };
            let (l1, l2) = match pair {
                LevelPair::L1L2 => (&sr.low, &tr.low),
                LevelPair::L1H2 => (&sr.low, &tr.high),
                LevelPair::H1L2 => (&sr.high, &tr.low),
                LevelPair::H1H2 => (&sr.high, &tr.high),
                LevelPair::L1H1 => (&sr.low, &sr.high),
                LevelPair::L2H2 => (&tr.low, &tr.high),
            };
            match op {
                RelOp::Eq => level_eq(l1, l2),
                RelOp::Neq => !level_eq(l1, l2),
                RelOp::Dom => level_dom(l1, l2),
                RelOp::DomBy => level_dom(l2, l1),
                RelOp::Incomp => !level_dom(l1, l2) && !level_dom(l2, l1),
            }
        }
    }
}

/// Whether a constraint expression tests MLS levels (an `mlsconstrain` rather than a `constrain`).
pub(crate) fn is_mls(expr: &[ConstraintExpr]) -> bool {
    expr.iter()
        .any(|e| matches!(e, ConstraintExpr::Compare(Comparison::Levels(..))))
}

/// The text of a constraint expression in policy-language infix form, for explanations.
pub(crate) fn describe(p: &PolicyTables, expr: &[ConstraintExpr]) -> String {
    let mut st: Vec<String> = Vec::new();
    for e in expr {
        match e {
            ConstraintExpr::Not => {
                let a = st.pop().unwrap_or_default();
                st.push(format!("not ({a})"));
            }
            ConstraintExpr::And | ConstraintExpr::Or => {
                let b = st.pop().unwrap_or_default();
                let a = st.pop().unwrap_or_default();
                let w = if matches!(e, ConstraintExpr::And) {
                    "and"
                } else {
                    "or"
                };
                st.push(format!("({a} {w} {b})"));
            }
            ConstraintExpr::Compare(c) => {
                let (a, b, op) = match *c {
                    Comparison::User(op) => ("u1", "u2", eq_name(op)),
                    Comparison::Role(op) => ("r1", "r2", rel_name(op)),
                    Comparison::Type(op) => ("t1", "t2", eq_name(op)),
                    Comparison::Levels(pair, op) => {
                        let [a, b] = level_operands(pair);
                        (a.name, b.name, rel_name(op))
                    }
                };
                st.push(format!("{a} {op} {b}"));
            }
            ConstraintExpr::Names {
                of,
                field,
                op,
                names,
            } => {
                let n = match of {
                    ConstraintOperand::Source => "1",
                    ConstraintOperand::Target => "2",
                    ConstraintOperand::Task => "3",
                };
                let (k, table) = match field {
                    NameField::User => ("u", &p.user_names),
                    NameField::Role => ("r", &p.role_names),
                    NameField::Type => ("t", &p.type_names),
                };
                let mut list: Vec<&str> = names
                    .iter()
                    .take(6)
                    .filter_map(|b| table.name(b + 1))
                    .collect();
                if names.len() > 6 {
                    list.push("...");
                }
                st.push(format!("{k}{n} {} {{ {} }}", eq_name(*op), list.join(" ")));
            }
        }
    }
    st.pop().unwrap_or_default()
}

/// One side of a level comparison: its name in the policy language, and which level it is (the
/// target's or the source's, the high or the low).
#[derive(Clone, Copy)]
struct LevelOperand {
    name: &'static str,
    target: bool,
    high: bool,
}

/// The two levels a comparison of `pair` compares, for its text and for the values it read.
fn level_operands(pair: LevelPair) -> [LevelOperand; 2] {
    let op = |name: &'static str| LevelOperand {
        name,
        target: name.ends_with('2'),
        high: name.starts_with('h'),
    };
    let (a, b) = match pair {
        LevelPair::L1L2 => ("l1", "l2"),
        LevelPair::L1H2 => ("l1", "h2"),
        LevelPair::H1L2 => ("h1", "l2"),
        LevelPair::H1H2 => ("h1", "h2"),
        LevelPair::L1H1 => ("l1", "h1"),
        LevelPair::L2H2 => ("l2", "h2"),
    };
    [op(a), op(b)]
}

/// The values a constraint expression read from the two contexts, in the order it first reads
/// them (`u1=user_u u2=system_u t1=httpd_t`): what made it fail, beside the expression.
pub(crate) fn operands(
    p: &PolicyTables,
    expr: &[ConstraintExpr],
    s: &Context,
    t: &Context,
) -> String {
    let mut seen: Vec<(&'static str, String)> = Vec::new();
    let mut add = |name: &'static str, value: String| {
        if !seen.iter().any(|(n, _)| *n == name) {
            seen.push((name, value));
        }
    };
    let user = |c: &Context| p.user_names.name(c.user).unwrap_or("?").to_string();
    let role = |c: &Context| p.role_names.name(c.role).unwrap_or("?").to_string();
    let ty = |c: &Context| p.type_names.name(c.ty).unwrap_or("?").to_string();
    let level = |o: LevelOperand| match &(if o.target { t } else { s }).range {
        Some(r) => level_to_string(p, if o.high { &r.high } else { &r.low }),
        None => "?".into(),
    };
    for e in expr {
        match e {
            ConstraintExpr::Compare(Comparison::User(_)) => {
                add("u1", user(s));
                add("u2", user(t));
            }
            ConstraintExpr::Compare(Comparison::Role(_)) => {
                add("r1", role(s));
                add("r2", role(t));
            }
            ConstraintExpr::Compare(Comparison::Type(_)) => {
                add("t1", ty(s));
                add("t2", ty(t));
            }
            ConstraintExpr::Compare(Comparison::Levels(pair, _)) => {
                for o in level_operands(*pair) {
                    add(o.name, level(o));
                }
            }
            // The task context (validatetrans's third) is not among a decision's contexts.
            ConstraintExpr::Names {
                of: ConstraintOperand::Task,
                ..
            } => {}
            ConstraintExpr::Names { of, field, .. } => {
                let (side, c) = if matches!(of, ConstraintOperand::Source) {
                    (0, s)
                } else {
                    (1, t)
                };
                let (names, value) = match field {
                    NameField::User => (["u1", "u2"], user(c)),
                    NameField::Role => (["r1", "r2"], role(c)),
                    NameField::Type => (["t1", "t2"], ty(c)),
                };
                add(names[side], value);
            }
            ConstraintExpr::Not | ConstraintExpr::And | ConstraintExpr::Or => {}
        }
    }
    seen.into_iter()
        .map(|(n, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn eq_name(op: EqOp) -> &'static str {
    match op {
        EqOp::Eq => "==",
        EqOp::Neq => "!=",
    }
}

fn rel_name(op: RelOp) -> &'static str {
    match op {
        RelOp::Eq => "==",
        RelOp::Neq => "!=",
        RelOp::Dom => "dom",
        RelOp::DomBy => "domby",
        RelOp::Incomp => "incomp",
    }
}
