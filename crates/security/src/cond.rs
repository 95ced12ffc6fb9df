//! Conditional rules' expressions, evaluated as the kernel's cond_evaluate_expr and
//! evaluate_cond_nodes do (security/selinux/ss/conditional.c): below
//! both the generation (which keeps the branches its booleans enable) and the boolean commands
//! (which make new generations).

use seaccess_policy::CondExpr;

/// Which conditional branches a set of boolean values enables: for each node, its true list
/// then its false list. A malformed expression enables neither, as in the kernel's
/// evaluate_cond_node.
pub(crate) fn enabled_branches(conds: &[Box<[CondExpr]>], bools: &[bool]) -> Vec<bool> {
    let mut enabled = Vec::with_capacity(conds.len() * 2);
    for node in conds {
        let state = eval_cond(node, bools);
        enabled.push(state == Some(true));
        enabled.push(state == Some(false));
    }
    enabled
}

/// Evaluates a boolean expression: Some(state), or None when the expression is malformed (the
/// kernel then disables both branches).
fn eval_cond(expr: &[CondExpr], bools: &[bool]) -> Option<bool> {
    const MAXDEPTH: usize = CondExpr::MAX_DEPTH;
    let mut stack = [false; MAXDEPTH];
    let mut sp: usize = 0;
    for e in expr {
        let op: fn(bool, bool) -> bool = match *e {
            CondExpr::Bool(b) => {
                if sp == MAXDEPTH {
                    return None;
                }
                stack[sp] = *bools.get((b as usize).wrapping_sub(1))?;
                sp += 1;
                continue;
            }
            CondExpr::Not => {
                let top = sp.checked_sub(1)?;
                stack[top] = !stack[top];
                continue;
            }
            CondExpr::Or => |a, b| a || b,
            CondExpr::And => |a, b| a && b,
            CondExpr::Xor => |a, b| a ^ b,
            CondExpr::Eq => |a, b| a == b,
            CondExpr::Neq => |a, b| a != b,
        };
        if sp < 2 {
            return None;
        }
        sp -= 1;
        let b = stack[sp];
        let a = &mut stack[sp - 1];
        *a = op(*a, b);
    }
    // The kernel answers with the bottom of the stack whatever is left above it.
    if sp == 0 {
        return None;
    }
    Some(stack[0])
}
