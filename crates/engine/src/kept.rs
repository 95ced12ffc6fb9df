//! The one rule for what a front end keeps from a policy generation between checks: a number
//! found for a name (a context's SID, a class and permission's numbers) is used only with a
//! decision of the generation that found it; asked in any other, the name is resolved again in
//! the asking generation, and the new number kept with that generation's seqno.
//!
//! Why: a reload may stop accepting a context (the kernel then maps the SID to the unlabeled
//! context) or renumber classes and permissions, and a boolean commit is a new generation too,
//! so a number carries its meaning only inside its generation. The kernel's AVC keeps no such
//! memo (its callers hold SIDs, revalidated by the security server at each load); libselinux's
//! avc.c keeps `security_id_t`s whose SIDs it re-derives after `avc_reset`, and its class
//! cache is flushed on a policy load. Here the seqno rides with the number in one atomic word,
//! so nothing has to be flushed and no lock is taken: a reader gets a number and its seqno
//! together, never one generation's number with another's seqno.
//!
//! The key is the security server's own seqno, no counter of the memo's: there is no clock here
//! to keep in step with the server, and nothing that can wrap during one check (the seqno wraps
//! after 2^32 policy changes, as the cache's own key does; [`Seqno::is_after`]).
//!
//! [`Kept`] is the rule; the engine's context memo ([`crate::memo`]) and the C library's
//! `security_id_t` and name tables (crates/capi sid.rs, lookup.rs) keep their numbers in it.

use std::marker::PhantomData;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering::*};

use seaccess_security::{Generation, SecurityError};
use seaccess_types::{AccessVector, ClassId, Seqno, Sid};

/// What a [`Kept`] can hold: a value that packs into a nonzero 32-bit word (zero is "nothing
/// kept"), so that it and its seqno fit one atomic word.
pub trait Keepable: Copy {
    /// The value as its word; None for a value that cannot be kept (then nothing is).
    fn to_word(self) -> Option<NonZeroU32>;
    /// The value a word stands for; None for a word no value packs to.
    fn from_word(w: NonZeroU32) -> Option<Self>;
}

/// A SID: its number. SID 0 (`SECSID_NULL`) is never a context's, and is not kept.
impl Keepable for Sid {
    #[inline(always)]
    fn to_word(self) -> Option<NonZeroU32> {
        NonZeroU32::new(self.0)
    }

    #[inline(always)]
    fn from_word(w: NonZeroU32) -> Option<Sid> {
        Some(Sid(w.get()))
    }
}

/// A class number and one permission bit of it: what a class name and one permission name
/// resolve to in one generation.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ClassBit {
    /// The class's number.
    pub class: ClassId,
    /// The permission's bit (0 to 31).
    pub bit: u8,
}

impl ClassBit {
    /// Set in every packed word, so that class 0 bit 0 is not "nothing kept".
    const VALID: u32 = 1 << 31;

    /// The permission as an access vector of its one bit.
    pub fn perm(self) -> AccessVector {
        AccessVector(1 << (self.bit & 31))
    }
}

impl Keepable for ClassBit {
    #[inline(always)]
    fn to_word(self) -> Option<NonZeroU32> {
        (self.bit < 32)
            .then(|| {
                NonZeroU32::new(Self::VALID | u32::from(self.class.0) << 8 | u32::from(self.bit))
            })
            .flatten()
    }

    #[inline(always)]
    fn from_word(w: NonZeroU32) -> Option<ClassBit> {
        let w = w.get();
        (w & Self::VALID != 0 && w & 0xff < 32).then_some(ClassBit {
            class: ClassId((w >> 8) as u16),
            bit: (w & 0xff) as u8,
        })
    }
}

/// A number kept for a name, with the seqno of the generation that found it: one atomic word,
/// `seqno << 32 | value`, 0 while nothing is kept. Shared freely between threads; every method
/// is lock-free, and the reads allocate nothing. `#[repr(transparent)]` over the word, so that a
/// C-visible struct may embed it where it had the word.
#[repr(transparent)]
pub struct Kept<T: Keepable = Sid> {
    word: AtomicU64,
    _value: PhantomData<fn() -> T>,
}

