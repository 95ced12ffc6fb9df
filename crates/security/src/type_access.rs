//! What the type-enforcement rules alone allow one type on another: the question a neverallow
//! asks (checkpolicy checks its assertions against the allow rules, before constraints, role
//! checks and bounds narrow a decision for particular contexts).

use seaccess_types::{AccessVector, ClassId};

use crate::generation::Generation;

impl Generation {
    /// The permissions of `class` the allow rules give type `stype` on type `ttype` (type values
    /// as the policy numbers them), conditional rules counted when their branch is enabled under
    /// this generation's booleans. None when either value is not a type of the policy (an
    /// attribute is not: expand it first, with the policy's `type_attr_map`) or the class is not.
    pub fn type_allowed(&self, stype: u32, ttype: u32, class: ClassId) -> Option<AccessVector> {
        let (types, attrs) = (&self.c.policy.types, &self.c.attrs);
        // A hole (no name) is no type either; the attribute index is checked too, as `te`
        // indexes it.
        let is_type = |v: u32| {
            let i = (v as usize).wrapping_sub(1);
            types
                .get(i)
                .is_some_and(|t| !t.attribute && t.name.is_some())
                && attrs.get(i).is_some()
        };
        if !is_type(stype) || !is_type(ttype) {
            return None;
        }
        let class = self.check_class(class).ok()?;
        Some(AccessVector(self.te(stype, ttype, class, None).allowed))
    }
}
