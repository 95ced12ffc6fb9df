//! `seaccess explain`: why each AVC denial in a kernel log or audit.log happened, with
//! audit2why's verdicts (crates/tools' `explain`), as text or one JSON object per record.

use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;

use clap::Args;
use seaccess_security::Generation;
use seaccess_tools::audit::{self, AvcRecord};
use seaccess_tools::explain::{explain, Verdict, Why};
use serde::Serialize;
use serde_json::json;

use crate::output::{warn, CliError, Out};
use crate::PolicyArgs;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  ausearch -m avc -ts today | seaccess explain\n  seaccess explain --policy /etc/selinux/default/policy/policy.33 /var/log/audit/audit.log\n  dmesg | seaccess explain --json"
)]
pub(crate) struct ExplainArgs {
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
    /// One JSON object per denial, in input order: line, scontext, tcontext, tclass, perms,
    /// verdict (allowed, dontaudit, te, boolean, constraint, role or bounds), booleans (name and
    /// the value needed) for `boolean`, constraint (its text) for `constraint`, rule (the allow
    /// rule for the record), reasons (each denied permission's reason).
    #[arg(long)]
    json: bool,
    /// Kernel logs (dmesg, journalctl -k) or audit logs (audit.log, ausearch output) to read;
    /// standard input when none.
    logs: Vec<PathBuf>,
}

/// One input: its name for messages ("FILE:" before line numbers, nothing for standard input)
/// and its text.
pub(crate) struct Log {
    pub(crate) name: Option<String>,
    pub(crate) text: String,
}

impl Log {
    /// An error of the tools ("line N: what") with the log's name before it.
    pub(crate) fn prefixed(&self, e: &str) -> String {
        match &self.name {
            Some(n) => format!("{n}: {e}"),
            None => e.to_string(),
        }
    }

    /// Where a line is, for messages: `FILE:line N` or `line N`.
    pub(crate) fn at(&self, line: usize) -> String {
        match &self.name {
            Some(n) => format!("{n}: line {line}"),
            None => format!("line {line}"),
        }
    }
}

/// The logs named, or standard input. Text that is not UTF-8 is read lossily: a log's stray byte
/// (a path, a command name) must not keep its other records from being read.
pub(crate) fn read_logs(paths: &[PathBuf]) -> Result<Vec<Log>, CliError> {
    if paths.is_empty() {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("reading standard input: {e}"))?;
        return Ok(vec![Log {
            name: None,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }]);
    }
    paths
        .iter()
        .map(|p| {
            let bytes = std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()))?;
            Ok(Log {
                name: Some(p.display().to_string()),
                text: String::from_utf8_lossy(&bytes).into_owned(),
            })
        })
        .collect()
}

