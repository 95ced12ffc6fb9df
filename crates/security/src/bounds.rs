//! Type bounds in access decisions: the kernel's type_attribute_bounds_av, which keeps a bounded
//! type from ever getting more than its bound.

use seaccess_policy::Context;
use seaccess_types::AccessVector;

use crate::av::TeResult;
use crate::explain::DenialReason;
use crate::generation::Generation;

impl Generation {
    /// Removes from `r.allowed` what the source type's bound would not get.
    pub(crate) fn mask_bounds(&self, s: &Context, t: &Context, class: u32, r: &mut TeResult, why: Option<&mut Vec<(u32, DenialReason)>>) {
        let p = &self.c.policy;
        // A bounded source type never gets more than its bound would, computed the same way
        // (recursively) with the bound in place of the type, and the target's bound in place of
        // a bounded target type.
        let sb = p.types[s.ty as usize - 1].bounds;
        if sb != 0 && r.allowed != 0 {
            let lo_s = Context { ty: sb, ..s.clone() };
            let tb = p.types[t.ty as usize - 1].bounds;
            let lo_t = if tb != 0 { Context { ty: tb, ..t.clone() } } else { t.clone() };
            let lo = self.compute(&lo_s, &lo_t, class, None);
            let masked = r.allowed & !lo.allowed;
            if masked != 0 {
                if let Some(w) = why {
                    for bit in AccessVector(masked).bits() {
                        w.push((bit, DenialReason::TypeBounds { bound: p.type_names.name(sb).unwrap_or("?").into() }));
                    }
                }
                r.allowed &= !masked;
            }
        }
    }
}
