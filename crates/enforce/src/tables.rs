//! The userspace half of a generation: every decision and transition the BPF object may need,
//! computed from one policy generation before any task can meet a SID (BPF cannot wait for
//! userspace), in the layout.rs types the loader installs.
//!
//! What is computed, for a universe of SIDs (the labels of files, the policy's initial SIDs,
//! the contexts confined tasks start in):
//! - the closure: task domains reached by exec (the kernel's security_transition_sid for class
//!   `process`, task x every file label, as selinux_bprm_creds_for_exec asks it) and new-file
//!   SIDs reached by create (task x every directory label x each file class, as
//!   selinux_inode_init_security asks it), repeated until nothing new, within
//!   [`Limits::max_sids`]; a created directory's SID is a directory label in turn, a created
//!   file's an executable;
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

mod closure;

use std::collections::BTreeSet;

use seaccess_engine::Engine;
use seaccess_objmgr::hooks::socket::PortRanges;
use seaccess_objmgr::Class;
use seaccess_types::Sid;

use crate::error::{EnforceError, Result};
use crate::layout::{
    Av, Config, FsDef, FsKey, Key, NamedKey, Node, Trans, CONFIG_EXTSOCKCLASS, FS_FIXED,
    MAX_DECISIONS, MAX_NAMED, MAX_NODES, MAX_TRANSITIONS, PORT_PROTOCOLS,
};

use closure::Closure;

pub use crate::initial::{
    SECINITSID_FILE, SECINITSID_KERNEL, SECINITSID_NODE, SECINITSID_PORT, SECINITSID_UNLABELED,
};
/// The highest initial SID number a policy may give a context (the SID table's range).
const MAX_INITIAL: u32 = 256;

/// The file classes a create may make, in the object manager's numbering.
pub(crate) const FILE_CLASSES: [Class; 7] = [
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
    /// Entries of the named transitions map (layout.h's SEA_MAX_NAMED by default).
    pub max_named: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_sids: 4096,
            max_decisions: MAX_DECISIONS as usize,
            max_transitions: MAX_TRANSITIONS as usize,
            max_named: MAX_NAMED as usize,
        }
    }
}

/// What exists before anything runs: the contexts confined tasks start in and the labels of
/// files, by kind (the policy's initial SIDs are added by [`build`]: `file` and `unlabeled`,
/// which an inode of any kind may have, as directories and files, the others as targets).
/// A label given as both a directory's and a file's is both.
#[derive(Clone, Debug, Default)]
pub struct Universe {
    /// The SIDs confined tasks start in (`seaccess enforce run --context`).
    pub tasks: Vec<Sid>,
    /// The labels of directories: where tasks may create.
    pub dirs: Vec<Sid>,
    /// The labels of everything else: what tasks may exec (and every other target).
    pub files: Vec<Sid>,
}

/// How a SID is used in a generation (see [`Generation::add_sid`]). Every one is decided as a
/// target of every task.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Role {
    /// A target only (an initial SID, a new socket file's or device's label).
    Object,
    /// A port's or a network node's SID: a target only in the INET socket classes (name_bind,
    /// node_bind and name_connect are asked of nothing else).
    Net,
    /// A directory's label: create transitions computed into it.
    Dir,
    /// A file's label: exec transitions computed from it.
    File,
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

    pub(crate) fn from_unsorted(mut v: Vec<(Key, V)>) -> Table<V> {
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
    /// Directory labels (given, initial, created).
    pub dirs: BTreeSet<u32>,
    /// File labels (given, initial, created): executables.
    pub files: BTreeSet<u32>,
    /// Every SID that is not (only) a task's: initial SIDs, labels, what creates make.
    pub objects: BTreeSet<u32>,
    /// Port and node SIDs decided in the socket classes only (not in `objects`).
    pub net: BTreeSet<u32>,
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
    /// (task SID, directory SID, file class, name) to the new file's SID, where a filename
    /// type_transition gives another answer than `transitions` (sorted by key).
    pub named: Vec<(NamedKey, Trans)>,
    /// Filename transitions not in `named`: their name is too long for the key.
    pub named_skipped: usize,
    /// File system type to what an inode nobody labeled there is (filesystems.rs).
    pub filesystems: Vec<(FsKey, FsDef)>,
    /// The port SID of every (protocol, port) of [`PORT_PROTOCOLS`]: index `P * 65536 + port`
    /// (the kernel's security_port_sid).
    pub ports: Vec<u32>,
    /// The nodecon entries, in the order security_node_sid tries them.
    pub nodes: Vec<Node>,
}

