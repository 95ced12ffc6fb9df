//! The answers Python gets: a raw access vector decision, and a check's per-permission verdicts
//! with the reasons the security server's explain module gives for each denial.

use pyo3::prelude::*;
use seaccess_security::DenialReason;

/// The kernel's av_decision for one (source, target, class): permission bit masks.
#[pyclass(frozen, eq, hash, module = "seaccess")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AvDecision {
    #[pyo3(get)]
    allowed: u32,
    #[pyo3(get)]
    decided: u32,
    #[pyo3(get)]
    auditallow: u32,
    #[pyo3(get)]
    auditdeny: u32,
    #[pyo3(get)]
    seqno: u32,
    #[pyo3(get)]
    flags: u32,
}

impl From<seaccess_types::AvDecision> for AvDecision {
    fn from(d: seaccess_types::AvDecision) -> Self {
        AvDecision {
            allowed: d.allowed.0,
            decided: d.decided.0,
            auditallow: d.auditallow.0,
            auditdeny: d.auditdeny.0,
            seqno: d.seqno.0,
            flags: d.flags.0,
        }
    }
}

#[pymethods]
impl AvDecision {
    /// Whether the source type is permissive (the kernel's AVD_FLAGS_PERMISSIVE).
    #[getter]
    fn permissive(&self) -> bool {
        self.flags & seaccess_types::DecisionFlags::PERMISSIVE.0 != 0
    }

    /// (allowed, decided, auditallow, auditdeny, seqno, flags), as selinuxfs's access file
    /// lists them.
    fn astuple(&self) -> (u32, u32, u32, u32, u32, u32) {
        (
            self.allowed,
            self.decided,
            self.auditallow,
            self.auditdeny,
            self.seqno,
            self.flags,
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "AvDecision(allowed={:#x}, decided={:#x}, auditallow={:#x}, auditdeny={:#x}, seqno={}, flags={:#x})",
            self.allowed, self.decided, self.auditallow, self.auditdeny, self.seqno, self.flags
        )
    }
}

/// Why one permission was denied.
#[pyclass(frozen, module = "seaccess")]
#[derive(Clone)]
pub struct Reason {
    /// "no_allow_rule", "boolean_off", "constraint", "role_allow" or "type_bounds" (`DenialReason::kind`).
    #[pyo3(get)]
    kind: &'static str,
    /// The explanation, as `seaccess check` prints it.
    #[pyo3(get)]
    text: String,
    /// For "boolean_off": the booleans the conditions that would allow it read.
    #[pyo3(get)]
    booleans: Vec<String>,
}

impl From<&DenialReason> for Reason {
    fn from(r: &DenialReason) -> Self {
        let booleans = match r {
            DenialReason::BooleanOff { booleans } => booleans.clone(),
            _ => Vec::new(),
        };
        Reason {
            kind: r.kind(),
            text: r.to_string(),
            booleans,
        }
    }
}

#[pymethods]
impl Reason {
    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!("Reason(kind={:?}, text={:?})", self.kind, self.text)
    }
}

/// The verdict on one requested permission.
#[pyclass(frozen, module = "seaccess")]
#[derive(Clone)]
pub struct Permission {
    #[pyo3(get)]
    name: String,
    /// Whether the policy allows it (a permissive domain's denial is still False here; see
    /// `Decision.permissive`).
    #[pyo3(get)]
    allowed: bool,
    /// Whether the kernel would write an audit record for it: an allowed permission under
    /// auditallow, a denied one not under dontaudit.
    #[pyo3(get)]
    audited: bool,
    /// Why it is denied; empty when allowed.
    #[pyo3(get)]
    reasons: Vec<Reason>,
}

#[pymethods]
impl Permission {
    fn __bool__(&self) -> bool {
        self.allowed
    }

