//! `seaccess.Avc`: the access vector cache in front of a `Policy`, following its reloads and
//! boolean commits.

use std::sync::Arc;

use pyo3::prelude::*;
use seaccess_avc::AvcError;
use seaccess_security::SecurityError;
use seaccess_types::{Registration, ServerError};

use crate::batch::{Failed, Queries};
use crate::errors::Problem;
use crate::errors;
use crate::names::{perm_bits, perm_names, Shared};
use crate::policy::Policy;

/// A cache of decisions of one policy, as the kernel's AVC: `has_perm` answers as
/// avc_has_perm does, enforcing by default.
#[pyclass(frozen, module = "seaccess")]
pub struct Avc {
    shared: Arc<Shared>,
    avc: Arc<seaccess_avc::Avc>,
    /// Keeps the cache told of the policy's changes for as long as it lives.
    _following: Registration,
}

/// An access check's outcome as a bool: a denial is False, a server error is an error (the
/// security server's own, where the cache's seam carries one).
fn verdict(r: Result<(), AvcError>) -> Result<bool, Problem> {
    match r {
        Ok(()) => Ok(true),
        Err(AvcError::Denied { .. }) => Ok(false),
        Err(AvcError::Server(ServerError::InvalidSid(sid))) => Err(SecurityError::InvalidSid(sid).into()),
        Err(AvcError::Server(ServerError::InvalidClass(c))) => Err(SecurityError::InvalidClass(c.0.into()).into()),
        Err(e) => Err(Problem::Other(e.to_string())),
    }
}

#[pymethods]
impl Avc {
    #[new]
    #[pyo3(signature = (policy, capacity = seaccess_avc::DEFAULT_CAPACITY))]
    fn new(policy: &Policy, capacity: usize) -> PyResult<Avc> {
        if capacity == 0 {
            return Err(errors::Error::new_err("Avc capacity must be at least 1"));
        }
        let shared = policy.shared.clone();
        let avc = Arc::new(seaccess_avc::Avc::new(shared.server.clone(), capacity));
        let following = avc.follow(&*shared.server);
        Ok(Avc { shared, avc, _following: following })
    }

    /// Whether every permission is granted: True if allowed, or denied but not enforced
    /// (permissive mode or a permissive domain), as avc_has_perm returns 0.
    fn has_perm(&self, scontext: &str, tcontext: &str, tclass: &str, perms: &Bound<'_, PyAny>) -> PyResult<bool> {
        let names = perm_names(perms)?;
        let g = self.shared.server.snapshot();
        let run = || -> Result<bool, Problem> {
            let (s, t) = (self.shared.sid(&g, scontext)?, self.shared.sid(&g, tcontext)?);
            let class = g.class(tclass)?;
            let (av, _) = perm_bits(&g, class, &names)?;
            verdict(self.avc.has_perm(s, t, class, av, None))
        };
        run().map_err(|e| e.into_py(""))
    }

    /// has_perm for each (scontext, tcontext, tclass, perms), with the interpreter released.
    fn has_perm_many(&self, py: Python<'_>, queries: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let q = Queries::read(queries, true)?;
        let (shared, avc) = (&self.shared, &self.avc);
        py.detach(|| -> Result<Vec<bool>, Failed> {
            let g = shared.server.snapshot();
            let resolved = q.resolve(shared, &g)?;
            drop(g);
            let mut out = Vec::with_capacity(resolved.len());
            for (i, (s, t, c, av)) in resolved.into_iter().enumerate() {
                out.push(verdict(avc.has_perm(s, t, c, av, None)).map_err(|e| Failed::new(i, e))?);
            }
            Ok(out)
        })
        .map_err(Failed::into_py)
    }

    /// The cache's counters, as selinuxfs's avc/cache_stats: lookups, hits, misses,
    /// allocations, reclaims, frees.
    fn stats(&self) -> std::collections::BTreeMap<&'static str, u64> {
        let s = self.avc.cache_stats();
        [
            ("lookups", s.lookups),
            ("hits", s.hits),
            ("misses", s.misses),
            ("allocations", s.allocations),
            ("reclaims", s.reclaims),
            ("frees", s.frees),
        ]
        .into_iter()
        .collect()
    }

    /// How many decisions the cache holds at most.
    #[getter]
    fn capacity(&self) -> usize {
        self.avc.capacity()
    }

    /// Enforcing (the default) or permissive: in permissive mode denials are granted.
    #[getter]
    fn get_enforcing(&self) -> bool {
        self.avc.enforcing()
    }

    #[setter]
    fn set_enforcing(&self, on: bool) {
        self.avc.set_enforcing(on);
    }

    fn __repr__(&self) -> String {
        format!("<seaccess.Avc capacity={} seqno={}>", self.avc.capacity(), self.avc.seqno().0)
    }
}
