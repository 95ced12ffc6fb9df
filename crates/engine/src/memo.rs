//! The engine's context→SID memo: each context text asked before keeps its SID in a
//! [`Kept`], so that a SID is used only with the generation that resolved it, and asked in
//! another the text is resolved again there (the rule, [`crate::kept`]). A reload may stop
//! accepting a context and a boolean commit is a new generation too; SIDs themselves keep their
//! meaning across generations of one server (they share its SID table), so keeping the text and
//! re-resolving it per generation is all a reload asks of the memo: nothing is dropped.
//!
//! A hit takes no lock, writes nothing shared and allocates nothing: the text's keyed hash
//! picks a bucket of atomic slots, each holding a hint (a tag of the hash and an entry's
//! index); the entry holds its text inline, in atomic words, and is taken only after that text
//! compares equal to the one asked, so a collision, even one a caller aims for, costs a miss
//! and never a wrong SID. An entry may be rewritten for another text at any time: a version
//! count (odd while being written, two more per write) read before and after the compare says
//! whether the text and the SID read belong together, as a seqlock does. All of it is atomics,
//! so no reader can see torn memory, and no entry is ever freed while in use.
//!
//! Bounded: at most [`MEMO_CAPACITY`] entries, made in chunks as they fill; when all are used,
//! a new text takes the entries over in turn (a clock), so a caller cycling through endless
//! distinct contexts pays a parse per new one and nothing grows. A context longer than
//! [`MEMO_TEXT`] bytes is resolved at every ask, never kept.

use std::sync::atomic::{fence, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};

use once_cell::race::OnceBox;

use seaccess_security::{Generation, SecurityError};
use seaccess_types::{Seqno, Sid};

use crate::kept::Kept;

/// Contexts one memo keeps. Python's own memo kept 65,536 before the engine's replaced it, and
/// Python is the front end that sees most distinct strings (a program checking every file of a
/// tree). The memo costs its slots (8 bytes per context of capacity, made at the first miss)
/// and 128 bytes per context actually kept (chunks made as they fill): 8.5 MiB when full, a few
/// KiB for an engine asked a few contexts.
pub const MEMO_CAPACITY: usize = 1 << 16;

/// Words of text an entry holds.
const TEXT_WORDS: usize = 14;
/// The longest context kept, in bytes: longer ones are resolved at every ask. Rare: the
/// longest context in Debian's default and mls policies' context files is 54 bytes (with its
/// category range).
pub const MEMO_TEXT: usize = TEXT_WORDS * 8;

/// Entries per chunk: chunks are made as the memo fills.
const CHUNK: usize = 256;
/// Slots a text may use: a bucket of consecutive ones (half a cache line), so that texts
/// hashing together do not evict each other at every turn.
const WAYS: usize = 4;

/// A context text and the SID kept for it, all atomics (a zeroed entry is empty). Two cache
/// lines; the first holds the version, the length, the SID and the first 48 bytes of text.
#[repr(C, align(64))]
#[derive(Default)]
struct Entry {
    /// Even when the entry is whole, odd while a writer rewrites it; each write adds two, so a
    /// reader that sees the same even value before and after read one write's text and SID. It
    /// wraps after 2^31 writes of this one entry, which one read (a compare of a few words)
    /// cannot span.
    version: AtomicU32,
    /// The text's length in bytes.
    len: AtomicU32,
    kept: Kept<Sid>,
    /// The text, little-endian, zero past its length.
    text: [AtomicU64; TEXT_WORDS],
}

/// The words of `text` as an entry holds them (the last one zero-padded).
#[inline(always)]
fn words(text: &[u8]) -> impl Iterator<Item = u64> + '_ {
    text.chunks(8).map(tail_word)
}

/// Up to eight bytes as a little-endian word, zero past them. A short tail is read as two
/// overlapping halves (or its first, middle and last bytes), whose overlap holds the same
/// bytes: no byte loop and no call to memcpy on the hit path.
#[inline(always)]
fn tail_word(c: &[u8]) -> u64 {
    if let Ok(w) = <[u8; 8]>::try_from(c) {
        return u64::from_le_bytes(w);
    }
    let n = c.len();
    if let (Some(lo), Some(hi)) = (c.first_chunk::<4>(), c.last_chunk::<4>()) {
        return u64::from(u32::from_le_bytes(*lo))
            | u64::from(u32::from_le_bytes(*hi)) << (8 * (n - 4));
    }
    match (c.first(), c.get(n / 2), c.last()) {
        (Some(&a), Some(&b), Some(&z)) => {
            u64::from(a) | u64::from(b) << (8 * (n / 2)) | u64::from(z) << (8 * (n - 1))
        }
        _ => 0,
    }
}

