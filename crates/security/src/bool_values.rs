//! A generation's answers under other boolean values, for questions like "what if this boolean
//! were on" (policy unit tests' `with_booleans`) that must not change what the server answers.

use crate::error::Result;
use crate::generation::Generation;

impl Generation {
    /// This generation with some booleans set to other values and the rest as they are, sharing
    /// its compiled policy and SID table (so its SIDs stand for the same contexts). It is never
    /// published: it keeps this generation's seqno, so its decisions must not be handed to a
    /// cache that trusts seqnos. Errors on a name the policy has no boolean for.
    pub fn with_booleans(&self, values: &[(&str, bool)]) -> Result<Generation> {
        let mut bools = self.bools.clone();
        for (name, value) in values {
            let slot = match self.c.policy.bool_names.value(name) {
                Some(v) if v > 0 => bools.get_mut(v as usize - 1),
                _ => None,
            };
            *slot.ok_or_else(|| self.unknown_boolean(name))? = *value;
        }
        Ok(Generation::new(
            self.c.clone(),
            self.sids.clone(),
            self.ctx.clone(),
            bools,
            self.seqno,
        ))
    }
}
