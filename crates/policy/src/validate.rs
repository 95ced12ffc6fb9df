//! Context validity as the kernel's policydb_context_isvalid and mls_context_isvalid define it.

use crate::model::{Context, Level, Policy, Range};

/// The value of role `object_r`, fixed by the format.
pub const OBJECT_R: u32 = 1;

impl Policy {
    /// A level is valid when its sensitivity exists and may go with each of its categories.
    pub fn level_is_valid(&self, l: &Level) -> bool {
        match self.sens.get((l.sens as usize).wrapping_sub(1)) {
            Some(s) => s.cats.contains(&l.cats),
            None => false,
        }
    }

    /// Both levels valid, and the high level dominates the low one.
    pub fn range_is_valid(&self, r: &Range) -> bool {
        self.level_is_valid(&r.low) && self.level_is_valid(&r.high) && level_dom(&r.high, &r.low)
    }

    pub fn context_is_valid(&self, c: &Context) -> bool {
        let in_range = |v: u32, n: usize| v != 0 && v as usize <= n;
        if !in_range(c.role, self.roles.len()) || !in_range(c.user, self.users.len()) || !in_range(c.ty, self.types.len()) {
            return false;
        }
        if c.role != OBJECT_R {
            let role = &self.roles[c.role as usize - 1];
            if !role.types.get(c.ty - 1) {
                return false;
            }
            if !self.users[c.user as usize - 1].roles.get(c.role - 1) {
                return false;
            }
        }
        if !self.mls {
            return true;
        }
        let Some(r) = &c.range else { return false };
        if !self.range_is_valid(r) {
            return false;
        }
        // Objects (role object_r) may carry any valid range; a subject's must be within its
        // user's clearance.
        c.role == OBJECT_R || range_contains(&self.users[c.user as usize - 1].range, r)
    }
}

/// `l1` dominates `l2`: at least its sensitivity and a superset of its categories.
pub fn level_dom(l1: &Level, l2: &Level) -> bool {
    l1.sens >= l2.sens && l1.cats.contains(&l2.cats)
}

/// `outer` contains `inner`: inner's low dominates outer's low and outer's high dominates inner's high.
pub fn range_contains(outer: &Range, inner: &Range) -> bool {
    level_dom(&inner.low, &outer.low) && level_dom(&outer.high, &inner.high)
}
