//! The engine's context→SID memo, keyed by policy generation: a context's SID is kept only for
//! the generation that accepted it, since a reload may stop accepting a context (its SID then
//! stands for the unlabeled context) and a boolean commit is a new generation too. SIDs
//! themselves keep their meaning across generations of one server (they share its SID table),
//! so a stale memo could only ever hand out a context the new policy refuses: it is dropped
//! whole at the first lookup of a newer generation.

use std::sync::{PoisonError, RwLock};

use rustc_hash::FxHashMap;
use seaccess_security::{Generation, SecurityError};
use seaccess_types::{Seqno, Sid};

/// Contexts kept at most for one generation; past it, lookups still answer (through the
/// generation) but are not kept. A memo of user-supplied strings must not grow without end.
pub const MEMO_CAPACITY: usize = 4096;

/// The contexts resolved under one generation.
struct Kept {
    seqno: Seqno,
    sids: FxHashMap<Box<str>, Sid>,
}

/// Context text → SID, for the newest generation asked of it.
pub(crate) struct SidMemo {
    kept: RwLock<Kept>,
}

impl SidMemo {
    pub(crate) fn new(seqno: Seqno) -> SidMemo {
        SidMemo {
            kept: RwLock::new(Kept {
                seqno,
                sids: FxHashMap::default(),
            }),
        }
    }

    /// The SID of `context` in generation `g` (security_context_to_sid), from the memo when `g`
    /// resolved it before.
    pub(crate) fn sid(&self, g: &Generation, context: &str) -> Result<Sid, SecurityError> {
        let at = g.seqno();
        {
            // A panic elsewhere while holding the lock leaves a map that is still whole.
            let k = self.kept.read().unwrap_or_else(PoisonError::into_inner);
            if k.seqno == at {
                if let Some(s) = k.sids.get(context) {
                    return Ok(*s);
                }
            }
        }
        let sid = g.context_to_sid(context)?;
        let mut k = self.kept.write().unwrap_or_else(PoisonError::into_inner);
        if at.is_after(k.seqno) {
            k.seqno = at;
            k.sids.clear();
        }
        if k.seqno == at && k.sids.len() < MEMO_CAPACITY {
            k.sids.insert(context.into(), sid);
        }
        Ok(sid)
    }

    /// How many contexts are kept, and for which generation (tests look at it).
    pub(crate) fn kept(&self) -> (Seqno, usize) {
        let k = self.kept.read().unwrap_or_else(PoisonError::into_inner);
        (k.seqno, k.sids.len())
    }
}