/// What [`Generation::add_sid`] added, for the loader to insert into the generation in use.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Added {
    /// The new decisions.
    pub decisions: Table<Av>,
    /// The new transitions.
    pub transitions: Table<Trans>,
    /// The new named transitions.
    pub named: Vec<(NamedKey, Trans)>,
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
        let mut named = std::mem::take(&mut self.named);
        named.extend(added.named.iter().copied());
        self.named = closure::sorted(named);
        for &(s, r) in &added.sids {
            let set = match r {
                Role::Task => &mut self.sids.tasks,
                Role::Dir => &mut self.sids.dirs,
                Role::File => &mut self.sids.files,
                Role::Object => &mut self.sids.objects,
                Role::Net => &mut self.sids.net,
            };
            set.insert(s);
            if r != Role::Task && r != Role::Net {
                self.sids.objects.insert(s);
            }
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
        c.base = (
            self.decisions.len(),
            self.transitions.len(),
            self.named.len(),
        );
        c.push(sid, role);
        c.run()?;
        let tasks = c.tasks();
        if role != Role::Task && !known && !tasks.contains(&sid) {
            // And back: the new SID as a source against every task (a new inode's SID asked
            // of as a filesystem-associate source, a socket's peer).
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
        flags: if g
            .policy()
            .policy_caps()
            .contains(seaccess_types::PolicyCap::ExtendedSocketClass)
        {
            CONFIG_EXTSOCKCLASS
        } else {
            0
        },
        port_sid: initial(SECINITSID_PORT),
        node_sid: initial(SECINITSID_NODE),
        nodes: 0,
        prot_sock: u32::from(PortRanges::default().unprivileged_start),
        local_low: u32::from(PortRanges::default().local.0),
        local_high: u32::from(PortRanges::default().local.1),
        pad: 0,
    };
    let p = g.policy();
    let mut ports = Vec::with_capacity(PORT_PROTOCOLS.len() << 16);
    for proto in PORT_PROTOCOLS {
        ports.extend(p.port_sids(proto).iter().map(|s| s.0));
    }
    let entries = p.node_entries();
    if entries.len() > MAX_NODES as usize {
        return Err(EnforceError::TooLarge {
            what: "nodecon entries",
            limit: MAX_NODES as usize,
            detail: format!("the policy has {}", entries.len()),
        });
    }
    let nodes: Vec<Node> = entries
        .iter()
        .map(|&(v6, addr, mask, sid)| Node {
            v6: u32::from(v6),
            sid: sid.0,
            addr,
            mask,
        })
        .collect();
    let mut config = config;
    config.nodes = nodes.len() as u32;
    let net: BTreeSet<u32> = ports
        .iter()
        .copied()
        .chain(nodes.iter().map(|n| n.sid))
        .chain([config.port_sid, config.node_sid])
        .filter(|&s| s != 0)
        .collect();
    for s in net {
        c.push(Sid(s), Role::Net);
    }
    for n in 1..=MAX_INITIAL {
        if let Some(s) = g.policy().initial_sid(n) {
            if n == SECINITSID_FILE || n == SECINITSID_UNLABELED {
                c.push(s, Role::Dir);
                c.push(s, Role::File);
            } else {
                c.push(s, Role::Object);
            }
        }
    }
    // The defaults of inodes nobody labeled: met in a walk, read, executed (a program outside
    // every labeled tree), created in.
    let (filesystems, _too_long) = crate::filesystems::table(g.policy());
    for (_, d) in &filesystems {
        if d.sid != 0 && d.kind == FS_FIXED {
            c.push(Sid(d.sid), Role::Dir);
            c.push(Sid(d.sid), Role::File);
        }
    }
    for &s in &universe.dirs {
        c.push(s, Role::Dir);
    }
    for &s in &universe.files {
        c.push(s, Role::File);
    }
    for &s in &universe.tasks {
        c.push(s, Role::Task);
    }
    c.run()?;
    let mut out = c.into_generation(config);
    out.filesystems = filesystems;
    out.ports = ports;
    out.nodes = nodes;
    Ok(out)
}
