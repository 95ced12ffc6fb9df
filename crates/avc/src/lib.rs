//! The seaccess access vector cache (AVC): decisions of the security server kept for reuse,
//! read without locks, with the kernel AVC's statistics, audit records and enforcing modes.
//!
//! It asks the security server only through [`seaccess_types::AccessServer`], as the kernel's
//! avc.c calls only security_compute_av, and is keyed on (source SID, target SID, class),
//! never on strings. It must never depend on the policy reader or the security server crates.
//!
//! Every cached decision carries the seqno of the policy it was computed under, and a lookup
//! returns only decisions of the newest policy the cache knows of: after a reload or boolean
//! commit ([`Avc::policy_changed`]) every older entry is dead at once, without the cache being
//! walked by readers, and its slot is reused by the next insert that needs it (counted then as a
//! free).
//!
//! The cache has two tables, and a seqno's parity says which one holds its decisions. Before a
//! change is made visible to readers, the changing thread recomputes every decision the cache
//! holds under the new policy into the other table (refresh-ahead: [`Avc::prepare`], before the
//! server publishes the new policy, or else [`Avc::policy_changed`], before the cache switches);
//! the switch is then one atomic store. Readers go on hitting the old policy's decisions until that store and hit the
//! new policy's right after it: a change costs them no miss storm, where the kernel's
//! avc_ss_reset leaves every reader to miss on every triple it asks again.

mod stats;
mod table;
mod xperms;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::*};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwapOption;

use seaccess_types::{AccessServer, AccessVector, AvDecision, ClassId, PolicyEvents, Registration, Seqno, ServerError, Sid, XpermsDecision};

pub use stats::CacheStats;
use stats::{Counter, Stats};
use table::{Key, Stored, Table};
use xperms::{flagged, XpKey, XpermCache};

/// The kernel's avc cache_threshold.
pub const KERNEL_CAPACITY: usize = 512;

/// seaccess's default capacity: large enough that a realistic working set of a few thousand
/// (source, target, class) triples stays resident (see README, "AVC capacity"), and at 32 bytes
/// an entry in each of the two tables still only 512 KiB.
pub const DEFAULT_CAPACITY: usize = 8192;

/// Why an access check failed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AvcError {
    /// Some requested permissions are denied (and enforced).
    Denied { denied: AccessVector },
    /// The security server could not answer (bad SID or class).
    Server(ServerError),
}

impl std::fmt::Display for AvcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AvcError::Denied { denied } => write!(f, "permission denied (bits {:#x})", denied.0),
            AvcError::Server(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for AvcError {}

impl From<ServerError> for AvcError {
    fn from(e: ServerError) -> Self {
        AvcError::Server(e)
    }
}

/// The kernel's avc/hash_stats.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct HashStats {
    pub entries: usize,
    pub buckets_used: usize,
    pub buckets: usize,
    pub longest_chain: usize,
}

impl HashStats {
    pub fn to_text(&self) -> String {
        format!(
            "entries: {}\nbuckets used: {}/{}\nlongest chain: {}\n",
            self.entries, self.buckets_used, self.buckets, self.longest_chain
        )
    }
}

type AuditFn = Box<dyn Fn(&str) + Send + Sync>;
type ResetFn = Box<dyn Fn(Seqno) + Send + Sync>;

/// How many times a miss asks the server again when the cache already knows of a newer policy
/// than the one that answered; past this the server is not keeping up with what it announced.
const MISS_RETRIES: usize = 1000;

