//! libselinux's userspace SIDs (`security_id_t`): one per context string, interned for the
//! life of the process, whose public prefix `{ char *ctx; unsigned refcnt; }` programs may read.
//! Behind the prefix each carries the seaccess SID its context resolves to.
//!
//! SIDs live side by side in one region of address space reserved at the first one (pages are
//! touched only as SIDs fill them) and never freed or moved, so a pointer handed out stays
//! valid, and a pointer passed in is proven ours (else EINVAL) by arithmetic alone: its offset
//! from the region's start is below the filled part and a multiple of a SID's size. Nothing is
//! read through a pointer before that.

use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::RwLock;

use rustc_hash::FxHashMap;
use seaccess_security::Generation;
use seaccess_types::Sid;

use crate::ffi::{Res, EINVAL, ENOMEM};

/// `struct security_id` with seaccess's fields after libselinux's public ones. Every field is
/// an atomic, so the region's zeroed pages are empty SIDs. Aligned to a cache line so that
/// threads counting references on different SIDs do not share a line. A context short enough
/// is kept in the SID itself, so that comparing an argument with it reads the line the SID's
/// lookup already brought in rather than a separate allocation.
#[repr(C, align(64))]
pub struct SecurityId {
    /// `char *ctx`: the context, NUL-terminated, never freed; NULL until the SID is filled.
    ctx: AtomicPtr<c_char>,
    /// `unsigned int refcnt`: counted by sidget/sidput, which free nothing (as libselinux 3.4).
    refcnt: AtomicU32,
    /// The context's length in bytes, without the NUL (`intern` refuses longer contexts).
    len: AtomicU32,
    /// The seaccess SID of the context and the seqno of the policy generation that defined it
    /// (`seqno << 32 | sid`), one word so that both are read together; 0 until resolved. A
    /// context is valid only in the generation it was checked under (a reload may drop it, and
    /// a context spelled as an initial SID's maps to that policy's initial SID), so a check
    /// takes the SID only with a decision of that same seqno.
    resolved: AtomicU64,
    /// The context and its NUL when they fit (`ctx` then points here), written before `ctx`
    /// is published and never again.
    inline: [AtomicU64; INLINE_WORDS],
}

/// Words of inline text: the SID fills two cache lines.
const INLINE_WORDS: usize = 13;

impl SecurityId {
    pub fn text(&self) -> &str {
        let p = self.ctx.load(Acquire);
        if p.is_null() {
            return "";
        }
        let len = self.len.load(Relaxed) as usize;
        // SAFETY: a non-NULL `ctx` was stored (after `len` and the inline words, with Release)
        // by `intern`: this SID's inline words or the buffer of a CString, either holding a
        // `&str` of `len` bytes and never changed again (INDEX owns the CString for the
        // process's life, and moving a CString does not move its buffer).
        unsafe { std::str::from_utf8_unchecked(std::slice::from_raw_parts(p as *const u8, len)) }
    }

    /// The context as a NUL-terminated string (NULL while the SID is empty), to compare a C
    /// argument with in place.
    #[inline(always)]
    pub(crate) fn c_text(&self) -> *const c_char {
        self.ctx.load(Acquire)
    }

    /// The seaccess SID of this context if it has been resolved, with the seqno of the policy
    /// generation it was resolved under: valid only with a decision of that seqno.
    #[inline(always)]
    pub fn resolved(&self) -> Option<(Sid, u32)> {
        match self.resolved.load(Relaxed) {
            0 => None,
            v => Some((Sid(v as u32), (v >> 32) as u32)),
        }
    }

    /// [`SecurityId::resolved`] as its word: the seqno above the SID, 0 when not resolved.
    #[inline(always)]
    pub(crate) fn resolved_word(&self) -> u64 {
        self.resolved.load(Relaxed)
    }

    /// The seaccess SID of this context in generation `g`; EINVAL when `g`'s policy does not
    /// define the context (what the kernel answers the AVC's security_compute_av with), whether
    /// or not an earlier policy did.
    #[inline]
    pub fn resolve(&self, g: &Generation) -> Res<Sid> {
        let seqno = g.seqno().0;
        if let Some((sid, at)) = self.resolved() {
            if at == seqno {
                return Ok(sid);
            }
        }
        let sid = g.context_to_sid(self.text()).map_err(|_| EINVAL)?;
        // A thread resolving under an older generation may overwrite this with its own: the
        // next check of the newer one resolves again, never takes the older SID.
        self.resolved.store(u64::from(seqno) << 32 | u64::from(sid.0), Relaxed);
        Ok(sid)
    }

    pub fn get(&self) -> u32 {
        self.refcnt.fetch_add(1, AcqRel).wrapping_add(1)
    }

