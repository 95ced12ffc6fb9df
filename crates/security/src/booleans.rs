//! Booleans and the conditional rules they switch: the kernel's security_get_bools and
//! security_set_bools (the expressions themselves are evaluated in `cond`).

use seaccess_types::{lock, Seqno};

use crate::compiled::ALWAYS;
use crate::error::{Result, SecurityError};
use crate::generation::Generation;
use crate::server::{Change, SecurityServer};

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
