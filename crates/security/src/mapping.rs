//! Object-manager class maps: an object manager names the classes and permissions it enforces,
//! in its own numbering, and gets decisions in that numbering. Classes and permissions the
//! policy does not define are handled as the policy's handle-unknown setting says, as the
//! kernel's selinux_set_mapping and map_decision do.

use std::sync::Arc;

use seaccess_policy::HandleUnknown;
use seaccess_types::{AccessVector, AvDecision, ClassId, DecisionFlags, Sid};

use crate::compiled::Compiled;
use crate::error::{Result, SecurityError};
use crate::generation::Generation;

struct Mapped {
    class: Option<ClassId>,
    /// For each of the caller's permissions, its bit in the policy's class (0: unknown).
    perms: Vec<u32>,
}

/// A class map: the numbers of the policy it was made from, answered only by generations of
/// that same policy load (boolean commits keep it; after a reload, map the classes again: a
/// reload may renumber every class, and a map of another load is refused).
pub struct ClassMap {
    classes: Vec<Mapped>,
    allow_unknown: bool,
    /// The policy whose numbers these are (kept alive with the map, so no other policy can
    /// ever be mistaken for it).
    policy: Arc<Compiled>,
}

impl Generation {
    /// Maps the caller's classes (index = the caller's class number) and permissions (index =
    /// the caller's bit). Under `handleunknown reject`, a class or permission the policy lacks is
    /// an error; otherwise it is remembered and decided by the setting.
    pub fn map_classes(&self, spec: &[(&str, &[&str])]) -> Result<ClassMap> {
        let p = self.policy();
        let reject = p.handle_unknown == HandleUnknown::Reject;
        let mut classes = Vec::with_capacity(spec.len());
        for (name, perms) in spec {
            if perms.len() > 32 {
                return Err(SecurityError::Mapping(
                    name.to_string(),
                    "more than 32 permissions".into(),
                ));
            }
            let class = p.class_value(name);
            if class.is_none() && reject {
                return Err(SecurityError::Mapping(
                    name.to_string(),
                    "the policy does not define it and rejects unknown classes".into(),
                ));
            }
            let mut bits = Vec::with_capacity(perms.len());
            for perm in perms.iter() {
                let b = class
                    .and_then(|c| p.perm_bit(c, perm))
                    .map_or(0, |b| 1u32 << b);
                if b == 0 && class.is_some() && reject {
                    return Err(SecurityError::Mapping(
                        name.to_string(),
                        format!("no permission {perm}, and the policy rejects unknown permissions"),
                    ));
                }
                bits.push(b);
            }
            classes.push(Mapped {
                class: class.map(|c| ClassId(c as u16)),
                perms: bits,
            });
        }
        Ok(ClassMap {
            classes,
            allow_unknown: p.handle_unknown == HandleUnknown::Allow,
            policy: self.c.clone(),
        })
    }

    /// The decision for the caller's class number `class` (an index into the map), with bits in
    /// the caller's numbering.
    /// An error if the map was made from another policy load.
    pub fn compute_av_mapped(
        &self,
        ssid: Sid,
        tsid: Sid,
        map: &ClassMap,
        class: usize,
    ) -> Result<AvDecision> {
        if !Arc::ptr_eq(&map.policy, &self.c) {
            return Err(SecurityError::Mapping(
                format!("{class} (in the map's numbering)"),
                "the map was made from another policy load, whose numbers this policy does not share: map the classes again".into(),
            ));
        }
        let m = map
            .classes
            .get(class)
            .ok_or(SecurityError::InvalidClass(class as u32))?;
        let Some(policy_class) = m.class else {
            // A class the policy lacks: everything or nothing, as handle-unknown says.
            let mut d = AvDecision::deny_all(self.seqno());
            // Check the SIDs all the same: a bad SID is an error whatever the class.
            let s = self.sid_context(ssid)?;
            self.sid_context(tsid)?;
            // security_compute_av marks a permissive source before it unmaps the class, so
            // even a class the policy lacks carries the flag.
            if self.policy().permissive.get(s.ty) {
                d.flags = DecisionFlags::PERMISSIVE;
            }
            if map.allow_unknown {
                d.allowed = AccessVector::ALL;
            }
            return Ok(d);
        };
        let raw = self.compute_av(ssid, tsid, policy_class)?;
        let (mut allowed, mut auditallow, mut auditdeny) = (0u32, 0u32, 0u32);
        for (i, &b) in m.perms.iter().enumerate() {
            let bit = 1u32 << i;
            if raw.allowed.0 & b != 0 || (map.allow_unknown && b == 0) {
                allowed |= bit;
            }
            if raw.auditallow.0 & b != 0 {
                auditallow |= bit;
            }
            if raw.auditdeny.0 & b != 0 || (!map.allow_unknown && b == 0) {
                auditdeny |= bit;
            }
        }
        // Bits past the caller's permissions are always audited if ever asked for.
        for i in m.perms.len()..32 {
            auditdeny |= 1 << i;
        }
        Ok(AvDecision {
            allowed: AccessVector(allowed),
            auditallow: AccessVector(auditallow),
            auditdeny: AccessVector(auditdeny),
            ..raw
        })
    }
}
