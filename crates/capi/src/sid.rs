//! libselinux's userspace SIDs (`security_id_t`): one per context string, interned until
//! `avc_destroy` (as libselinux's sidtab), whose public prefix `{ char *ctx; unsigned refcnt; }`
//! programs may read. Behind the prefix each carries the seaccess SID its context resolves to.
//!
//! A table of SIDs is a few chunks of address space, each twice the size of the one before,
//! mapped when the one before is full (the first holds 512 SIDs in 64 KiB): a process pays for
//! the SIDs it makes and no more, and the table grows until memory runs out (then ENOMEM). A SID
//! is never moved, so a pointer handed out stays valid, and a pointer passed in is proven ours
//! (else EINVAL) by arithmetic alone: it lies in a chunk, at a multiple of a SID's size, below
//! the filled part. Nothing is read through a pointer before that.
//!
//! `avc_destroy` retires the table (libselinux frees its SIDs there): its pages and those of
//! its long texts are given back to the system, the next SID starts a new table, and a retired
//! SID's pointer is EINVAL from then on. A retired chunk's address space stays mapped, never
//! reused: a thread still inside a check with one of its SIDs reads zeroes (an empty SID, which
//! resolves to nothing), never another context, and a stale pointer can never name a new SID.
//!
//! This table is the libselinux ABI and stays here; what a SID resolves to is not its own rule:
//! each SID keeps its seaccess SID in the engine's [`Kept`] (`seaccess_engine`, the one rule
//! for numbers kept between checks: used only with the generation that found them), and this
//! table only indexes it by the C program's pointers.

use std::ffi::c_char;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::RwLock;

use rustc_hash::FxHashMap;
use seaccess_engine::Kept;
use seaccess_security::Generation;
use seaccess_types::Sid;

use crate::ffi::{Res, EINVAL, ENOMEM};

/// `struct security_id` with seaccess's fields after libselinux's public ones. Every field is
/// an atomic, so zeroed pages are empty SIDs. Aligned to a cache line so that threads counting
/// references on different SIDs do not share a line. A context short enough is kept in the SID
/// itself, so that comparing an argument with it reads the line the SID's lookup already brought
/// in rather than a separate allocation.
#[repr(C, align(64))]
pub struct SecurityId {
    /// `char *ctx`: the context, NUL-terminated; NULL until the SID is filled.
    ctx: AtomicPtr<c_char>,
    /// `unsigned int refcnt`: counted by sidget/sidput, which free nothing (as libselinux 3.4).
    refcnt: AtomicU32,
    /// The context's length in bytes, without the NUL (`intern` refuses longer contexts).
    len: AtomicU32,
    /// The seaccess SID of the context and the seqno of the policy generation that defined it,
    /// kept by the engine's rule ([`Kept`]: one word, `seqno << 32 | sid`, 0 until resolved, the
    /// word this field always was). A context is valid only in the generation it was checked
    /// under (a reload may drop it, and a context spelled as an initial SID's maps to that
    /// policy's initial SID), so a check takes the SID only with a decision of that same seqno.
    resolved: Kept<Sid>,
    /// The context and its NUL when they fit (`ctx` then points here), written before `ctx`
    /// is published and never again.
    inline: [AtomicU64; INLINE_WORDS],
}

/// Words of inline text: the SID fills two cache lines.
const INLINE_WORDS: usize = 13;

impl SecurityId {
    /// The context's bytes, without the NUL; empty while the SID is empty (or retired).
    #[inline(always)]
    pub(crate) fn bytes(&self) -> &[u8] {
        let p = self.ctx.load(Acquire);
        if p.is_null() {
            return &[];
        }
        let len = self.len.load(Relaxed) as usize;
        // SAFETY: a non-NULL `ctx` was stored (after `len` and the text, with Release) by
        // `intern`: this SID's inline words or a piece of a text chunk, either `len` bytes and a
        // NUL that stay mapped for the process (chunks are never unmapped; retiring one zeroes
        // its pages, and zero bytes are still bytes).
        unsafe { std::slice::from_raw_parts(p as *const u8, len) }
    }

