//! Type bounds in access decisions: the kernel's type_attribute_bounds_av, which keeps a bounded
//! type from ever getting more than its bound.

use seaccess_policy::Context;
use seaccess_types::{AccessVector, Sid};

use crate::error::Result;

use crate::av::TeResult;
use crate::explain::DenialReason;
use crate::generation::Generation;

impl Generation {
    /// Whether `new`'s type is `old`'s or bounded by it through the chain of typebounds (the
    /// kernel's security_bounded_transition; what the bounded type may do is already masked in
    /// its decisions by [`Generation::mask_bounds`]).
    pub fn bounded_transition(&self, old: Sid, new: Sid) -> Result<bool> {
        let (o, n) = (self.sid_context(old)?.ty, self.sid_context(new)?.ty);
        if o == n {
            return Ok(true);
        }
        let types = &self.c.policy.types;
        let mut at = n;
        // A chain longer than the types is a cycle (the reader refuses those; never loop on one).
        for _ in 0..types.len() {
            let Some(t) = (at as usize).checked_sub(1).and_then(|i| types.get(i)) else {
                return Ok(false);
            };
            if t.bounds == 0 {
                return Ok(false);
            }
            if t.bounds == o {
                return Ok(true);
            }
            at = t.bounds;
        }
        Ok(false)
    }

    /// Removes from `r.allowed` what the source type's bound would not get.
    pub(crate) fn mask_bounds(
        &self,
        s: &Context,
        t: &Context,
        class: u32,
        r: &mut TeResult,
        why: Option<&mut Vec<(u32, DenialReason)>>,
    ) {
        let p = &self.c.policy;
        // A bounded source type never gets more than its bound would, computed the same way
        // (recursively) with the bound in place of the type, and the target's bound in place of
        // a bounded target type.
        let sb = p.types[s.ty as usize - 1].bounds;
        if sb != 0 && r.allowed != 0 {
            let lo_s = Context {
                ty: sb,
                ..s.clone()
            };
            let tb = p.types[t.ty as usize - 1].bounds;
            let lo_t = if tb != 0 {
                Context {
                    ty: tb,
                    ..t.clone()
                }
            } else {
                t.clone()
            };
            let lo = self.compute(&lo_s, &lo_t, class, None);
            let masked = r.allowed & !lo.allowed;
            if masked != 0 {
                if let Some(w) = why {
                    for bit in AccessVector(masked).bits() {
                        w.push((
                            bit,
                            DenialReason::TypeBounds {
                                bound: p.type_names.name(sb).unwrap_or("?").into(),
                            },
                        ));
                    }
                }
                r.allowed &= !masked;
            }
        }
    }
}
