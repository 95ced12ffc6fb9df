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
//!
//! What invalidates what:
//! - A policy change (load, reload, boolean commit; a new seqno) retires every entry of the
//!   main table and of the ioctl decision cache, with every grant they hold, permissive
//!   domains' included.
//! - A switch of enforcing mode ([`Avc::set_enforcing`], either way) starts a new mode epoch
//!   and retires, at once, every entry holding a permission granted in permissive mode, in the
//!   main table and in the ioctl decision cache (a grant is tagged with the permissive epoch
//!   that made it and answers in no other); entries without such a grant stay, and so do a
//!   permissive domain's grants, which hold in either mode. The retired entries are computed
//!   again by the switching thread (refresh), or else missed.
//! - Nothing else: eviction only makes room.
//!
//! Fork: a process that forks while threads use the cache holds [`Avc::fork_guard`] across the
//! fork; the child's [`ForkGuard::child`] empties the entries being written at the fork and
//! catches the cache up with its server.
//!
//! A decision is named only with its own policy's names: the cache keeps the names
//! ([`seaccess_types::PolicyNames`]) of the generations its two tables hold, and an audit
//! record of a decision older than both gives numbers, never another policy's names. Class and
//! permission numbers a caller resolved are paired only with a decision of the same policy
//! through [`Avc::check_at`]; the other checks take the caller's numbers as the current
//! policy's.

#![forbid(unsafe_code)]

mod record;
mod stats;
pub mod stripe;
mod table;
mod xperms;

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::*};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwapOption;

use seaccess_types::{
    lock, AccessServer, AccessVector, AvDecision, ClassId, PolicyEvents, PolicyNames, Registration,
    Seqno, ServerError, Sid, XpermsDecision,
};

pub use record::{audit_contexts, AvcRecord, LibselinuxRecord, LIBSELINUX_AUDIT_BUFSIZE};
pub use stats::CacheStats;
use stats::{Counter, Stats};
use table::{Epoch, Key, Stored, Table};
use xperms::{flagged, XpKey, XpKind, XpermCache};

/// The outcome of one check (see [`Avc::check_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The decision checked against, with the seqno of its policy.
    pub decision: AvDecision,
    /// The requested permissions the decision does not allow.
    pub denied: AccessVector,
    /// Whether the denial stands: enforcing mode and no permissive domain. A denial that does
    /// not stand has been granted in the cache, so it is reported once.
    pub enforced: bool,
    /// What the audit record, if any, lists: the denied permissions not dontaudit'ed, or the
    /// allowed ones auditallow'ed.
    pub audited: AccessVector,
}

impl Verdict {
    /// Whether the request goes through.
    pub fn allowed(&self) -> bool {
        !self.enforced
    }
}

/// Every lock of an [`Avc`] held at once, for a process about to fork (see [`Avc::fork_guard`]).
/// Dropping it releases them (in the parent); [`ForkGuard::child`] first repairs what threads
/// the child does not have left half done.
pub struct ForkGuard<'a> {
    avc: &'a Avc,
    _stats: stats::Held<'a>,
    _resets: std::sync::MutexGuard<'a, Vec<ResetFn>>,
}

impl ForkGuard<'_> {
    /// In the child of the fork, before it starts a thread: every entry a thread of the parent
    /// was writing at the fork (its seqlock odd) is emptied and released, in both tables and the
    /// ioctl decision cache, so that a flush does not wait for it forever; and the cache moves
    /// to the newest policy its server answers with, since the announcement of a change another
    /// thread was delivering may come late in the child (its decisions were prepared before it
    /// was published, or are computed on a miss). Then the locks are released.
    pub fn child(self) {
        let a = self.avc;
        for t in &a.tables {
            t.unstick();
        }
        a.xperms.unstick();
        let seqno = a.server.seqno().0;
        a.advance(seqno);
        a.raise_prepared(seqno);
    }
}

/// The kernel's avc cache_threshold.
pub const KERNEL_CAPACITY: usize = 512;

/// seaccess's default capacity: large enough that a realistic working set of a few thousand
/// (source, target, class) triples stays resident (docs/avc.md, "Capacity"), and at 32 bytes
/// an entry in each of the two tables still only 512 KiB.
pub const DEFAULT_CAPACITY: usize = 8192;

/// The ioctl decision cache holds a quarter as many driver maps, and as many driver decisions,
/// as the main table holds decisions: few triples are ioctl'ed, and an entry is four to five
/// times larger.
const XPERM_SHARE: usize = 4;

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

/// What a lookup is made under, read in one load: the newest policy seqno the cache knows of
/// (low half) and the mode epoch (high half), bumped by every switch of enforcing mode: even
/// while enforcing, odd while permissive; and by two at a flush ([`Avc::restamp`]), the mode
/// kept, so that grants kept outside the cache under the old word ([`Avc::stamp`]) go too. A
/// check decides with the mode of the state its decision was looked up under, and tags its
/// permissive grants with that epoch.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
struct State(u64);