/// What an entry says of a text.
enum Read {
    /// Another text, or one being rewritten.
    Other,
    /// This text, with the SID kept for the asking generation.
    Hit(Sid),
    /// This text, with no SID for the asking generation: the version to rewrite it from.
    Stale(u32),
}

impl Entry {
    /// Whether the entry holds `text` and, if so, its SID for generation `seqno`.
    #[inline(always)]
    fn read(&self, text: &[u8], seqno: Seqno) -> Read {
        let v = self.version.load(Acquire);
        if v & 1 != 0 || self.len.load(Relaxed) as usize != text.len() {
            return Read::Other;
        }
        if !self
            .text
            .iter()
            .zip(words(text))
            .all(|(w, t)| w.load(Relaxed) == t)
        {
            return Read::Other;
        }
        #[cfg(test)]
        crate::kept::tests::parked("read");
        let sid = self.kept.get(seqno);
        // The reads above happen before the version is read again: a writer that changed any
        // of them changed the version first.
        fence(Acquire);
        if self.version.load(Relaxed) != v {
            return Read::Other;
        }
        sid.map_or(Read::Stale(v), Read::Hit)
    }

    /// Rewrites the entry, if its version is still `from` (no other writer came first): the
    /// text (None: the same text, only the SID changes) and `sid` kept for `seqno`.
    fn write(&self, from: u32, text: Option<&[u8]>, seqno: Seqno, sid: Sid) -> bool {
        if from & 1 != 0
            || self
                .version
                .compare_exchange(from, from.wrapping_add(1), Acquire, Relaxed)
                .is_err()
        {
            return false;
        }
        // The odd version is seen before any word written below (Boehm's seqlock writer).
        fence(Release);
        if let Some(text) = text {
            // Past u32 (never: the caller keeps texts of MEMO_TEXT bytes at most) no text matches.
            self.len
                .store(u32::try_from(text.len()).unwrap_or(u32::MAX), Relaxed);
            let mut ws = words(text);
            for w in &self.text {
                w.store(ws.next().unwrap_or(0), Relaxed);
            }
        }
        #[cfg(test)]
        crate::kept::tests::parked("write");
        self.kept.keep(seqno, sid);
        self.version.store(from.wrapping_add(2), Release);
        true
    }
}

/// [`CHUNK`] entries.
type Chunk = Box<[Entry]>;

/// Context text → SID, per generation (see the module's documentation).
pub(crate) struct SidMemo {
    capacity: usize,
    /// The hash key: slots cannot be aimed at across processes.
    key: u64,
    /// log2 of the slot count.
    bits: u32,
    /// Per slot: the hash's tag (high half) above the entry index + 1 (low half); 0 is empty.
    /// Made at the first miss.
    ///
    /// This and the chunks are made lazily by whichever thread needs them first, racing threads
    /// each making one and the first stored kept (`race::OnceBox`), never one thread waiting
    /// for another's: a process forked while another thread makes one must not find it half
    /// made and wait forever (a `OnceLock` did: a Python child forked during another thread's
    /// first check of a new policy hung, 13 in 300 forks).
    slots: OnceBox<Box<[AtomicU64]>>,
    chunks: Box<[OnceBox<Chunk>]>,
    /// Entries handed out; past the capacity, the clock hand of the entry to take over next.
    next: AtomicUsize,
    /// Which slot of a full bucket a miss takes next.
    victim: AtomicU32,
}

impl SidMemo {
    pub(crate) fn new() -> SidMemo {
        SidMemo::with_capacity(MEMO_CAPACITY)
    }

    /// A memo of at most `capacity` contexts (at least one).
    pub(crate) fn with_capacity(capacity: usize) -> SidMemo {
        use std::hash::{BuildHasher, Hasher};
        let capacity = capacity.max(1);
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u8(0);
        SidMemo {
            capacity,
            key: h.finish(),
            bits: capacity.max(WAYS).next_power_of_two().trailing_zeros(),
            slots: OnceBox::new(),
            chunks: (0..capacity.div_ceil(CHUNK))
                .map(|_| OnceBox::new())
                .collect(),
            next: AtomicUsize::new(0),
            victim: AtomicU32::new(0),
        }
    }

