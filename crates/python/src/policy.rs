//! `seaccess.Policy`: a loaded policy and the security server's answers on it.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use seaccess_security::{SecurityError, SecurityServer};
use seaccess_types::Sid;

use crate::batch::{Failed, Queries};
use crate::decision::{AvDecision, Decision};
use crate::errors;
use crate::names::{perm_bits, perm_names, Shared};

/// A binary policy loaded into a security server of its own.
#[pyclass(frozen, module = "seaccess")]
pub struct Policy {
    pub(crate) shared: Arc<Shared>,
}

/// Reads a policy file (a regular file, size-bounded) with the interpreter released.
fn read(py: Python<'_>, path: &PathBuf) -> PyResult<Vec<u8>> {
    py.detach(|| seaccess_security::read_policy_file(path))
        .map_err(|e| errors::policy_file(&e, &path.display().to_string()))
}

#[pymethods]
impl Policy {
    /// Loads a binary policy file (policy.33 and the like).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Policy> {
        let data = read(py, &path)?;
        let server = py
            .detach(|| SecurityServer::from_bytes(&data))
            .map_err(|e| errors::security(&e, &path.display().to_string()))?;
        Ok(Policy {
            shared: Arc::new(Shared::new(server)),
        })
    }

    /// Loads a binary policy image held in memory.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Policy> {
        let server = py
            .detach(|| SecurityServer::from_bytes(data))
            .map_err(|e| errors::security(&e, "policy image"))?;
        Ok(Policy {
            shared: Arc::new(Shared::new(server)),
        })
    }

    /// Replaces the policy with another file's, atomically; caches made on this policy follow.
    /// Returns the new seqno. On error the old policy stays.
    fn reload(&self, py: Python<'_>, path: PathBuf) -> PyResult<u32> {
        let data = read(py, &path)?;
        let seqno = py
            .detach(|| self.shared.server.reload(&data))
            .map_err(|e| errors::security(&e, &path.display().to_string()))?;
        Ok(seqno.0)
    }

    /// The policy's sequence number: 1 when loaded, one more at each reload or boolean commit.
    #[getter]
    fn seqno(&self) -> u32 {
        self.shared.server.seqno().0
    }

    /// Whether each permission is allowed, and why each denied one is denied.
    fn check(
        &self,
        scontext: &str,
        tcontext: &str,
        tclass: &str,
        perms: &Bound<'_, PyAny>,
    ) -> PyResult<Decision> {
        let names = perm_names(perms)?;
        let g = self.shared.server.snapshot();
        let run = || -> Result<Decision, SecurityError> {
            let ssid = self.shared.sid(&g, scontext)?;
            let tsid = self.shared.sid(&g, tcontext)?;
            let class = g.class(tclass)?;
            let (_, bits) = perm_bits(&g, class, &names)?;
            let ex = g.explain(ssid, tsid, class)?;
            Ok(Decision::new(
                (scontext.into(), tcontext.into(), tclass.into()),
                &names,
                &bits,
                &ex,
            ))
        };
        run().map_err(|e| errors::security(&e, ""))
    }

    /// For each (scontext, tcontext, tclass, perms) query, whether the policy allows every
    /// permission: a list of bools. Computed with the interpreter released.
    fn check_many(&self, py: Python<'_>, queries: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let q = Queries::read(queries, true)?;
        let shared = &self.shared;
        py.detach(|| -> Result<Vec<bool>, Failed> {
            let g = shared.server.snapshot();
            let resolved = q.resolve(shared, &g)?;
            let mut out = Vec::with_capacity(q.len());
            for (i, (s, t, c, av)) in resolved.into_iter().enumerate() {
                let d = g.compute_av(s, t, c).map_err(|e| Failed::new(i, e))?;
                out.push(d.allowed.contains(av));
            }
            Ok(out)
        })
        .map_err(Failed::into_py)
    }

    /// The access vector decision for a (source, target, class), as security_compute_av.
    fn compute_av(&self, scontext: &str, tcontext: &str, tclass: &str) -> PyResult<AvDecision> {
        let g = self.shared.server.snapshot();
        let run = || -> Result<AvDecision, SecurityError> {
            let (s, t) = (
                self.shared.sid(&g, scontext)?,
                self.shared.sid(&g, tcontext)?,
            );
            Ok(g.compute_av(s, t, g.class(tclass)?)?.into())
        };
        run().map_err(|e| errors::security(&e, ""))
    }

    /// compute_av for each (scontext, tcontext, tclass), with the interpreter released.
    fn compute_av_many(
        &self,
        py: Python<'_>,
        queries: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<AvDecision>> {
        let q = Queries::read(queries, false)?;
        let shared = &self.shared;
        py.detach(|| -> Result<Vec<AvDecision>, Failed> {
            let g = shared.server.snapshot();
            let resolved = q.resolve(shared, &g)?;
            let mut out = Vec::with_capacity(q.len());
            for (i, (s, t, c, _)) in resolved.into_iter().enumerate() {
                out.push(g.compute_av(s, t, c).map_err(|e| Failed::new(i, e))?.into());
            }
            Ok(out)
        })
        .map_err(Failed::into_py)
    }

    /// The context of a new object of class `tclass` created by `scontext` in `tcontext`
    /// (security_compute_create), with `name` for name-based type transitions.
    #[pyo3(signature = (scontext, tcontext, tclass, name = None))]
    fn compute_create(
        &self,
        scontext: &str,
        tcontext: &str,
        tclass: &str,
        name: Option<&str>,
    ) -> PyResult<String> {
        self.new_context(scontext, tcontext, tclass, |g, s, t, c| {
            g.compute_create(s, t, c, name)
        })
    }

    /// The context an object is relabeled to (security_compute_relabel).
    fn compute_relabel(&self, scontext: &str, tcontext: &str, tclass: &str) -> PyResult<String> {
        self.new_context(scontext, tcontext, tclass, |g, s, t, c| {
            g.compute_relabel(s, t, c)
        })
    }

    /// The context of a member of a polyinstantiated object (security_compute_member).
    fn compute_member(&self, scontext: &str, tcontext: &str, tclass: &str) -> PyResult<String> {
        self.new_context(scontext, tcontext, tclass, |g, s, t, c| {
            g.compute_member(s, t, c)
        })
    }

    /// Every boolean: name -> (active, pending).
    #[getter]
    fn booleans(&self) -> PyResult<BTreeMap<String, (bool, bool)>> {
        let server = &self.shared.server;
        let mut out = BTreeMap::new();
        for (name, active) in server.snapshot().booleans() {
            let pending = server
                .pending_boolean(&name)
                .map_err(|e| errors::security(&e, ""))?;
            out.insert(name, (active, pending));
        }
        Ok(out)
    }

    /// Sets a boolean's pending value; `commit_booleans` makes it active.
    fn set_boolean(&self, name: &str, value: bool) -> PyResult<()> {
        self.shared
            .server
            .set_boolean(name, value)
            .map_err(|e| errors::security(&e, ""))
    }

    /// Makes every pending boolean value active at once; returns the new seqno.
    fn commit_booleans(&self, py: Python<'_>) -> u32 {
        py.detach(|| self.shared.server.commit_booleans().0)
    }

    fn __repr__(&self) -> String {
        format!("<seaccess.Policy seqno={}>", self.seqno())
    }
}

impl Policy {
    fn new_context(
        &self,
        scontext: &str,
        tcontext: &str,
        tclass: &str,
        f: impl FnOnce(
            &seaccess_security::Generation,
            Sid,
            Sid,
            seaccess_types::ClassId,
        ) -> Result<Sid, SecurityError>,
    ) -> PyResult<String> {
        let g = self.shared.server.snapshot();
        let run = || -> Result<String, SecurityError> {
            let (s, t) = (
                self.shared.sid(&g, scontext)?,
                self.shared.sid(&g, tcontext)?,
            );
            let sid = f(&g, s, t, g.class(tclass)?)?;
            g.sid_to_context(sid)
        };
        run().map_err(|e| errors::security(&e, ""))
    }
}
