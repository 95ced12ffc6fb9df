//! The engine's context→SID memo: each context text asked before keeps its SID in a
//! [`Kept`], so that a SID is used only with the generation that resolved it, and asked in
//! another the text is resolved again there (the rule, [`crate::kept`]). A reload may stop
//! accepting a context and a boolean commit is a new generation too; SIDs themselves keep their
//! meaning across generations of one server (they share its SID table), so keeping the text and
//! re-resolving it per generation is all a reload asks of the memo: nothing is dropped.
//!
//! A hit takes no lock and allocates nothing: the text's keyed hash picks a bucket of atomic
//! slots, each holding a hint (a tag of the hash and the index of an entry); a hint is taken
//! only after the entry's text compares equal to the one asked, so a collision, even one a
//! caller aims for, costs a miss and never a wrong SID. Entries are written once (their text
//! never changes) in chunks made as they fill, and a slot may be overwritten at any time.
//!
//! Bounded: a table holds at most [`MEMO_CAPACITY`] texts. When it is full the next text not in
//! it starts a fresh table (as Python's memo was emptied when full): threads still reading the
//! old one finish on it, and it is freed after them. A caller cycling through endless distinct
//! contexts pays a parse per new one, and nothing grows without bound.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;
use seaccess_security::{Generation, SecurityError};
use seaccess_types::{Seqno, Sid};

use crate::kept::Kept;

/// Context texts one memo table keeps. Python's own memo kept 65,536 before the engine's
/// replaced it, and Python is the front end that sees most distinct strings (a program checking
/// every file of a tree); a table costs its slots (8 bytes per context of capacity, made at the
/// first miss) and about 100 bytes per context actually kept, so an engine asked for a few
/// contexts pays for a few.
pub const MEMO_CAPACITY: usize = 1 << 16;

/// Entries per chunk: chunks are made as the table fills.
const CHUNK: usize = 256;
/// Slots a text may use: a bucket of consecutive ones (half a cache line), so that texts
/// hashing together do not evict each other at every turn.
const WAYS: usize = 4;

/// Context text → SID, per generation (see the module's documentation).
pub(crate) struct SidMemo {
    capacity: usize,
    table: ArcSwap<Table>,
}

/// A context text asked before, with the SID the last generation to resolve it gave.
struct Entry {
    text: Box<str>,
    kept: Kept<Sid>,
}

/// [`CHUNK`] entries, each written once.
type Chunk = Box<[OnceLock<Entry>]>;

/// One table of entries; replaced whole when full.
struct Table {
    /// The per-table hash key: slots cannot be aimed at across processes or tables.
    key: u64,
    /// log2 of the slot count.
    bits: u32,
    /// Per slot: the hash's tag (high half) above the entry index + 1 (low half); 0 is empty.
    /// Made at the first miss.
    slots: OnceLock<Box<[AtomicU64]>>,
    chunks: Box<[OnceLock<Chunk>]>,
    /// Entries handed out (past the capacity: the table is full).
    next: AtomicUsize,
    /// Which slot of a full bucket a miss takes next.
    victim: AtomicU32,
}

impl Table {
    fn new(capacity: usize) -> Table {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u8(0);
        Table {
            key: h.finish(),
            bits: capacity.max(WAYS).next_power_of_two().trailing_zeros(),
            slots: OnceLock::new(),
            chunks: (0..capacity.div_ceil(CHUNK))
                .map(|_| OnceLock::new())
                .collect(),
            next: AtomicUsize::new(0),
            victim: AtomicU32::new(0),
        }
    }

    /// The keyed hash of `text`.
    #[inline]
    fn hash(&self, text: &str) -> u64 {
        use std::hash::Hasher;
        let mut h = rustc_hash::FxHasher::with_seed(self.key as usize);
        h.write(text.as_bytes());
        h.finish().wrapping_mul(0xf135_7aea_2e62_a9c5)
    }

