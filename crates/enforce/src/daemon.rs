//! The daemon core of `seaccess enforce`: the policy through the engine, the BPF object loaded
//! and attached, trees labeled by descriptor, one generation of maps installed and extended as
//! the kernel side asks, denials written as the kernel's AVC records, reloads as one switch.
//!
//! Order at start and at each reload: walk the trees for the SIDs they carry, build the
//! generation for those labels and the task contexts, install it, then walk again writing the
//! labels into inode storage, so that no inode carries a SID its generation does not decide. A SID met late (a
//! SEA_EV_MISS: the kernel side denied and asked) is added to the generation in use
//! ([`Generation::add_sid`]) and the next generation installed whole; a request of the control
//! socket does the same before its task carries the SID (BPF cannot wait for userspace).
//!
//! The front end (crates/cli's `seaccess enforce`) parses options and turns signals into the
//! two flags [`Daemon::serve`] watches; everything else is here.

use std::collections::BTreeSet;
use std::io::Write as _;
use std::os::fd::BorrowedFd;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use seaccess_engine::{AuditSink, AuditTarget, Engine};
use seaccess_label::FileContexts;
use seaccess_objmgr::Class;
use seaccess_types::Sid;

use crate::bpf::Enforcer;
use crate::control::{self, FILESYSTEMS_FILE, PID_FILE, SIDS_FILE, SOCKET, STATUS_FILE};
use crate::error::{sys, EnforceError, Result};
use crate::layout::{Event, EV_DENIED, EV_GRANTED, EV_MISS};
use crate::tables::{self, Generation, Limits, Role, Universe};
use crate::trees::{walk, Writer, BATCH};

/// What the daemon enforces, and where it keeps its state.
#[derive(Clone, Debug)]
pub struct Options {
    /// The binary policy.
    pub policy: PathBuf,
    /// file_contexts, for `roots` and `trees`.
    pub file_contexts: Option<PathBuf>,
    /// Trees labeled as file_contexts labels the same paths under / (setfiles -r: the key of
    /// each is /).
    pub roots: Vec<PathBuf>,
    /// Trees labeled as their own absolute paths.
    pub trees: Vec<PathBuf>,
    /// The contexts confined tasks start in (more come from `seaccess enforce run`).
    pub contexts: Vec<String>,
    /// Log denials and allow them.
    pub permissive: bool,
    /// Where AVC records go (None: standard error), as
    /// [`seaccess_engine::AuditTarget::parse`] reads it: `syslog` the system log, `audit` the
    /// kernel audit, anything else a file appended to in audit.log's format.
    pub audit_log: Option<PathBuf>,
    /// Where the maps are pinned.
    pub pin_dir: PathBuf,
    /// Where the socket, the pid, the SID list and the status are kept.
    pub run_dir: PathBuf,
}

/// A running daemon.
pub struct Daemon {
    opts: Options,
    engine: Engine,
    fc: Option<FileContexts>,
    enforcer: Enforcer,
    generation: Generation,
    /// The task contexts' SIDs: the options' and those the control socket was asked for, kept
    /// across reloads.
    tasks: BTreeSet<u32>,
    listener: UnixListener,
    audit: AuditSink,
    limits: Limits,
}

