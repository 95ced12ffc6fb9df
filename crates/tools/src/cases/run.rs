//! Running a [`Suite`] against one policy generation: every name resolved first (so that a bad
//! file fails as a whole, each error with its line and the nearest names), then each case asked
//! of the security server and its outcome reported with the server's own words for a denial.

use seaccess_security::Generation;
use seaccess_types::{ClassId, Sid};
use serde::Serialize;

use super::names::{class_id, perm_bit, sid, Problems};
use super::neverallow::{self, Never, Violation};
use super::read::{Case, Kind, Query, Suite};
use crate::suggest::did_you_mean;
use crate::ToolsError;

/// How one case went.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub kind: Kind,
    /// The author's name for the case, if given.
    pub name: Option<String>,
    /// The name to report it by: the author's, else its kind and line.
    pub title: String,
    /// The line its table starts on.
    pub line: usize,
    pub passed: bool,
    /// What the case expects and what the engine answered, in words.
    pub expected: String,
    pub got: String,
    /// For a failure, one line per thing that went the other way: each permission an
    /// `[[allow]]` found denied, with the engine's reason; each one a `[[deny]]` found allowed.
    pub details: Vec<String>,
    /// For a failing `[[neverallow]]`, what the policy allows that it forbids.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<Violation>,
}

/// A case with every name resolved.
enum Ready {
    Access {
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        perms: Vec<(String, u32)>,
    },
    Label {
        ssid: Sid,
        tsid: Sid,
        class: ClassId,
        name: Option<String>,
        expect: String,
    },
    Never(Never),
}

/// Runs every case of `suite` on `g`: their outcomes in the file's order, or every error in
/// the file (unknown names, invalid contexts, booleans the policy lacks) if there is any.
pub fn run(g: &Generation, suite: &Suite) -> Result<Vec<Outcome>, Vec<ToolsError>> {
    let err = |line: usize, what: String| ToolsError::Cases {
        file: suite.file.clone(),
        line,
        what,
    };
    let mut errors = Vec::new();
    // The generations cases ask under: `g` itself (None) or one per set of boolean values.
    let mut variants: Vec<(Vec<(String, bool)>, Generation)> = Vec::new();
    let mut which = Vec::new();
    for case in &suite.cases {
        match variant(g, case, &mut variants) {
            Ok(w) => which.push((case, w)),
            // Its other names are still checked, under the policy's values.
            Err((line, what)) => {
                errors.push(err(line, what));
                which.push((case, None));
            }
        }
    }
    let mut ready = Vec::new();
    for (case, w) in which {
        let gen = w.and_then(|i| variants.get(i)).map_or(g, |(_, v)| v);
        match resolve(gen, &case.query) {
            Ok(r) => ready.push((case, gen, r)),
            Err(list) => errors.extend(list.into_iter().map(|(line, what)| err(line, what))),
        }
    }
    if !errors.is_empty() {
        errors.sort_by_key(|e| match e {
            ToolsError::Cases { line, .. } | ToolsError::Record { line, .. } => *line,
            ToolsError::Unknown { .. } | ToolsError::Query(_) => 0,
        });
        return Err(errors);
    }
    Ok(ready
        .into_iter()
        .map(|(case, gen, r)| ask(gen, case, &r))
        .collect())
}

/// The generation a case asks under: None for `g`, else the index of its variant in `variants`
/// (made on first use, shared by every case with the same values).
fn variant(
    g: &Generation,
    case: &Case,
    variants: &mut Vec<(Vec<(String, bool)>, Generation)>,
) -> Result<Option<usize>, (usize, String)> {
    if case.booleans.is_empty() {
        return Ok(None);
    }
    let mut key = Vec::new();
    for (name, value) in &case.booleans {
        if g.boolean(&name.value).is_err() {
            let known = g.policy().bool_names.by_value.iter().map(|b| &**b);
            return Err((
                name.line,
                format!(
                    "unknown boolean \"{}\"{}",
                    name.value,
                    did_you_mean(&name.value, known)
                ),
            ));
        }
        key.push((name.value.clone(), *value));
    }
    key.sort();
    if let Some(i) = variants.iter().position(|(k, _)| *k == key) {
        return Ok(Some(i));
    }
    let values: Vec<(&str, bool)> = key.iter().map(|(n, v)| (n.as_str(), *v)).collect();
    let v = g
        .with_booleans(&values)
        .map_err(|e| (case.line, e.to_string()))?;
    variants.push((key, v));
    Ok(Some(variants.len() - 1))
}

