//! The policy's capabilities, named: which newer kernel behaviours the policy was written for.
//! The security server applies the ones that change its own answers (genfs and netif
//! wildcards, in ocontext.rs; userspace_initial_context, in sidtab.rs); object managers ask
//! for the rest through the cache's seam.

use seaccess_types::PolicyCaps;

use crate::generation::Generation;

impl Generation {
    /// The capabilities this generation's policy declares (unknown bits dropped, as the
    /// kernel ignores them).
    pub fn policy_caps(&self) -> PolicyCaps {
        PolicyCaps::from_bits(self.policy().policycaps.iter())
    }
}
