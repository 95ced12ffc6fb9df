//! The one way into seaccess for every front end (the command line, the mount, the C library,
//! Python, the lab, tests): a policy opened from a path or bytes, the security server, the
//! access vector cache following it, the enforcing mode, an audit sink and optionally an object
//! manager wired together, a reload made once in place, and checks by names or by numbers
//! bound to one policy generation.
//!
//! ```no_run
//! # fn main() -> Result<(), seaccess_engine::EngineError> {
//! let engine = seaccess_engine::Engine::open("/etc/selinux/default/policy/policy.33")?;
//! let a = engine.check(
//!     "user_u:user_r:user_t:s0",
//!     "system_u:object_r:shadow_t:s0",
//!     "file",
//!     &["read"],
//! )?;
//! println!("{} at generation {}: denied {:?}", a.allowed(), a.seqno(), a.denied_names());
//! // By numbers: resolved and decided under one generation, run again if the policy changes.
//! let allowed = engine.with_generation(|g| {
//!     let s = g.sid("user_u:user_r:user_t:s0")?;
//!     let t = g.sid("system_u:object_r:shadow_t:s0")?;
//!     let (class, perms) = g.class_perms("file", &["read", "write"])?;
//!     Ok(g.check(s, t, class, perms)?.allowed())
//! })?;
//! # let _ = allowed;
//! # Ok(()) }
//! ```
//!
//! The kernel's layering stays: the object manager's hooks ask only the cache, the cache asks
//! only the security server's seam; the engine sits above all of them and nothing below it
//! depends on it.
//!
//! One generation per answer: a class or permission number means something only in the policy
//! generation it was resolved in, and a reload or boolean commit may renumber them. A check by
//! numbers ([`Generation::check`]) is answered only by a decision of the generation its numbers
//! came from, and [`Engine::with_generation`] runs the resolving again when the policy changed
//! in between. That loop is written here once.
//!
//! What a front end keeps between checks follows the same rule, written once as [`Kept`]: a
//! number found for a name (a context's SID, a class and permission's numbers) is kept with
//! the seqno of the generation that found it, in one atomic word, and used only with that
//! generation; the engine's context memo ([`Engine::sid`], [`Generation::sid`]) and the C
//! library's `security_id_t` and name tables keep their numbers in it.

#![forbid(unsafe_code)]

pub mod audit;
mod error;
mod kept;
mod memo;
mod reload;

use std::path::Path;
use std::sync::Arc;

use once_cell::race::OnceBox;

use seaccess_avc::{Avc, Verdict, DEFAULT_CAPACITY};
use seaccess_objmgr::ObjectManager;
use seaccess_security::SecurityServer;
use seaccess_types::{AccessVector, AvDecision, ClassId, Registration, Seqno, Sid};

pub use audit::{AuditSink, AuditTarget};
pub use error::{EngineError, Result};
pub use kept::{ClassBit, Keepable, Kept};
pub use memo::{MEMO_CAPACITY, MEMO_TEXT};
pub use reload::{Candidate, Validate};

/// How many times one check resolves its names again when the policy changes between
/// resolving and deciding; past this it fails with [`EngineError::Unsettled`], never an answer.
pub const RETRIES: usize = 64;

type AuditFn = Box<dyn Fn(&str) + Send + Sync>;