fn resolve(g: &Generation, q: &Query) -> Result<Ready, Problems> {
    let mut bad = Vec::new();
    let r = match q {
        Query::Access {
            scontext,
            tcontext,
            class,
            perms,
        } => {
            let (s, t, c) = (
                sid(g, scontext, &mut bad),
                sid(g, tcontext, &mut bad),
                class_id(g, class, &mut bad),
            );
            let perms: Vec<(String, u32)> = match c {
                Some(c) => perms
                    .iter()
                    .filter_map(|p| {
                        perm_bit(g, c, &class.value, p, &mut bad).map(|b| (p.value.clone(), b))
                    })
                    .collect(),
                None => Vec::new(),
            };
            match (s, t, c) {
                (Some(ssid), Some(tsid), Some(class)) => Some(Ready::Access {
                    ssid,
                    tsid,
                    class,
                    perms,
                }),
                _ => None,
            }
        }
        Query::Label {
            scontext,
            tcontext,
            class,
            name,
            expect,
        } => {
            let (s, t, c) = (
                sid(g, scontext, &mut bad),
                sid(g, tcontext, &mut bad),
                class_id(g, class, &mut bad),
            );
            // The expected context as the engine writes it, so that equal contexts compare equal.
            let e = sid(g, expect, &mut bad).and_then(|e| {
                g.sid_to_context(e)
                    .map_err(|x| bad.push((expect.line, x.to_string())))
                    .ok()
            });
            match (s, t, c, e) {
                (Some(ssid), Some(tsid), Some(class), Some(expect)) => Some(Ready::Label {
                    ssid,
                    tsid,
                    class,
                    name: name.as_ref().map(|n| n.value.clone()),
                    expect,
                }),
                _ => None,
            }
        }
        Query::Neverallow {
            source,
            target,
            classes,
            perms,
        } => neverallow::resolve(g, source, target, classes, perms, &mut bad).map(Ready::Never),
    };
    match r {
        Some(r) if bad.is_empty() => Ok(r),
        _ => Err(bad),
    }
}

fn ask(g: &Generation, case: &Case, r: &Ready) -> Outcome {
    let mut o = Outcome {
        kind: case.kind,
        name: case.name.clone(),
        title: case.title(),
        line: case.line,
        passed: false,
        expected: String::new(),
        got: String::new(),
        details: Vec::new(),
        violations: Vec::new(),
    };
    match r {
        Ready::Access {
            ssid,
            tsid,
            class,
            perms,
        } => access(g, case.kind, *ssid, *tsid, *class, perms, &mut o),
        Ready::Label {
            ssid,
            tsid,
            class,
            name,
            expect,
        } => {
            let got = match case.kind {
                Kind::Create => g.compute_create(*ssid, *tsid, *class, name.as_deref()),
                Kind::Relabel => g.compute_relabel(*ssid, *tsid, *class),
                _ => g.compute_member(*ssid, *tsid, *class),
            };
            o.expected = expect.clone();
            o.got = match got.and_then(|s| g.sid_to_context(s)) {
                Ok(c) => c,
                Err(e) => format!("error: {e}"),
            };
            o.passed = o.got == *expect;
        }
        Ready::Never(n) => {
            o.violations = neverallow::check(g, n);
            o.passed = o.violations.is_empty();
            o.expected = "never allowed".into();
            o.got = match o.violations.len() {
                0 => "never allowed".into(),
                n => format!(
                    "allowed for {} (source type, target type, class)",
                    count(n, "triple", "triples")
                ),
            };
            o.details = o.violations.iter().map(|v| v.to_string()).collect();
        }
    }
    if o.passed {
        o.details.clear();
    }
    o
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn access(
    g: &Generation,
    kind: Kind,
    ssid: Sid,
    tsid: Sid,
    class: ClassId,
    perms: &[(String, u32)],
    o: &mut Outcome,
) {
    let names = |want: bool, allowed: u32| -> Vec<&str> {
        perms
            .iter()
            .filter(|(_, b)| (allowed & (1 << b) != 0) == want)
            .map(|(n, _)| n.as_str())
            .collect()
    };
    let all: Vec<&str> = perms.iter().map(|(n, _)| n.as_str()).collect();
    let want_allowed = kind == Kind::Allow;
    o.expected = format!(
        "{} {}",
        if want_allowed { "allowed" } else { "denied" },
        all.join(" ")
    );
    let ex = match g.explain(ssid, tsid, class) {
        Ok(ex) => ex,
        Err(e) => {
            o.got = format!("error: {e}");
            return;
        }
    };
    let allowed = ex.decision.allowed.0;
    let (yes, no) = (names(true, allowed), names(false, allowed));
    o.got = match (yes.is_empty(), no.is_empty()) {
        (_, true) => format!("allowed {}", yes.join(" ")),
        (true, _) => format!("denied {}", no.join(" ")),
        _ => format!("allowed {}; denied {}", yes.join(" "), no.join(" ")),
    };
    o.passed = if want_allowed {
        no.is_empty()
    } else {
        yes.is_empty()
    };
    for (name, bit) in perms {
        let is_allowed = allowed & (1 << bit) != 0;
        if is_allowed == want_allowed {
            continue;
        }
        if is_allowed {
            o.details.push(format!("{name}: allowed"));
        } else {
            let why: Vec<String> = ex
                .reasons
                .iter()
                .filter(|(b, _)| b == bit)
                .map(|(_, r)| r.to_string())
                .collect();
            o.details
                .push(format!("{name}: denied: {}", why.join("; ")));
        }
    }
}