    /// The context; empty while the SID is empty. Checked as UTF-8 here, not trusted: a thread
    /// reading a SID while `avc_destroy` retires it may see part of its text zeroed.
    pub fn text(&self) -> &str {
        std::str::from_utf8(self.bytes()).unwrap_or("")
    }

    /// The context as a NUL-terminated string (NULL while the SID is empty), to compare a C
    /// argument with in place.
    #[inline(always)]
    pub(crate) fn c_text(&self) -> *const c_char {
        self.ctx.load(Acquire)
    }

    /// The seaccess SID of this context as last resolved, and the generation that resolved it:
    /// usable only with a decision of that generation ([`Kept::both`] pairs two SIDs so).
    #[inline(always)]
    pub(crate) fn kept(&self) -> &Kept<Sid> {
        &self.resolved
    }

    /// The seaccess SID of this context in generation `g`, by the engine's rule
    /// ([`Kept::get_or_find`]: the text is read and parsed only when `g` has not resolved it);
    /// EINVAL when `g`'s policy does not define the context (what the kernel answers the AVC's
    /// security_compute_av with), whether or not an earlier policy did.
    #[inline]
    pub fn resolve(&self, g: &Generation) -> Res<Sid> {
        self.resolved.get_or_find(g.seqno(), || {
            let text = self.text();
            if text.is_empty() {
                return Err(EINVAL);
            }
            g.context_to_sid(text).map_err(|_| EINVAL)
        })
    }

    pub fn get(&self) -> u32 {
        self.refcnt.fetch_add(1, AcqRel).wrapping_add(1)
    }

    pub fn put(&self) -> u32 {
        let prev = self
            .refcnt
            .fetch_update(AcqRel, Acquire, |n| Some(n.saturating_sub(1)))
            .unwrap_or(0);
        prev.saturating_sub(1)
    }
}

const SIZE: usize = std::mem::size_of::<SecurityId>();
const _: () = assert!(SIZE == 128, "two cache lines, as INLINE_WORDS assumes");
/// SIDs in the first chunk; chunk `k` holds `FIRST << k`.
const FIRST: usize = 512;
/// Chunks a table may have: far more address space than a process has, so that the table ends
/// where mapping fails (ENOMEM), not here.
const CHUNKS_MAX: usize = 40;

/// The current table's chunks (their addresses; 0 past the last one) and how many SIDs it has
/// handed out (slots below this are filled). A chunk's address is stored before FILLED passes
/// its first slot.
static CHUNKS: [AtomicUsize; CHUNKS_MAX] = [const { AtomicUsize::new(0) }; CHUNKS_MAX];
static FILLED: AtomicUsize = AtomicUsize::new(0);
/// The bytes of the first chunk's filled slots (`min(FILLED, FIRST) * SIZE`), stored after
/// FILLED: the one bound a check's two pointers are tested against ([`from_ptrs`]).
static FIRST_BYTES: AtomicUsize = AtomicUsize::new(0);
static INDEX: RwLock<Option<Index>> = RwLock::new(None);

/// Which SID each context has, and where the texts too long for their SID are kept.
#[derive(Default)]
struct Index {
    map: FxHashMap<Box<str>, usize>,
    texts: Texts,
}

/// The chunk holding slot `i`, and the slot of its first SID.
#[inline(always)]
fn chunk_of(i: usize) -> (usize, usize) {
    let k = (usize::BITS - 1 - (i / FIRST + 1).leading_zeros()) as usize;
    (k, FIRST * ((1 << k) - 1))
}

/// Bytes of chunk `k`.
fn chunk_bytes(k: usize) -> Option<usize> {
    (FIRST << k).checked_mul(SIZE)
}

