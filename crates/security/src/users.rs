//! The contexts a user may be given from a context (the kernel's security_get_user_sids,
//! behind selinuxfs's `user` file and libselinux's security_compute_user).

use seaccess_policy::{level_dom, Context, Level, Range};
use seaccess_types::Sid;

use crate::error::{Result, SecurityError};
use crate::generation::Generation;

/// The kernel's mls_setup_user_range: the new context's low level is the user's default where
/// `from`'s range holds it, else `from`'s low where the user's range holds that, else the
/// user's low where it lies between them; its clearance the lower of the two clearances.
/// None when they do not meet.
fn user_range(from: &Range, user_range: &Range, user_default: &Level) -> Option<Range> {
    let between = |l: &Level, lo: &Level, hi: &Level| level_dom(l, lo) && level_dom(hi, l);
    let (from_sen, from_clr) = (&from.low, &from.high);
    let (user_low, user_clr) = (&user_range.low, &user_range.high);
    let low = if between(user_default, from_sen, from_clr) {
        user_default.clone()
    } else if between(from_sen, user_default, user_clr) {
        from_sen.clone()
    } else if between(from_clr, user_low, user_default) {
        user_low.clone()
    } else {
        return None;
    };
    let high = if level_dom(user_clr, from_clr) {
        from_clr.clone()
    } else if level_dom(from_clr, user_clr) {
        user_clr.clone()
    } else {
        return None;
    };
    Some(Range { low, high })
}

impl Generation {
    /// Every context of `user` (each of its roles with each type of the role, in value order,
    /// the range set up from `from`'s) that `from` may reach by `process {transition}`.
    pub fn compute_user(&self, from: Sid, user: &str) -> Result<Vec<Sid>> {
        let p = self.policy();
        let invalid = |why: &str| SecurityError::InvalidContext {
            context: user.to_string(),
            reason: why.to_string(),
        };
        let uval = p
            .user_names
            .value(user)
            .ok_or_else(|| invalid("no such user"))?;
        let u = p
            .users
            .get(uval as usize - 1)
            .ok_or_else(|| invalid("no such user"))?;
        let fromcon = self.sid_context(from)?.clone();
        let class = self.class("process")?;
        let transition = self.perms(class, &["transition"])?;
        let mut out = Vec::new();
        for r in u.roles.iter() {
            let Some(role) = p.roles.get(r as usize) else {
                continue;
            };
            for t in role.types.iter() {
                let mut c = Context {
                    user: uval,
                    role: r + 1,
                    ty: t + 1,
                    range: None,
                };
                if p.mls {
                    let Some(fr) = &fromcon.range else { continue };
                    match user_range(fr, &u.range, &u.default_level) {
                        Some(range) => c.range = Some(range),
                        None => continue,
                    }
                }
                if !p.context_is_valid(&c) {
                    continue;
                }
                let sid = self.context_struct_to_sid(c)?;
                if self.compute_av(from, sid, class)?.allowed.0 & transition.0 == transition.0 {
                    out.push(sid);
                }
            }
        }
        Ok(out)
    }
}