/// Where the policy comes from.
enum Source<'a> {
    Path(&'a Path),
    Bytes(&'a [u8]),
}

/// A bare security server of the policy file at `path`, read as [`Engine::open`] reads one (a
/// regular file, bounded, errors naming the path) but with no cache or object manager: for the
/// tests of the server itself and the lab's comparison designs, which wire their own caches.
pub fn load_server(path: impl AsRef<Path>) -> Result<SecurityServer> {
    reload::server_of(&Source::Path(path.as_ref()))
}

/// How an [`Engine`] is wired: the cache's capacity, the mode, the audit sink, whether it has
/// an object manager. [`Engine::builder`] starts one; [`Builder::open`] or
/// [`Builder::from_bytes`] loads the policy.
pub struct Builder {
    capacity: usize,
    enforcing: bool,
    audit: Option<AuditFn>,
    object_manager: bool,
}

impl Default for Builder {
    fn default() -> Builder {
        Builder {
            capacity: DEFAULT_CAPACITY,
            enforcing: true,
            audit: None,
            object_manager: false,
        }
    }
}

impl Builder {
    /// The cache holds at least this many decisions (default [`DEFAULT_CAPACITY`]).
    pub fn capacity(mut self, capacity: usize) -> Builder {
        self.capacity = capacity;
        self
    }

    /// Enforcing (the default) or permissive: denials logged but granted.
    pub fn enforcing(mut self, enforcing: bool) -> Builder {
        self.enforcing = enforcing;
        self
    }

    /// Where audit records go, one call per record with its kernel-format text (default:
    /// nowhere).
    pub fn audit(mut self, sink: impl Fn(&str) + Send + Sync + 'static) -> Builder {
        self.audit = Some(Box::new(sink));
        self
    }

    /// With an object manager ([`Engine::object_manager`]): the kernel's hooks over the cache,
    /// remapping their classes before each policy change is published.
    pub fn object_manager(mut self, on: bool) -> Builder {
        self.object_manager = on;
        self
    }

    /// The engine of the policy file at `path` (a regular file of at most
    /// [`seaccess_security::MAX_POLICY_FILE`] bytes, opened without blocking and checked on
    /// its descriptor: see [`seaccess_policy::read_file`]).
    pub fn open(self, path: impl AsRef<Path>) -> Result<Engine> {
        self.build(Source::Path(path.as_ref()))
    }

    /// The engine of a policy image already in memory.
    pub fn from_bytes(self, data: &[u8]) -> Result<Engine> {
        self.build(Source::Bytes(data))
    }

    /// An engine over `base`'s policy: the same security server (its reloads and boolean
    /// commits are this engine's too) and the same context memo, with a cache, mode, audit sink
    /// and object manager of its own, as libselinux lets each user of one policy keep its own
    /// AVC. Nothing is read or parsed.
    pub fn over(self, base: &Engine) -> Engine {
        self.wire(base.server.clone(), base.memo.clone())
    }

    /// The engine over a security server already loaded, which other engines or front ends may
    /// share: a fresh cache following it (and an object manager, if asked for) with this
    /// builder's capacity, mode and audit sink, and a memo of its own. For a front end that
    /// measures or compares several caches over one policy; a reload through any of them is seen
    /// by all, since the server is the one that changes and every cache follows it.
    pub fn over_server(self, server: Arc<SecurityServer>) -> Engine {
        let memo = Arc::new(memo::SidMemo::new());
        self.wire(server, memo)
    }

    fn build(self, source: Source<'_>) -> Result<Engine> {
        let server = Arc::new(reload::server_of(&source)?);
        let memo = Arc::new(memo::SidMemo::new());
        Ok(self.wire(server, memo))
    }

    fn wire(self, server: Arc<SecurityServer>, memo: Arc<memo::SidMemo>) -> Engine {
        let avc = Arc::new(Avc::new(server.clone(), self.capacity));
        let following = avc.follow(&*server);
        avc.set_enforcing(self.enforcing);
        if let Some(sink) = self.audit {
            avc.set_audit_callback(sink);
        }
        let om = OnceBox::new();
        if self.object_manager {
            let _ = om.set(Box::new(new_object_manager(&server, &avc)));
        }
        Engine {
            server,
            avc,
            om,
            memo,
            following: Some(following),
            #[cfg(test)]
            park: std::sync::Mutex::new(None),
        }
    }
}

/// The kernel's hooks over `avc`, remapping their classes before each change of `server` is
/// published.
fn new_object_manager(server: &Arc<SecurityServer>, avc: &Arc<Avc>) -> Arc<ObjectManager> {
    Arc::new(ObjectManager::new(server.clone(), &**server, avc.clone()))
}

/// The security server, the cache following it and optionally an object manager, over one
/// policy that reloads in place.
pub struct Engine {
    server: Arc<SecurityServer>,
    avc: Arc<Avc>,
    /// Set by the builder, or at the first [`Engine::object_manager_or_new`]: racing, never
    /// waiting for another thread's (a process forked while a thread made it would have its
    /// child wait forever for a thread it does not have).
    om: OnceBox<Arc<ObjectManager>>,
    /// Shared with the engines [`Builder::over`] this one (they resolve under the same
    /// server's generations, so one generation's SIDs are the same for all of them).
    memo: Arc<memo::SidMemo>,
    /// The cache's following of the server's changes; kept for good by [`Engine::into_parts`].
    following: Option<Registration>,
    /// Run once between resolving and deciding, by the tests that land a reload there.
    #[cfg(test)]
    park: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

/// An engine taken apart (see [`Engine::into_parts`]).
pub struct Parts {
    /// The security server.
    pub server: Arc<SecurityServer>,
    /// The cache, following the server for as long as it lives.
    pub avc: Arc<Avc>,
    /// The object manager, if the engine had one.
    pub object_manager: Option<Arc<ObjectManager>>,
}

impl Engine {
    /// The engine of the policy file at `path`, enforcing, with a cache of the default size
    /// and no audit sink (see [`Engine::builder`] for the others).
    pub fn open(path: impl AsRef<Path>) -> Result<Engine> {
        Builder::default().open(path)
    }

    /// [`Engine::open`] for a policy image in memory.
    pub fn from_bytes(data: &[u8]) -> Result<Engine> {
        Builder::default().from_bytes(data)
    }

    /// An engine wired otherwise than [`Engine::open`]'s defaults.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The security server (for what the engine does not wrap: explanations, transitions,
    /// booleans).
    pub fn server(&self) -> &Arc<SecurityServer> {
        &self.server
    }

    /// The cache, which follows every reload and boolean commit of the server.
    pub fn avc(&self) -> &Arc<Avc> {
        &self.avc
    }

    /// The object manager, if the engine was built with one (or one was made since by
    /// [`Engine::object_manager_or_new`]).
    pub fn object_manager(&self) -> Result<&Arc<ObjectManager>> {
        self.om.get().ok_or(EngineError::NoObjectManager)
    }

    /// The object manager, made now over this engine's server and cache if it has none yet:
    /// for a front end that needs the hooks only for some calls and should not pay for them
    /// (the class maps, a listener on every policy change) before the first. One is kept:
    /// threads asking first at once may each make one, and all get the first stored (the
    /// others are dropped with their listeners, rather than a thread waiting on another's,
    /// which a child forked meanwhile would do forever). From then on it remaps its classes at
    /// every change of the server, as one built by [`Builder::object_manager`].
    pub fn object_manager_or_new(&self) -> &Arc<ObjectManager> {
        self.om
            .get_or_init(|| Box::new(new_object_manager(&self.server, &self.avc)))
    }

    /// The server, the cache and the object manager, for a front end that keeps them apart;
    /// the cache goes on following the server for as long as either lives.
    pub fn into_parts(mut self) -> Parts {
        if let Some(f) = self.following.take() {
            f.keep();
        }
        Parts {
            server: self.server.clone(),
            avc: self.avc.clone(),
            object_manager: self.om.get().cloned(),
        }
    }

    /// The current generation's seqno.
    pub fn seqno(&self) -> Seqno {
        self.server.seqno()
    }

    /// Enforcing (denials refused) or permissive (denials logged, granted).
    pub fn set_enforcing(&self, enforcing: bool) {
        self.avc.set_enforcing(enforcing);
    }

    /// Whether denials are enforced.
    pub fn enforcing(&self) -> bool {
        self.avc.enforcing()
    }

    /// Sends audit records to `sink` from now on (replacing the one before).
    pub fn set_audit(&self, sink: impl Fn(&str) + Send + Sync + 'static) {
        self.avc.set_audit_callback(sink);
    }

    /// The SID of `context` in the current generation, through the engine's memo.
    pub fn sid(&self, context: &str) -> Result<Sid> {
        Ok(self.memo.sid(&self.server.snapshot(), context)?)
    }

    /// Whether `source` may do `perms` of `class` to `target`, all given by name: resolved,
    /// decided by the cache and audited under one generation (again if the policy changes in
    /// between). Unknown names are errors, never a denial or a grant.
    pub fn check(&self, source: &str, target: &str, class: &str, perms: &[&str]) -> Result<Access> {
        self.with_generation(|g| {
            let s = g.sid(source)?;
            let t = g.sid(target)?;
            let (c, p) = g.class_perms(class, perms)?;
            #[cfg(test)]
            self.parked();
            g.check(s, t, c, p)
        })
    }

    #[cfg(test)]
    fn parked(&self) {
        let hook = seaccess_types::lock(&self.park).take();
        if let Some(h) = hook {
            h();
        }
    }

    /// Runs `f` with the current generation, again with the new one whenever it returns
    /// [`EngineError::Stale`] (a check whose numbers the policy changed under), up to
    /// [`RETRIES`] times. Everything `f` resolves through its [`Generation`] belongs to that
    /// generation, and its checks are answered only by decisions of it, so what `f` returns
    /// never mixes two policies.
    pub fn with_generation<T>(&self, mut f: impl FnMut(&Generation<'_>) -> Result<T>) -> Result<T> {
        for _ in 0..RETRIES {
            let g = Generation {
                engine: self,
                g: self.server.snapshot(),
            };
            match f(&g) {
                Err(EngineError::Stale { .. }) => continue,
                r => return r,
            }
        }
        Err(EngineError::Unsettled(RETRIES))
    }

    /// The current generation's seqno, and how many contexts the memo keeps a SID of for it.
    pub fn memo_size(&self) -> (Seqno, usize) {
        let seqno = self.seqno();
        (seqno, self.memo.kept(seqno))
    }
}

/// One policy generation, for resolving names to numbers and checking with them (see
/// [`Engine::with_generation`]).
pub struct Generation<'e> {
    engine: &'e Engine,
    g: Arc<seaccess_security::Generation>,
}

impl Generation<'_> {
    /// This generation's seqno.
    pub fn seqno(&self) -> Seqno {
        self.g.seqno()
    }

    /// The security server's generation, for the queries the engine does not wrap.
    pub fn policy(&self) -> &Arc<seaccess_security::Generation> {
        &self.g
    }

    /// The SID of `context` in this generation, through the engine's memo.
    pub fn sid(&self, context: &str) -> Result<Sid> {
        Ok(self.engine.memo.sid(&self.g, context)?)
    }

    /// The number of `class` and the bits of `perms` in this generation.
    pub fn class_perms(&self, class: &str, perms: &[&str]) -> Result<(ClassId, AccessVector)> {
        let c = self.g.class(class)?;
        Ok((c, self.g.perms(c, perms)?))
    }

    /// The cache's check of `perms` (bits of `class`, both this generation's numbers), answered
    /// only by a decision of this generation, and audited to the engine's sink: a
    /// [`EngineError::Stale`] error when the cache answered from another (the policy changed
    /// since this generation was taken), which [`Engine::with_generation`] retries.
    pub fn check(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        perms: AccessVector,
    ) -> Result<Access> {
        let avc = &self.engine.avc;
        let v = match avc.check_at(ssid, tsid, class, perms, self.seqno())? {
            Ok(v) => v,
            Err(answered) => {
                return Err(EngineError::Stale {
                    asked: self.seqno(),
                    answered,
                })
            }
        };
        let record = avc.verdict_record(ssid, tsid, class, &v, None);
        if let Some(line) = &record {
            avc.emit_audit_line(line);
        }
        Ok(Access {
            verdict: v,
            class,
            requested: perms,
            names: self.g.clone(),
            record,
        })
    }
}

/// The answer to one check, with the generation that decided it.
#[derive(Clone)]
pub struct Access {
    verdict: Verdict,
    class: ClassId,
    requested: AccessVector,
    names: Arc<seaccess_security::Generation>,
    record: Option<String>,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("allowed", &self.allowed())
            .field("seqno", &self.seqno())
            .field("denied", &self.denied_names())
            .field("record", &self.record)
            .finish()
    }
}

