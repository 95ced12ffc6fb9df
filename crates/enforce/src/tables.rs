//! The userspace half of a generation: every decision and transition the BPF object may need,
//! computed from one policy generation before any task can meet a SID (BPF cannot wait for
//! userspace), in the layout.rs types the loader installs.
//!
//! What is computed, for a universe of SIDs (the labels of files, the policy's initial SIDs,
//! the contexts confined tasks start in):
//! - the closure: task domains reached by exec (the kernel's security_transition_sid for class
//!   `process`, task x every object SID, as selinux_bprm_creds_for_exec asks it) and new-file
//!   SIDs reached by create (task x every object SID as parent directory x each file class, as
//!   selinux_inode_init_security asks it), repeated until nothing new, within
//!   [`Limits::max_sids`];
//! - the decisions: every task SID x every SID x every class of the object manager's table, in
//!   the object manager's bits, translated as the kernel's map_decision does (services.c), with
//!   handle_unknown applied and the permissive flag of the source domain;
//! - the transitions, for every pair the closure asked (a missing key is never "no
//!   transition": a create with no type_transition rule still gets a context of its own); a
//!   new SID of 0 (SECSID_NULL) where the policy computes a context it does not itself
//!   define, which the kernel refuses (the exec or create fails with EACCES when enforcing).
//!
//! Classes the policy lacks are not skipped: their decision is handle_unknown's (all allowed
//! or none, as security_compute_av answers an unmapped class), so the BPF side never meets a
//! miss it would have to answer by itself.
//!
//! SIDs are the engine's: its SID table is shared by every generation of one server, so a
//! context keeps its number across reloads and boolean commits, as the kernel's sidtab
//! conversion keeps them, and a task or inode storage entry stays meaningful in the next
//! generation (a context the new policy refuses is decided as the unlabeled initial SID).

use std::collections::{BTreeSet, HashMap, VecDeque};

use seaccess_engine::{Engine, EngineError};
use seaccess_objmgr::{Class, ClassMap, CLASSES};
use seaccess_security::SecurityError;
use seaccess_types::{ClassId, HandleUnknown, Sid};

use crate::error::{EnforceError, Result};
use crate::layout::{Av, Config, Key, Trans, AV_PERMISSIVE, MAX_DECISIONS, MAX_TRANSITIONS};

/// The kernel's SECINITSID_KERNEL.
pub const SECINITSID_KERNEL: u32 = 1;
/// The kernel's SECINITSID_UNLABELED.
pub const SECINITSID_UNLABELED: u32 = 3;
/// The kernel's SECINITSID_FILE: inodes with no label.
pub const SECINITSID_FILE: u32 = 5;
/// The highest initial SID number a policy may give a context (the SID table's range).
const MAX_INITIAL: u32 = 256;

/// The file classes a create may make, in the object manager's numbering.
const FILE_CLASSES: [Class; 7] = [
    Class::FILE,
    Class::DIR,
    Class::LNK_FILE,
    Class::CHR_FILE,
    Class::BLK_FILE,
    Class::FIFO_FILE,
    Class::SOCK_FILE,
];

/// The bounds of one generation.
#[derive(Copy, Clone, Debug)]
pub struct Limits {
    /// SIDs the closure may reach (tasks and objects together).
    pub max_sids: usize,
    /// Entries of the decisions map (layout.h's SEA_MAX_DECISIONS by default).
    pub max_decisions: usize,
    /// Entries of the transitions map (layout.h's SEA_MAX_TRANSITIONS by default).
    pub max_transitions: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_sids: 4096,
            max_decisions: MAX_DECISIONS as usize,
            max_transitions: MAX_TRANSITIONS as usize,
        }
    }
}

/// What exists before anything runs: the contexts confined tasks start in and the SIDs of
/// objects (file labels; the policy's initial SIDs are added by [`build`]).
#[derive(Clone, Debug, Default)]
pub struct Universe {
    /// The SIDs confined tasks start in (`seaccess enforce run --context`).
    pub tasks: Vec<Sid>,
    /// The SIDs of objects: the labels of files.
    pub objects: Vec<Sid>,
}

