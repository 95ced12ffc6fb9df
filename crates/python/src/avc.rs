//! `seaccess.Avc`: the access vector cache in front of a `Policy`, following its reloads and
//! boolean commits.

use std::sync::Arc;

use pyo3::prelude::*;
use seaccess_avc::AvcError;
use seaccess_avc::Verdict;
use seaccess_security::SecurityError;
use seaccess_types::{ClassId, Registration, ServerError, Sid};

use crate::batch::{Failed, Queries, Resolved};
use crate::errors;
use crate::errors::Problem;
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

/// How many times one check resolves its names again when the policy changes between
/// resolving and deciding; past this it fails (with an error, never an answer).
const RETRIES: usize = 64;

/// A server error as the security server's own, where the cache's seam carries one.
fn server_problem(e: ServerError) -> Problem {
    match e {
        ServerError::InvalidSid(sid) => SecurityError::InvalidSid(sid).into(),
        ServerError::InvalidClass(c) => SecurityError::InvalidClass(c.0.into()).into(),
        e => Problem::Other(AvcError::Server(e).to_string()),
    }
}

fn changed_too_often() -> Problem {
    Problem::Other(format!(
        "the policy changed {RETRIES} times during one check"
    ))
}

impl Avc {
    /// The check of one resolved query, made only if the cache answers from the generation
    /// the query was resolved under (`Err(())` otherwise: resolve again), and audited as
    /// avc_has_perm does: True if allowed, or denied but not enforced.
    fn check(
        &self,
        (s, t, class, av): Resolved,
        at: seaccess_types::Seqno,
    ) -> Result<Result<bool, ()>, Problem> {
        match self
            .avc
            .check_at(s, t, class, av, at)
            .map_err(server_problem)?
        {
            Ok(v) => {
                self.audit(s, t, class, &v);
                Ok(Ok(v.allowed()))
            }
            Err(_) => Ok(Err(())),
        }
    }

    fn audit(&self, s: Sid, t: Sid, class: ClassId, v: &Verdict) {
        self.avc.audit(s, t, class, v, None);
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
        Ok(Avc {
            shared,
            avc,
            _following: following,
        })
    }

    /// Whether every permission is granted: True if allowed, or denied but not enforced
    /// (permissive mode or a permissive domain), as avc_has_perm returns 0. The names are
    /// resolved under one policy generation and answered by that generation's decision; a
    /// reload in between makes the check resolve again.
    fn has_perm(
        &self,
        scontext: &str,
        tcontext: &str,
        tclass: &str,
        perms: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let names = perm_names(perms)?;
        let run = || -> Result<bool, Problem> {
            for _ in 0..RETRIES {
                let g = self.shared.server.snapshot();
                let (s, t) = (
                    self.shared.sid(&g, scontext)?,
                    self.shared.sid(&g, tcontext)?,
                );
                let class = g.class(tclass)?;
                let (av, _) = perm_bits(&g, class, &names)?;
                if let Ok(allowed) = self.check((s, t, class, av), g.seqno())? {
                    return Ok(allowed);
                }
            }
            Err(changed_too_often())
        };
        run().map_err(|e| e.into_py(""))
    }

    /// has_perm for each (scontext, tcontext, tclass, perms), with the interpreter released:
    /// each query answered by the decision of the generation its names were resolved under
    /// (after a reload the rest of the batch is resolved under the new one).
    fn has_perm_many(&self, py: Python<'_>, queries: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let q = Queries::read(queries, true)?;
        let shared = &self.shared;
        py.detach(|| -> Result<Vec<bool>, Failed> {
            let mut out = Vec::with_capacity(q.len());
            let mut retries = 0;
            while out.len() < q.len() {
                let g = shared.server.snapshot();
                let mut r = q.resolver(shared, &g);
                while out.len() < q.len() {
                    let i = out.len();
                    match self
                        .check(r.item(i)?, g.seqno())
                        .map_err(|e| Failed::new(i, e))?
                    {
                        Ok(allowed) => {
                            out.push(allowed);
                            retries = 0;
                        }
                        Err(()) => break,
                    }
                }
                if out.len() < q.len() {
                    retries += 1;
                    if retries >= RETRIES {
                        return Err(Failed::new(out.len(), changed_too_often()));
                    }
                }
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
        format!(
            "<seaccess.Avc capacity={} seqno={}>",
            self.avc.capacity(),
            self.avc.seqno().0
        )
    }
}
