//! The class map: the object manager's classes and permissions (its own numbering, a static
//! table) found by name in the loaded policy, remade for every policy before it is published
//! (the kernel's selinux_set_mapping, map_decision and unmap_class).
//!
//! A map is made from one policy generation's names ([`seaccess_types::PolicyNames`]: every
//! number, its seqno, handle_unknown and capabilities of that one generation) and is only ever
//! used with decisions of that seqno: the cache's [`seaccess_avc::Avc::check_at`] refuses a
//! decision of another policy, and the check translates again with that policy's map. So a
//! reload that renumbers classes never pairs the old numbers with the new decisions, nor the
//! reverse, even while the map is being made.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};
use std::sync::Arc;

use arc_swap::ArcSwap;
use seaccess_types::{
    AccessServer, AccessVector, ClassId, HandleUnknown, PolicyCaps, PolicyNames, Seqno,
};

use crate::classes::{Class, ClassDef};
use crate::error::{ObjmgrError, Result};

/// One class of the table, as the policy knows it.
#[derive(Clone, Debug)]
struct Mapped {
    /// The policy's class; None when the policy does not define it.
    class: Option<ClassId>,
    /// For each of our bits, the policy's bit (a one-bit vector), or 0 where the policy lacks
    /// the permission.
    bits: [u32; 32],
    /// Our bits the policy lacks.
    unknown: u32,
    /// Whether our bits are the policy's bits (then translating is a copy).
    identity: bool,
}

/// A request translated into the policy's numbering.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Translated {
    /// The policy's class; None when the policy lacks the class.
    pub class: Option<ClassId>,
    /// The requested permissions the policy defines, in its bits.
    pub perms: AccessVector,
    /// The requested permissions the policy does not define, in our bits: allowed under
    /// `handle_unknown allow`, denied otherwise.
    pub unknown: u32,
}

/// The table mapped onto one policy.
#[derive(Debug)]
pub struct ClassMap {
    seqno: Seqno,
    handle_unknown: HandleUnknown,
    classes: Vec<Mapped>,
    /// A class of the table the policy defines, to learn the source's permissive flag by for a
    /// class it does not (see [`ClassMap::defined_class`]).
    defined: Option<ClassId>,
    /// Why the policy cannot be enforced with this table (a class or permission missing under
    /// `handle_unknown reject`): every check fails closed.
    rejected: Option<String>,
}

impl ClassMap {
    /// Maps `table` onto the policy generation `names` is of (its seqno is the map's).
    pub fn new(table: &'static [ClassDef], names: &dyn PolicyNames) -> ClassMap {
        let server = names;
        let seqno = server.seqno();
        let handle_unknown = server.handle_unknown();
        let mut rejected = None;
        let mut classes = Vec::with_capacity(table.len());
        for def in table {
            let class = server.class_id(def.name);
            let mut bits = [0u32; 32];
            let mut unknown = 0u32;
            let mut identity = class.is_some();
            for (i, perm) in def.perms.iter().enumerate().take(32) {
                match class.and_then(|c| server.perm_bit(c, perm)) {
                    Some(b) if b < 32 => {
                        bits[i] = 1 << b;
                        identity &= b as usize == i;
                    }
                    _ => {
                        unknown |= 1 << i;
                        identity = false;
                        if handle_unknown == HandleUnknown::Reject && rejected.is_none() {
                            rejected = Some(match class {
                                None => format!("the policy does not define class {} and rejects unknown classes", def.name),
                                Some(_) => format!("the policy's class {} has no permission {perm} and rejects unknown permissions", def.name),
                            });
                        }
                    }
                }
            }
            classes.push(Mapped {
                class,
                bits,
                unknown,
                identity,
            });
        }
        let defined = classes.iter().find_map(|m| m.class);
        ClassMap {
            seqno,
            handle_unknown,
            classes,
            defined,
            rejected,
        }
    }

    /// The policy seqno this map is for.
    pub fn seqno(&self) -> Seqno {
        self.seqno
    }

    /// What the policy does with permissions it lacks.
    pub fn handle_unknown(&self) -> HandleUnknown {
        self.handle_unknown
    }

    /// A class of the table the policy defines, if any: a decision on it carries the
    /// source's permissive flag, which depends on the source's type alone
    /// (security_compute_av tests the permissive map before it looks at the class).
    pub fn defined_class(&self) -> Option<ClassId> {
        self.defined
    }

    /// The policy's number for `class` when our bits of it are the policy's bits and the policy
    /// defines every one of them (translating is then a copy).
    pub fn identity_class(&self, class: Class) -> Option<ClassId> {
        if self.rejected.is_some() {
            return None;
        }
        let m = self.classes.get(usize::from(class.0))?;
        if m.identity {
            m.class
        } else {
            None
        }
    }

    /// `perms` (our bits) of `class` in the policy's numbering.
    #[inline]
    pub fn translate(&self, class: Class, perms: u32) -> Result<Translated> {
        if let Some(why) = &self.rejected {
            return Err(ObjmgrError::Rejected(why.clone()));
        }
        let m = self
            .classes
            .get(usize::from(class.0))
            .ok_or(ObjmgrError::UnknownClass(class.0))?;
        if m.identity {
            return Ok(Translated {
                class: m.class,
                perms: AccessVector(perms),
                unknown: 0,
            });
        }
        let mut out = 0u32;
        let mut rest = perms & !m.unknown;
        while rest != 0 {
            let i = rest.trailing_zeros() as usize;
            rest &= rest - 1;
            out |= m.bits.get(i).copied().unwrap_or(0);
        }
        Ok(Translated {
            class: m.class,
            perms: AccessVector(out),
            unknown: perms & m.unknown,
        })
    }
}

