//! The closure of a generation's SIDs and the entries it makes (see the parent module).

use std::collections::{BTreeSet, HashMap, VecDeque};

use seaccess_engine::EngineError;
use seaccess_objmgr::{Class, ClassMap, CLASSES};
use seaccess_security::SecurityError;
use seaccess_types::{ClassId, HandleUnknown, Sid};

use super::{Added, Generation, Limits, Role, Sids, Table, FILE_CLASSES};
use crate::error::{EnforceError, Result};
use crate::layout::{Av, Config, Key, NamedKey, Trans, AV_PERMISSIVE};

/// One class of the table as the policy has it: the kernel's struct selinux_mapping.
struct Mapping {
    /// The policy's class; None when it lacks it.
    class: Option<ClassId>,
    /// Per bit of ours, the policy's bit (0 where the policy lacks the permission).
    perms: Vec<u32>,
}

/// The closure being computed, over one policy generation.
pub(super) struct Closure<'g, 'e> {
    g: &'g seaccess_engine::Generation<'e>,
    limits: Limits,
    allow_unknown: bool,
    classes: Vec<Mapping>,
    permissive: HashMap<Sid, bool>,
    tasks: BTreeSet<Sid>,
    /// Parents of creates.
    dirs: BTreeSet<Sid>,
    /// Executables.
    files: BTreeSet<Sid>,
    /// Every SID not a task's (initial SIDs, labels, what creates make).
    objects: BTreeSet<Sid>,
    /// Port and node SIDs, decided in the INET socket classes only (while not also in
    /// `objects` or `tasks`).
    net: BTreeSet<Sid>,
    /// The classes of INET sockets (socket_type_to_security_class for PF_INET and PF_INET6):
    /// all a port or node SID is decided in.
    inet_classes: Vec<usize>,
    /// Every target: tasks and objects.
    pub(super) all: BTreeSet<Sid>,
    queue: VecDeque<(Sid, Role)>,
    decisions: Vec<(Key, Av)>,
    transitions: Vec<(Key, Trans)>,
    named: Vec<(NamedKey, Trans)>,
    /// Filename transitions left out: a name too long for the key.
    named_skipped: usize,
    new_sids: Vec<(u32, Role)>,
    /// Entries the generation being extended already has (counted against the limits):
    /// decisions, transitions, named transitions.
    pub(super) base: (usize, usize, usize),
}

impl<'g, 'e> Closure<'g, 'e> {
    /// A closure under `g` starting from what `from` already covers.
    pub(super) fn new(
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
        let net = sids(&from.sids.net);
        let all = tasks.union(&objects).chain(&net).copied().collect();
        let inet = [
            Class::TCP_SOCKET,
            Class::UDP_SOCKET,
            Class::RAWIP_SOCKET,
            Class::ICMP_SOCKET,
            Class::SCTP_SOCKET,
        ];
        let inet_classes = inet.iter().map(|c| usize::from(c.0)).collect();
        let (dirs, files) = (sids(&from.sids.dirs), sids(&from.sids.files));
        Ok(Closure {
            g,
            limits: *limits,
            allow_unknown: map.handle_unknown() == HandleUnknown::Allow,
            classes,
            permissive: HashMap::new(),
            tasks,
            dirs,
            files,
            objects,
            net,
            inet_classes,
            all,
            queue: VecDeque::new(),
            decisions: Vec::new(),
            transitions: Vec::new(),
            named: Vec::new(),
            named_skipped: 0,
            new_sids: Vec::new(),
            base: (0, 0, 0),
        })
    }

    pub(super) fn push(&mut self, sid: Sid, role: Role) {
        self.queue.push_back((sid, role));
    }

