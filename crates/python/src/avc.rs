//! `seaccess.Avc`: the access vector cache in front of a `Policy`, following its reloads and
//! boolean commits.

use pyo3::prelude::*;
use seaccess_engine::{Engine, EngineError};

use crate::batch::{Failed, Queries};
use crate::errors;
use crate::errors::Problem;
use crate::names::{perm_bits, perm_names};
use crate::policy::Policy;

/// A cache of decisions of one policy, as the kernel's AVC: `has_perm` answers as
/// avc_has_perm does, enforcing by default.
#[pyclass(frozen, module = "seaccess")]
pub struct Avc {
    /// An engine over the policy's: its server and memo, this cache and mode
    /// ([`seaccess_engine::Builder::over`]); every check goes through its `with_generation`.
    engine: Engine,
}

#[pymethods]
impl Avc {
    #[new]
    #[pyo3(signature = (policy, capacity = seaccess_avc::DEFAULT_CAPACITY))]
    fn new(policy: &Policy, capacity: usize) -> PyResult<Avc> {
        if capacity == 0 {
            return Err(errors::Error::new_err("Avc capacity must be at least 1"));
        }
        let engine = Engine::builder().capacity(capacity).over(&policy.engine);
        crate::fork::register(&engine);
        Ok(Avc { engine })
    }

    /// Whether every permission is granted: True if allowed, or denied but not enforced
    /// (permissive mode or a permissive domain), as avc_has_perm returns 0. The names are
    /// resolved under one policy generation and answered by that generation's decision; a
    /// reload in between makes the check resolve again. Audited as avc_has_perm is.
    fn has_perm(
        &self,
        scontext: &str,
        tcontext: &str,
        tclass: &str,
        perms: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let names = perm_names(perms)?;
        self.engine
            .with_generation(|g| {
                let (s, t) = (g.sid(scontext)?, g.sid(tcontext)?);
                let p = g.policy();
                let class = p.class(tclass)?;
                let (av, _) = perm_bits(p, class, &names)?;
                Ok(g.check(s, t, class, av)?.allowed())
            })
            .map_err(|e| Problem::from(e).into_py(""))
    }

    /// has_perm for each (scontext, tcontext, tclass, perms), with the interpreter released:
    /// each query answered by the decision of the generation its names were resolved under
    /// (after a reload the rest of the batch is resolved under the new one).
    fn has_perm_many(&self, py: Python<'_>, queries: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let q = Queries::read(queries, true)?;
        let engine = &self.engine;
        py.detach(|| -> Result<Vec<bool>, Failed> {
            let mut out = Vec::with_capacity(q.len());
            while out.len() < q.len() {
                // One round: the rest of the batch under one generation, run again by
                // with_generation while the policy changes before any query is answered. A
                // round that answered some ends at the change, and the next round has the
                // whole retry budget again: the answered ones stay (each was resolved and
                // decided wholly in one generation), so a batch longer than any quiet spell
                // between reloads still ends.
                let round = engine.with_generation(|g| {
                    let start = out.len();
                    let mut r = q.resolver(g);
                    while out.len() < q.len() {
                        let i = out.len();
                        let (s, t, class, av) = match r.item(i) {
                            Ok(x) => x,
                            Err(f) => return Ok(Err(f)),
                        };
                        match g.check(s, t, class, av) {
                            Ok(a) => out.push(a.allowed()),
                            Err(EngineError::Stale { .. }) if out.len() > start => break,
                            Err(e @ EngineError::Stale { .. }) => return Err(e),
                            Err(e) => return Ok(Err(Failed::new(i, e))),
                        }
                    }
                    Ok(Ok(()))
                });
                match round {
                    Ok(r) => r?,
                    Err(e) => return Err(Failed::new(out.len(), e)),
                }
            }
            Ok(out)
        })
        .map_err(Failed::into_py)
    }

    /// The cache's counters, as selinuxfs's avc/cache_stats: lookups, hits, misses,
    /// allocations, reclaims, frees.
    fn stats(&self) -> std::collections::BTreeMap<&'static str, u64> {
        let s = self.engine.avc().cache_stats();
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
        self.engine.avc().capacity()
    }

    /// Enforcing (the default) or permissive: in permissive mode denials are granted.
    #[getter]
    fn get_enforcing(&self) -> bool {
        self.engine.enforcing()
    }

    #[setter]
    fn set_enforcing(&self, on: bool) {
        self.engine.set_enforcing(on);
    }

    fn __repr__(&self) -> String {
        format!(
            "<seaccess.Avc capacity={} seqno={}>",
            self.engine.avc().capacity(),
            self.engine.avc().seqno().0
        )
    }
}
