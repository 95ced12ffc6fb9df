//! Batch queries: a list of tuples read while holding the interpreter, into numbers for each
//! distinct string, then resolved and answered with the interpreter released.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use rustc_hash::FxHashMap;
use seaccess_engine::{EngineError, Generation};
use seaccess_security::SecurityError;
use seaccess_types::{AccessVector, ClassId, Sid};

use crate::errors::Problem;

/// Distinct strings, numbered in the order first seen.
#[derive(Default)]
struct Strings {
    index: FxHashMap<Box<str>, u32>,
    list: Vec<Box<str>>,
}

impl Strings {
    fn number(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.index.insert(s.into(), i);
        self.list.push(s.into());
        i
    }
}

/// The queries of one batch call: each as the numbers of its source context, target context,
/// class and (for checks) permission list.
#[derive(Default)]
pub(crate) struct Queries {
    contexts: Strings,
    classes: Strings,
    perms: Strings,
    items: Vec<[u32; 4]>,
}

/// One query resolved: source SID, target SID, class and requested permissions (none for
/// compute_av).
pub(crate) type Resolved = (Sid, Sid, ClassId, AccessVector);

/// A query that could not be answered: its position in the batch and why.
pub(crate) struct Failed(pub usize, pub Problem);

impl Failed {
    pub(crate) fn new(i: usize, e: impl Into<Problem>) -> Failed {
        Failed(i, e.into())
    }

    pub(crate) fn into_py(self) -> PyErr {
        self.1.into_py(&format!("query {}", self.0))
    }
}

impl Queries {
    /// Reads `(scon, tcon, tclass)` tuples, or `(scon, tcon, tclass, perms)` when `with_perms`,
    /// where perms is a str of names separated by spaces or a sequence of names.
    pub(crate) fn read(queries: &Bound<'_, PyAny>, with_perms: bool) -> PyResult<Queries> {
        let want = if with_perms { 4 } else { 3 };
        let mut q = Queries::default();
        if let Ok(n) = queries.len() {
            q.items.reserve(n);
        }
        for (i, item) in queries.try_iter()?.enumerate() {
            let item = item?;
            let t = item.cast::<PyTuple>().map_err(|_| shape(i, want))?;
            if t.len() != want {
                return Err(shape(i, want));
            }
            let s = number(&mut q.contexts, t.get_borrowed_item(0)?, i)?;
            let tc = number(&mut q.contexts, t.get_borrowed_item(1)?, i)?;
            let c = number(&mut q.classes, t.get_borrowed_item(2)?, i)?;
            let p = if with_perms {
                let p = t.get_borrowed_item(3)?;
                match p.cast::<PyString>() {
                    Ok(s) => q.perms.number(s.to_str()?),
                    Err(_) => {
                        let names = crate::names::perm_names(&p.to_owned())
                            .map_err(|e| at(i, e, p.py()))?;
                        q.perms.number(&names.join(" "))
                    }
                }
            } else {
                0
            };
            q.items.push([s, tc, c, p]);
        }
        Ok(q)
    }

    pub(crate) fn len(&self) -> usize {
        self.items.len()
    }

    /// Each query in numbers, in order; the first that cannot be resolved fails the batch.
    /// Each distinct string is resolved once, when first used.
    pub(crate) fn resolve(&self, g: &Generation<'_>) -> Result<Vec<Resolved>, Failed> {
        let mut r = self.resolver(g);
        (0..self.items.len()).map(|i| r.item(i)).collect()
    }

    /// A resolver of this batch's queries under generation `g`, one query at a time.
    pub(crate) fn resolver<'a>(&'a self, g: &'a Generation<'a>) -> Resolver<'a> {
        Resolver {
            q: self,
            g,
            sids: vec![None; self.contexts.list.len()],
            classes: vec![None; self.classes.list.len()],
            avs: FxHashMap::default(),
        }
    }
}

/// The queries of a batch resolved under one generation, each distinct string once, when first
/// used: every number it gives is of that generation.
pub(crate) struct Resolver<'a> {
    q: &'a Queries,
    g: &'a Generation<'a>,
    sids: Vec<Option<Sid>>,
    classes: Vec<Option<ClassId>>,
    avs: FxHashMap<(u32, u32), AccessVector>,
}

impl Resolver<'_> {
    /// Query `i` in numbers.
    pub(crate) fn item(&mut self, i: usize) -> Result<Resolved, Failed> {
        let Some(&[s, t, c, p]) = self.q.items.get(i) else {
            return Err(Failed::new(i, Problem::Other(format!("no query {i}"))));
        };
        let g = self.g.policy();
        let ssid = self.sid(s).map_err(|e| Failed::new(i, e))?;
        let tsid = self.sid(t).map_err(|e| Failed::new(i, e))?;
        let class = match self.classes.get(c as usize).copied().flatten() {
            Some(k) => k,
            None => {
                let name = self.q.classes.list.get(c as usize).map_or("", |b| b);
                let k = g.class(name).map_err(|e| Failed::new(i, e))?;
                if let Some(slot) = self.classes.get_mut(c as usize) {
                    *slot = Some(k);
                }
                k
            }
        };
        let av = if self.q.perms.list.is_empty() {
            AccessVector::NONE
        } else if let Some(&av) = self.avs.get(&(c, p)) {
            av
        } else {
            let names: Vec<&str> = self
                .q
                .perms
                .list
                .get(p as usize)
                .map_or("", |b| b)
                .split_ascii_whitespace()
                .collect();
            if names.is_empty() {
                return Err(Failed::new(
                    i,
                    SecurityError::UnknownPermission {
                        class: g.class_name(class).unwrap_or("?").into(),
                        perm: String::new(),
                        near: String::new(),
                    },
                ));
            }
            let av = g.perms(class, &names).map_err(|e| Failed::new(i, e))?;
            self.avs.insert((c, p), av);
            av
        };
        Ok((ssid, tsid, class, av))
    }

    fn sid(&mut self, n: u32) -> Result<Sid, EngineError> {
        if let Some(sid) = self.sids.get(n as usize).copied().flatten() {
            return Ok(sid);
        }
        let sid = self
            .g
            .sid(self.q.contexts.list.get(n as usize).map_or("", |b| b))?;
        if let Some(slot) = self.sids.get_mut(n as usize) {
            *slot = Some(sid);
        }
        Ok(sid)
    }
}

/// The number of a context or class name, which must be a str.
fn number(strings: &mut Strings, item: Borrowed<'_, '_, PyAny>, i: usize) -> PyResult<u32> {
    match item.cast::<PyString>() {
        Ok(s) => Ok(strings.number(s.to_str()?)),
        Err(_) => Err(PyTypeError::new_err(format!(
            "query {i}: contexts and class must be str"
        ))),
    }
}

fn shape(i: usize, want: usize) -> PyErr {
    let what = if want == 4 {
        "(scontext, tcontext, tclass, perms)"
    } else {
        "(scontext, tcontext, tclass)"
    };
    PyTypeError::new_err(format!("query {i}: expected a tuple {what}"))
}

/// The same error, its message prefixed with the query's position.
fn at(i: usize, e: PyErr, py: Python<'_>) -> PyErr {
    let msg = format!("query {i}: {}", e.value(py));
    if e.is_instance_of::<PyTypeError>(py) {
        PyTypeError::new_err(msg)
    } else {
        crate::errors::Error::new_err(msg)
    }
}