/// How a SID added to a generation is used (see [`Generation::add_sid`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// An object's label: decided as a target of every task and, back, as a source against
    /// every task; a possible executable and parent directory.
    Object,
    /// A task's domain: decided as a source against every SID, exec and create transitions
    /// computed from it.
    Task,
}

/// One map's entries, sorted by key, as two arrays (what a batch update takes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table<V> {
    /// The keys, ascending.
    pub keys: Vec<Key>,
    /// The value of each key.
    pub values: Vec<V>,
}

impl<V: Copy> Table<V> {
    /// How many entries.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The value of `key`.
    pub fn get(&self, key: &Key) -> Option<V> {
        let i = self.keys.binary_search(key).ok()?;
        self.values.get(i).copied()
    }

    /// The entries, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (Key, V)> + '_ {
        self.keys.iter().copied().zip(self.values.iter().copied())
    }

    fn from_unsorted(mut v: Vec<(Key, V)>) -> Table<V> {
        v.sort_unstable_by_key(|e| e.0);
        v.dedup_by_key(|e| e.0);
        let (keys, values) = v.into_iter().unzip();
        Table { keys, values }
    }

    /// This table with `more`'s entries (whose keys it does not have) merged in, in order.
    fn merged(self, more: &Table<V>) -> Table<V> {
        let mut v: Vec<(Key, V)> = self.keys.into_iter().zip(self.values).collect();
        v.extend(more.iter());
        Table::from_unsorted(v)
    }
}

/// The SIDs a generation covers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sids {
    /// Task domains: the start contexts and what exec reaches from them.
    pub tasks: BTreeSet<u32>,
    /// Objects: file labels, initial SIDs, what create reaches.
    pub objects: BTreeSet<u32>,
}

/// One generation of the maps: everything the BPF object decides with, from one policy
/// generation (`seqno`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Generation {
    /// The policy generation it was computed from.
    pub seqno: u32,
    /// The `config` map's entry.
    pub config: Config,
    /// (task SID, SID, class) to the decision in the object manager's bits.
    pub decisions: Table<Av>,
    /// (task SID, executable SID, `process`) and (task SID, directory SID, file class) to the
    /// new domain or the new file's SID.
    pub transitions: Table<Trans>,
    /// The SIDs covered.
    pub sids: Sids,
}

/// What [`Generation::add_sid`] added, for the loader to insert into the generation in use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Added {
    /// The new decisions.
    pub decisions: Table<Av>,
    /// The new transitions.
    pub transitions: Table<Trans>,
    /// The SIDs new to the generation (the one asked for and what it led to), with their role.
    pub sids: Vec<(u32, Role)>,
}

impl Generation {
    /// Entries in all maps together: decisions, transitions and the one config entry.
    pub fn entries(&self) -> usize {
        self.decisions.len() + self.transitions.len() + 1
    }

    /// Extends this generation with `sid` (a miss the BPF side reported, a label the daemon met
    /// late), in the role given, and with whatever its transitions reach: the entries are
    /// returned for the loader and kept here. Nothing is added when the engine's policy is no
    /// longer the one this generation was built from ([`EnforceError::Stale`]: build the next
    /// generation instead, which covers the SID).
    pub fn add_sid(
        &mut self,
        engine: &Engine,
        sid: Sid,
        role: Role,
        limits: &Limits,
    ) -> Result<Added> {
        let added = engine.with_generation(|g| {
            if g.seqno().0 != self.seqno {
                return Ok(Err(EnforceError::Stale {
                    built: self.seqno,
                    now: g.seqno().0,
                }));
            }
            Ok(self.extend(g, sid, role, limits))
        })??;
        self.decisions = std::mem::take(&mut self.decisions).merged(&added.decisions);
        self.transitions = std::mem::take(&mut self.transitions).merged(&added.transitions);
        for (s, r) in &added.sids {
            match r {
                Role::Task => self.sids.tasks.insert(*s),
                Role::Object => self.sids.objects.insert(*s),
            };
        }
        Ok(added)
    }