impl State {
    #[inline(always)]
    fn seqno(self) -> u32 {
        self.0 as u32
    }
    #[inline(always)]
    fn epoch(self) -> u32 {
        (self.0 >> 32) as u32
    }
    #[inline(always)]
    fn enforcing(self) -> bool {
        self.epoch() & 1 == 0
    }
    /// The grant tag of this epoch: its low byte, odd (never 0) when permissive.
    #[inline(always)]
    fn tag(self) -> u8 {
        self.epoch() as u8
    }
    fn with_seqno(self, seqno: u32) -> State {
        State((self.0 & !0xffff_ffff) | u64::from(seqno))
    }
    fn next_epoch(self) -> State {
        State((u64::from(self.epoch().wrapping_add(1)) << 32) | u64::from(self.seqno()))
    }
    /// The same mode and seqno under another epoch (and grant tag).
    fn restamped(self) -> State {
        State((u64::from(self.epoch().wrapping_add(2)) << 32) | u64::from(self.seqno()))
    }
}

/// Whether seqno `a` is newer than `b`, across the wrap ([`Seqno::is_after`]).
#[inline(always)]
fn after(a: u32, b: u32) -> bool {
    Seqno(a).is_after(Seqno(b))
}

/// One generation's names, as the cache keeps them (a sized handle, for `ArcSwapOption`).
struct Named(Arc<dyn PolicyNames>);

/// The access vector cache.
pub struct Avc {
    server: Arc<dyn AccessServer>,
    /// Decisions of seqno `s` live in `tables[s & 1]`.
    tables: [Table; 2],
    /// A [`State`].
    state: AtomicU64,
    /// Whether a change recomputes the cached decisions before it is made visible.
    refresh: AtomicBool,
    /// The newest seqno whose decisions `prepare` computed ahead of its publication.
    prepared: AtomicU32,
    stats: Stats,
    audit: ArcSwapOption<AuditFn>,
    resets: Mutex<Vec<ResetFn>>,
    xperms: XpermCache,
    /// The names of the generations whose decisions the tables hold, by the same parity: an
    /// audit record names a decision with its own generation's names (see [`Avc::audit`]).
    /// Keeps the previous generation's name tables alive until the one after next.
    names: [ArcSwapOption<Named>; 2],
}

impl Avc {
    /// A cache in front of `server` holding at least `capacity` decisions, enforcing.
    pub fn new(server: Arc<dyn AccessServer>, capacity: usize) -> Avc {
        let latest = server.seqno().0;
        let first = server.names();
        let names = [ArcSwapOption::empty(), ArcSwapOption::empty()];
        names[(first.seqno().0 & 1) as usize].store(Some(Arc::new(Named(first))));
        Avc {
            server,
            tables: [Table::new(capacity), Table::new(capacity)],
            state: AtomicU64::new(u64::from(latest)),
            refresh: AtomicBool::new(true),
            prepared: AtomicU32::new(latest),
            stats: Stats::new(),
            audit: ArcSwapOption::empty(),
            resets: Mutex::new(Vec::new()),
            xperms: XpermCache::new(capacity.div_ceil(XPERM_SHARE)),
            names,
        }
    }

    /// Keeps `n` as the names of its generation, unless a newer generation of the same parity
    /// is kept already.
    fn remember(&self, n: Arc<dyn PolicyNames>) {
        let at = n.seqno().0;
        let slot = &self.names[(at & 1) as usize];
        if slot
            .load()
            .as_ref()
            .is_some_and(|k| after(k.0.seqno().0, at))
        {
            return;
        }
        slot.store(Some(Arc::new(Named(n))));
    }

    /// The names of generation `at`, if the cache keeps them or the server still has it.
    fn names_of(&self, at: Seqno) -> Option<Arc<dyn PolicyNames>> {
        if let Some(k) = self.names[(at.0 & 1) as usize].load_full() {
            if k.0.seqno() == at {
                return Some(k.0.clone());
            }
        }
        let now = self.server.names();
        if now.seqno() != at {
            return None;
        }
        self.remember(now.clone());
        Some(now)
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

    #[inline(always)]
    fn state(&self) -> State {
        State(self.state.load(Acquire))
    }

    /// Holds every lock of the cache until the guard is dropped, for a process that forks while
    /// other threads may use the cache (a C library's `pthread_atfork` handlers: take it in the
    /// prepare handler, after the security server's `fork_guard`, since a change holds the
    /// server's lock while it refreshes the cache; drop it in the parent's, call
    /// [`ForkGuard::child`] in the child's), then [`stripe::hold`] once for the process, however
    /// many caches it has. Checks are not stopped: they take no lock, and an entry one was
    /// writing at the fork is repaired in the child. Must not be called from an `on_reset`
    /// callback (it runs under the resets' lock).
    pub fn fork_guard(&self) -> ForkGuard<'_> {
        ForkGuard {
            avc: self,
            _stats: self.stats.hold(),
            _resets: lock(&self.resets),
        }
    }