/// A fresh private anonymous mapping of `len` bytes, backed only where written.
fn map(len: usize) -> Res<usize> {
    // SAFETY: a new mapping; no existing memory is touched.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED || p.is_null() {
        return Err(ENOMEM);
    }
    Ok(p as usize)
}

/// Gives the pages of a mapping back to the system, keeping its addresses: what is read there
/// afterwards is zeroes.
fn zero(base: usize, len: usize) {
    // SAFETY: [base, base + len) is a whole mapping made by `map` and never unmapped;
    // MADV_DONTNEED on private anonymous memory only replaces its pages with zero pages.
    unsafe { libc::madvise(base as *mut libc::c_void, len, libc::MADV_DONTNEED) };
}

/// The texts too long to be kept in their SID: NUL-terminated, side by side in chunks of their
/// own, so that they live exactly as long as the SIDs pointing at them (retired together).
#[derive(Default)]
struct Texts {
    chunks: Vec<(usize, usize)>,
    used: usize,
}

impl Texts {
    const CHUNK: usize = 64 << 10;

    /// A copy of `text` with a NUL after it, at an address that stays mapped for the process.
    fn store(&mut self, text: &[u8]) -> Res<*mut c_char> {
        let need = text.len() + 1;
        let room = self.chunks.last().map_or(0, |&(_, len)| len - self.used);
        if room < need {
            let len = need.div_ceil(Self::CHUNK) * Self::CHUNK;
            self.chunks.try_reserve(1).map_err(|_| ENOMEM)?;
            self.chunks.push((map(len)?, len));
            self.used = 0;
        }
        let &(base, _) = self.chunks.last().ok_or(ENOMEM)?;
        let p = (base + self.used) as *mut u8;
        // SAFETY: [p, p + need) lies in the last chunk (room checked above), is written by no
        // one else (INDEX's write lock is held) and has never been handed out.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr(), p, text.len());
            *p.add(text.len()) = 0;
        }
        self.used += need;
        Ok(p as *mut c_char)
    }
}

/// The index's lock, held across a fork (see [`crate::fork`]): no SID is being made at the fork,
/// so the child finds every SID whole.
pub(crate) struct Held(#[allow(dead_code)] std::sync::RwLockWriteGuard<'static, Option<Index>>);

pub(crate) fn hold() -> Held {
    Held(seaccess_types::lock::write(&INDEX))
}

/// The SID at `addr`, an address in a chunk at a multiple of SIZE from its start.
#[inline(always)]
fn at(addr: usize) -> &'static SecurityId {
    // SAFETY: every caller has checked that `addr` is a SID's place in a chunk (mapped, never
    // unmapped, page aligned, so the place is SIZE-aligned). Its bytes are zeroes or a SID being
    // or having been filled, all valid: every field is an atomic (`Kept` is a transparent
    // atomic word, zero when nothing is kept), and zero is an empty SID.
    unsafe { &*(addr as *const SecurityId) }
}

/// The SID handed out `i`-th in the current table, if there is one.
#[inline]
pub(crate) fn by_index(i: usize) -> Option<&'static SecurityId> {
    if i >= FILLED.load(Acquire) {
        return None;
    }
    if i < FIRST {
        // The first chunk, where a program's SIDs nearly always are: no chunk to find.
        let base = CHUNKS[0].load(Acquire);
        return (base != 0).then(|| at(base + i * SIZE));
    }
    by_index_far(i)
}

/// [`by_index`] past the first chunk.
#[cold]
#[inline(never)]
fn by_index_far(i: usize) -> Option<&'static SecurityId> {
    let (k, first) = chunk_of(i);
    let base = CHUNKS.get(k)?.load(Acquire);
    if base == 0 {
        return None;
    }
    Some(at(base + (i - first) * SIZE))
}

