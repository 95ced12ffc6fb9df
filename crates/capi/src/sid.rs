//! libselinux's userspace SIDs (`security_id_t`): one per context string, interned for the
//! life of the process, whose public prefix `{ char *ctx; unsigned refcnt; }` programs may read.
//! Behind the prefix each carries the seaccess SID its context resolves to.
//!
//! SIDs live in fixed chunks that are never freed or moved, so a pointer handed out stays
//! valid, and a pointer passed in can be checked to be one of ours (else EINVAL) without
//! reading through it.

use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering::*};
use std::sync::{OnceLock, RwLock};

use rustc_hash::FxHashMap;
use seaccess_security::SecurityServer;
use seaccess_types::Sid;

use crate::ffi::{Res, EINVAL, ENOMEM};

/// `struct security_id` with seaccess's fields after libselinux's public ones. Aligned to a
/// cache line so that [`from_ptr`]'s check of a pointer is a mask, not a division, and so that
/// threads counting references on different SIDs do not share a line.
#[repr(C, align(64))]
pub struct SecurityId {
    /// `char *ctx`: the context, NUL-terminated, never freed.
    ctx: AtomicPtr<c_char>,
    /// `unsigned int refcnt`: counted by sidget/sidput, which free nothing (as libselinux 3.4).
    refcnt: AtomicU32,
    /// The seaccess SID of the context, 0 until resolved (or while the policy rejects it).
    sid: AtomicU32,
    text: OnceLock<Box<str>>,
}

impl SecurityId {
    fn empty() -> SecurityId {
        SecurityId { ctx: AtomicPtr::new(std::ptr::null_mut()), refcnt: AtomicU32::new(0), sid: AtomicU32::new(0), text: OnceLock::new() }
    }

    pub fn text(&self) -> &str {
        self.text.get().map(|t| &**t).unwrap_or("")
    }

    /// The seaccess SID of this context; EINVAL when the policy does not define the context
    /// (what the kernel answers the AVC's security_compute_av with).
    #[inline]
    pub fn resolve(&self, server: &SecurityServer) -> Res<Sid> {
        let s = self.sid.load(Relaxed);
        if s != 0 {
            return Ok(Sid(s));
        }
        let sid = server.context_to_sid(self.text()).map_err(|_| EINVAL)?;
        self.sid.store(sid.0, Relaxed);
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

const CHUNK: usize = 4096;
const MAX_CHUNKS: usize = 256;

static CHUNKS: [OnceLock<Box<[SecurityId]>>; MAX_CHUNKS] = [const { OnceLock::new() }; MAX_CHUNKS];
/// How many SIDs have been handed out: slots below this are filled.
static FILLED: AtomicUsize = AtomicUsize::new(0);
static INDEX: RwLock<Option<FxHashMap<Box<str>, usize>>> = RwLock::new(None);

fn slot(i: usize) -> Option<&'static SecurityId> {
    CHUNKS.get(i / CHUNK)?.get()?.get(i % CHUNK)
}

/// The SID handed out `i`-th, if there is one.
#[inline]
pub(crate) fn by_index(i: usize) -> Option<&'static SecurityId> {
    if i >= FILLED.load(Acquire) {
        return None;
    }
    slot(i)
}

/// The SID of context `ctx`, made on first use. Like libselinux's, it does not check the
/// context against the policy: a check with it does.
pub(crate) fn intern(ctx: &str) -> Res<&'static SecurityId> {
    intern_indexed(ctx).map(|(_, s)| s)
}

/// [`intern`], with the SID's index for [`by_index`].
pub(crate) fn intern_indexed(ctx: &str) -> Res<(usize, &'static SecurityId)> {
    let found = |i: usize| slot(i).map(|s| (i, s)).ok_or(EINVAL);
    {
        let idx = INDEX.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(&i) = idx.as_ref().and_then(|m| m.get(ctx)) {
            return found(i);
        }
    }
    let mut idx = INDEX.write().unwrap_or_else(std::sync::PoisonError::into_inner);
    let map = idx.get_or_insert_with(FxHashMap::default);
    if let Some(&i) = map.get(ctx) {
        return found(i);
    }
    let c = CString::new(ctx).map_err(|_| EINVAL)?;
    let i = FILLED.load(Acquire);
    let chunk = CHUNKS.get(i / CHUNK).ok_or(ENOMEM)?;
    let chunk = chunk.get_or_init(|| (0..CHUNK).map(|_| SecurityId::empty()).collect());
    let s = chunk.get(i % CHUNK).ok_or(ENOMEM)?;
    s.ctx.store(c.into_raw(), Release);
    let _ = s.text.set(ctx.into());
    map.insert(ctx.into(), i);
    FILLED.store(i + 1, Release);
    Ok((i, s))
}

/// The SID behind a pointer a program passes in, if it is one this library handed out; EINVAL
/// for NULL or any other pointer.
#[inline]
pub(crate) fn from_ptr(p: *const SecurityId) -> Res<&'static SecurityId> {
    if p.is_null() {
        return Err(EINVAL);
    }
    let filled = FILLED.load(Acquire);
    let addr = p as usize;
    let size = std::mem::size_of::<SecurityId>();
    for (n, c) in CHUNKS.iter().enumerate().take(filled.div_ceil(CHUNK)) {
        let Some(chunk) = c.get() else { break };
        let base = chunk.as_ptr() as usize;
        if addr >= base && addr < base + CHUNK * size && (addr - base) % size == 0 {
            let i = (addr - base) / size;
            if n * CHUNK + i >= filled {
                return Err(EINVAL);
            }
            return chunk.get(i).ok_or(EINVAL);
        }
    }
    Err(EINVAL)
}

/// The pointer C programs hold for a SID.
pub(crate) fn as_ptr(s: &'static SecurityId) -> *mut SecurityId {
    s as *const SecurityId as *mut SecurityId
}

/// How many SIDs exist, for avc_sid_stats.
pub(crate) fn count() -> usize {
    FILLED.load(Acquire)
}