impl Daemon {
    /// Starts enforcing: the policy and file_contexts read, the object loaded and attached, the
    /// trees labeled, the first generation installed, the labels written, the socket bound and
    /// the run directory's files written. Any error leaves nothing attached (the object is
    /// dropped with the error).
    pub fn start(opts: Options) -> Result<Daemon> {
        if opts.file_contexts.is_none() && !(opts.roots.is_empty() && opts.trees.is_empty()) {
            return Err(EnforceError::Daemon(
                "--root and --tree are labeled by file_contexts: give --file-contexts".into(),
            ));
        }
        if let Ok(st) = control::status(&opts.run_dir) {
            return Err(EnforceError::Daemon(format!(
                "a seaccess enforce daemon already runs (pid {}): stop it first",
                st.get("pid").map_or("?", String::as_str)
            )));
        }
        for p in opts.roots.iter().chain(&opts.trees) {
            if !std::fs::metadata(p).is_ok_and(|m| m.is_dir()) {
                return Err(EnforceError::Daemon(format!(
                    "{}: not a directory to label",
                    p.display()
                )));
            }
        }
        let engine = Engine::open(&opts.policy)?;
        let fc = read_fc(opts.file_contexts.as_deref())?;
        let mut tasks = BTreeSet::new();
        for c in &opts.contexts {
            let sid = engine
                .sid(c)
                .map_err(|e| EnforceError::Daemon(format!("--context {c}: {e}")))?;
            tasks.insert(sid.0);
        }
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&opts.run_dir)
            .map_err(sys(format!("creating {}", opts.run_dir.display())))?;
        let audit = AuditSink::open(&AuditTarget::of(opts.audit_log.as_ref()))?;
        let enforcer = Enforcer::load(&opts.pin_dir)?;
        let sock = opts.run_dir.join(SOCKET);
        let _ = std::fs::remove_file(&sock);
        let listener =
            UnixListener::bind(&sock).map_err(sys(format!("binding {}", sock.display())))?;
        std::fs::set_permissions(&sock, std::fs::Permissions::from_mode(0o600))
            .map_err(sys(format!("restricting {}", sock.display())))?;
        listener
            .set_nonblocking(true)
            .map_err(sys("the control socket"))?;
        let mut d = Daemon {
            opts,
            engine,
            fc,
            enforcer,
            generation: Generation::default(),
            tasks,
            listener,
            audit,
            limits: Limits::default(),
        };
        d.relabel()?;
        control::write_atomic(
            &d.opts.run_dir,
            PID_FILE,
            &format!("{}\n", std::process::id()),
        )?;
        d.write_state()?;
        Ok(d)
    }

    /// The generation in use.
    pub fn generation(&self) -> u64 {
        self.enforcer.seqno()
    }

    /// The SIDs the generation in use decides.
    pub fn sids(&self) -> usize {
        self.all_sids().len()
    }

    /// Serves until `stop` is set: events read and written, misses filled, control requests
    /// answered, a reload done whenever `reload` is set (and cleared). Errors of one event or
    /// request are logged and serving goes on.
    pub fn serve(&mut self, stop: &AtomicBool, reload: &AtomicBool) -> Result<()> {
        while !stop.load(Ordering::SeqCst) {
            if reload.swap(false, Ordering::SeqCst) {
                match self.reload() {
                    Ok(()) => self.log(&format!(
                        "reloaded {}: generation {}, {} SIDs",
                        self.opts.policy.display(),
                        self.generation(),
                        self.sids()
                    )),
                    Err(e) => self.log(&format!(
                        "reload failed, generation {} keeps enforcing: {e}",
                        self.generation()
                    )),
                }
            }
            let events = self.enforcer.events(Duration::from_millis(100))?;
            self.on_events(&events);
            self.accept();
        }
        Ok(())
    }

    /// Stops enforcing: the programs detached (the machine runs unconfined again), the pins and
    /// the run directory's files removed.
    pub fn stop(self) {
        if let Some(note) = self.audit.lost_note() {
            self.log(&note);
        }
        let Daemon { opts, enforcer, .. } = self;
        drop(enforcer);
        for f in [SOCKET, SIDS_FILE, FILESYSTEMS_FILE, STATUS_FILE, PID_FILE] {
            let _ = std::fs::remove_file(opts.run_dir.join(f));
        }
        let _ = std::fs::remove_dir_all(&opts.pin_dir);
    }

    /// Reads the policy and file_contexts again (both checked before either changes), then
    /// relabels and installs a new generation in one switch.
    pub fn reload(&mut self) -> Result<()> {
        let candidate = self.engine.candidate_file(&self.opts.policy)?;
        let fc = read_fc(self.opts.file_contexts.as_deref())?;
        self.engine.reload_candidate(candidate)?;
        self.fc = fc;
        self.relabel()?;
        self.write_state()
    }

    /// Labels every tree, builds and installs the generation, writes the labels: two walks,
    /// so that no more than [`BATCH`] descriptors are held at once whatever the trees hold
    /// (a whole system's inodes outnumber the descriptors a process may have open). The first
    /// walk only learns which SIDs the trees carry; the generation for them is installed; the
    /// second writes inode storage in batches, each after the generation covers its SIDs.
    fn relabel(&mut self) -> Result<()> {
        let (mut dirs, mut files) = (BTreeSet::new(), BTreeSet::new());
        self.walk_trees(&mut |_, sid, dir| {
            if dir {
                dirs.insert(sid.0);
            } else {
                files.insert(sid.0);
            }
            Ok(())
        })?;
        let universe = Universe {
            tasks: self.tasks.iter().map(|&s| Sid(s)).collect(),
            dirs: dirs.iter().map(|&s| Sid(s)).collect(),
            files: files.iter().map(|&s| Sid(s)).collect(),
        };
        let mut g = tables::build(&self.engine, &universe, !self.opts.permissive, &self.limits)?;
        let (prot_sock, low, high) = port_ranges()?;
        g.config.prot_sock = prot_sock;
        g.config.local_low = low;
        g.config.local_high = high;
        self.install(g)?;
        let mut batch = Vec::with_capacity(BATCH);
        let counts = {
            let mut w = Writer {
                engine: &self.engine,
                enforcer: &self.enforcer,
                generation: &mut self.generation,
                limits: &self.limits,
            };
            let counts = walk(
                &self.engine,
                self.fc.as_ref(),
                &self.opts.roots,
                &self.opts.trees,
                &self.enforcer,
                &mut |fd, sid, dir| {
                    let fd = fd
                        .try_clone_to_owned()
                        .map_err(sys("holding an inode to label"))?;
                    batch.push((fd, sid, dir));
                    if batch.len() == BATCH {
                        w.write(&mut batch)?;
                    }
                    Ok(())
                },
            )?;
            w.write(&mut batch)?;
            counts
        };
        for (tree, c) in counts {
            self.log(&format!(
                "{tree}: {} labeled, {} without a file_contexts label (their label kept, else their file system's default), {} invalid, {} mount points not entered",
                c.labeled, c.unmatched, c.invalid, c.mounts_skipped
            ));
            for e in &c.errors {
                self.log(&format!("not labeled: {e}"));
            }
        }
        Ok(())
    }

    /// Installs `g` as the next generation and keeps it.
    fn install(&mut self, g: Generation) -> Result<()> {
        let dec: Vec<_> = g.decisions.iter().collect();
        let tr: Vec<_> = g.transitions.iter().collect();
        self.enforcer.install(
            &dec,
            &tr,
            &g.named,
            &g.filesystems,
            (&g.ports, &g.nodes),
            &g.config,
        )?;
        self.generation = g;
        Ok(())
    }

    /// One walk of every tree (see [`walk`]).
    fn walk_trees(
        &self,
        visit: &mut dyn FnMut(BorrowedFd<'_>, Sid, bool) -> Result<()>,
    ) -> Result<()> {
        walk(
            &self.engine,
            self.fc.as_ref(),
            &self.opts.roots,
            &self.opts.trees,
            &self.enforcer,
            visit,
        )
        .map(|_| ())
    }

    /// Every SID of the generation in use.
    fn all_sids(&self) -> BTreeSet<u32> {
        let s = &self.generation.sids;
        s.tasks
            .iter()
            .chain(&s.objects)
            .chain(&s.dirs)
            .chain(&s.files)
            .chain(&s.net)
            .copied()
            .collect()
    }

    /// The `sids` and `enforce.status` files, for the generation in use.
    fn write_state(&self) -> Result<()> {
        let server = self.engine.server();
        let sids = self.all_sids();
        let mut text = String::new();
        for &s in &sids {
            let ctx = server
                .sid_to_context(Sid(s))
                .unwrap_or_else(|e| format!("(SID {s}: {e})"));
            text.push_str(&format!("{s} {ctx}\n"));
        }
        control::write_atomic(&self.opts.run_dir, SIDS_FILE, &text)?;
        let mut fs = String::new();
        for (k, d) in &self.generation.filesystems {
            let name = k.name.split(|&b| b == 0).next().unwrap_or(&[]);
            let value = match d.kind {
                crate::layout::FS_CREATOR => "creator".to_string(),
                crate::layout::FS_UNCHECKED => "unchecked".to_string(),
                _ => d.sid.to_string(),
            };
            fs.push_str(&format!("{} {value}\n", String::from_utf8_lossy(name)));
        }
        control::write_atomic(&self.opts.run_dir, FILESYSTEMS_FILE, &fs)?;
        let mode = if self.opts.permissive {
            "permissive"
        } else {
            "enforcing"
        };
        let status = format!(
            "pid {}\ngeneration {}\nmode {mode}\npolicy {}\npin_dir {}\nsids {}\ndecisions {}\ntransitions {}\n",
            std::process::id(),
            self.generation(),
            self.opts.policy.display(),
            self.opts.pin_dir.display(),
            sids.len(),
            self.generation.decisions.len(),
            self.generation.transitions.len()
        );
        control::write_atomic(&self.opts.run_dir, STATUS_FILE, &status)
    }

    /// Writes each event's record; fills the misses.
    fn on_events(&mut self, events: &[Event]) {
        if events.is_empty() {
            return;
        }
        let names = self.engine.with_generation(|g| Ok(g.policy().clone())).ok();
        let mut wanted = Vec::new();
        for e in events {
            if matches!(e.kind, EV_DENIED | EV_GRANTED | EV_MISS) {
                let names = names
                    .as_deref()
                    .map(|n| n as &dyn seaccess_types::PolicyNames);
                self.audit.record("AVC", &crate::event::render(e, names));
            }
            if e.kind == EV_MISS {
                wanted.extend(missing(&self.generation.sids, e));
            }
        }
        if !wanted.is_empty() {
            self.fill(&wanted);
        }
    }

    /// Adds `wanted` to the generation in use, in place (only new entries: see
    /// [`Enforcer::extend`]); a policy changed since it was built makes a whole new generation
    /// instead.
    fn fill(&mut self, wanted: &[(u32, Role)]) {
        let mut g = self.generation.clone();
        let mut added = false;
        let mut dec = Vec::new();
        let mut tr = Vec::new();
        let mut named = Vec::new();
        for &(sid, role) in wanted {
            match g.add_sid(&self.engine, Sid(sid), role, &self.limits) {
                Ok(a) => {
                    added |= !a.sids.is_empty();
                    dec.extend(a.decisions.iter());
                    tr.extend(a.transitions.iter());
                    named.extend(a.named.iter().copied());
                }
                Err(EnforceError::Stale { .. }) => {
                    if let Err(e) = self.relabel().and_then(|()| self.write_state()) {
                        self.log(&format!("rebuilding after a policy change failed: {e}"));
                    }
                    return;
                }
                Err(e) => self.log(&format!("cannot decide SID {sid}: {e}")),
            }
        }
        if !added {
            return;
        }
        if let Err(e) = self.enforcer.extend(&dec, &tr, &named) {
            self.log(&format!(
                "extending generation {} failed: {e}",
                self.generation()
            ));
            return;
        }
        self.generation = g;
        if let Err(e) = self.write_state() {
            self.log(&format!("writing the run files: {e}"));
        }
    }

    /// Answers the control socket's waiting connections.
    fn accept(&mut self) {
        loop {
            let stream = match self.listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) => {
                    self.log(&format!("the control socket: {e}"));
                    return;
                }
            };
            if let Err(e) = control::serve_one(stream, &mut |ctx| self.decide_task(ctx)) {
                self.log(&format!("a control request: {e}"));
            }
        }
    }

    /// Makes `context`'s decisions exist as a task's (added and installed when new); its SID.
    fn decide_task(&mut self, context: &str) -> std::result::Result<u32, String> {
        let sid = self
            .engine
            .sid(context)
            .map_err(|e| format!("{context}: {e}"))?;
        self.tasks.insert(sid.0);
        if self.generation.sids.tasks.contains(&sid.0) {
            return Ok(sid.0);
        }
        self.fill(&[(sid.0, Role::Task)]);
        if self.generation.sids.tasks.contains(&sid.0) {
            self.log(&format!(
                "{context} decided as a task, added to generation {}",
                self.generation()
            ));
            Ok(sid.0)
        } else {
            Err(format!(
                "{context} could not be decided (see the daemon's log)"
            ))
        }
    }

    /// A line on standard error: what is not an AVC record.
    pub fn log(&self, msg: &str) {
        let _ = writeln!(std::io::stderr(), "seaccess enforce: {msg}");
    }
}

