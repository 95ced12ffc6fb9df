//! `seaccess test`: policy unit tests from TOML files (crates/tools' `cases`), reported as text,
//! JSON or JUnit XML, for CI.

use std::path::PathBuf;

use clap::Args;
use seaccess_tools::cases::{self, Outcome};

use crate::output::{warn, CliError, Out};
use crate::PolicyArgs;

const AFTER_HELP: &str = r#"A cases file holds tables of six kinds; every case may have a `name` and
`with_booleans = { NAME = true, ... }` (those values for this case only, the others as the policy
and --bool set them):

  [[allow]]                      # every permission allowed (the security server's decision:
  name = "sshd reads its keys"   # rules, constraints, bounds)
  scontext = "system_u:system_r:sshd_t:s0"
  tcontext = "system_u:object_r:sshd_key_t:s0"
  class = "file"
  perms = ["read", "open"]

  [[deny]]                       # every permission denied; same fields as [[allow]]

  [[create]]                     # the context compute_create gives; object_name (optional)
  scontext = "..."               # for filename transitions
  tcontext = "..."
  class = "file"
  object_name = "resolv.conf"
  expect = "system_u:object_r:net_conf_t:s0"
  # [[relabel]] and [[member]]: the same without object_name (type_change, type_member)

  [[neverallow]]                 # no type of source may have any of perms on a type of target
  source = ["domain", "-kernel_t"]   # types or attributes; -NAME takes its types out
  target = "shadow_t"            # also "self": each source type itself
  classes = ["file"]
  perms = ["write", "append"]    # "*": every permission of the class

Neverallows ask what the allow rules give each pair of types (as checkpolicy's assertions do),
with the booleans' current values. An unknown class, permission, type, user, role or boolean,
an invalid context or malformed TOML is an error naming the file, the line and the nearest
names; nothing is run then.

Output: one line per case (ok or FAIL, kind, name, line); each failure with what was expected,
what the engine answered, and for each permission denied the engine's reason. --json prints
{"files": [{"file", "cases": [{"kind", "name", "title", "line", "passed", "expected", "got",
"details", "violations"?}]}], "passed", "failed"} instead.

Exit status: 0 when every case passes, 1 when any fails, 2 on an error.

Example:
  seaccess test -p /etc/selinux/default/policy/policy.33 examples/debian-default.tests.toml --junit report.xml"#;

#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub(crate) struct TestArgs {
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
    /// Cases files (TOML), each a test suite of its own.
    #[arg(required = true, value_name = "CASES.toml")]
    pub(crate) files: Vec<PathBuf>,
    /// Also write the results as JUnit XML to this file (one testsuite per cases file).
    #[arg(long, value_name = "FILE")]
    pub(crate) junit: Option<PathBuf>,
    /// Print the results as JSON instead of text.
    #[arg(long)]
    pub(crate) json: bool,
}

pub(crate) fn run(out: &mut Out, a: &TestArgs) -> Result<bool, CliError> {
    let mut suites = Vec::new();
    let mut errors = Vec::new();
    for f in &a.files {
        let name = f.display().to_string();
        let text = std::fs::read_to_string(f).map_err(|e| format!("{name}: {e}"))?;
        match cases::read(&name, &text) {
            Ok(s) => suites.push(s),
            Err(e) => errors.push(e),
        }
    }
    let engine = crate::load(&a.policy)?;
    let server = engine.server();
    let g = server.snapshot();
    let mut results: Vec<(String, Vec<Outcome>)> = Vec::new();
    for s in &suites {
        match cases::run(&g, s) {
            Ok(o) => results.push((s.file.clone(), o)),
            Err(e) => errors.extend(e),
        }
    }
    if !errors.is_empty() {
        for e in &errors {
            warn(&e.to_string());
        }
        let n = errors.len();
        return Err(format!(
            "{n} error{} in the cases; no results",
            if n == 1 { "" } else { "s" }
        )
        .into());
    }
    if let Some(path) = &a.junit {
        std::fs::write(path, cases::junit(&results))
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let failed: usize = results
        .iter()
        .map(|(_, o)| o.iter().filter(|c| !c.passed).count())
        .sum();
    let total: usize = results.iter().map(|(_, o)| o.len()).sum();
    if a.json {
        json(out, &results, total - failed, failed)?;
    } else {
        text(out, &results, total - failed, failed)?;
    }
    Ok(failed == 0)
}

fn text(
    out: &mut Out,
    results: &[(String, Vec<Outcome>)],
    passed: usize,
    failed: usize,
) -> Result<(), CliError> {
    for (file, outcomes) in results {
        writeln!(out, "{file}: {} cases", outcomes.len())?;
        for o in outcomes {
            writeln!(
                out,
                "  {:<4} {:<10} {} ({file}:{})",
                if o.passed { "ok" } else { "FAIL" },
                o.kind.as_str(),
                o.title,
                o.line
            )?;
            if !o.passed {
                writeln!(out, "       expected {}; got {}", o.expected, o.got)?;
                for d in &o.details {
                    writeln!(out, "         {d}")?;
                }
            }
        }
    }
    writeln!(out, "{passed} passed, {failed} failed")?;
    Ok(())
}

fn json(
    out: &mut Out,
    results: &[(String, Vec<Outcome>)],
    passed: usize,
    failed: usize,
) -> Result<(), CliError> {
    let files: Vec<serde_json::Value> = results
        .iter()
        .map(|(file, o)| serde_json::json!({ "file": file, "cases": o }))
        .collect();
    let doc = serde_json::json!({ "files": files, "passed": passed, "failed": failed });
    let s = serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())?;
    writeln!(out, "{s}")?;
    Ok(())
}
