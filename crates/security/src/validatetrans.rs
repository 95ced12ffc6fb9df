//! Relabel checks against validatetrans and mlsvalidatetrans rules: the kernel's
//! security_validate_transition.

use seaccess_types::{ClassId, Sid};

use crate::constraint;
use crate::error::{Result, SecurityError};
use crate::generation::Generation;

impl Generation {
    /// The kernel's security_validate_transition: may an object of `class` go from `old` to
    /// `new`, relabelled by `task`? Every validatetrans and mlsvalidatetrans rule must hold.
    pub fn validate_transition(&self, old: Sid, new: Sid, task: Sid, class: ClassId) -> Result<()> {
        let o = self.sid_context(old)?;
        let n = self.sid_context(new)?;
        let t = self.sid_context(task)?;
        let cl = self.check_class(class)?;
        let p = &self.c.policy;
        for k in &p.classes[cl as usize - 1].validatetrans {
            if !constraint::eval(p, &k.expr, o, n, Some(t)) {
                return Err(SecurityError::TransitionDenied {
                    old: self.context_string(o),
                    new: self.context_string(n),
                    task: self.context_string(t),
                    class: p.classes[cl as usize - 1].name.to_string(),
                });
            }
        }
        Ok(())
    }
}