/// What a miss lacks: its source as a task; its target as what its class shows it was met
/// as. A miss of a file class is a create's transition keyed by the parent directory or a
/// decision on a file met late (which may be executed): the SID is added as both; a miss of
/// `process` is an exec's transition keyed by the executable.
fn missing(s: &tables::Sids, e: &Event) -> Vec<(u32, Role)> {
    let mut out = Vec::new();
    if e.ssid != 0 && !s.tasks.contains(&e.ssid) {
        out.push((e.ssid, Role::Task));
    }
    if e.tsid == 0 {
        return out;
    }
    let class = Class(u16::try_from(e.tclass).unwrap_or(u16::MAX));
    let roles: &[Role] = if tables::FILE_CLASSES.contains(&class) {
        &[Role::Dir, Role::File]
    } else if class == Class::PROCESS {
        &[Role::File]
    } else {
        &[Role::Object]
    };
    for &role in roles {
        let set = match role {
            Role::Dir => &s.dirs,
            Role::File => &s.files,
            _ => &s.objects,
        };
        let known = set.contains(&e.tsid) || (role == Role::Object && s.tasks.contains(&e.tsid));
        if !known {
            out.push((e.tsid, role));
        }
    }
    out
}

/// net.ipv4.ip_unprivileged_port_start and ip_local_port_range, as this (the initial) network
/// namespace has them: what decides whether a bind asks `name_bind`.
fn port_ranges() -> Result<(u32, u32, u32)> {
    let read = |name: &str| -> Result<Vec<u32>> {
        let path = format!("/proc/sys/net/ipv4/{name}");
        let text = std::fs::read_to_string(&path).map_err(sys(format!("reading {path}")))?;
        text.split_whitespace()
            .map(|w| {
                w.parse().map_err(|_| {
                    EnforceError::Rejected(format!("{path}: {w:?} is not a port number"))
                })
            })
            .collect()
    };
    let start = read("ip_unprivileged_port_start")?;
    let local = read("ip_local_port_range")?;
    match (start.as_slice(), local.as_slice()) {
        ([s], [l, h]) => Ok((*s, *l, *h)),
        _ => Err(EnforceError::Rejected(
            "net.ipv4.ip_unprivileged_port_start or ip_local_port_range is not as the kernel writes it".into(),
        )),
    }
}