/// Every denial of the logs with its explanation, in input order; a record that cannot be read
/// or explained is reported (where it is and what is wrong) and skipped. Returns the denials and
/// whether every AVC record was read and explained. Records of one access are explained once,
/// as audit2why does.
pub(crate) fn explain_logs<'a>(
    g: &Generation,
    logs: &'a [Log],
) -> (Vec<(&'a Log, AvcRecord, Why)>, bool) {
    let mut memo: HashMap<(String, String, String, Vec<String>), Why> = HashMap::new();
    let mut all = true;
    let mut out = Vec::new();
    for log in logs {
        for r in audit::read(&log.text) {
            let rec = match r {
                Ok(rec) if !rec.denied => continue,
                Ok(rec) => rec,
                Err(e) => {
                    all = false;
                    warn(&log.prefixed(&e.to_string()));
                    continue;
                }
            };
            let key = (
                rec.scontext.clone(),
                rec.tcontext.clone(),
                rec.tclass.clone(),
                rec.perms.clone(),
            );
            let why = match memo.get(&key) {
                Some(w) => w.clone(),
                None => match explain(g, &rec) {
                    Ok(w) => {
                        memo.insert(key, w.clone());
                        w
                    }
                    Err(e) => {
                        all = false;
                        warn(&log.prefixed(&e.to_string()));
                        continue;
                    }
                },
            };
            out.push((log, rec, why));
        }
    }
    (out, all)
}

pub(crate) fn run(out: &mut Out, a: &ExplainArgs) -> Result<bool, CliError> {
    let engine = crate::load(&a.policy)?;
    let server = engine.server();
    let g = server.snapshot();
    let logs = read_logs(&a.logs)?;
    let (denials, all) = explain_logs(&g, &logs);
    // Each record's line as written, found by number: split once, not once a record.
    let lines: Vec<Vec<&str>> = if a.json {
        Vec::new()
    } else {
        logs.iter().map(|l| l.text.lines().collect()).collect()
    };
    for (log, rec, why) in &denials {
        if a.json {
            writeln!(out, "{}", record_json(log, rec, why)?)?;
        } else {
            let of_log = logs
                .iter()
                .position(|l| std::ptr::eq(l, *log))
                .and_then(|i| lines.get(i));
            let text = of_log
                .and_then(|l| l.get(rec.line.saturating_sub(1)))
                .copied()
                .unwrap_or("")
                .trim_end();
            writeln!(out, "{}: {text}\n\tWas caused by:", log.at(rec.line))?;
            for l in verdict_lines(why) {
                writeln!(out, "\t\t{l}")?;
            }
            writeln!(out)?;
        }
    }
    Ok(all)
}

/// The explanation in words: the verdict, each denied permission's reason, what would allow it.
fn verdict_lines(why: &Why) -> Vec<String> {
    let mut l = Vec::new();
    let mismatch = "The log may come from another policy, or from other boolean values than this policy's now.";
    match &why.verdict {
        Verdict::Allowed => {
            l.push("Allowed by the current policy.".into());
            l.push(mismatch.into());
            return l;
        }
        Verdict::Dontaudit => {
            l.push("Missing type enforcement (TE) allow rule, and a dontaudit rule in the current policy keeps it out of the log.".into());
            l.push(mismatch.into());
        }
        Verdict::Te => l.push("Missing type enforcement (TE) allow rule.".into()),
        Verdict::Boolean(fixes) => {
            l.push(if fixes.len() > 1 {
                "One of the following booleans is set incorrectly; setting any one allows it:"
                    .into()
            } else {
                format!(
                    "The boolean {} is set incorrectly.",
                    fixes.iter().map(|f| f.name.as_str()).collect::<String>()
                )
            });
            l.push("Allow access by executing:".into());
            for f in fixes {
                l.push(format!("# setsebool -P {} {}", f.name, u8::from(f.value)));
            }
        }
        Verdict::Constraint(r) => {
            l.push(format!("Constraint violation: {r}."));
            l.push("Change the user, role, type or level of the source or target (or the constraint) to allow it.".into());
        }
        Verdict::Role { from, to } => {
            l.push(format!("Missing role allow rule for the role change {from} -> {to}; this rule would allow it:"));
            l.push(format!("allow {from} {to};"));
        }
        Verdict::Bounds { bound } => {
            l.push(format!("Typebounds violation: the source type's bound {bound} is not allowed it; add the allow rule for {bound}."));
        }
    }
    for (perm, reason) in &why.denied {
        l.push(format!("{perm}: {reason}"));
    }
    if matches!(why.verdict, Verdict::Te | Verdict::Dontaudit) {
        l.push(format!(
            "This rule would allow it (seaccess allow writes it as a module): {}",
            why.rule
        ));
    }
    l
}

/// One record's `--json` object, its fields in the order the users read them.
#[derive(Serialize)]
struct RecordJson<'a> {
    line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    scontext: &'a str,
    tcontext: &'a str,
    tclass: &'a str,
    perms: &'a [String],
    verdict: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    booleans: Option<Vec<serde_json::Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    constraint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    role: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bound: Option<&'a str>,
    rule: &'a str,
    reasons: Vec<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    permissive: Option<bool>,
}

fn record_json(log: &Log, rec: &AvcRecord, why: &Why) -> Result<String, CliError> {
    let (mut booleans, mut constraint, mut role, mut bound) = (None, None, None, None);
    match &why.verdict {
        Verdict::Boolean(fixes) => {
            booleans = Some(
                fixes
                    .iter()
                    .map(|f| json!({"name": f.name, "value": f.value}))
                    .collect(),
            )
        }
        Verdict::Constraint(r) => constraint = Some(r.to_string()),
        Verdict::Role { from, to } => role = Some(json!({"from": from, "to": to})),
        Verdict::Bounds { bound: b } => bound = Some(b.as_str()),
        Verdict::Allowed | Verdict::Dontaudit | Verdict::Te => {}
    }
    let v = RecordJson {
        line: rec.line,
        file: log.name.as_deref(),
        scontext: &rec.scontext,
        tcontext: &rec.tcontext,
        tclass: &rec.tclass,
        perms: &rec.perms,
        verdict: why.verdict.name(),
        booleans,
        constraint,
        role,
        bound,
        rule: &why.rule,
        reasons: why
            .denied
            .iter()
            .map(|(p, r)| json!({"perm": p, "kind": r.kind(), "text": r.to_string()}))
            .collect(),
        permissive: rec.permissive,
    };
    serde_json::to_string(&v).map_err(|e| CliError::from(format!("writing JSON: {e}")))
}