    pub fn put(&self) -> u32 {
        let prev = self.refcnt.fetch_update(AcqRel, Acquire, |n| Some(n.saturating_sub(1))).unwrap_or(0);
        prev.saturating_sub(1)
    }
}

const SIZE: usize = std::mem::size_of::<SecurityId>();
const _: () = assert!(SIZE == 128, "two cache lines, as INLINE_WORDS assumes");
/// How many SIDs the region holds (128 MiB of address space, backed only where filled).
pub(crate) const MAX_SIDS: usize = 1 << 20;

/// The region's address; 0 until the first SID is made. Written before FILLED first leaves 0.
static BASE: AtomicUsize = AtomicUsize::new(0);
/// How many SIDs have been handed out: slots below this are filled.
static FILLED: AtomicUsize = AtomicUsize::new(0);
static INDEX: RwLock<Option<Index>> = RwLock::new(None);

/// Which SID each context has, and the NUL-terminated copies of contexts too long to be kept
/// in their SID, owned here for the process's life (and so reachable from a global: leak checkers do not
/// look into the SID region).
#[derive(Default)]
struct Index {
    map: FxHashMap<Box<str>, usize>,
    texts: Vec<CString>,
}

/// The index's lock, held across a fork (see [`crate::fork`]): no SID is being made at the fork,
/// so the child finds every SID whole.
pub(crate) struct Held(#[allow(dead_code)] std::sync::RwLockWriteGuard<'static, Option<Index>>);

pub(crate) fn hold() -> Held {
    Held(INDEX.write().unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// The region, reserved on first use (called under INDEX's write lock).
fn region() -> Res<usize> {
    let b = BASE.load(Acquire);
    if b != 0 {
        return Ok(b);
    }
    // SAFETY: a fresh private anonymous mapping; no existing memory is touched. MAP_NORESERVE:
    // pages are committed only when a SID is written into them.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            MAX_SIDS * SIZE,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED || p.is_null() {
        return Err(ENOMEM);
    }
    BASE.store(p as usize, Release);
    Ok(p as usize)
}

/// The SID at `i`, which must be below FILLED (or about to be filled under INDEX's lock).
fn at(base: usize, i: usize) -> &'static SecurityId {
    // SAFETY: i < MAX_SIDS (checked by every caller through FILLED, which never exceeds it), so
    // the address is inside the region, which is never unmapped, and SIZE-aligned (the region
    // is page aligned). Its bytes are zeroes or a filled SID, both valid: every field is an
    // atomic, and zero is an empty SID.
    unsafe { &*((base + i * SIZE) as *const SecurityId) }
}

/// The SID handed out `i`-th, if there is one.
#[inline]
pub(crate) fn by_index(i: usize) -> Option<&'static SecurityId> {
    if i >= FILLED.load(Acquire) {
        return None;
    }
    Some(at(BASE.load(Relaxed), i))
}

/// The SID of context `ctx`, made on first use. Like libselinux's, it does not check the
/// context against the policy: a check with it does.
pub(crate) fn intern(ctx: &str) -> Res<&'static SecurityId> {
    intern_indexed(ctx).map(|(_, s)| s)
}

/// [`intern`], with the SID's index for [`by_index`].
pub(crate) fn intern_indexed(ctx: &str) -> Res<(usize, &'static SecurityId)> {
    {
        let idx = INDEX.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(&i) = idx.as_ref().and_then(|x| x.map.get(ctx)) {
            return Ok((i, at(BASE.load(Acquire), i)));
        }
    }
    crate::fork::register();
    let mut idx = INDEX.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    let index = idx.get_or_insert_with(Index::default);
    if let Some(&i) = index.map.get(ctx) {
        return Ok((i, at(BASE.load(Acquire), i)));
    }
    if ctx.as_bytes().contains(&0) {
        return Err(EINVAL);
    }
    let i = FILLED.load(Acquire);
    if i >= MAX_SIDS {
        return Err(ENOMEM);
    }
    let len = u32::try_from(ctx.len()).map_err(|_| EINVAL)?;
    let s = at(region()?, i);
    s.len.store(len, Relaxed);
    if ctx.len() < INLINE_WORDS * 8 {
        // The slot is fresh (zeroed pages, never reused): the words past the text, its NUL
        // among them, are zero already, but are written anyway so that this does not rest on it.
        for (n, w) in s.inline.iter().enumerate() {
            let mut b = [0u8; 8];
            for (k, x) in b.iter_mut().enumerate() {
                *x = ctx.as_bytes().get(n * 8 + k).copied().unwrap_or(0);
            }
            w.store(u64::from_ne_bytes(b), Relaxed);
        }
        s.ctx.store(s.inline.as_ptr() as *mut c_char, Release);
    } else {
        let text = CString::new(ctx).map_err(|_| EINVAL)?;
        s.ctx.store(text.as_ptr() as *mut c_char, Release);
        index.texts.push(text);
    }
    index.map.insert(ctx.into(), i);
    FILLED.store(i + 1, Release);
    Ok((i, s))
}