    /// Enforcing (denials refused) or permissive (denials logged, access granted) for every
    /// domain; permissive types are permissive whatever this says.
    ///
    /// A switch, either way, starts a new mode epoch: from the moment the switch is made, no
    /// lookup returns a decision holding a permission granted in permissive mode (those
    /// entries carry their epoch's tag), so no check that starts after this returns is allowed
    /// by such a grant, even one recorded late by a check that began in permissive mode. Then,
    /// unless [`Avc::set_refresh`] turned it off, the entries that held such grants are
    /// computed again, so readers hit rather than miss on them; a permissive domain's grants
    /// are not tagged and stay. The `on_reset` callbacks are told, with the unchanged seqno
    /// (the kernel's sel_write_enforce calls avc_ss_reset, flushing the whole cache, when it
    /// switches to enforcing).
    pub fn set_enforcing(&self, enforcing: bool) {
        let mut cur = self.state();
        let new = loop {
            if cur.enforcing() == enforcing {
                return;
            }
            let new = cur.next_epoch();
            match self.state.compare_exchange(cur.0, new.0, AcqRel, Acquire) {
                Ok(_) => break new,
                Err(now) => cur = State(now),
            }
        };
        if self.refresh.load(Relaxed) {
            let seqno = new.seqno();
            let table = self.table(seqno);
            for key in table.tagged_keys(seqno, new.tag()) {
                let (s, t, c) = key.parts();
                match self.server.compute_av(s, t, c) {
                    Ok(d) if d.seqno.0 == seqno => self.count_store(table.insert(key, &d, seqno)),
                    // A newer policy: its own announcement refreshes the cache.
                    Ok(_) => break,
                    Err(_) => continue,
                }
            }
        }
        for f in lock(&self.resets).iter() {
            f(Seqno(new.seqno()));
        }
    }

    pub fn enforcing(&self) -> bool {
        self.state().enforcing()
    }

    /// Where audit records go: one call per record, with the record's text.
    pub fn set_audit_callback(&self, f: impl Fn(&str) + Send + Sync + 'static) {
        self.audit.store(Some(Arc::new(Box::new(f))));
    }

    /// Called after every reset, with the new seqno (libselinux's avc_add_callback).
    pub fn on_reset(&self, f: impl Fn(Seqno) + Send + Sync + 'static) {
        lock(&self.resets).push(Box::new(f));
    }

    /// The word every lookup is made under (the newest seqno the cache knows of and the mode
    /// epoch): while it is unchanged, every decision the cache gives for a triple allows what it
    /// allowed. A caller keeping grants of its own past a check (the C library's per-thread
    /// front) keeps them only while this is the word they were read under, read before the
    /// lookup. It moves at every reload, switch of mode and flush, and at [`Avc::restamp`].
    #[inline(always)]
    pub fn stamp(&self) -> u64 {
        self.state().0
    }

    /// Moves the [`Avc::stamp`] without changing the mode or the seqno (the mode epoch moves by
    /// two): every grant kept under the old word is forgotten, and the cache's permissive grants
    /// with them. For a caller whose kept grants stop being right for a reason of its own (the
    /// C library retiring the SIDs its grants are keyed by).
    pub fn restamp(&self) {
        // The closure always gives a new word, so the update cannot fail.
        let _ = self
            .state
            .fetch_update(AcqRel, Acquire, |s| Some(State(s).restamped().0));
    }

    /// The counter of hits thread identity `thread` owns in this cache's statistics (the one
    /// [`Avc::allowed_hit_as`] counts in for it), for a check that thread answers from such a
    /// kept grant; None when the identity counts in a shared stripe. Only that thread may add
    /// to it, and with a load and a store (`c.store(c.load(Relaxed) + 1, Relaxed)`), never a
    /// locked add: the statistics sum it as the thread's own.
    pub fn own_hits(&self, thread: u64) -> Option<&AtomicU64> {
        self.stats.own_hits(thread)
    }

    /// The seqno of the newest policy the cache knows of.
    pub fn seqno(&self) -> Seqno {
        Seqno(self.state().seqno())
    }

    /// Makes `seqno` the newest policy the cache knows of, if it is newer than the one it
    /// knows; the mode epoch is kept. Returns the state after.
    fn advance(&self, seqno: u32) -> State {
        let mut cur = self.state();
        loop {
            if !after(seqno, cur.seqno()) {
                return cur;
            }
            let new = cur.with_seqno(seqno);
            match self.state.compare_exchange(cur.0, new.0, AcqRel, Acquire) {
                Ok(_) => return new,
                Err(now) => cur = State(now),
            }
        }
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
        let prev = self.state().seqno();
        if after(seqno.0, prev)
            && after(seqno.0, self.prepared.load(Acquire))
            && self.refresh.load(Relaxed)
        {
            self.refresh_into(&*self.server, prev, seqno.0);
        }
        self.advance(seqno.0);
        self.raise_prepared(seqno.0);
        let names = self.server.names();
        if names.seqno() == seqno {
            self.remember(names);
        }
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
        let prev = self.state().seqno();
        if after(new, prev) {
            self.remember(next.names());
            if self.refresh.load(Relaxed) {
                self.refresh_into(next, prev, new);
                self.raise_prepared(new);
            }
        }
    }

