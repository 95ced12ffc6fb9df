//! How setools 4.4 writes what a rule holds: boolean expressions (infix, with its parentheses),
//! MLS levels and ranges (category runs as `c0.c3`), ioctl sets (`0x8900-0x89ff` runs). Rule
//! lines and listings are built from these so that they match sesearch and seinfo byte for byte.

use seaccess_policy::{CondExpr, Level, PolicyTables, Range};

/// One operand on the way from postfix to infix: a boolean's name, or a subexpression's words.
enum Operand {
    Name(String),
    Sub(Vec<String>),
}

impl Operand {
    fn push_into(self, words: &mut Vec<String>) {
        match self {
            Operand::Name(n) => words.push(n),
            Operand::Sub(w) => words.extend(w),
        }
    }
}

/// An operator's text and precedence, as setools ranks them (NOT highest).
fn operator(e: CondExpr) -> Option<(&'static str, u8)> {
    Some(match e {
        CondExpr::Not => ("!", 5),
        CondExpr::Or => ("||", 1),
        CondExpr::And => ("&&", 3),
        CondExpr::Xor => ("^", 2),
        CondExpr::Eq => ("==", 4),
        CondExpr::Neq => ("!=", 4),
        CondExpr::Bool(_) => return None,
    })
}

/// A conditional's expression as sesearch prints it between `[ ` and ` ]`. setools pops a
/// binary operator's right operand first and writes it first, and decides on parentheses by
/// the operator seen just before (not the operand's own), so `a b &&` reads `b && a`; this keeps
/// those quirks, since users diff the lines.
pub(crate) fn cond_text(p: &PolicyTables, expr: &[CondExpr]) -> String {
    let mut stack: Vec<Operand> = Vec::new();
    let mut prev = 5u8;
    for &e in expr {
        match (e, operator(e)) {
            (CondExpr::Bool(b), _) => stack.push(Operand::Name(
                p.bool_names.name(b).unwrap_or("?").to_string(),
            )),
            (_, Some((op, prec))) if e == CondExpr::Not => {
                let Some(operand) = stack.pop() else { break };
                let mut words = vec![op.to_string()];
                match operand {
                    Operand::Name(n) => words.push(n),
                    Operand::Sub(w) => {
                        words.push("(".into());
                        words.extend(w);
                        words.push(")".into());
                    }
                }
                stack.push(Operand::Sub(words));
                prev = prec;
            }
            (_, Some((op, prec))) => {
                let (Some(first), Some(second)) = (stack.pop(), stack.pop()) else {
                    break;
                };
                let mut words = Vec::new();
                let paren = prev <= prec;
                if paren {
                    words.push("(".to_string());
                }
                first.push_into(&mut words);
                words.push(op.to_string());
                second.push_into(&mut words);
                if paren {
                    words.push(")".to_string());
                }
                stack.push(Operand::Sub(words));
                prev = prec;
            }
            (_, None) => {}
        }
    }
    let mut words = Vec::new();
    for o in stack {
        o.push_into(&mut words);
    }
    words.join(" ")
}

/// The value of a boolean expression under `values` (index = boolean value - 1), as the kernel
/// evaluates it; a malformed expression (the reader refuses those) is false.
pub(crate) fn cond_eval(expr: &[CondExpr], values: &[bool]) -> bool {
    let mut stack: Vec<bool> = Vec::new();
    for &e in expr {
        let v = match e {
            CondExpr::Bool(b) => values
                .get((b as usize).wrapping_sub(1))
                .copied()
                .unwrap_or(false),
            CondExpr::Not => match stack.pop() {
                Some(a) => !a,
                None => return false,
            },
            _ => {
                let (Some(a), Some(b)) = (stack.pop(), stack.pop()) else {
                    return false;
                };
                match e {
                    CondExpr::Or => a || b,
                    CondExpr::And => a && b,
                    CondExpr::Xor => a ^ b,
                    CondExpr::Eq => a == b,
                    _ => a != b,
                }
            }
        };
        stack.push(v);
    }
    stack.pop().unwrap_or(false)
}

/// The booleans (values) an expression names, each once, in value order.
pub(crate) fn cond_bools(expr: &[CondExpr]) -> Vec<u32> {
    let mut v: Vec<u32> = expr
        .iter()
        .filter_map(|e| {
            if let CondExpr::Bool(b) = e {
                Some(*b)
            } else {
                None
            }
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Runs of consecutive numbers in sorted, distinct `values`, as (first, last).
pub(crate) fn runs(values: impl IntoIterator<Item = u32>) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for v in values {
        match out.last_mut() {
            Some(last) if last.1.checked_add(1) == Some(v) => last.1 = v,
            _ => out.push((v, v)),
        }
    }
    out
}

/// A level as setools writes it: `s0`, `s0:c0.c3,c5` (a run of two or more is `first.last`).
pub(crate) fn level_text(p: &PolicyTables, l: &Level) -> String {
    let mut s = p.sens_names.name(l.sens).unwrap_or("?").to_string();
    let cats = runs(l.cats.iter().map(|b| b + 1));
    for (i, (a, b)) in cats.iter().enumerate() {
        s.push(if i == 0 { ':' } else { ',' });
        s.push_str(p.cat_names.name(*a).unwrap_or("?"));
        if b != a {
            s.push('.');
            s.push_str(p.cat_names.name(*b).unwrap_or("?"));
        }
    }
    s
}

/// A range as setools writes it: the level alone when low and high are equal, else `low - high`.
pub(crate) fn range_text(p: &PolicyTables, r: &Range) -> String {
    if r.low == r.high {
        level_text(p, &r.low)
    } else {
        format!("{} - {}", level_text(p, &r.low), level_text(p, &r.high))
    }
}

/// An ioctl set as setools writes it (`0x5401 0x5410-0x541f`), and whether it needs braces
/// (more than one run).
pub(crate) fn ioctl_text(values: &[u32]) -> (String, bool) {
    let r = runs(values.iter().copied());
    let words: Vec<String> = r
        .iter()
        .map(|&(a, b)| {
            if a == b {
                format!("{a:#06x}")
            } else {
                format!("{a:#06x}-{b:#06x}")
            }
        })
        .collect();
    (words.join(" "), r.len() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioctl_runs_as_setools_writes_them() {
        assert_eq!(ioctl_text(&[0x5401]), ("0x5401".to_string(), false));
        assert_eq!(
            ioctl_text(&[0x5401, 0x5410, 0x5411, 0x5412]),
            ("0x5401 0x5410-0x5412".to_string(), true)
        );
        assert_eq!(
            ioctl_text(&[0x10, 0x11]),
            ("0x0010-0x0011".to_string(), false)
        );
    }

    #[test]
    fn expressions_evaluate_as_the_kernel_does() {
        use CondExpr::*;
        let v = [true, false];
        assert!(cond_eval(&[Bool(1), Bool(2), Or], &v));
        assert!(!cond_eval(&[Bool(1), Bool(2), And], &v));
        assert!(cond_eval(&[Bool(2), Not], &v));
        assert!(cond_eval(&[Bool(1), Bool(2), Neq], &v));
        assert!(!cond_eval(&[Bool(1), Bool(1), Xor], &v));
        assert!(!cond_eval(&[And], &v));
    }
}