    /// Until nothing new: each SID added makes the pairs it forms with what is already there,
    /// so every (task, SID) pair is decided once and every (task, object) pair's transitions
    /// computed once, whichever of the two came last.
    pub(super) fn run(&mut self) -> Result<()> {
        while let Some((sid, role)) = self.queue.pop_front() {
            if role == Role::Net {
                if !self.all.contains(&sid) && self.net.insert(sid) {
                    self.new_sids.push((sid.0, Role::Net));
                    self.add_target(sid)?;
                }
                continue;
            }
            if self.net.remove(&sid) {
                // Met as more than a port or node: the classes it was not decided in.
                for t in self.tasks.clone() {
                    self.decide_in(t, sid, false)?;
                }
            }
            self.add_target(sid)?;
            if role != Role::Task && self.objects.insert(sid) && role == Role::Object {
                self.new_sids.push((sid.0, Role::Object));
            }
            match role {
                Role::Object | Role::Net => {}
                Role::Dir => {
                    if self.dirs.insert(sid) {
                        self.new_sids.push((sid.0, Role::Dir));
                        for t in self.tasks.clone() {
                            self.create(t, sid)?;
                        }
                    }
                }
                Role::File => {
                    if self.files.insert(sid) {
                        self.new_sids.push((sid.0, Role::File));
                        for t in self.tasks.clone() {
                            self.exec(t, sid)?;
                        }
                    }
                }
                Role::Task => {
                    if self.tasks.insert(sid) {
                        self.new_sids.push((sid.0, Role::Task));
                        for s in self.all.clone() {
                            self.decide(sid, s)?;
                        }
                        for f in self.files.clone() {
                            self.exec(sid, f)?;
                        }
                        for d in self.dirs.clone() {
                            self.create(sid, d)?;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The tasks, as they are now.
    pub(super) fn tasks(&self) -> Vec<Sid> {
        self.tasks.iter().copied().collect()
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
        for t in self.tasks.clone() {
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

    /// The decisions of `ssid` on `tsid` for every class of the table (the INET socket classes
    /// alone for a port or node SID).
    pub(super) fn decide(&mut self, ssid: Sid, tsid: Sid) -> Result<()> {
        let net = self.net.contains(&tsid) && !self.tasks.contains(&tsid);
        self.decide_in(ssid, tsid, net)
    }

    /// The decisions of `ssid` on `tsid`: in the INET socket classes alone (`sockets`), or in
    /// every class (a class decided twice is one entry: the table drops the repeat).
    fn decide_in(&mut self, ssid: Sid, tsid: Sid, sockets: bool) -> Result<()> {
        if self.base.0 + self.decisions.len() + self.classes.len() > self.limits.max_decisions {
            return Err(EnforceError::TooLarge {
                what: "decisions",
                limit: self.limits.max_decisions,
                detail: format!("deciding {} on {}", self.context(ssid), self.context(tsid)),
            });
        }
        for i in 0..self.classes.len() {
            if sockets && !self.inet_classes.contains(&i) {
                continue;
            }
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

    /// The domain task `t` execs `f` into (security_transition_sid for `process`, as
    /// selinux_bprm_creds_for_exec asks it); a new domain is queued.
    fn exec(&mut self, t: Sid, f: Sid) -> Result<()> {
        self.room(1, t, f)?;
        if let Some(new) = self.transition(t, f, Class::PROCESS)? {
            if new != t {
                self.push(new, Role::Task);
            }
        }
        Ok(())
    }

    /// The SIDs of what task `t` creates in directory `d`, of each file class
    /// (security_transition_sid, as selinux_inode_init_security asks it); new ones are queued:
    /// a directory as a parent, a file as an executable, the rest as targets.
    fn create(&mut self, t: Sid, d: Sid) -> Result<()> {
        self.room(FILE_CLASSES.len(), t, d)?;
        for class in FILE_CLASSES {
            let role = match class {
                Class::DIR => Role::Dir,
                Class::FILE => Role::File,
                _ => Role::Object,
            };
            let unnamed = self.transition(t, d, class)?;
            if let Some(new) = unnamed {
                self.push(new, role);
            }
            for new in self.named(t, d, class, unnamed)? {
                self.push(new, role);
            }
        }
        Ok(())
    }

    /// The filename transitions of `t` creating a `class` object in `d` whose answer differs
    /// from the unnamed one (`unnamed`; where it is the same, the BPF side's fallback to the
    /// transitions map gives it): kept, and their new SIDs returned.
    fn named(&mut self, t: Sid, d: Sid, class: Class, unnamed: Option<Sid>) -> Result<Vec<Sid>> {
        let Some(pclass) = self.classes.get(usize::from(class.0)).and_then(|m| m.class) else {
            return Ok(Vec::new());
        };
        let names = self
            .g
            .policy()
            .filename_names(t, d, pclass)
            .map_err(EngineError::from)?;
        let mut out = Vec::new();
        for name in names {
            let Some(key) = NamedKey::new(t.0, d.0, u32::from(class.0), &name) else {
                // Too long for the key: the BPF side gives the unnamed answer.
                self.named_skipped += 1;
                continue;
            };
            let new = match self.g.policy().compute_create(t, d, pclass, Some(&name)) {
                Ok(n) => n,
                Err(SecurityError::InvalidComputedContext(_)) => Sid::NULL,
                Err(e) => return Err(EngineError::from(e).into()),
            };
            if Some(new) == unnamed || (new == Sid::NULL && unnamed.is_none()) {
                continue;
            }
            if self.base.2 + self.named.len() >= self.limits.max_named {
                return Err(EnforceError::TooLarge {
                    what: "named transitions",
                    limit: self.limits.max_named,
                    detail: format!("from {} in {}", self.context(t), self.context(d)),
                });
            }
            self.named.push((
                key,
                Trans {
                    newsid: new.0,
                    pad: 0,
                },
            ));
            if new != Sid::NULL {
                out.push(new);
            }
        }
        Ok(out)
    }

    /// Whether the transitions map has room for `n` more entries.
    fn room(&self, n: usize, t: Sid, o: Sid) -> Result<()> {
        if self.base.1 + self.transitions.len() + n > self.limits.max_transitions {
            return Err(EnforceError::TooLarge {
                what: "transitions",
                limit: self.limits.max_transitions,
                detail: format!("from {} with {}", self.context(t), self.context(o)),
            });
        }
        Ok(())
    }

    /// The transition of `t` with `o` for `class`, kept; the new SID unless it is SID 0 (the
    /// policy computes a context it does not define: the kernel refuses the exec or create,
    /// compute_sid_handle_invalid_context, EACCES when enforcing) or the policy lacks the
    /// class (no transition rules: nothing kept, the BPF side's miss denies, as the object
    /// manager refuses to label one).
    fn transition(&mut self, t: Sid, o: Sid, class: Class) -> Result<Option<Sid>> {
        let Some(pclass) = self.classes.get(usize::from(class.0)).and_then(|m| m.class) else {
            return Ok(None);
        };
        let new = match self.g.policy().compute_create(t, o, pclass, None) {
            Ok(n) => n,
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
        Ok((new != Sid::NULL).then_some(new))
    }

    pub(super) fn into_generation(self, config: Config) -> Generation {
        let n = |s: &BTreeSet<Sid>| s.iter().map(|s| s.0).collect();
        Generation {
            seqno: self.g.seqno().0,
            config,
            sids: Sids {
                tasks: n(&self.tasks),
                dirs: n(&self.dirs),
                files: n(&self.files),
                objects: n(&self.objects),
                net: n(&self.net),
            },
            decisions: Table::from_unsorted(self.decisions),
            transitions: Table::from_unsorted(self.transitions),
            named: sorted(self.named),
            named_skipped: self.named_skipped,
            filesystems: Vec::new(),
            ports: Vec::new(),
            nodes: Vec::new(),
        }
    }

    pub(super) fn into_added(self) -> Added {
        Added {
            decisions: Table::from_unsorted(self.decisions),
            transitions: Table::from_unsorted(self.transitions),
            named: sorted(self.named),
            sids: self.new_sids,
        }
    }
}

/// `v` sorted by key, each key once.
pub(super) fn sorted(mut v: Vec<(NamedKey, Trans)>) -> Vec<(NamedKey, Trans)> {
    v.sort_unstable_by_key(|e| e.0);
    v.dedup_by_key(|e| e.0);
    v
}