    /// Records that policy `seqno`'s decisions are in place. Also raised by every
    /// announcement, so that it never falls 2^31 changes behind and looks newer than it is.
    fn raise_prepared(&self, seqno: u32) {
        let mut cur = self.prepared.load(Acquire);
        while after(seqno, cur) {
            match self.prepared.compare_exchange(cur, seqno, AcqRel, Acquire) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
    }

    /// Computes every decision of policy `prev` in the cache again with `server`, storing
    /// those it makes under policy `new` (none of an older or newer one: a newer one is
    /// refreshed by its own announcement).
    fn refresh_into(&self, server: &dyn AccessServer, prev: u32, new: u32) {
        let to = self.table(new);
        for key in self.table(prev).live_keys(prev) {
            let (s, t, c) = key.parts();
            let Ok(d) = server.compute_av(s, t, c) else {
                continue;
            };
            if after(d.seqno.0, new) {
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
        // The hit path of `lookup` without a verdict: a bare decision needs no mode, so the
        // state `cached` returns beside it is dropped.
        let key = Key::new(ssid, tsid, class);
        if let Some((d, _)) = self.cached(key) {
            self.stats.bump(Counter::Hit, 1);
            return Ok(d);
        }
        self.miss(key).map(|(d, _)| d)
    }

    /// The cached decision for `key` of the newest policy the cache knows of, if it may answer
    /// in the current mode epoch, with the state it was looked up under; counts nothing.
    #[inline(always)]
    fn cached(&self, key: Key) -> Option<(AvDecision, State)> {
        let state = self.state();
        self.table(state.seqno())
            .get(key, state.seqno(), Epoch::of_state(state.0))
            .map(|d| (d, state))
    }

    /// The decision and the state it was looked up under (whose mode the check must apply).
    #[inline(always)]
    fn lookup(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
    ) -> Result<(AvDecision, State), ServerError> {
        self.lookup_counted(ssid, tsid, class, |s| s.bump(Counter::Hit, 1))
    }

    /// [`Avc::lookup`], counting a hit for the thread of identity `thread` ([`Avc::verdict_as`]).
    #[inline(always)]
    fn lookup_as(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        thread: u64,
    ) -> Result<(AvDecision, State), ServerError> {
        self.lookup_counted(ssid, tsid, class, |s| s.bump_as(thread, Counter::Hit, 1))
    }

    /// The lookup itself, with the way a hit is counted (inlined into each caller, so the
    /// closure costs nothing).
    #[inline(always)]
    fn lookup_counted(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        count_hit: impl FnOnce(&Stats),
    ) -> Result<(AvDecision, State), ServerError> {
        let key = Key::new(ssid, tsid, class);
        if let Some(hit) = self.cached(key) {
            count_hit(&self.stats);
            return Ok(hit);
        }
        self.miss(key)
    }

    #[cold]
    #[inline(never)]
    fn miss(&self, key: Key) -> Result<(AvDecision, State), ServerError> {
        let (ssid, tsid, class) = key.parts();
        self.stats.bump(Counter::Miss, 1);
        for _ in 0..MISS_RETRIES {
            let d = self.server.compute_av(ssid, tsid, class)?;
            let mut state = self.state();
            // Computed under a policy older than one the cache has already been told of: the
            // server has the newer one by now, so ask again.
            if after(state.seqno(), d.seqno.0) {
                continue;
            }
            // The server has a newer policy than it has announced (the announcement is on its
            // way): from now on no thread may be answered from the older one.
            if after(d.seqno.0, state.seqno()) {
                state = self.advance(d.seqno.0);
            }
            if d.seqno.0 == state.seqno() {
                self.count_store(self.table(d.seqno.0).insert(key, &d, d.seqno.0));
            }
            return Ok((d, state));
        }
        Err(ServerError::Other(format!(
            "the security server answers with policy seqno older than {} which the cache was told of",
            self.state().seqno()
        )))
    }

    /// The tag a permissive grant on decision `d` carries: none for a permissive domain (its
    /// grants hold in every mode), else the permissive epoch's.
    fn grant_tag(d: &AvDecision, state: State) -> Option<u8> {
        (!d.flags.permissive()).then_some(state.tag())
    }

    /// The kernel's avc_has_perm_noaudit: Ok with the decision if every requested permission
    /// is allowed, or if denied but not enforced (permissive mode or a permissive domain: the
    /// permissions are then granted in the cache, so the denial is reported once).
    #[inline(always)]
    pub fn has_perm_noaudit(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
    ) -> Result<AvDecision, AvcError> {
        let key = Key::new(ssid, tsid, class);
        if let Some(v) = self.granted_hit(key, requested, None, false) {
            return Ok(v.decision);
        }
        self.has_perm_noaudit_slow(key, requested)
    }

    /// [`Avc::has_perm_noaudit`] other than by a granted hit.
    #[cold]
    #[inline(never)]
    fn has_perm_noaudit_slow(
        &self,
        key: Key,
        requested: AccessVector,
    ) -> Result<AvDecision, AvcError> {
        let (ssid, tsid, class) = key.parts();
        let (d, state) = self.lookup(ssid, tsid, class)?;
        let v = self.verdict(ssid, tsid, class, requested, d, state);
        if v.enforced {
            return Err(AvcError::Denied { denied: v.denied });
        }
        Ok(d)
    }

    /// The kernel's avc_has_perm: the check, then an audit record if the decision asks for one
    /// (a denial not dontaudit'ed, or a grant auditallow'ed). `aux` is extra text for the
    /// record, such as `pid=1234 comm="cat" name="shadow"`.
    pub fn has_perm(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        aux: Option<&str>,
    ) -> Result<(), AvcError> {
        let (d, state) = self.lookup(ssid, tsid, class)?;
        let v = self.verdict(ssid, tsid, class, requested, d, state);
        self.audit(ssid, tsid, class, &v, aux);
        if v.enforced {
            return Err(AvcError::Denied { denied: v.denied });
        }
        Ok(())
    }

    /// An object manager's check whose class and permissions it translated from its own
    /// numbering with the class map of policy `at` (see the objmgr crate): the kernel's
    /// avc_has_perm_noaudit, made only if the cache answers from that same policy. Otherwise
    /// nothing is granted and `Err` carries the seqno of the policy that answered, so that the
    /// caller translates again: a reload never pairs one policy's class numbers with another's
    /// decision. The caller audits [`Verdict::audited`] with [`Avc::audit`].
    ///
    /// A caller that resolved under a policy the server has published but whose announcement
    /// has not reached the cache yet is answered from that policy: the cache moves to it, as a
    /// miss that meets a newer policy does, rather than answering from the older one until the
    /// announcement comes.
    #[inline(always)]
    pub fn check_at(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        at: Seqno,
    ) -> Result<Result<Verdict, Seqno>, ServerError> {
        // The full way takes the key, not its parts: a caller's loop then keeps the key alive
        // across the hit rather than the SIDs and class besides (callgrind: a few spills less).
        let key = Key::new(ssid, tsid, class);
        if let Some(v) = self.granted_hit(key, requested, Some(at), false) {
            return Ok(Ok(v));
        }
        self.check_at_slow(key, requested, at)
    }

    /// The hit of a check every requested permission of which the cached decision allows (of
    /// policy `at`, if given; with none auditallow'ed, if `silent`): its verdict, counted as a
    /// hit. None otherwise, counting nothing, so that the caller checks the full way, which
    /// counts. Kept apart from the full way so that, inlined, the hit's verdict stays in
    /// registers: where the two ways met in one return, the verdict went through memory on the
    /// hit too (callgrind: a third of the hit).
    #[inline(always)]
    fn granted_hit(
        &self,
        key: Key,
        requested: AccessVector,
        at: Option<Seqno>,
        silent: bool,
    ) -> Option<Verdict> {
        let (d, _) = self.cached(key)?;
        let denied = requested & !d.allowed;
        let audited = requested & d.auditallow;
        if !denied.is_empty()
            || at.is_some_and(|at| at != d.seqno)
            || (silent && !audited.is_empty())
        {
            return None;
        }
        self.stats.bump(Counter::Hit, 1);
        Some(Verdict {
            decision: d,
            denied,
            enforced: false,
            audited,
        })
    }

    /// The hit of a check that passes silently: true when the cache holds the triple's
    /// decision of policy `at` and it allows every requested permission, none auditallow'ed,
    /// counted as a hit. False otherwise, counting nothing, so that the caller checks the full
    /// way ([`Avc::check_at`]), which counts. What an object manager's hook asks first: the
    /// verdict of such a check is "go on, write nothing", so none is built.
    #[inline(always)]
    pub fn granted_quietly(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        at: Seqno,
    ) -> bool {
        self.granted_hit(Key::new(ssid, tsid, class), requested, Some(at), true)
            .is_some()
    }

    /// [`Avc::check_at`] other than by a granted hit.
    #[cold]
    #[inline(never)]
    fn check_at_slow(
        &self,
        key: Key,
        requested: AccessVector,
        at: Seqno,
    ) -> Result<Result<Verdict, Seqno>, ServerError> {
        let (ssid, tsid, class) = key.parts();
        let (d, state) = self.lookup(ssid, tsid, class)?;
        if d.seqno != at {
            return self.check_at_other(ssid, tsid, class, requested, at, d.seqno);
        }
        Ok(Ok(self.verdict(ssid, tsid, class, requested, d, state)))
    }

    /// [`Avc::check_at`] when the cache answered from policy `answered`, not `at`.
    #[cold]
    #[inline(never)]
    fn check_at_other(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        at: Seqno,
        answered: Seqno,
    ) -> Result<Result<Verdict, Seqno>, ServerError> {
        // Only to a policy the server has reached: a caller's seqno from elsewhere must not
        // move the cache past its server.
        if !after(at.0, answered.0) || after(at.0, self.server.seqno().0) {
            return Ok(Err(answered));
        }
        self.advance(at.0);
        let (d, state) = self.lookup(ssid, tsid, class)?;
        if d.seqno != at {
            return Ok(Err(d.seqno));
        }
        Ok(Ok(self.verdict(ssid, tsid, class, requested, d, state)))
    }

    /// The kernel's avc_has_perm_noaudit as a [`Verdict`], for a caller that audits it itself
    /// and that knows a cheap identity of the calling thread: nonzero, and no other live
    /// thread's (the C library passes the thread pointer). The identity only says where the
    /// check is counted, sparing the hit a thread-local lookup (a call to `__tls_get_addr` in a
    /// shared library); 0 counts as the other checks do. Two live threads passing the same
    /// identity may lose counts, never decide wrongly.
    ///
    /// A permission denied but not enforced (permissive mode or domain) is granted in the
    /// cache, so that the denial is reported once, as by [`Avc::has_perm_noaudit`].
    #[inline]
    pub fn verdict_as(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        thread: u64,
    ) -> Result<Verdict, ServerError> {
        let (d, state) = self.lookup_as(ssid, tsid, class, thread)?;
        Ok(self.verdict(ssid, tsid, class, requested, d, state))
    }

    /// The verdict of decision `d` (looked up under `state`) on `requested`.
    #[inline(always)]
    fn verdict(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        d: AvDecision,
        state: State,
    ) -> Verdict {
        let denied = requested & !d.allowed;
        if denied.is_empty() {
            return Verdict {
                decision: d,
                denied,
                enforced: false,
                audited: requested & d.auditallow,
            };
        }
        self.denial(ssid, tsid, class, d, state, denied)
    }

    /// The cached decision for a triple if the cache holds one of policy `at` (the one the
    /// caller resolved its SIDs in) and it allows every requested permission, counted as a hit
    /// for the thread of identity `thread` (see [`Avc::verdict_as`]); None otherwise, counting
    /// nothing, so that the caller checks the usual way and that check is counted. `at` is
    /// compared with the cache's seqno before the table is read: a hit's entry is of the
    /// cache's seqno, so the decision needs no test of its own.
    #[inline(always)]
    pub fn allowed_hit_as(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        at: Seqno,
        thread: u64,
    ) -> Option<AvDecision> {
        let state = self.state();
        if state.seqno() != at.0 {
            return None;
        }
        let d =
            self.table(at.0)
                .get(Key::new(ssid, tsid, class), at.0, Epoch::of_state(state.0))?;
        if !(requested & !d.allowed).is_empty() {
            return None;
        }
        self.stats.bump_as(thread, Counter::Hit, 1);
        Some(d)
    }

    /// The verdict on a request some of whose permissions `d` denies.
    #[cold]
    fn denial(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        d: AvDecision,
        state: State,
        denied: AccessVector,
    ) -> Verdict {
        let enforced = state.enforcing() && !d.flags.permissive();
        if !enforced {
            self.table(d.seqno.0).grant(
                Key::new(ssid, tsid, class),
                denied,
                d.seqno.0,
                Self::grant_tag(&d, state),
            );
        }
        Verdict {
            decision: d,
            denied,
            enforced,
            audited: denied & d.auditdeny,
        }
    }

    /// Empties the cache and zeroes its statistics (libselinux's avc_reset), in place: the
    /// policy, the mode, the callbacks and the following of the server stay. A check racing
    /// the flush gets the answer from before it or a fresh one, never a mix of entries.
    pub fn flush(&self) {
        for t in &self.tables {
            t.clear();
        }
        self.xperms.clear();
        self.stats.reset();
        self.restamp();
    }

    /// The kernel's avc_has_extended_perms for an ioctl command (driver in the high byte):
    /// `requested` is the class's ioctl permission. Once any extended-permission rule covers
    /// the triple, only the commands allowx rules list are allowed.
    pub fn has_ioctl(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        cmd: u16,
        aux: Option<&str>,
    ) -> Result<(), AvcError> {
        let v = match self.xperm_verdict(XpKind::Ioctl, ssid, tsid, class, requested, cmd, None)? {
            Ok(v) => v,
            // Unreachable: without an expected seqno every answer is taken.
            Err(at) => {
                return Err(AvcError::Server(ServerError::Other(format!(
                    "no ioctl decision for policy seqno {at}"
                ))))
            }
        };
        self.audit_ioctl(ssid, tsid, class, &v, cmd, aux);
        if v.allowed() {
            Ok(())
        } else {
            Err(AvcError::Denied { denied: v.denied })
        }
    }

    /// [`Avc::has_ioctl`] for an object manager's translated class, as [`Avc::check_at`]: made
    /// only if the cache answers from policy `at`, not audited (see [`Avc::audit_ioctl`]).
    pub fn check_ioctl_at(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        cmd: u16,
        at: Seqno,
    ) -> Result<Result<Verdict, Seqno>, ServerError> {
        self.xperm_verdict(XpKind::Ioctl, ssid, tsid, class, requested, cmd, Some(at))
    }

    /// The kernel's avc_has_extended_perms for a netlink message of type `msgtype` (AVC_EXT_NLMSG,
    /// the type's high byte as the driver), as [`Avc::check_ioctl_at`]: `requested` is the
    /// class's `nlmsg` permission; once any extended-permission rule covers the triple, only the
    /// message types nlmsg allowx rules list are allowed. Made only if the cache answers from
    /// policy `at`; not audited (the caller audits with [`Avc::audit`]).
    pub fn check_nlmsg_at(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        msgtype: u16,
        at: Seqno,
    ) -> Result<Result<Verdict, Seqno>, ServerError> {
        self.xperm_verdict(
            XpKind::Nlmsg,
            ssid,
            tsid,
            class,
            requested,
            msgtype,
            Some(at),
        )
    }

    /// The audit record of an ioctl check, if its verdict asks for one (with `ioctlcmd=`).
    pub fn audit_ioctl(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        v: &Verdict,
        cmd: u16,
        aux: Option<&str>,
    ) {
        if v.audited.is_empty() {
            return;
        }
        let extra = format!("ioctlcmd={cmd:#x}");
        let aux = match aux {
            Some(a) => format!("{a} {extra}"),
            None => extra,
        };
        self.audit(ssid, tsid, class, v, Some(&aux));
    }

    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn xperm_verdict(
        &self,
        kind: XpKind,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        requested: AccessVector,
        cmd: u16,
        at: Option<Seqno>,
    ) -> Result<Result<Verdict, Seqno>, ServerError> {
        let (driver, func) = ((cmd >> 8) as u8, cmd as u8);
        let key = (ssid, tsid, class);
        let (d, state, covered, xpd) = self.xperm_decisions(kind, key, driver)?;
        if at.is_some_and(|at| at != d.seqno) {
            return Ok(Err(d.seqno));
        }
        let mut allowed = d.allowed & requested;
        if covered && !xpd.is_some_and(|x| x.allows(func)) {
            allowed = AccessVector::NONE;
        }
        let denied = requested & !allowed;
        let enforced = !denied.is_empty() && state.enforcing() && !d.flags.permissive();
        if !denied.is_empty() && !enforced {
            // Granted from now on, so the denial is reported once (the kernel's
            // AVC_CALLBACK_GRANT with AVC_EXTENDED_PERMS).
            let tag = Self::grant_tag(&d, state);
            self.table(d.seqno.0)
                .grant(Key::new(ssid, tsid, class), denied, d.seqno.0, tag);
            if xpd.is_some() {
                self.xperms.grant(key, kind, driver, func, d.seqno.0, tag);
            }
        }
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
        Ok(Ok(Verdict {
            decision: d,
            denied,
            enforced,
            audited,
        }))
    }

    /// The drivers flagged for a triple (None: no extended-permission rule covers it), cached.
    /// What an ioctl check decides with, all of one policy: the base decision and the state it
    /// was looked up under, whether extended-permission rules cover the triple, and the
    /// driver's decision when they flag the driver. A part answered from a newer policy than
    /// the base decision (the server's change not yet announced) makes the cache move to that
    /// policy and start again.
    #[allow(clippy::type_complexity)]
    fn xperm_decisions(
        &self,
        kind: XpKind,
        key: XpKey,
        driver: u8,
    ) -> Result<(AvDecision, State, bool, Option<XpermsDecision>), ServerError> {
        for _ in 0..MISS_RETRIES {
            let (d, state) = self.lookup(key.0, key.1, key.2)?;
            let seqno = d.seqno.0;
            let (drivers, at) = self.xperm_drivers(kind, key, seqno)?;
            if at != seqno {
                self.advance(at);
                continue;
            }
            let Some(drivers) = drivers else {
                return Ok((d, state, false, None));
            };
            if !flagged(&drivers, driver) {
                return Ok((d, state, true, None));
            }
            let (x, at) = self.xperm_decision(kind, key, driver, seqno, state.tag())?;
            if at != seqno {
                self.advance(at);
                continue;
            }
            return Ok((d, state, true, Some(x)));
        }
        Err(ServerError::Other(format!(
            "the security server's extended-permission answers never matched its decision of policy seqno {}",
            self.state().seqno()
        )))
    }

    /// The drivers flagged for a triple under policy `seqno` (None: no extended-permission rule
    /// covers it), cached, with the seqno of the policy that answered.
    fn xperm_drivers(
        &self,
        kind: XpKind,
        key: XpKey,
        seqno: u32,
    ) -> Result<(Option<[u32; 8]>, u32), ServerError> {
        if let Some(d) = self.xperms.drivers(key, kind, seqno) {
            return Ok((d, seqno));
        }
        let (d, at) = match kind {
            XpKind::Ioctl => self.server.xperm_drivers(key.0, key.1, key.2)?,
            XpKind::Nlmsg => self.server.nlmsg_drivers(key.0, key.1, key.2)?,
        };
        if at.0 == seqno {
            self.xperms.store_drivers(key, kind, d, seqno);
        }
        Ok((d, at.0))
    }

    /// One driver's decision under policy `seqno`, cached, with the seqno of the policy that
    /// answered.
    fn xperm_decision(
        &self,
        kind: XpKind,
        key: XpKey,
        driver: u8,
        seqno: u32,
        tag: u8,
    ) -> Result<(XpermsDecision, u32), ServerError> {
        if let Some(x) = self.xperms.decision(key, kind, driver, seqno, tag) {
            return Ok((x, seqno));
        }
        let (x, at) = match kind {
            XpKind::Ioctl => self.server.compute_xperms(key.0, key.1, key.2, driver)?,
            XpKind::Nlmsg => self
                .server
                .compute_nlmsg_xperms(key.0, key.1, key.2, driver)?,
        };
        if at.0 == seqno {
            self.xperms.store_decision(key, kind, x, seqno);
        }
        Ok((x, at.0))
    }

    /// Sends the audit record of a check's verdict, if it asks for one, to the audit callback
    /// (kernel text, so that audit2allow and audit2why read it), named with the names of the
    /// decision's own policy (see [`Avc::audit_record`]). For callers that check with
    /// [`Avc::check_at`].
    pub fn audit(&self, ssid: Sid, tsid: Sid, class: ClassId, v: &Verdict, aux: Option<&str>) {
        if v.audited.is_empty() {
            return;
        }
        let Some(f) = self.audit.load_full() else {
            return;
        };
        if let Some(r) = self.verdict_record(ssid, tsid, class, v, aux) {
            f(&r);
        }
    }

    /// The audit record of a check's verdict, named in the decision's own policy, or None when
    /// the verdict asks for none.
    pub fn verdict_record(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        v: &Verdict,
        aux: Option<&str>,
    ) -> Option<String> {
        (!v.audited.is_empty()).then(|| {
            self.audit_record(
                ssid,
                tsid,
                class,
                v.decision.seqno,
                v.audited,
                !v.denied.is_empty(),
                v.allowed(),
                aux,
            )
        })
    }

    /// Sends a record an object manager wrote itself to the audit callback.
    pub fn emit_audit_line(&self, line: &str) {
        if let Some(f) = self.audit.load_full() {
            f(line);
        }
    }

    /// The text of one audit record (kernel format): `avc:  denied  { read write } for  ...
    /// scontext=... tcontext=... tclass=file permissive=0`, for a decision of policy `at`.
    ///
    /// `class` and the bits of `audited` are numbers of policy `at`, so they are named with
    /// that policy's names (and the SIDs with its contexts), which the cache keeps for the two
    /// newest policies it has decisions of, as the kernel formats its record under the policy
    /// that decided. A decision older than both (two reloads during one check) has no names
    /// left: its record gives the numbers (`{ 0x1 }`, `tclass=class=2`, `ssid=5`), never
    /// another policy's names.
    #[allow(clippy::too_many_arguments)]
    pub fn audit_record(
        &self,
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        at: Seqno,
        audited: AccessVector,
        denied: bool,
        granted: bool,
        aux: Option<&str>,
    ) -> String {
        let names = self.names_of(at);
        let s = names.as_deref();
        let mut perms = Vec::new();
        let mut unknown = 0u32;
        for bit in audited.bits() {
            match s.and_then(|s| s.perm_name(class, bit)) {
                Some(n) => perms.push(n),
                None => unknown |= 1 << bit,
            }
        }
        let tclass = s
            .and_then(|s| s.class_name(class))
            .unwrap_or_else(|| format!("class={}", class.0));
        AvcRecord {
            denied,
            permissive: granted,
            aux,
            names: s,
            ssid,
            tsid,
            tclass: &tclass,
        }
        .render(perms, unknown)
    }

    /// How many (triple, driver map) and (triple, driver, decision) extended-permission entries
    /// of the current policy the cache holds: each at most [`Avc::xperm_capacity`].
    pub fn xperm_entries(&self) -> (usize, usize) {
        self.xperms.live(self.state().seqno())
    }

    /// How many driver maps and driver decisions the ioctl decision cache can hold.
    pub fn xperm_capacity(&self) -> (usize, usize) {
        self.xperms.capacity()
    }

    /// The kernel's avc/cache_stats.
    pub fn cache_stats(&self) -> CacheStats {
        self.stats.sum()
    }

    /// The kernel's avc/hash_stats (sets of four entries play the part of hash chains).
    pub fn hash_stats(&self) -> HashStats {
        let latest = self.state().seqno();
        let (entries, buckets_used, longest_chain) = self.table(latest).occupancy(latest);
        HashStats {
            entries,
            buckets_used,
            buckets: self.tables[0].buckets(),
            longest_chain,
        }
    }
}
