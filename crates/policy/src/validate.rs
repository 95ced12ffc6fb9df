//! Context validity as the kernel's policydb_context_isvalid and mls_context_isvalid define it,
//! with one deliberate difference: a context naming a hole (a value with no entry) is never valid,
//! where the kernel lets an `object_r` context through with an unnamed user or type.

use crate::model::{Context, Level, PolicyTables, Range};

/// The value of role `object_r`, fixed by the format.
pub const OBJECT_R: u32 = 1;

impl PolicyTables {
    /// A level is valid when its sensitivity exists and may go with each of its categories.
    /// (The reader keeps holes out of every sensitivity's categories, so the containment test
    /// also refuses unnamed categories.)
    pub fn level_is_valid(&self, l: &Level) -> bool {
        if !self.sens_names.is_defined(l.sens) {
            return false;
        }
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
        // Defined implies in range: holes and out-of-range values alike have no name.
        if !self.role_names.is_defined(c.role)
            || !self.user_names.is_defined(c.user)
            || !self.type_names.is_defined(c.ty)
        {
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