fn read_fc(path: Option<&Path>) -> Result<Option<FileContexts>> {
    path.map(|p| {
        FileContexts::open(p).map_err(|source| EnforceError::Label {
            path: p.display().to_string(),
            source,
        })
    })
    .transpose()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;

    fn miss(ssid: u32, tsid: u32, class: Class) -> Event {
        Event {
            seqno: 1,
            kind: EV_MISS,
            ssid,
            tsid,
            tclass: u32::from(class.0),
            requested: 1,
            denied: 1,
            audited: 1,
            permissive: 0,
            pid: 1,
            dev: 0,
            ino: 0,
            comm: [0; 16],
            name: [0; crate::layout::NAME_LEN],
            dev_name: [0; 32],
        }
    }

    /// A miss asks for what it lacks, in the role its hook met it in, and nothing known.
    #[test]
    fn a_miss_asks_for_what_it_lacks() {
        let mut s = tables::Sids::default();
        s.tasks.insert(10);
        s.objects.extend([20, 30]);
        s.files.insert(20);
        s.dirs.insert(30);
        // An exec's transition keyed by a file label met late.
        assert_eq!(
            missing(&s, &miss(10, 40, Class::PROCESS)),
            vec![(40, Role::File)]
        );
        // A create under a directory the generation knows only as a file: as a directory too.
        assert_eq!(
            missing(&s, &miss(10, 20, Class::FILE)),
            vec![(20, Role::Dir)]
        );
        assert_eq!(
            missing(&s, &miss(10, 50, Class::DIR)),
            vec![(50, Role::Dir), (50, Role::File)]
        );
        // A socket's label; an unknown source domain.
        assert_eq!(
            missing(&s, &miss(11, 60, Class::TCP_SOCKET)),
            vec![(11, Role::Task), (60, Role::Object)]
        );
        // Everything known, or SID 0 (an initial SID the policy leaves out): nothing.
        assert_eq!(
            missing(&s, &miss(10, 30, Class::DIR)),
            vec![(30, Role::File)]
        );
        assert!(missing(&s, &miss(10, 20, Class::PROCESS)).is_empty());
        assert!(missing(&s, &miss(10, 30, Class::TCP_SOCKET)).is_empty());
        assert!(missing(&s, &miss(10, 0, Class::FILE)).is_empty());
    }
}