/// The SID behind a pointer a program passes in, if it is one this library handed out; EINVAL
/// for NULL or any other pointer, decided without reading through it.
#[inline(always)]
pub(crate) fn from_ptr(p: *const SecurityId) -> Res<&'static SecurityId> {
    let filled = FILLED.load(Acquire);
    // Wraps for a pointer below the region (NULL among them) to a huge offset, which fails the
    // bound as one beyond the filled part does; before the first SID, filled is 0.
    let off = (p as usize).wrapping_sub(BASE.load(Relaxed));
    if off >= filled * SIZE || off % SIZE != 0 {
        return Err(EINVAL);
    }
    Ok(at(BASE.load(Relaxed), off / SIZE))
}

/// [`from_ptr`] of two pointers, reading the filled count and the region once.
#[inline(always)]
pub(crate) fn from_ptrs(a: *const SecurityId, b: *const SecurityId) -> Res<(&'static SecurityId, &'static SecurityId)> {
    let filled = FILLED.load(Acquire);
    let base = BASE.load(Relaxed);
    let ours = |p: *const SecurityId| {
        let off = (p as usize).wrapping_sub(base);
        if off >= filled * SIZE || off % SIZE != 0 {
            return Err(EINVAL);
        }
        Ok(at(base, off / SIZE))
    };
    Ok((ours(a)?, ours(b)?))
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
        let (Ok(a), Ok(b)) = (a, b) else { panic!("interning failed") };
        assert_eq!(from_ptr(a).map(|s| s.text()), Ok("u:r:only_our_sids_a_t:s0"));
        assert_eq!(from_ptr(b).map(|s| s.text()), Ok("u:r:only_our_sids_b_t:s0"));
        assert_eq!(intern("u:r:only_our_sids_a_t:s0").map(as_ptr), Ok(a));
        assert_eq!(from_ptrs(a, b).map(|(x, y)| (as_ptr(x), as_ptr(y))), Ok((a, b)));
        assert_eq!(from_ptrs(a, std::ptr::null()).map(|_| ()), Err(EINVAL));
        assert_eq!(from_ptrs((b as usize + 1) as *const SecurityId, a).map(|_| ()), Err(EINVAL));
        let a = a as *const SecurityId;
        assert_eq!(from_ptr(std::ptr::null()).map(|_| ()), Err(EINVAL));
        assert_eq!(from_ptr((a as usize + 8) as *const SecurityId).map(|_| ()), Err(EINVAL));
        assert_eq!(from_ptr((a as usize - 1) as *const SecurityId).map(|_| ()), Err(EINVAL));
        let past = (BASE.load(Acquire) + count() * SIZE) as *const SecurityId;
        assert_eq!(from_ptr(past).map(|_| ()), Err(EINVAL));
        let beyond = (BASE.load(Acquire) + MAX_SIDS * SIZE) as *const SecurityId;
        assert_eq!(from_ptr(beyond).map(|_| ()), Err(EINVAL));
        let local = 0u64;
        assert_eq!(from_ptr(&local as *const u64 as *const SecurityId).map(|_| ()), Err(EINVAL));
        let heap = Box::new([0u8; 64]);
        assert_eq!(from_ptr(heap.as_ptr() as *const SecurityId).map(|_| ()), Err(EINVAL));
        // A context with a NUL inside is refused.
        assert_eq!(intern("u:r:a\0b:s0").map(|_| ()), Err(EINVAL));
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
        assert!(p >= start && p + short.len() < start + SIZE, "text at {p:#x}, SID at {start:#x}");
        let l = intern(&long).unwrap_or_else(|e| panic!("{e:?}"));
        let (start, p) = (l as *const SecurityId as usize, l.c_text() as usize);
        assert!(p < start || p >= start + SIZE, "a long text cannot fit in its SID");
    }

    // The public prefix is where C's `struct security_id { char *ctx; unsigned refcnt; }`
    // reads it, whatever follows it.
    #[test]
    fn the_public_prefix_is_libselinux_layout() {
        assert_eq!(std::mem::offset_of!(SecurityId, ctx), 0);
        assert_eq!(std::mem::offset_of!(SecurityId, refcnt), std::mem::size_of::<*mut c_char>());
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
