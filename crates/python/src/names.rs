//! From the names Python passes (context strings, class and permission names) to the numbers the
//! engine answers on, with the SIDs of context strings remembered across calls.

use std::sync::{Arc, RwLock};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use rustc_hash::FxHashMap;
use seaccess_security::{Generation, SecurityError, SecurityServer};
use seaccess_types::{AccessVector, ClassId, Seqno, Sid};

/// Past this many remembered context strings the memory is emptied: a caller cycling through
/// endless distinct contexts pays a parse per call, and nothing grows without bound.
const MAX_REMEMBERED: usize = 1 << 16;

/// What a `Policy` and the caches made on it share: the server and the SIDs of context strings
/// already parsed (parsing is most of a query's cost for a cache hit).
pub(crate) struct Shared {
    pub(crate) server: Arc<SecurityServer>,
    sids: RwLock<Remembered>,
}

/// The SIDs of context strings parsed under one policy generation. A SID keeps naming the same
/// text across reloads, but the text may not be valid under another policy, so an entry is
/// only ever used with the generation that checked it: the map is keyed by its seqno, and
/// is neither read nor written for any other, whatever order reloads and lookups come in.
struct Remembered {
    seqno: Seqno,
    sids: FxHashMap<Box<str>, Sid>,
}

impl Shared {
    pub(crate) fn new(server: SecurityServer) -> Shared {
        let seqno = server.seqno();
        Shared {
            server: Arc::new(server),
            sids: RwLock::new(Remembered {
                seqno,
                sids: FxHashMap::default(),
            }),
        }
    }

    /// The SID of a context string under generation `g`: remembered if `g` checked it before,
    /// else checked and remembered, unless a newer generation's SIDs are remembered by now
    /// (then `g`'s are not worth keeping). A newer generation's first SID forgets the older
    /// ones (booleans commits included, which cost a parse per string again).
    pub(crate) fn sid(&self, g: &Generation, s: &str) -> Result<Sid, SecurityError> {
        let at = g.seqno();
        {
            let r = seaccess_types::lock::read(&self.sids);
            if r.seqno == at {
                if let Some(&sid) = r.sids.get(s) {
                    return Ok(sid);
                }
            }
        }
        let sid = g.context_to_sid(s)?;
        let mut w = seaccess_types::lock::write(&self.sids);
        if w.seqno != at {
            if !at.is_after(w.seqno) {
                return Ok(sid);
            }
            w.seqno = at;
            w.sids.clear();
        }
        if w.sids.len() >= MAX_REMEMBERED {
            w.sids.clear();
        }
        w.sids.insert(s.into(), sid);
        Ok(sid)
    }
}

/// The permission names a caller passed: one string of names separated by spaces
/// (`"read write"`), or a sequence of names.
pub(crate) fn perm_names(obj: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    if let Ok(s) = obj.cast::<PyString>() {
        return nonempty(
            s.to_str()?
                .split_ascii_whitespace()
                .map(str::to_string)
                .collect(),
        );
    }
    let mut names = Vec::new();
    for item in obj.try_iter().map_err(|_| not_perms(obj))? {
        let item = item?;
        let s = item.cast::<PyString>().map_err(|_| not_perms(&item))?;
        names.push(s.to_str()?.to_string());
    }
    nonempty(names)
}

/// A check asks for at least one permission, as the kernel's avc_has_perm requires.
fn nonempty(names: Vec<String>) -> PyResult<Vec<String>> {
    if names.is_empty() {
        return Err(crate::errors::Error::new_err(
            "no permission named: give at least one",
        ));
    }
    Ok(names)
}

fn not_perms(obj: &Bound<'_, PyAny>) -> PyErr {
    let ty = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!(
        "permissions must be a str or a sequence of str, not {ty}"
    ))
}

/// The access vector of permission names of a class, with the bit of each name in order.
pub(crate) fn perm_bits(
    g: &Generation,
    class: ClassId,
    names: &[String],
) -> Result<(AccessVector, Vec<u32>), SecurityError> {
    let mut av = 0u32;
    let mut bits = Vec::with_capacity(names.len());
    for n in names {
        let v = g.perms(class, &[n.as_str()])?;
        // A permission name stands for exactly one bit, so the lowest is the bit.
        let bit = v.0.trailing_zeros();
        av |= v.0;
        bits.push(bit);
    }
    Ok((AccessVector(av), bits))
}