    /// [`Generation::add_sid`]'s entries under `g`, this generation's policy.
    fn extend(
        &self,
        g: &seaccess_engine::Generation<'_>,
        sid: Sid,
        role: Role,
        limits: &Limits,
    ) -> Result<Added> {
        let mut c = Closure::new(g, limits, self)?;
        let known = c.all.contains(&sid);
        c.base = (self.decisions.len(), self.transitions.len());
        c.push(sid, role);
        c.run()?;
        if role == Role::Object && !known && !c.tasks.contains(&sid) {
            // And back: the new SID as a source against every task (a new inode's SID asked
            // of as a filesystem-associate source, a socket's peer).
            let tasks: Vec<Sid> = c.tasks.iter().copied().collect();
            for t in tasks {
                c.decide(sid, t)?;
            }
        }
        Ok(c.into_added())
    }
}

/// The generation of `universe` under the engine's current policy: its closure, decisions and
/// transitions, all from one policy generation (computed again if the policy changes while
/// they are being read, through [`Engine::with_generation`]). `enforcing` is the config's mode.
pub fn build(
    engine: &Engine,
    universe: &Universe,
    enforcing: bool,
    limits: &Limits,
) -> Result<Generation> {
    engine.with_generation(|g| Ok(generation(g, universe, enforcing, limits)))?
}

/// [`build`] under policy generation `g`.
fn generation(
    g: &seaccess_engine::Generation<'_>,
    universe: &Universe,
    enforcing: bool,
    limits: &Limits,
) -> Result<Generation> {
    let mut c = Closure::new(g, limits, &Generation::default())?;
    // An initial SID the policy gives no context stays 0, which no map holds: the BPF side
    // misses and denies (fails closed).
    let initial = |n: u32| g.policy().initial_sid(n).map_or(0, |s| s.0);
    let config = Config {
        enforcing: u32::from(enforcing),
        unlabeled_sid: initial(SECINITSID_UNLABELED),
        file_sid: initial(SECINITSID_FILE),
        kernel_sid: initial(SECINITSID_KERNEL),
        pad: [0; 4],
    };
    for n in 1..=MAX_INITIAL {
        if let Some(s) = g.policy().initial_sid(n) {
            c.push(s, Role::Object);
        }
    }
    for &s in &universe.objects {
        c.push(s, Role::Object);
    }
    for &s in &universe.tasks {
        c.push(s, Role::Task);
    }
    c.run()?;
    Ok(c.into_generation(config))
}

/// One class of the table as the policy has it: the kernel's struct selinux_mapping.
struct Mapping {
    /// The policy's class; None when it lacks it.
    class: Option<ClassId>,
    /// Per bit of ours, the policy's bit (0 where the policy lacks the permission).
    perms: Vec<u32>,
}

/// The closure being computed, over one policy generation.
struct Closure<'g, 'e> {
    g: &'g seaccess_engine::Generation<'e>,
    limits: Limits,
    allow_unknown: bool,
    classes: Vec<Mapping>,
    permissive: HashMap<Sid, bool>,
    tasks: BTreeSet<Sid>,
    objects: BTreeSet<Sid>,
    all: BTreeSet<Sid>,
    queue: VecDeque<(Sid, Role)>,
    decisions: Vec<(Key, Av)>,
    transitions: Vec<(Key, Trans)>,
    new_sids: Vec<(u32, Role)>,
    /// Entries the generation being extended already has (counted against the limits).
    base: (usize, usize),
}

impl<'g, 'e> Closure<'g, 'e> {
    /// A closure under `g` starting from what `from` already covers.
    fn new(
        g: &'g seaccess_engine::Generation<'e>,
        limits: &Limits,
        from: &Generation,
    ) -> Result<Closure<'g, 'e>> {
        let map = ClassMap::new(CLASSES, &**g.policy());
        let mut classes = Vec::with_capacity(CLASSES.len());
        for (i, def) in CLASSES.iter().enumerate() {
            let class = Class(u16::try_from(i).unwrap_or(u16::MAX));
            let rejected = |e: seaccess_objmgr::ObjmgrError| EnforceError::Rejected(e.to_string());
            let pclass = map.translate(class, 0).map_err(rejected)?.class;
            let mut perms = Vec::with_capacity(def.perms.len());
            for b in 0..def.perms.len().min(32) {
                perms.push(map.translate(class, 1 << b).map_err(rejected)?.perms.0);
            }
            classes.push(Mapping {
                class: pclass,
                perms,
            });
        }
        let sids = |s: &BTreeSet<u32>| s.iter().map(|&n| Sid(n)).collect::<BTreeSet<Sid>>();
        let tasks = sids(&from.sids.tasks);
        let objects = sids(&from.sids.objects);
        let all = tasks.union(&objects).copied().collect();
        Ok(Closure {
            g,
            limits: *limits,
            allow_unknown: map.handle_unknown() == HandleUnknown::Allow,
            classes,
            permissive: HashMap::new(),
            tasks,
            objects,
            all,
            queue: VecDeque::new(),
            decisions: Vec::new(),
            transitions: Vec::new(),
            new_sids: Vec::new(),
            base: (0, 0),
        })
    }