/// The access vector cache.
pub struct Avc {
    server: Arc<dyn AccessServer>,
    /// Decisions of seqno `s` live in `tables[s & 1]`.
    tables: [Table; 2],
    latest: AtomicU32,
    /// Whether a change recomputes the cached decisions before it is made visible.
    refresh: AtomicBool,
    /// The newest seqno whose decisions `prepare` computed ahead of its publication.
    prepared: AtomicU32,
    enforcing: AtomicBool,
    stats: Stats,
    audit: ArcSwapOption<AuditFn>,
    resets: Mutex<Vec<ResetFn>>,
    xperms: XpermCache,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl Avc {
    /// A cache in front of `server` holding at least `capacity` decisions, enforcing.
    pub fn new(server: Arc<dyn AccessServer>, capacity: usize) -> Avc {
        let latest = server.seqno().0;
        Avc {
            server,
            tables: [Table::new(capacity), Table::new(capacity)],
            latest: AtomicU32::new(latest),
            refresh: AtomicBool::new(true),
            prepared: AtomicU32::new(0),
            enforcing: AtomicBool::new(true),
            stats: Stats::new(),
            audit: ArcSwapOption::empty(),
            resets: Mutex::new(Vec::new()),
            xperms: XpermCache::new(capacity),
        }
    }

    pub fn capacity(&self) -> usize {
        self.tables[0].capacity()
    }

    /// The table that holds decisions of policy `seqno`.
    #[inline(always)]
    fn table(&self, seqno: u32) -> &Table {
        &self.tables[(seqno & 1) as usize]
    }

    /// Whether a policy change recomputes the cached decisions under the new policy before it
    /// is made visible (the default), or leaves readers to miss on them (as the kernel does).
    /// Refreshing costs the announcing thread one computation per cached decision, at most the
    /// capacity.
    pub fn set_refresh(&self, on: bool) {
        self.refresh.store(on, Relaxed);
    }

    /// Enforcing (denials refused) or permissive (denials logged, access granted) for every
    /// domain; permissive types are permissive whatever this says.
    pub fn set_enforcing(&self, enforcing: bool) {
        self.enforcing.store(enforcing, Relaxed);
    }

    pub fn enforcing(&self) -> bool {
        self.enforcing.load(Relaxed)
    }

    /// Where audit records go: one call per record, with the record's text.
    pub fn set_audit_callback(&self, f: impl Fn(&str) + Send + Sync + 'static) {
        self.audit.store(Some(Arc::new(Box::new(f))));
    }

    /// Called after every reset, with the new seqno (libselinux's avc_add_callback).
    pub fn on_reset(&self, f: impl Fn(Seqno) + Send + Sync + 'static) {
        lock(&self.resets).push(Box::new(f));
    }

    /// The seqno of the newest policy the cache knows of.
    pub fn seqno(&self) -> Seqno {
        Seqno(self.latest.load(Acquire))
    }

    /// The security server loaded a policy or committed booleans: from now on only decisions
    /// of `seqno` or later are returned or stored (the kernel's avc_ss_reset). The server must
    /// already answer with `seqno` (or later).
    ///
    /// First, unless [`Avc::set_refresh`] turned it off, every decision cached for the current
    /// policy is computed again under the new one into the other table, while readers keep
    /// hitting the current one. Then one atomic store retires every older entry and makes the
    /// new ones visible: the kernel walks and frees its whole cache here, which costs readers a
    /// storm of cache-line transfers and then a miss for each triple; readers here never wait.
    pub fn policy_changed(&self, seqno: Seqno) {
        let prev = self.latest.load(Acquire);
        if seqno.0 > prev && self.prepared.load(Acquire) < seqno.0 && self.refresh.load(Relaxed) {
            self.refresh_into(&*self.server, prev, seqno.0);
        }
        self.latest.fetch_max(seqno.0, AcqRel);
        self.xperms.clear();
        for f in lock(&self.resets).iter() {
            f(seqno);
        }
    }

    /// Follows the policy changes of `events` (the security server): [`Avc::prepare`] before
    /// each new policy is published, [`Avc::policy_changed`] after, until the returned
    /// registration is dropped. The listeners hold the cache weakly, so they do not keep it
    /// alive; kept with [`Registration::keep`], they unregister themselves at the first change
    /// after the cache is dropped.
    pub fn follow(self: &Arc<Self>, events: &dyn PolicyEvents) -> Registration {
        // Shared by both listeners and the handle: whichever ends the following drops both
        // registrations. The listeners hold it, not the server's lists, so no cycle keeps the
        // server's listeners alive.
        let both: Arc<Mutex<Option<(Registration, Registration)>>> = Arc::new(Mutex::new(None));
        let (weak, mine) = (Arc::downgrade(self), both.clone());
        let prepare = events.on_policy_prepare(Box::new(move |next| match weak.upgrade() {
            Some(a) => a.prepare(next),
            None => drop(lock(&mine).take()),
        }));
        let (weak, mine) = (Arc::downgrade(self), both.clone());
        let change = events.on_policy_change(Box::new(move |seq| match weak.upgrade() {
            Some(a) => a.policy_changed(seq),
            None => drop(lock(&mine).take()),
        }));
        *lock(&both) = Some((prepare, change));
        Registration::new(move || drop(lock(&both).take()))
    }

    /// A policy generation that is about to be published: its decisions for every triple
    /// the cache holds are computed now, from `next` (which answers from that generation
    /// alone), so that they are in place however readers come to switch, by the announcement or
    /// by a miss that meets the new policy first. Wire it to the security server's
    /// `on_policy_prepare`; [`Avc::policy_changed`] then has nothing left to recompute.
    pub fn prepare(&self, next: &dyn AccessServer) {
        let new = next.seqno().0;
        let prev = self.latest.load(Acquire);
        if new > prev && self.refresh.load(Relaxed) {
            self.refresh_into(next, prev, new);
            self.prepared.fetch_max(new, AcqRel);
        }
    }

    /// Computes every decision of policy `prev` in the cache again with `server`, storing
    /// those it makes under policy `new` (none of an older or newer one: a newer one is
    /// refreshed by its own announcement).
    fn refresh_into(&self, server: &dyn AccessServer, prev: u32, new: u32) {
        let to = self.table(new);
        for key in self.table(prev).live_keys(prev) {
            let (s, t, c) = key.parts();
            let Ok(d) = server.compute_av(s, t, c) else { continue };
            if d.seqno.0 > new {
                break;
            }
            if d.seqno.0 == new {
                self.count_store(to.insert(key, &d, new));
            }
        }
    }

    fn count_store(&self, stored: Stored) {
        match stored {
            Stored::Fresh { freed_stale } => {
                self.stats.bump(Counter::Allocation, 1);
                if freed_stale {
                    self.stats.bump(Counter::Free, 1);
                }
            }
            Stored::Evicted => {
                self.stats.bump(Counter::Allocation, 1);
                self.stats.bump(Counter::Reclaim, 1);
                self.stats.bump(Counter::Free, 1);
            }
            Stored::Updated | Stored::Skipped => {}
        }
    }

    /// The decision for a triple, from the cache or, on a miss, from the security server.
    #[inline(always)]
    pub fn decide(&self, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision, ServerError> {
        let key = Key::new(ssid, tsid, class);
        let latest = self.latest.load(Acquire);
        if let Some(d) = self.table(latest).get(key, latest) {
            self.stats.bump(Counter::Hit, 1);
            return Ok(d);
        }
        self.miss(key, ssid, tsid, class)
    }

    #[cold]
    #[inline(never)]
    fn miss(&self, key: Key, ssid: Sid, tsid: Sid, class: ClassId) -> Result<AvDecision, ServerError> {
        self.stats.bump(Counter::Miss, 1);
        for _ in 0..MISS_RETRIES {
            let d = self.server.compute_av(ssid, tsid, class)?;
            let mut latest = self.latest.load(Acquire);
            // Computed under a policy older than one the cache has already been told of: the
            // server has the newer one by now, so ask again.
            if d.seqno.0 < latest {
                continue;
            }
            // The server has a newer policy than it has announced (the announcement is on its
            // way): from now on no thread may be answered from the older one.
            if d.seqno.0 > latest {
                latest = self.latest.fetch_max(d.seqno.0, AcqRel).max(d.seqno.0);
            }
            if d.seqno.0 == latest {
                self.count_store(self.table(latest).insert(key, &d, latest));
            }
            return Ok(d);
        }
        Err(ServerError::Other(format!(
            "the security server answers with policy seqno older than {} which the cache was told of",
            self.latest.load(Acquire)
        )))
    }

    /// The kernel's avc_has_perm_noaudit: Ok with the decision if every requested permission
    /// is allowed, or if denied but not enforced (permissive mode or a permissive domain: the
    /// permissions are then granted in the cache, so the denial is reported once).
    pub fn has_perm_noaudit(&self, ssid: Sid, tsid: Sid, class: ClassId, requested: AccessVector) -> Result<AvDecision, AvcError> {
        let d = self.decide(ssid, tsid, class)?;
        let denied = requested & !d.allowed;
        if denied.is_empty() {
            return Ok(d);
        }
        if self.enforcing() && !d.flags.permissive() {
            return Err(AvcError::Denied { denied });
        }
        self.table(d.seqno.0).grant(Key::new(ssid, tsid, class), denied, d.seqno.0);
        Ok(d)
    }

    /// The kernel's avc_has_perm: the check, then an audit record if the decision asks for one
    /// (a denial not dontaudit'ed, or a grant auditallow'ed). `aux` is extra text for the
    /// record, such as `pid=1234 comm="cat" name="shadow"`.
    pub fn has_perm(&self, ssid: Sid, tsid: Sid, class: ClassId, requested: AccessVector, aux: Option<&str>) -> Result<(), AvcError> {
        let d = self.decide(ssid, tsid, class)?;
        let denied = requested & !d.allowed;
        let result = if denied.is_empty() {
            Ok(())
        } else if self.enforcing() && !d.flags.permissive() {
            Err(AvcError::Denied { denied })
        } else {
            self.table(d.seqno.0).grant(Key::new(ssid, tsid, class), denied, d.seqno.0);
            Ok(())
        };
        let audited = if denied.is_empty() { requested & d.auditallow } else { denied & d.auditdeny };
        if !audited.is_empty() {
            self.audit(ssid, tsid, class, audited, !denied.is_empty(), result.is_ok(), aux);
        }
        result
    }

    /// The kernel's avc_has_extended_perms for an ioctl command (driver in the high byte):
    /// `requested` is the class's ioctl permission. Once any extended-permission rule covers
    /// the triple, only the commands allowx rules list are allowed.
    pub fn has_ioctl(&self, ssid: Sid, tsid: Sid, class: ClassId, requested: AccessVector, cmd: u16, aux: Option<&str>) -> Result<(), AvcError> {
        let d = self.decide(ssid, tsid, class)?;
        let (driver, func) = ((cmd >> 8) as u8, cmd as u8);
        let key = (ssid, tsid, class);
        let mut allowed = d.allowed & requested;
        // The driver's decision, when rules cover the triple and flag this driver.
        let mut xpd = None;
        if let Some(drivers) = self.xperm_drivers(key)? {
            if flagged(&drivers, driver) {
                xpd = Some(self.xperm_decision(key, driver)?);
            }
            if !xpd.is_some_and(|x| x.allows(func)) {
                allowed = AccessVector::NONE;
            }
        }
        let denied = requested & !allowed;
        let enforced = self.enforcing() && !d.flags.permissive();
        let result = if denied.is_empty() {
            Ok(())
        } else if enforced {
            Err(AvcError::Denied { denied })
        } else {
            // Granted from now on, so the denial is reported once (the kernel's
            // AVC_CALLBACK_GRANT with AVC_EXTENDED_PERMS).
            self.table(d.seqno.0).grant(Key::new(ssid, tsid, class), denied, d.seqno.0);
            if xpd.is_some() {
                self.xperms.grant(key, driver, func, d.seqno.0);
            }
            Ok(())
        };
        let audited = if denied.is_empty() {
            let a = requested & d.auditallow;
            if xpd.is_some_and(|x| !x.audits_allow(func)) {
                AccessVector::NONE
            } else {
                a
            }
        } else {
            let a = denied & d.auditdeny;
            if xpd.is_some_and(|x| x.dontaudits(func)) {
                AccessVector::NONE
            } else {
                a
            }
        };
        if !audited.is_empty() {
            let extra = format!("ioctlcmd={cmd:#x}");
            let aux = match aux {
                Some(a) => format!("{a} {extra}"),
                None => extra,
            };
            self.audit(ssid, tsid, class, audited, !denied.is_empty(), result.is_ok(), Some(&aux));
        }
        result
    }

    /// The drivers flagged for a triple (None: no extended-permission rule covers it), cached.
    fn xperm_drivers(&self, key: XpKey) -> Result<Option<[u32; 8]>, ServerError> {
        let latest = self.latest.load(Acquire);
        if let Some(d) = self.xperms.drivers(key, latest) {
            return Ok(d);
        }
        let (d, seqno) = self.server.xperm_drivers(key.0, key.1, key.2)?;
        if seqno.0 == latest {
            self.xperms.store_drivers(key, d, latest);
        }
        Ok(d)
    }

    /// One driver's decision, cached.
    fn xperm_decision(&self, key: XpKey, driver: u8) -> Result<XpermsDecision, ServerError> {
        let latest = self.latest.load(Acquire);
        if let Some(x) = self.xperms.decision(key, driver, latest) {
            return Ok(x);
        }
        let (x, seqno) = self.server.compute_xperms(key.0, key.1, key.2, driver)?;
        if seqno.0 == latest {
            self.xperms.store_decision(key, x, latest);
        }
        Ok(x)
    }

    /// The audit record, in the kernel's text, so that audit2allow and audit2why read it.
    #[allow(clippy::too_many_arguments)]
    fn audit(&self, ssid: Sid, tsid: Sid, class: ClassId, audited: AccessVector, denied: bool, granted: bool, aux: Option<&str>) {
        let Some(f) = self.audit.load_full() else { return };
        f(&self.audit_record(ssid, tsid, class, audited, denied, granted, aux));
    }

    /// The text of one audit record (kernel format): `avc:  denied  { read write } for  ...
    /// scontext=... tcontext=... tclass=file permissive=0`.
    #[allow(clippy::too_many_arguments)]
    pub fn audit_record(&self, ssid: Sid, tsid: Sid, class: ClassId, audited: AccessVector, denied: bool, granted: bool, aux: Option<&str>) -> String {
        let s = &self.server;
        let mut perms = String::new();
        let mut unknown = 0u32;
        for bit in audited.bits() {
            match s.perm_name(class, bit) {
                Some(n) => {
                    perms.push(' ');
                    perms.push_str(&n);
                }
                None => unknown |= 1 << bit,
            }
        }
        if unknown != 0 {
            perms.push_str(&format!(" {unknown:#x}"));
        }
        let ctx = |sid: Sid| s.sid_to_context(sid).unwrap_or_else(|| format!("sid={}", sid.0));
        let mut line = format!("avc:  {}  {{{perms} }} for ", if denied { "denied" } else { "granted" });
        if let Some(a) = aux {
            line.push(' ');
            line.push_str(a);
        }
        line.push_str(&format!(
            " scontext={} tcontext={} tclass={}",
            ctx(ssid),
            ctx(tsid),
            s.class_name(class).unwrap_or_else(|| format!("class={}", class.0))
        ));
        if denied {
            line.push_str(&format!(" permissive={}", u8::from(granted)));
        }
        line
    }

    /// How many (triple, driver map) and (triple, driver, decision) extended-permission entries
    /// the cache holds: each at most the capacity.
    pub fn xperm_entries(&self) -> (usize, usize) {
        self.xperms.len()
    }

    /// The kernel's avc/cache_stats.
    pub fn cache_stats(&self) -> CacheStats {
        self.stats.sum()
    }

    /// The kernel's avc/hash_stats (sets of four entries play the part of hash chains).
    pub fn hash_stats(&self) -> HashStats {
        let latest = self.latest.load(Acquire);
        let (entries, buckets_used, longest_chain) = self.table(latest).occupancy(latest);
        HashStats { entries, buckets_used, buckets: self.tables[0].buckets(), longest_chain }
    }
}