    /// The SID of `context` in generation `g` (security_context_to_sid): kept from an earlier
    /// ask of `g`, else resolved in `g` and kept for it.
    #[inline]
    pub(crate) fn sid(&self, g: &Generation, context: &str) -> Result<Sid, SecurityError> {
        let h = self.hash(context);
        let seqno = g.seqno();
        for e in self.hinted(h) {
            match e.read(context.as_bytes(), seqno) {
                Read::Other => continue,
                Read::Hit(sid) => return Ok(sid),
                Read::Stale(v) => return self.refresh(e, v, g, context),
            }
        }
        self.miss(h, g, context)
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

    /// Entry `i`, once its chunk is made.
    #[inline]
    fn entry(&self, i: usize) -> Option<&Entry> {
        self.chunks.get(i / CHUNK)?.get()?.get(i % CHUNK)
    }

    /// The entries the slots of hash `h`'s bucket point at with `h`'s tag.
    #[inline]
    fn hinted(&self, h: u64) -> impl Iterator<Item = &Entry> + '_ {
        let tag = h << 32;
        self.slots
            .get()
            .and_then(|s| self.bucket(s, h))
            .unwrap_or_default()
            .iter()
            .filter_map(move |slot| {
                let v = slot.load(Acquire);
                if v & 0xffff_ffff_0000_0000 != tag {
                    return None;
                }
                self.entry((v as u32 as usize).checked_sub(1)?)
            })
    }

    /// Resolves a text the entry holds for another generation, and keeps the new SID in it
    /// unless a writer came first (the entry then is another's, or was refreshed already).
    #[cold]
    #[inline(never)]
    fn refresh(
        &self,
        e: &Entry,
        v: u32,
        g: &Generation,
        context: &str,
    ) -> Result<Sid, SecurityError> {
        let sid = g.context_to_sid(context)?;
        #[cfg(test)]
        crate::kept::tests::parked("keep");
        e.write(v, None, g.seqno(), sid);
        Ok(sid)
    }

    /// Resolves a text no entry holds and keeps it (a text the generation refuses is not kept:
    /// the memo holds only contexts some policy accepted).
    #[cold]
    #[inline(never)]
    fn miss(&self, h: u64, g: &Generation, context: &str) -> Result<Sid, SecurityError> {
        let sid = g.context_to_sid(context)?;
        #[cfg(test)]
        crate::kept::tests::parked("keep");
        if context.len() <= MEMO_TEXT {
            self.insert(h, context.as_bytes(), g.seqno(), sid);
        }
        Ok(sid)
    }

    /// Writes `text` and its SID into a new entry (an old one once all are used) and a hint
    /// to it in the text's bucket. A race loses a hint or an entry, never an answer: every hit
    /// compares the text.
    fn insert(&self, h: u64, text: &[u8], seqno: Seqno, sid: Sid) {
        let n = self.next.fetch_add(1, Relaxed);
        let i = if n < self.capacity {
            n
        } else {
            // Counts on past the capacity: the clock hand. It wraps after 2^64 misses, still a
            // valid index.
            n % self.capacity
        };
        let Some(chunk) = self.chunks.get(i / CHUNK) else {
            return;
        };
        let chunk = chunk.get_or_init(|| Box::new((0..CHUNK).map(|_| Entry::default()).collect()));
        let Some(e) = chunk.get(i % CHUNK) else {
            return;
        };
        let from = e.version.load(Relaxed);
        if !e.write(from, Some(text), seqno, sid) {
            return;
        }
        let slots = self.slots.get_or_init(|| {
            Box::new(
                (0..1usize << self.bits)
                    .map(|_| AtomicU64::new(0))
                    .collect(),
            )
        });
        let (Some(bucket), Ok(n)) = (self.bucket(slots, h), u32::try_from(i + 1)) else {
            return;
        };
        let ours = |w: u64| w as u32 == n;
        // The slot already pointing at this entry, else an empty one, else the next victim.
        let slot = bucket
            .iter()
            .find(|s| ours(s.load(Relaxed)))
            .or_else(|| bucket.iter().find(|s| s.load(Relaxed) == 0))
            .or_else(|| bucket.get(self.victim.fetch_add(1, Relaxed) as usize % WAYS));
        if let Some(slot) = slot {
            slot.store(h << 32 | u64::from(n), Release);
        }
    }

    /// How many entries keep a SID for generation `seqno` (tests look).
    pub(crate) fn kept(&self, seqno: Seqno) -> usize {
        (0..self.next.load(Acquire).min(self.capacity))
            .filter_map(|i| self.entry(i))
            .filter(|e| e.kept.get(seqno).is_some())
            .count()
    }
}

#[cfg(test)]
mod tests;
