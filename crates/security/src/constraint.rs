//! Constraint expression evaluation, as the kernel's constraint_expr_eval, and their text for
//! explanations.

use seaccess_policy::{cexpr::*, level_dom, ConstraintExpr, Context, Level, Policy};

fn level_eq(a: &Level, b: &Level) -> bool {
    a.sens == b.sens && a.cats == b.cats
}

/// Evaluates a postfix constraint expression over source `s`, target `t` and, for validatetrans,
/// the task context `x`. The reader has checked the stack discipline and operator forms; anything
/// unexpected still yields "false" (deny), as the kernel's BUG() paths do.
pub(crate) fn eval(p: &Policy, expr: &[ConstraintExpr], s: &Context, t: &Context, x: Option<&Context>) -> bool {
    let mut stack = [false; MAXDEPTH];
    let mut sp: usize = 0;
    for e in expr {
        let v = match e {
            ConstraintExpr::Not => {
                let Some(top) = sp.checked_sub(1) else { return false };
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
                *a = if matches!(e, ConstraintExpr::And) { *a && b } else { *a || b };
                continue;
            }
            ConstraintExpr::Attr { attr, op } => attr_test(p, *attr, *op, s, t),
            ConstraintExpr::Names { attr, op, names } => {
                let c = if attr & TARGET != 0 {
                    t
                } else if attr & XTARGET != 0 {
                    match x {
                        Some(x) => x,
                        None => return false,
                    }
                } else {
                    s
                };
                let val = if attr & USER != 0 {
                    c.user
                } else if attr & ROLE != 0 {
                    c.role
                } else {
                    c.ty
                };
                let hit = names.get(val - 1);
                if *op == EQ {
                    hit
                } else {
                    !hit
                }
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

fn attr_test(p: &Policy, attr: u32, op: u32, s: &Context, t: &Context) -> bool {
    let (v1, v2) = match attr {
        USER => (s.user, t.user),
        TYPE => (s.ty, t.ty),
        ROLE => {
            let (r1, r2) = (&p.roles[s.role as usize - 1], &p.roles[t.role as usize - 1]);
            match op {
                DOM => return r1.dominates.get(t.role - 1),
                DOMBY => return r2.dominates.get(s.role - 1),
                INCOMP => return !r1.dominates.get(t.role - 1) && !r2.dominates.get(s.role - 1),
                _ => (s.role, t.role),
            }
        }
        _ => {
            let (Some(sr), Some(tr)) = (&s.range, &t.range) else { return false };
            let (l1, l2) = match attr {
                L1L2 => (&sr.low, &tr.low),
                L1H2 => (&sr.low, &tr.high),
                H1L2 => (&sr.high, &tr.low),
                H1H2 => (&sr.high, &tr.high),
                L1H1 => (&sr.low, &sr.high),
                L2H2 => (&tr.low, &tr.high),
                _ => return false,
            };
            return match op {
                EQ => level_eq(l1, l2),
                NEQ => !level_eq(l1, l2),
                DOM => level_dom(l1, l2),
                DOMBY => level_dom(l2, l1),
                INCOMP => !level_dom(l1, l2) && !level_dom(l2, l1),
                _ => false,
            };
        }
    };
    match op {
        EQ => v1 == v2,
        NEQ => v1 != v2,
        _ => false,
    }
}

/// Whether a constraint expression tests MLS levels (an `mlsconstrain` rather than a `constrain`).
pub(crate) fn is_mls(expr: &[ConstraintExpr]) -> bool {
    expr.iter().any(|e| matches!(e, ConstraintExpr::Attr { attr, .. } if *attr >= L1L2))
}

/// The text of a constraint expression in policy-language infix form, for explanations.
pub(crate) fn describe(p: &Policy, expr: &[ConstraintExpr]) -> String {
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
                let w = if matches!(e, ConstraintExpr::And) { "and" } else { "or" };
                st.push(format!("({a} {w} {b})"));
            }
            ConstraintExpr::Attr { attr, op } => {
                let (a, b) = match *attr {
                    USER => ("u1", "u2"),
                    ROLE => ("r1", "r2"),
                    TYPE => ("t1", "t2"),
                    L1L2 => ("l1", "l2"),
                    L1H2 => ("l1", "h2"),
                    H1L2 => ("h1", "l2"),
                    H1H2 => ("h1", "h2"),
                    L1H1 => ("l1", "h1"),
                    _ => ("l2", "h2"),
                };
                st.push(format!("{a} {} {b}", op_name(*op)));
            }
            ConstraintExpr::Names { attr, op, names } => {
                let n = if attr & TARGET != 0 {
                    "2"
                } else if attr & XTARGET != 0 {
                    "3"
                } else {
                    "1"
                };
                let (k, table) = if attr & USER != 0 {
                    ("u", &p.user_names)
                } else if attr & ROLE != 0 {
                    ("r", &p.role_names)
                } else {
                    ("t", &p.type_names)
                };
                let mut list: Vec<&str> = names.iter().take(6).filter_map(|b| table.name(b + 1)).collect();
                if names.len() > 6 {
                    list.push("...");
                }
                st.push(format!("{k}{n} {} {{ {} }}", op_name(*op), list.join(" ")));
            }
        }
    }
    st.pop().unwrap_or_default()
}

fn op_name(op: u32) -> &'static str {
    match op {
        EQ => "==",
        NEQ => "!=",
        DOM => "dom",
        DOMBY => "domby",
        _ => "incomp",
    }
}