/// The SID of context `ctx`, made on first use. Like libselinux's, it does not check the
/// context against the policy: a check with it does.
pub(crate) fn intern(ctx: &str) -> Res<&'static SecurityId> {
    intern_indexed(ctx).map(|(_, s)| s)
}

/// [`intern`], with the SID's index for [`by_index`].
pub(crate) fn intern_indexed(ctx: &str) -> Res<(usize, &'static SecurityId)> {
    {
        let idx = seaccess_types::lock::read(&INDEX);
        if let Some(&i) = idx.as_ref().and_then(|x| x.map.get(ctx)) {
            return by_index(i).map(|s| (i, s)).ok_or(EINVAL);
        }
    }
    crate::fork::register();
    let mut idx = seaccess_types::lock::write(&INDEX);
    let index = idx.get_or_insert_with(Index::default);
    if let Some(&i) = index.map.get(ctx) {
        return by_index(i).map(|s| (i, s)).ok_or(EINVAL);
    }
    if ctx.as_bytes().contains(&0) {
        return Err(EINVAL);
    }
    let len = u32::try_from(ctx.len()).map_err(|_| EINVAL)?;
    index.map.try_reserve(1).map_err(|_| ENOMEM)?;
    let i = FILLED.load(Acquire);
    let (k, first) = chunk_of(i);
    let chunk = CHUNKS.get(k).ok_or(ENOMEM)?;
    let mut base = chunk.load(Acquire);
    if base == 0 {
        base = map(chunk_bytes(k).ok_or(ENOMEM)?)?;
        chunk.store(base, Release);
    }
    let s = at(base + (i - first) * SIZE);
    s.len.store(len, Relaxed);
    if ctx.len() < INLINE_WORDS * 8 {
        // The slot is fresh (a new chunk's zero pages, never reused): the words past the text,
        // its NUL among them, are zero already, but are written anyway so that this does not
        // rest on it.
        for (n, w) in s.inline.iter().enumerate() {
            let mut b = [0u8; 8];
            for (k, x) in b.iter_mut().enumerate() {
                *x = ctx.as_bytes().get(n * 8 + k).copied().unwrap_or(0);
            }
            w.store(u64::from_ne_bytes(b), Relaxed);
        }
        s.ctx.store(s.inline.as_ptr() as *mut c_char, Release);
    } else {
        s.ctx.store(index.texts.store(ctx.as_bytes())?, Release);
    }
    index.map.insert(ctx.into(), i);
    FILLED.store(i + 1, Release);
    FIRST_BYTES.store((i + 1).min(FIRST) * SIZE, Release);
    Ok((i, s))
}

/// Retires the current table (`avc_destroy`): every SID made so far is EINVAL from now on, its
/// memory given back; the next SID starts a new table.
pub(crate) fn retire() {
    let mut idx = seaccess_types::lock::write(&INDEX);
    let Some(old) = idx.take() else { return };
    FIRST_BYTES.store(0, Release);
    FILLED.store(0, Release);
    for (k, chunk) in CHUNKS.iter().enumerate() {
        let base = chunk.swap(0, AcqRel);
        if let (true, Some(len)) = (base != 0, chunk_bytes(k)) {
            zero(base, len);
        }
    }
    for &(base, len) in &old.texts.chunks {
        zero(base, len);
    }
}

/// The SID at address `p` if it is one this table handed out, `filled` its count.
#[inline(always)]
fn locate(p: usize, filled: usize) -> Option<&'static SecurityId> {
    let base = CHUNKS[0].load(Acquire);
    let off = p.wrapping_sub(base);
    // Wraps for a pointer below the chunk (NULL among them) to a huge offset, which fails the
    // bound as one beyond it does.
    if off < FIRST * SIZE {
        return (base != 0 && off % SIZE == 0 && off / SIZE < filled).then(|| at(p));
    }
    locate_far(p, filled)
}