    /// The line `seaccess check` prints for this permission.
    fn __str__(&self) -> String {
        if self.allowed {
            let audit = if self.audited {
                " (audited: auditallow)"
            } else {
                ""
            };
            format!("{}: allowed{audit}", self.name)
        } else {
            let why: Vec<&str> = self.reasons.iter().map(|r| r.text.as_str()).collect();
            let quiet = if self.audited {
                ""
            } else {
                ", not audited: dontaudit"
            };
            format!("{}: denied: {}{quiet}", self.name, why.join("; "))
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "Permission(name={:?}, allowed={})",
            self.name,
            if self.allowed { "True" } else { "False" }
        )
    }
}

/// The answer to `Policy.check`: true when every requested permission is allowed.
#[pyclass(frozen, module = "seaccess")]
pub struct Decision {
    #[pyo3(get)]
    scontext: String,
    #[pyo3(get)]
    tcontext: String,
    #[pyo3(get)]
    tclass: String,
    /// One verdict per requested permission, in the order asked.
    #[pyo3(get)]
    permissions: Vec<Permission>,
    /// Whether the source type is permissive: its denials are logged, not enforced.
    #[pyo3(get)]
    permissive: bool,
    /// The whole decision for the triple.
    #[pyo3(get)]
    av: AvDecision,
}

impl Decision {
    /// The verdicts on the named permissions (each with its bit) under an explained decision.
    pub(crate) fn new(
        (scontext, tcontext, tclass): (String, String, String),
        names: &[String],
        bits: &[u32],
        ex: &seaccess_security::Explanation,
    ) -> Decision {
        let d = &ex.decision;
        let permissions = names
            .iter()
            .zip(bits)
            .map(|(name, &bit)| {
                let mask = 1u32.checked_shl(bit).unwrap_or(0);
                let allowed = d.allowed.0 & mask != 0;
                let audited = if allowed {
                    d.auditallow.0 & mask != 0
                } else {
                    d.auditdeny.0 & mask != 0
                };
                let reasons = if allowed {
                    Vec::new()
                } else {
                    ex.reasons
                        .iter()
                        .filter(|(b, _)| *b == bit)
                        .map(|(_, r)| r.into())
                        .collect()
                };
                Permission {
                    name: name.clone(),
                    allowed,
                    audited,
                    reasons,
                }
            })
            .collect();
        Decision {
            scontext,
            tcontext,
            tclass,
            permissions,
            permissive: d.flags.permissive(),
            av: (*d).into(),
        }
    }
}

#[pymethods]
impl Decision {
    /// Whether every requested permission is allowed.
    #[getter]
    fn allowed(&self) -> bool {
        self.permissions.iter().all(|p| p.allowed)
    }

    fn __bool__(&self) -> bool {
        self.allowed()
    }

    /// The names of the denied permissions, in the order asked.
    #[getter]
    fn denied(&self) -> Vec<String> {
        self.permissions
            .iter()
            .filter(|p| !p.allowed)
            .map(|p| p.name.clone())
            .collect()
    }

    /// For each denied permission, the texts of its reasons.
    #[getter]
    fn reasons(&self) -> std::collections::BTreeMap<String, Vec<String>> {
        self.permissions
            .iter()
            .filter(|p| !p.allowed)
            .map(|p| {
                (
                    p.name.clone(),
                    p.reasons.iter().map(|r| r.text.clone()).collect(),
                )
            })
            .collect()
    }

    /// The lines `seaccess check` prints.
    fn __str__(&self) -> String {
        let tail = if self.permissive {
            ", but the source type is permissive: logged, not enforced"
        } else {
            ""
        };
        let lines: Vec<String> = self
            .permissions
            .iter()
            .map(|p| {
                if p.allowed {
                    p.__str__()
                } else {
                    format!("{}{tail}", p.__str__())
                }
            })
            .collect();
        lines.join("\n")
    }

    fn __repr__(&self) -> String {
        format!(
            "Decision({:?}, {:?}, {:?}, allowed={}, denied={:?})",
            self.scontext,
            self.tcontext,
            self.tclass,
            if self.allowed() { "True" } else { "False" },
            self.denied()
        )
    }
}