    fn push(&mut self, sid: Sid, role: Role) {
        self.queue.push_back((sid, role));
    }

    /// Until nothing new: each SID added makes the pairs it forms with what is already there,
    /// so every (task, SID) pair is decided once and every (task, object) pair's transitions
    /// computed once, whichever of the two came last.
    fn run(&mut self) -> Result<()> {
        while let Some((sid, role)) = self.queue.pop_front() {
            self.add_target(sid)?;
            match role {
                Role::Object => {
                    if self.objects.insert(sid) {
                        self.new_sids.push((sid.0, Role::Object));
                        let tasks: Vec<Sid> = self.tasks.iter().copied().collect();
                        for t in tasks {
                            self.transit(t, sid)?;
                        }
                    }
                }
                Role::Task => {
                    if self.tasks.insert(sid) {
                        self.new_sids.push((sid.0, Role::Task));
                        let all: Vec<Sid> = self.all.iter().copied().collect();
                        for s in all {
                            self.decide(sid, s)?;
                        }
                        let objects: Vec<Sid> = self.objects.iter().copied().collect();
                        for o in objects {
                            self.transit(sid, o)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A SID new as a target: decided for every task there is.
    fn add_target(&mut self, sid: Sid) -> Result<()> {
        if !self.all.insert(sid) {
            return Ok(());
        }
        if self.all.len() > self.limits.max_sids {
            return Err(EnforceError::TooLarge {
                what: "SIDs",
                limit: self.limits.max_sids,
                detail: format!("reaching SID {} ({})", sid.0, self.context(sid)),
            });
        }
        let tasks: Vec<Sid> = self.tasks.iter().copied().collect();
        for t in tasks {
            self.decide(t, sid)?;
        }
        Ok(())
    }

    fn context(&self, sid: Sid) -> String {
        self.g
            .policy()
            .sid_to_context(sid)
            .unwrap_or_else(|e| e.to_string())
    }

    /// Whether `ssid` is a permissive domain (asked once per SID, of a class the policy has).
    fn permissive(&mut self, ssid: Sid) -> Result<bool> {
        if let Some(&p) = self.permissive.get(&ssid) {
            return Ok(p);
        }
        let mut p = false;
        if let Some(c) = self.classes.iter().find_map(|m| m.class) {
            p = self
                .g
                .policy()
                .compute_av(ssid, ssid, c)
                .map_err(EngineError::from)?
                .flags
                .permissive();
        }
        self.permissive.insert(ssid, p);
        Ok(p)
    }

    /// The decisions of `ssid` on `tsid` for every class of the table.
    fn decide(&mut self, ssid: Sid, tsid: Sid) -> Result<()> {
        if self.base.0 + self.decisions.len() + self.classes.len() > self.limits.max_decisions {
            return Err(EnforceError::TooLarge {
                what: "decisions",
                limit: self.limits.max_decisions,
                detail: format!("deciding {} on {}", self.context(ssid), self.context(tsid)),
            });
        }
        for i in 0..self.classes.len() {
            let av = self.av(ssid, tsid, i)?;
            let key = Key {
                ssid: ssid.0,
                tsid: tsid.0,
                tclass: i as u32,
            };
            self.decisions.push((key, av));
        }
        Ok(())
    }

    /// One decision in our bits: the kernel's security_compute_av with map_decision.
    fn av(&mut self, ssid: Sid, tsid: Sid, class: usize) -> Result<Av> {
        let Some(m) = self.classes.get(class) else {
            return Ok(Av::default());
        };
        let Some(pclass) = m.class else {
            // An unmapped class: everything or nothing (security_compute_av's `allow` label),
            // auditdeny all (avd_init), the source's permissive flag set before the class is
            // looked at.
            let flags = if self.permissive(ssid)? {
                AV_PERMISSIVE
            } else {
                0
            };
            return Ok(Av {
                allowed: if self.allow_unknown { u32::MAX } else { 0 },
                auditallow: 0,
                auditdeny: u32::MAX,
                flags,
            });
        };
        let d = self
            .g
            .policy()
            .compute_av(ssid, tsid, pclass)
            .map_err(EngineError::from)?;
        let mut av = Av {
            flags: if d.flags.permissive() {
                AV_PERMISSIVE
            } else {
                0
            },
            ..Av::default()
        };
        for (i, &pb) in m.perms.iter().enumerate() {
            let ours = 1u32 << i;
            if pb == 0 {
                if self.allow_unknown {
                    av.allowed |= ours;
                } else {
                    av.auditdeny |= ours;
                }
                continue;
            }
            if d.allowed.0 & pb != 0 {
                av.allowed |= ours;
            }
            if d.auditallow.0 & pb != 0 {
                av.auditallow |= ours;
            }
            if d.auditdeny.0 & pb != 0 {
                av.auditdeny |= ours;
            }
        }
        // Bits past the class's permissions: a denial of one is audited (map_decision).
        if m.perms.len() < 32 {
            av.auditdeny |= u32::MAX << m.perms.len();
        }
        Ok(av)
    }

    /// The exec and create transitions of task `t` with object `o` (as executable and as
    /// parent directory); what they reach is queued.
    fn transit(&mut self, t: Sid, o: Sid) -> Result<()> {
        if self.base.1 + self.transitions.len() + 1 + FILE_CLASSES.len()
            > self.limits.max_transitions
        {
            return Err(EnforceError::TooLarge {
                what: "transitions",
                limit: self.limits.max_transitions,
                detail: format!("from {} with {}", self.context(t), self.context(o)),
            });
        }
        let pol = self.g.policy();
        for class in std::iter::once(Class::PROCESS).chain(FILE_CLASSES) {
            // A class the policy lacks has no transition rules: nothing to install, and the
            // BPF side's miss denies (the object manager refuses to label one too).
            let Some(pclass) = self.classes.get(usize::from(class.0)).and_then(|m| m.class) else {
                continue;
            };
            let new = match pol.compute_create(t, o, pclass, None) {
                Ok(n) => n,
                // The policy computes a context it does not define: the kernel refuses the
                // exec or create (compute_sid_handle_invalid_context, EACCES when enforcing).
                // SECSID_NULL says so to the BPF side, which no map holds as a label.
                Err(SecurityError::InvalidComputedContext(_)) => Sid::NULL,
                Err(e) => return Err(EngineError::from(e).into()),
            };
            self.transitions.push((
                Key {
                    ssid: t.0,
                    tsid: o.0,
                    tclass: u32::from(class.0),
                },
                Trans {
                    newsid: new.0,
                    pad: 0,
                },
            ));
            if new == Sid::NULL {
                continue;
            }
            if class == Class::PROCESS {
                if new != t {
                    self.push(new, Role::Task);
                }
            } else {
                self.push(new, Role::Object);
            }
        }
        Ok(())
    }

    fn into_generation(self, config: Config) -> Generation {
        let n = |s: &BTreeSet<Sid>| s.iter().map(|s| s.0).collect();
        Generation {
            seqno: self.g.seqno().0,
            config,
            sids: Sids {
                tasks: n(&self.tasks),
                objects: n(&self.objects),
            },
            decisions: Table::from_unsorted(self.decisions),
            transitions: Table::from_unsorted(self.transitions),
        }
    }

    fn into_added(self) -> Added {
        Added {
            decisions: Table::from_unsorted(self.decisions),
            transitions: Table::from_unsorted(self.transitions),
            sids: self.new_sids,
        }
    }
}
