//! `seaccess.Policy`: a loaded policy and the security server's answers on it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pyo3::prelude::*;
use seaccess_engine::{Engine, EngineError, Generation};
use seaccess_types::Sid;

use crate::batch::{Failed, Queries};
use crate::decision::{AvDecision, Decision};
use crate::errors;
use crate::errors::Problem;
use crate::names::{perm_bits, perm_names};

/// A binary policy loaded into a security server of its own.
#[pyclass(frozen, module = "seaccess")]
pub struct Policy {
    /// The policy's engine: its security server and context memo are what every `Avc` made on
    /// this policy shares ([`seaccess_engine::Builder::over`]).
    pub(crate) engine: Engine,
}

/// The policy's own engine answers from the security server alone (its explanations and
/// computations); its cache is never asked, so it is the smallest there is. The caches Python
/// asks are each `Avc`'s own.
fn builder() -> seaccess_engine::Builder {
    Engine::builder().capacity(1)
}

/// Runs `f` under the current policy generation, its errors as Python's exceptions. Nothing
/// here checks through the cache, so `f` never meets a changed policy and runs once.
fn in_generation<T>(
    engine: &Engine,
    f: impl FnMut(&Generation<'_>) -> Result<T, EngineError>,
) -> PyResult<T> {
    engine
        .with_generation(f)
        .map_err(|e| Problem::from(e).into_py(""))
}

/// A batch computed under one generation, its errors naming the query that failed.
fn batch<T>(
    engine: &Engine,
    mut f: impl FnMut(&Generation<'_>) -> Result<T, Failed>,
) -> Result<T, Failed> {
    engine
        .with_generation(|g| Ok(f(g)))
        .map_err(|e| Failed::new(0, e))?
}

#[pymethods]
impl Policy {
    /// Loads a binary policy file (policy.33 and the like).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Policy> {
        let engine = py
            .detach(|| builder().open(&path))
            .map_err(|e| errors::open(e, &path.display().to_string()))?;
        crate::fork::register(&engine);
        Ok(Policy { engine })
    }

    /// Loads a binary policy image held in memory.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Policy> {
        let engine = py
            .detach(|| builder().from_bytes(data))
            .map_err(|e| errors::open(e, "policy image"))?;
        crate::fork::register(&engine);
        Ok(Policy { engine })
    }

    /// Replaces the policy with another file's, atomically; caches made on this policy follow.
    /// Returns the new seqno. On error the old policy stays.
    fn reload(&self, py: Python<'_>, path: PathBuf) -> PyResult<u32> {
        let seqno = py
            .detach(|| self.engine.reload_file(&path))
            .map_err(|e| errors::open(e, &path.display().to_string()))?;
        Ok(seqno.0)
    }

    /// The policy's sequence number: 1 when loaded, one more at each reload or boolean commit.
    #[getter]
    fn seqno(&self) -> u32 {
        self.engine.seqno().0
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
        in_generation(&self.engine, |g| {
            let ssid = g.sid(scontext)?;
            let tsid = g.sid(tcontext)?;
            let p = g.policy();
            let class = p.class(tclass)?;
            let (_, bits) = perm_bits(p, class, &names)?;
            let ex = p.explain(ssid, tsid, class)?;
            Ok(Decision::new(
                (scontext.into(), tcontext.into(), tclass.into()),
                &names,
                &bits,
                &ex,
            ))
        })
    }

    /// For each (scontext, tcontext, tclass, perms) query, whether the policy allows every
    /// permission: a list of bools. Computed with the interpreter released.
    fn check_many(&self, py: Python<'_>, queries: &Bound<'_, PyAny>) -> PyResult<Vec<bool>> {
        let q = Queries::read(queries, true)?;
        py.detach(|| {
            batch(&self.engine, |g| {
                let resolved = q.resolve(g)?;
                let mut out = Vec::with_capacity(q.len());
                for (i, (s, t, c, av)) in resolved.into_iter().enumerate() {
                    let d = g
                        .policy()
                        .compute_av(s, t, c)
                        .map_err(|e| Failed::new(i, e))?;
                    out.push(d.allowed.contains(av));
                }
                Ok(out)
            })
        })
        .map_err(Failed::into_py)
    }

    /// The access vector decision for a (source, target, class), as security_compute_av.
    fn compute_av(&self, scontext: &str, tcontext: &str, tclass: &str) -> PyResult<AvDecision> {
        in_generation(&self.engine, |g| {
            let (s, t) = (g.sid(scontext)?, g.sid(tcontext)?);
            let p = g.policy();
            Ok(p.compute_av(s, t, p.class(tclass)?)?.into())
        })
    }

    /// compute_av for each (scontext, tcontext, tclass), with the interpreter released.
    fn compute_av_many(
        &self,
        py: Python<'_>,
        queries: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<AvDecision>> {
        let q = Queries::read(queries, false)?;
        py.detach(|| {
            batch(&self.engine, |g| {
                let resolved = q.resolve(g)?;
                let mut out = Vec::with_capacity(q.len());
                for (i, (s, t, c, _)) in resolved.into_iter().enumerate() {
                    let d = g
                        .policy()
                        .compute_av(s, t, c)
                        .map_err(|e| Failed::new(i, e))?;
                    out.push(d.into());
                }
                Ok(out)
            })
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
        let server = self.engine.server();
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
        self.engine
            .server()
            .set_boolean(name, value)
            .map_err(|e| errors::security(&e, ""))
    }

    /// Makes every pending boolean value active at once; returns the new seqno.
    fn commit_booleans(&self, py: Python<'_>) -> u32 {
        py.detach(|| self.engine.server().commit_booleans().0)
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
        f: impl Fn(
            &seaccess_security::Generation,
            Sid,
            Sid,
            seaccess_types::ClassId,
        ) -> Result<Sid, seaccess_security::SecurityError>,
    ) -> PyResult<String> {
        in_generation(&self.engine, |g| {
            let (s, t) = (g.sid(scontext)?, g.sid(tcontext)?);
            let p = g.policy();
            let sid = f(p, s, t, p.class(tclass)?)?;
            Ok(p.sid_to_context(sid)?)
        })
    }
}