/// [`locate`] past the first chunk.
#[cold]
#[inline(never)]
fn locate_far(p: usize, filled: usize) -> Option<&'static SecurityId> {
    let mut first = FIRST;
    for (k, chunk) in CHUNKS.iter().enumerate().skip(1) {
        let base = chunk.load(Acquire);
        if base == 0 {
            return None;
        }
        let off = p.wrapping_sub(base);
        if off < chunk_bytes(k)? {
            return (off % SIZE == 0 && first + off / SIZE < filled).then(|| at(p));
        }
        first += FIRST << k;
    }
    None
}

/// The SID behind a pointer a program passes in, if it is one this library handed out (and
/// `avc_destroy` has not retired since); EINVAL for NULL or any other pointer, decided without
/// reading through it.
#[inline(always)]
pub(crate) fn from_ptr(p: *const SecurityId) -> Res<&'static SecurityId> {
    locate(p as usize, FILLED.load(Acquire)).ok_or(EINVAL)
}

/// [`from_ptr`] of two pointers. Both in the first chunk (every SID of a program with fewer
/// than [`FIRST`]) is one test of their offsets against one bound.
#[inline(always)]
pub(crate) fn from_ptrs(
    a: *const SecurityId,
    b: *const SecurityId,
) -> Res<(&'static SecurityId, &'static SecurityId)> {
    match first_pair(a, b) {
        Some(pair) => Ok(pair),
        None => from_ptrs_far(a, b),
    }
}

/// [`from_ptrs`] for two SIDs of the first chunk only, None otherwise.
#[inline(always)]
fn first_pair(
    a: *const SecurityId,
    b: *const SecurityId,
) -> Option<(&'static SecurityId, &'static SecurityId)> {
    // The bound before the chunk's address: a bound above 0 was stored after that address.
    // The address is still tested, for a table retired between the two loads.
    let bound = FIRST_BYTES.load(Acquire);
    let base = CHUNKS[0].load(Acquire);
    let (oa, ob) = (
        (a as usize).wrapping_sub(base),
        (b as usize).wrapping_sub(base),
    );
    (base != 0 && (oa | ob) % SIZE == 0 && oa < bound && ob < bound)
        .then(|| (at(base + oa), at(base + ob)))
}

/// [`from_ptrs`] when either pointer is not a filled slot of the first chunk.
#[cold]
#[inline(never)]
fn from_ptrs_far(
    a: *const SecurityId,
    b: *const SecurityId,
) -> Res<(&'static SecurityId, &'static SecurityId)> {
    let filled = FILLED.load(Acquire);
    Ok((
        locate(a as usize, filled).ok_or(EINVAL)?,
        locate(b as usize, filled).ok_or(EINVAL)?,
    ))
}

/// The pointer C programs hold for a SID.
pub(crate) fn as_ptr(s: &'static SecurityId) -> *mut SecurityId {
    s as *const SecurityId as *mut SecurityId
}