impl Access {
    /// Whether the access goes through: allowed, or denied but not enforced (permissive mode
    /// or a permissive domain).
    pub fn allowed(&self) -> bool {
        self.verdict.allowed()
    }

    /// Whether the policy itself allows every permission asked (whatever the mode).
    pub fn granted_by_policy(&self) -> bool {
        self.verdict.denied.is_empty()
    }

    /// The generation that decided.
    pub fn seqno(&self) -> Seqno {
        self.verdict.decision.seqno
    }

    /// The decision the check was made against.
    pub fn decision(&self) -> &AvDecision {
        &self.verdict.decision
    }

    /// The cache's verdict (denied and audited bits, whether the denial is enforced).
    pub fn verdict(&self) -> &Verdict {
        &self.verdict
    }

    /// The permissions asked, as bits of the deciding generation.
    pub fn requested(&self) -> AccessVector {
        self.requested
    }

    /// The permissions denied, named by the generation that decided, in bit order.
    pub fn denied_names(&self) -> Vec<String> {
        self.verdict
            .denied
            .bits()
            .map(|b| {
                self.names
                    .perm_name(self.class, b)
                    .map_or_else(|| format!("{:#x}", 1u32 << b), str::to_string)
            })
            .collect()
    }

    /// The audit record the check wrote to the sink (kernel format), if it called for one.
    pub fn record(&self) -> Option<&str> {
        self.record.as_deref()
    }
}

#[cfg(test)]
mod tests;