    /// The bucket of hash `h` (from its top bits, which every byte reaches) in `slots`.
    #[inline]
    fn bucket<'s>(&self, slots: &'s [AtomicU64], h: u64) -> Option<&'s [AtomicU64]> {
        let first = ((h >> (64 - self.bits)) as usize) & !(WAYS - 1);
        slots.get(first..first + WAYS)
    }

    /// Entry `i`, once written.
    #[inline]
    fn entry(&self, i: usize) -> Option<&Entry> {
        self.chunks.get(i / CHUNK)?.get()?.get(i % CHUNK)?.get()
    }

    /// The entry of `text`, whose hash is `h`, if a slot of its bucket names it.
    #[inline]
    fn find(&self, h: u64, text: &str) -> Option<&Entry> {
        let tag = h << 32;
        for slot in self.bucket(self.slots.get()?, h)? {
            let v = slot.load(Acquire);
            if v & 0xffff_ffff_0000_0000 != tag {
                continue;
            }
            let Some(e) = (v as u32 as usize)
                .checked_sub(1)
                .and_then(|i| self.entry(i))
            else {
                continue;
            };
            if *e.text == *text {
                return Some(e);
            }
        }
        None
    }

    /// Writes an entry for `text` (SID `sid` found in generation `seqno`) and a hint to it in
    /// its bucket; false when the table is full (nothing written).
    fn insert(&self, h: u64, text: &str, seqno: Seqno, sid: Sid, capacity: usize) -> bool {
        let i = self.next.fetch_add(1, Relaxed);
        let Some(chunk) = (i < capacity).then(|| self.chunks.get(i / CHUNK)).flatten() else {
            return false;
        };
        let chunk = chunk.get_or_init(|| (0..CHUNK).map(|_| OnceLock::new()).collect());
        let entry = Entry {
            text: text.into(),
            kept: Kept::with(seqno, sid),
        };
        // Index i is this thread's alone (fetch_add): the cell is empty.
        let Some(Ok(())) = chunk.get(i % CHUNK).map(|c| c.set(entry)) else {
            return true;
        };
        let slots = self.slots.get_or_init(|| {
            (0..1usize << self.bits)
                .map(|_| AtomicU64::new(0))
                .collect()
        });
        let (Some(bucket), Ok(n)) = (self.bucket(slots, h), u32::try_from(i + 1)) else {
            return true;
        };
        // An empty slot, else the next victim: a race loses a hint, never an answer.
        let slot = bucket
            .iter()
            .find(|s| s.load(Relaxed) == 0)
            .or_else(|| bucket.get(self.victim.fetch_add(1, Relaxed) as usize % WAYS));
        if let Some(slot) = slot {
            slot.store(h << 32 | u64::from(n), Release);
        }
        true
    }

    /// Entries kept for generation `seqno`.
    fn kept(&self, seqno: Seqno) -> usize {
        (0..self.next.load(Acquire))
            .filter_map(|i| self.entry(i))
            .filter(|e| e.kept.get(seqno).is_some())
            .count()
    }
}

impl SidMemo {
    pub(crate) fn new() -> SidMemo {
        SidMemo::with_capacity(MEMO_CAPACITY)
    }

    /// A memo whose tables keep at most `capacity` texts (at least one).
    pub(crate) fn with_capacity(capacity: usize) -> SidMemo {
        let capacity = capacity.max(1);
        SidMemo {
            capacity,
            table: ArcSwap::from_pointee(Table::new(capacity)),
        }
    }

    /// The SID of `context` in generation `g` (security_context_to_sid): kept from an earlier
    /// ask of `g`, else resolved in `g` and kept for it.
    #[inline]
    pub(crate) fn sid(&self, g: &Generation, context: &str) -> Result<Sid, SecurityError> {
        let t = self.table.load();
        let h = t.hash(context);
        if let Some(e) = t.find(h, context) {
            return e.kept.sid_in(g, context);
        }
        self.miss(&t, h, g, context)
    }

    /// Resolves a text the table does not have and keeps it (a text the generation refuses is
    /// not kept: a memo of user-supplied strings holds only contexts some policy accepted).
    #[cold]
    #[inline(never)]
    fn miss(
        &self,
        t: &Arc<Table>,
        h: u64,
        g: &Generation,
        context: &str,
    ) -> Result<Sid, SecurityError> {
        let sid = g.context_to_sid(context)?;
        #[cfg(test)]
        crate::kept::tests::parked();
        if !t.insert(h, context, g.seqno(), sid, self.capacity) {
            // Full: the next miss fills a fresh table (unless another thread renewed it first).
            let _ = self
                .table
                .compare_and_swap(t, Arc::new(Table::new(self.capacity)));
        }
        Ok(sid)
    }

    /// How many texts the current table keeps a SID of for generation `seqno` (tests look).
    pub(crate) fn kept(&self, seqno: Seqno) -> usize {
        self.table.load().kept(seqno)
    }
}

#[cfg(test)]
mod tests;