/// The maps of the policies a check may meet: the published one and, while a change is being
/// prepared, the next one. Kept newest first; a handful is plenty, since a cache never answers
/// from a policy older than the one published before it.
pub struct ClassMaps {
    table: &'static [ClassDef],
    maps: ArcSwap<Vec<Arc<ClassMap>>>,
    /// Per class of the table, the last map that translates it by copying, packed in one word
    /// (valid bit 63, the policy's class number in bits 32-47, its seqno in bits 0-31), so the
    /// common check needs one load and no map at all: the cache's check_at refuses a decision
    /// of another seqno, and the check then takes the maps' way.
    quick: Vec<AtomicU64>,
    /// The policy capabilities of the newest map's policy, for hooks whose checks depend on
    /// them (open_perms, extended_socket_class, ...): one load, as the kernel's
    /// selinux_policycap_*() read a flag of the current policy.
    caps: AtomicU32,
}

const QUICK_VALID: u64 = 1 << 63;

const KEPT: usize = 4;

impl ClassMaps {
    /// The table mapped onto the policy `server` answers from now.
    pub fn new(table: &'static [ClassDef], server: &dyn AccessServer) -> ClassMaps {
        let names = server.names();
        ClassMaps {
            table,
            maps: ArcSwap::from_pointee(vec![Arc::new(ClassMap::new(table, &*names))]),
            quick: table.iter().map(|_| AtomicU64::new(0)).collect(),
            caps: AtomicU32::new(names.policy_caps().to_word()),
        }
    }

    /// The table.
    pub fn table(&self) -> &'static [ClassDef] {
        self.table
    }

    /// Maps the table onto a policy about to be published (a prepare listener's job).
    pub fn prepare(&self, next: &dyn AccessServer) {
        self.install(&*next.names());
    }

    /// Keeps a map of the table onto generation `names`.
    fn install(&self, names: &dyn PolicyNames) {
        let map = Arc::new(ClassMap::new(self.table, names));
        self.caps.store(names.policy_caps().to_word(), Release);
        self.maps.rcu(|maps| {
            let mut v: Vec<Arc<ClassMap>> = Vec::with_capacity(KEPT);
            v.push(map.clone());
            v.extend(maps.iter().filter(|m| m.seqno != map.seqno).cloned());
            // Newest first, whatever order the maps were made in (serial order, as seqnos wrap).
            v.sort_by(|a, b| {
                if a.seqno.is_after(b.seqno) {
                    std::cmp::Ordering::Less
                } else if b.seqno.is_after(a.seqno) {
                    std::cmp::Ordering::Greater
                } else {
                    std::cmp::Ordering::Equal
                }
            });
            v.truncate(KEPT);
            v
        });
    }

    /// The policy class and seqno of the quick translation of `class`, if one is noted.
    #[inline(always)]
    pub fn quick(&self, class: Class) -> Option<(ClassId, Seqno)> {
        let q = self.quick.get(usize::from(class.0))?.load(Acquire);
        (q & QUICK_VALID != 0).then_some((ClassId((q >> 32) as u16), Seqno(q as u32)))
    }

    /// Notes `map`'s translation of `class` as the quick one, if it is a copy.
    #[inline]
    pub fn note_quick(&self, class: Class, map: &ClassMap) {
        if let (Some(c), Some(q)) = (
            map.identity_class(class),
            self.quick.get(usize::from(class.0)),
        ) {
            q.store(
                QUICK_VALID | (u64::from(c.0) << 32) | u64::from(map.seqno.0),
                Release,
            );
        }
    }

    /// The policy capabilities of the newest policy known.
    #[inline(always)]
    pub fn policy_caps(&self) -> PolicyCaps {
        PolicyCaps::from_word(self.caps.load(Acquire))
    }

    /// The newest map: the one a check starts with.
    #[inline]
    pub fn newest(&self) -> Arc<ClassMap> {
        let maps = self.maps.load();
        match maps.first() {
            Some(m) => m.clone(),
            None => Arc::new(ClassMap {
                seqno: Seqno(0),
                handle_unknown: HandleUnknown::Deny,
                classes: Vec::new(),
                defined: None,
                rejected: Some("no class map".into()),
            }),
        }
    }

    /// The map for policy `seqno`, if it is one of those kept.
    pub fn for_seqno(&self, seqno: Seqno) -> Option<Arc<ClassMap>> {
        self.maps.load().iter().find(|m| m.seqno == seqno).cloned()
    }

    /// Makes a map for the policy `server` answers from now, if none is kept for it (a policy
    /// published without a prepare listener having run, as when the object manager started
    /// during a change).
    pub fn catch_up(&self, server: &dyn AccessServer) -> Arc<ClassMap> {
        let names = server.names();
        let seqno = names.seqno();
        if let Some(m) = self.for_seqno(seqno) {
            return m;
        }
        self.install(&*names);
        self.for_seqno(seqno).unwrap_or_else(|| self.newest())
    }
}
