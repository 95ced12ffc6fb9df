//! Booleans and the conditional rules they switch: the kernel's cond_evaluate_expr and
//! evaluate_cond_nodes, security_get_bools and security_set_bools.

use seaccess_policy::CondExpr;
use seaccess_types::Seqno;

use crate::compiled::ALWAYS;
use crate::error::{Result, SecurityError};
use crate::generation::Generation;
use crate::server::{lock, Change, SecurityServer};

impl Generation {
    /// Whether rules in `branch` apply under this generation's boolean values.
    pub(crate) fn on(&self, branch: u32) -> bool {
        branch == ALWAYS || self.enabled.get(branch as usize).copied().unwrap_or(false)
    }

    /// (name, value) of every boolean in this generation.
    pub fn booleans(&self) -> Vec<(String, bool)> {
        self.c
            .policy
            .bools
            .iter()
            .zip(&self.bools)
            .map(|(b, v)| (b.name.to_string(), *v))
            .collect()
    }

    pub fn boolean(&self, name: &str) -> Result<bool> {
        let i = self.bool_index(name)?;
        self.bools
            .get(i)
            .copied()
            .ok_or_else(|| self.unknown_boolean(name))
    }

    /// Where a boolean's value sits in this generation's (and its pending) value list.
    fn bool_index(&self, name: &str) -> Result<usize> {
        match self.c.policy.bool_names.value(name) {
            Some(v) if v > 0 => Ok(v as usize - 1),
            _ => Err(self.unknown_boolean(name)),
        }
    }

    pub(crate) fn unknown_boolean(&self, name: &str) -> SecurityError {
        SecurityError::UnknownBoolean(name.into(), self.c.policy.bool_names.did_you_mean(name))
    }
}

impl SecurityServer {
    /// Sets a boolean's pending value; it takes effect at the next commit.
    pub fn set_boolean(&self, name: &str, value: bool) -> Result<()> {
        // A reload replaces the policy and the pending values together under this lock, so the
        // name must be resolved under it too: resolved under one policy and written under
        // another, it would land on whichever boolean the new policy numbers the same.
        let mut pending = lock(&self.pending);
        let slot = self.current.load().bool_index(name)?;
        if let Some(p) = pending.get_mut(slot) {
            *p = value;
        }
        Ok(())
    }

    /// The pending value of a boolean.
    pub fn pending_boolean(&self, name: &str) -> Result<bool> {
        let pending = lock(&self.pending);
        let slot = self.current.load().bool_index(name)?;
        pending
            .get(slot)
            .copied()
            .ok_or_else(|| self.current.load().unknown_boolean(name))
    }

    /// Makes every pending boolean value current, all at once, as a new generation with the next
    /// seqno. Returns the new seqno.
    pub fn commit_booleans(&self) -> Seqno {
        self.change(Change::Commit)
    }
}

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