impl<T: Keepable> Default for Kept<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Keepable> std::fmt::Debug for Kept<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Kept({:#x})", self.word())
    }
}

impl<T: Keepable> Kept<T> {
    /// Nothing kept.
    pub const fn new() -> Self {
        Kept {
            word: AtomicU64::new(0),
            _value: PhantomData,
        }
    }

    /// The value kept for generation `seqno`, if it was found in exactly that one: the only way
    /// a kept value is to be used with a decision of `seqno`.
    #[inline(always)]
    pub fn get(&self, seqno: Seqno) -> Option<T> {
        let w = self.word();
        if (w >> 32) as u32 != seqno.0 {
            return None;
        }
        T::from_word(NonZeroU32::new(w as u32)?)
    }

    /// The value kept and the generation that found it, whichever that is: for a caller that
    /// pairs it only with a decision of that same seqno (as [`Kept::both`] does).
    #[inline(always)]
    pub fn load(&self) -> Option<(T, Seqno)> {
        let w = self.word();
        Some((
            T::from_word(NonZeroU32::new(w as u32)?)?,
            Seqno((w >> 32) as u32),
        ))
    }

    /// The raw word, `seqno << 32 | value`, 0 when nothing is kept (for a hit path comparing
    /// two words at once; [`Kept::both`] is the rule over it).
    #[inline(always)]
    pub fn word(&self) -> u64 {
        self.word.load(Acquire)
    }

    /// Keeps `value` as found in generation `seqno`, replacing what was kept (a value that
    /// cannot be kept, such as SID 0, leaves nothing: never the value before). A thread that
    /// resolved under an older generation may overwrite a newer one's value: the next ask in
    /// the newer one resolves again, never takes the older value, so a race costs a lookup and
    /// never an answer.
    #[inline]
    pub fn keep(&self, seqno: Seqno, value: T) {
        let w = value
            .to_word()
            .map_or(0, |v| u64::from(seqno.0) << 32 | u64::from(v.get()));
        self.word.store(w, Release);
    }

    /// The value for generation `seqno`: the kept one if `seqno` found it, else `find()` (the
    /// lookup in that generation), kept on success. An error keeps nothing and leaves what was
    /// kept, which only its own generation can use.
    #[inline]
    pub fn get_or_find<E>(
        &self,
        seqno: Seqno,
        find: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        if let Some(v) = self.get(seqno) {
            return Ok(v);
        }
        let v = find()?;
        #[cfg(test)]
        tests::parked("keep");
        self.keep(seqno, v);
        Ok(v)
    }
}

impl Kept<Sid> {
    /// The SID of context `text` in generation `g` (security_context_to_sid): the kept one if
    /// `g` resolved it, else resolved in `g` and kept. `text` must be the context this `Kept`
    /// belongs to.
    #[inline]
    pub fn sid_in(&self, g: &Generation, text: &str) -> Result<Sid, SecurityError> {
        self.get_or_find(g.seqno(), || g.context_to_sid(text))
    }

    /// Both SIDs and their one generation, when both are kept for the same one: a source and a
    /// target used together only with a decision of that seqno. None when either is not kept or
    /// they were found in different generations (then each is resolved again in the asking one).
    #[inline(always)]
    pub fn both(a: &Kept<Sid>, b: &Kept<Sid>) -> Option<(Sid, Sid, Seqno)> {
        let (x, y) = (a.word(), b.word());
        if x as u32 == 0 || y as u32 == 0 || (x ^ y) >> 32 != 0 {
            return None;
        }
        Some((Sid(x as u32), Sid(y as u32), Seqno((x >> 32) as u32)))
    }
}

#[cfg(test)]
pub(crate) mod tests;