/// How many SIDs exist, for avc_sid_stats.
pub(crate) fn count() -> usize {
    FILLED.load(Acquire)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]
    use super::*;

    // A pointer passes only if it is the start of a SID handed out: NULL, one inside a SID,
    // one past the filled SIDs, one on the stack and one on the heap are EINVAL.
    #[test]
    fn only_our_sids_pass() {
        let a = intern("u:r:only_our_sids_a_t:s0").map(as_ptr);
        let b = intern("u:r:only_our_sids_b_t:s0").map(as_ptr);
        let (Ok(a), Ok(b)) = (a, b) else {
            panic!("interning failed")
        };
        assert_eq!(
            from_ptr(a).map(|s| s.text()),
            Ok("u:r:only_our_sids_a_t:s0")
        );
        assert_eq!(
            from_ptr(b).map(|s| s.text()),
            Ok("u:r:only_our_sids_b_t:s0")
        );
        assert_eq!(intern("u:r:only_our_sids_a_t:s0").map(as_ptr), Ok(a));
        assert_eq!(
            from_ptrs(a, b).map(|(x, y)| (as_ptr(x), as_ptr(y))),
            Ok((a, b))
        );
        assert_eq!(from_ptrs(a, std::ptr::null()).map(|_| ()), Err(EINVAL));
        assert_eq!(
            from_ptrs((b as usize + 1) as *const SecurityId, a).map(|_| ()),
            Err(EINVAL)
        );
        let a = a as *const SecurityId;
        assert_eq!(from_ptr(std::ptr::null()).map(|_| ()), Err(EINVAL));
        assert_eq!(
            from_ptr((a as usize + 8) as *const SecurityId).map(|_| ()),
            Err(EINVAL)
        );
        assert_eq!(
            from_ptr((a as usize - 1) as *const SecurityId).map(|_| ()),
            Err(EINVAL)
        );
        let past = (CHUNKS[0].load(Acquire) + count().min(FIRST) * SIZE) as *const SecurityId;
        if count() < FIRST {
            assert_eq!(from_ptr(past).map(|_| ()), Err(EINVAL));
            // The pair's one bound: past the filled SIDs, or inside one, in either place.
            assert_eq!(from_ptrs(a, past).map(|_| ()), Err(EINVAL));
            assert_eq!(from_ptrs(past, a).map(|_| ()), Err(EINVAL));
        }
        assert_eq!(
            from_ptrs(a, (a as usize + 64) as *const SecurityId).map(|_| ()),
            Err(EINVAL)
        );
        let beyond = (CHUNKS[0].load(Acquire) + FIRST * SIZE) as *const SecurityId;
        if CHUNKS[1].load(Acquire) == 0 {
            assert_eq!(from_ptr(beyond).map(|_| ()), Err(EINVAL));
        }
        let local = 0u64;
        assert_eq!(
            from_ptr(&local as *const u64 as *const SecurityId).map(|_| ()),
            Err(EINVAL)
        );
        let heap = Box::new([0u8; 64]);
        assert_eq!(
            from_ptr(heap.as_ptr() as *const SecurityId).map(|_| ()),
            Err(EINVAL)
        );
        // A context with a NUL inside is refused.
        assert_eq!(intern("u:r:a\0b:s0").map(|_| ()), Err(EINVAL));
    }

    // The table grows chunk by chunk: thousands of SIDs, every one found again by its pointer, by
    // its index and by its context, each pointer distinct; a pointer into the middle of a later
    // chunk's SID, or just past the filled part, is refused.
    #[test]
    fn the_table_grows_past_its_first_chunks() {
        let made: Vec<(usize, &'static SecurityId)> = (0..3 * FIRST)
            .map(|n| {
                intern_indexed(&format!("u:r:grows_{n}_t:s0")).unwrap_or_else(|e| panic!("{e:?}"))
            })
            .collect();
        assert!(
            CHUNKS[1].load(Acquire) != 0 && CHUNKS[2].load(Acquire) != 0,
            "three chunks at least"
        );
        let mut seen = std::collections::HashSet::new();
        for (n, (i, s)) in made.iter().enumerate() {
            let ctx = format!("u:r:grows_{n}_t:s0");
            assert_eq!(s.text(), ctx);
            assert!(seen.insert(as_ptr(s) as usize), "{ctx} shares a SID");
            assert_eq!(from_ptr(as_ptr(s)).map(as_ptr), Ok(as_ptr(s)));
            assert_eq!(by_index(*i).map(as_ptr), Some(as_ptr(s)));
            assert_eq!(intern(&ctx).map(as_ptr), Ok(as_ptr(s)));
            assert_eq!(
                from_ptr((as_ptr(s) as usize + 64) as *const SecurityId).map(|_| ()),
                Err(EINVAL)
            );
        }
        let (k, first) = chunk_of(count());
        let next = CHUNKS[k].load(Acquire) + (count() - first) * SIZE;
        if CHUNKS[k].load(Acquire) != 0 {
            assert_eq!(from_ptr(next as *const SecurityId).map(|_| ()), Err(EINVAL));
        }
    }

    // Slot i lies in chunk k from FIRST * (2^k - 1) on, chunk k holding FIRST << k.
    #[test]
    fn slots_map_to_their_chunks() {
        assert_eq!(chunk_of(0), (0, 0));
        assert_eq!(chunk_of(FIRST - 1), (0, 0));
        assert_eq!(chunk_of(FIRST), (1, FIRST));
        assert_eq!(chunk_of(3 * FIRST - 1), (1, FIRST));
        assert_eq!(chunk_of(3 * FIRST), (2, 3 * FIRST));
        assert_eq!(chunk_of(7 * FIRST), (3, 7 * FIRST));
    }

    // A context that fits is kept inside its SID (the check's strcmp then reads the SID's own
    // line, not a separate allocation); a longer one is kept outside, whole; both read back
    // exactly, NUL-terminated.
    #[test]
    fn short_texts_live_in_their_sid() {
        let short = "system_u:system_r:inline_text_t:s0";
        let long = format!("system_u:system_r:{}_t:s0", "x".repeat(300));
        for ctx in [short, long.as_str()] {
            let s = intern(ctx).unwrap_or_else(|e| panic!("{e:?}"));
            assert_eq!(s.text(), ctx);
            let c = c_bytes(s);
            assert_eq!(c.as_deref(), Some(ctx.as_bytes()));
        }
        let s = intern(short).unwrap_or_else(|e| panic!("{e:?}"));
        let (start, p) = (s as *const SecurityId as usize, s.c_text() as usize);
        assert!(
            p >= start && p + short.len() < start + SIZE,
            "text at {p:#x}, SID at {start:#x}"
        );
        let l = intern(&long).unwrap_or_else(|e| panic!("{e:?}"));
        let (start, p) = (l as *const SecurityId as usize, l.c_text() as usize);
        assert!(
            p < start || p >= start + SIZE,
            "a long text cannot fit in its SID"
        );
    }

    // The public prefix is where C's `struct security_id { char *ctx; unsigned refcnt; }`
    // reads it, whatever follows it.
    #[test]
    fn the_public_prefix_is_libselinux_layout() {
        assert_eq!(std::mem::offset_of!(SecurityId, ctx), 0);
        assert_eq!(
            std::mem::offset_of!(SecurityId, refcnt),
            std::mem::size_of::<*mut c_char>()
        );
    }

    // The engine's `Kept` is the word `resolved` always was: 8 bytes, 8-aligned, at the same
    // offset (after the pointer and the two counts), so the SID's size and layout are unchanged.
    #[test]
    fn the_kept_sid_is_the_word_it_replaced() {
        assert_eq!(std::mem::size_of::<Kept<Sid>>(), 8);
        assert_eq!(std::mem::align_of::<Kept<Sid>>(), 8);
        assert_eq!(std::mem::offset_of!(SecurityId, len), 12);
        assert_eq!(std::mem::offset_of!(SecurityId, resolved), 16);
        assert_eq!(std::mem::offset_of!(SecurityId, inline), 24);
        assert_eq!(std::mem::size_of::<SecurityId>(), 128);
        // A zeroed SID (a fresh or retired page) has nothing kept.
        let zero = Kept::<Sid>::new();
        assert_eq!((zero.word(), zero.load()), (0, None));
    }

    /// The bytes up to the NUL that `c_text` points at.
    fn c_bytes(s: &SecurityId) -> Option<Vec<u8>> {
        let p = s.c_text();
        if p.is_null() {
            return None;
        }
        // SAFETY: a filled SID's text is NUL-terminated and lives for the process.
        Some(unsafe { std::ffi::CStr::from_ptr(p) }.to_bytes().to_vec())
    }
}
