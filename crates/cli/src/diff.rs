//! `seaccess diff OLD NEW`: what a policy update changes (rules added and removed, the symbols
//! decisions read, the decisions that change and why), and with `--replay LOG` which accesses of
//! a log the update decides otherwise. The work is `seaccess_tools::diff`; this file reads the
//! options, loads both sides and prints.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;
use seaccess_tools::audit;
use seaccess_tools::diff::candidates::{triples, Scope, Universe};
use seaccess_tools::diff::decisions::{decision_diff, DecisionChange, DecisionDiff, PermChange};
use seaccess_tools::diff::expanded::{expanded_diff, ExpandedChange};
use seaccess_tools::diff::replay::replay;
use seaccess_tools::diff::{rule_diff, symbol_diff, RuleChanges, Side, SymbolChanges};
use serde::Serialize;

use crate::explain::{read_logs, Log};
use crate::output::{warn, CliError, Out};

const AFTER_HELP: &str = "\
Examples:
  seaccess diff old/policy.33 new/policy.33                   rules, symbols and decisions that change
  seaccess diff /etc/selinux/default/policy/policy.33 --bool httpd_can_network_connect=1
  seaccess diff old.33 new.33 --replay /var/log/audit/audit.log   which logged accesses NEW decides otherwise
  ausearch -m avc,user_avc -ts week | seaccess diff old.33 new.33 --replay -
  seaccess diff old.33 new.33 --sample 100000 --seed 7        a random sample of every triple instead
  seaccess diff old.33 new.33 --rules-only --json
  seaccess diff old.33 new.33 --rules-only --expand           allow rules as sediff compares them

What it prints:
  Rules: each kind's rules added (+) and removed (-), as sesearch writes them (attributes not
  expanded; a rule whose permissions changed is one removed and one added line). With --expand,
  also allow, auditallow and dontaudit rules as sediff compares them: attributes expanded to
  types, permissions of each (source, target, class, condition) unioned, each key added (+),
  removed (-) or modified (*, with +perm and -perm), computed only where a change reaches.
  Symbols: types, attributes (and members), classes, permissions, boolean values, permissive
  types, bounds, constraints and role allow rules that changed.
  Decisions: the (source type, target type, class) triples whose allowed permissions differ,
  grouped by source and target, each permission gained (+) or lost (-) with what each side says
  of it: the allow rules in effect that grant it, or why it is denied (no allow rule, a boolean,
  a constraint, a role, a bound, or no such type/class/permission on that side). By default only
  the triples some change can reach are computed (rules added or removed, attributes whose
  members changed, boolean values, constraints, bounds, role allows, types added or removed);
  --sample N computes N random triples of every one instead, --all every triple (small policies).
  Each type is judged in one context: the first role that has the type and a user (system_r
  first, then by name), with that user (system_u first, then by name), else object_r with
  system_u, at the user's default level. Decisions that depend on users, roles or levels through constraints are those of these
  contexts only; use --replay for real contexts.
  --replay: every AVC record of the logs (granted and denied), each distinct access once, judged
  by both sides: the accesses with a permission decided otherwise, with each side's reason.

--json: one object. Without --replay: {\"old\", \"new\", \"rules\": [{\"ruletype\", \"added\",
\"removed\"}], \"expanded\" (with --expand): [{ruletype, source, target, class,
conditional, branch, status, added, removed, kept}], \"symbols\": {types_added, types_removed, attributes_added, attributes_removed,
memberships [{attribute, added, removed}], classes_added, classes_removed, perms_added,
perms_removed, booleans [{name, old, new}], permissive_added, permissive_removed, bounds [{name,
old, new}], constraints, role_allows_added, role_allows_removed}, \"decisions\": {\"scope\",
\"computed\", \"seconds\", \"changes\": [{source, target, class, gained, lost}]}} where each of
gained and lost is [{perm, old, new}] and each side is {\"decision\": \"allowed\", \"rules\": [...]}
or {\"decision\": \"denied\", \"kind\", \"reason\"}. With --replay: {\"old\", \"new\", \"records\",
\"accesses\", \"changed\": [{file, line, count, scontext, tcontext, tclass, perms, logged,
changes}]}.

Exit status: 0 when the diff was made; with --replay, 1 when NEW denies an access OLD allowed or
a record could not be read or judged (said on standard error with its file and line); 2 on an
error (a policy that cannot be read, an unknown boolean, with the nearest names).";

/// What a policy update changes.
#[derive(Args)]
#[command(
    long_about = "What a policy update changes: the rules added and removed (as sediff lists them, by \
name), the symbols decisions read, and the access decisions that change, computed by the engine, \
with the rule, boolean, constraint or bound responsible on each side. With --replay, the accesses \
of an audit log that the new policy decides otherwise, and why.",
    after_help = AFTER_HELP
)]
pub(crate) struct DiffArgs {
    /// The policy before the update (compiled, e.g. /etc/selinux/default/policy/policy.33);
    /// default: the installed policy.
    #[arg(value_name = "OLD")]
    old: Option<PathBuf>,
    /// The policy after the update; default: OLD itself (then --bool makes the difference).
    #[arg(value_name = "NEW")]
    new: Option<PathBuf>,
    /// Set a boolean of NEW (repeatable), e.g. --bool httpd_can_network_connect=1.
    #[arg(long = "bool", value_name = "NAME=VALUE")]
    bools: Vec<String>,
    /// Set a boolean of OLD (repeatable).
    #[arg(long = "old-bool", value_name = "NAME=VALUE")]
    old_bools: Vec<String>,
    /// Compute N random triples of every (source type, target type, class) instead of those a
    /// change can reach.
    #[arg(long, value_name = "N", conflicts_with = "all")]
    sample: Option<usize>,
    /// The seed of --sample's draw.
    #[arg(long, default_value_t = 1, requires = "sample")]
    seed: u64,
    /// Compute every triple (small policies only: refused above 50 million).
    #[arg(long)]
    all: bool,
    /// Rules and symbols only, no decisions.
    #[arg(long)]
    rules_only: bool,
    /// Also the allow, auditallow and dontaudit rules as sediff compares them: attributes
    /// expanded to types, each (source, target, class, condition) added, removed or modified.
    #[arg(long)]
    expand: bool,
    /// Kernel logs or audit logs whose accesses to judge by both policies, `-` for standard input
    /// (repeatable); instead of the rule and decision diff.
    #[arg(long, value_name = "LOG")]
    replay: Vec<PathBuf>,
    /// One JSON object (see below).
    #[arg(long)]
    json: bool,
}

fn bool_values(flag: &str, items: &[String]) -> Result<Vec<(String, bool)>, String> {
    items
        .iter()
        .map(|b| {
            let (name, value) = b
                .split_once('=')
                .ok_or_else(|| format!("{flag} {b}: expected NAME=VALUE"))?;
            let value = match value {
                "1" | "true" | "on" => true,
                "0" | "false" | "off" => false,
                _ => {
                    return Err(format!(
                        "{flag} {b}: value must be 1/0, true/false or on/off"
                    ))
                }
            };
            Ok((name.to_string(), value))
        })
        .collect()
}

/// Both sides, and the files they came from.
fn sides(a: &DiffArgs) -> Result<(Side, Side, String, String), CliError> {
    let old_path = crate::installed::policy_or_installed(a.old.as_deref())?;
    let new_path = a.new.clone().unwrap_or_else(|| old_path.clone());
    let read = |p: &Path| crate::read_policy(p);
    let old_policy = read(&old_path)?;
    let new_policy = if new_path == old_path {
        old_policy.clone()
    } else {
        read(&new_path)?
    };
    let (ob, nb) = (
        bool_values("--old-bool", &a.old_bools)?,
        bool_values("--bool", &a.bools)?,
    );
    // The two sides load on two threads: on Debian's policy each is a second of reading rules.
    let (old, new) = std::thread::scope(|sc| {
        let o = sc.spawn(|| Side::new("OLD", old_policy, &ob));
        let n = Side::new("NEW", new_policy, &nb);
        (o.join(), n)
    });
    let old = old
        .map_err(|_| "loading OLD failed".to_string())?
        .map_err(|e| e.to_string())?;
    let new = new.map_err(|e| e.to_string())?;
    Ok((
        old,
        new,
        old_path.display().to_string(),
        new_path.display().to_string(),
    ))
}

pub(crate) fn run(out: &mut Out, a: &DiffArgs) -> Result<bool, CliError> {
    let (old, new, old_name, new_name) = sides(a)?;
    if !a.replay.is_empty() {
        return run_replay(out, a, &old, &new, (&old_name, &new_name));
    }
    let rules = rule_diff(&old, &new);
    let symbols = symbol_diff(&old, &new);
    let u = Universe::new(&old, &new);
    let expanded = a
        .expand
        .then(|| expanded_diff(&old, &new, &u, &rules, &symbols));
    let decisions = if a.rules_only {
        None
    } else {
        let scope = match (a.sample, a.all) {
            (Some(count), _) => Scope::Sample {
                count,
                seed: a.seed,
            },
            (None, true) => Scope::All { limit: 50_000_000 },
            (None, false) => Scope::Smart,
        };
        let start = Instant::now();
        let set = triples(&old, &new, &u, scope, &rules, &symbols).map_err(|e| e.to_string())?;
        let d = decision_diff(&old, &new, &u, &set);
        Some((scope, d, start.elapsed().as_secs_f64()))
    };
    if a.json {
        print_json(
            out,
            (&old_name, &new_name),
            &rules,
            expanded.as_deref(),
            &symbols,
            decisions.as_ref(),
        )?;
    } else {
        print_text(
            out,
            (&old_name, &new_name),
            &rules,
            expanded.as_deref(),
            &symbols,
            decisions.as_ref(),
        )?;
    }
    Ok(true)
}

fn scope_name(s: &Scope) -> String {
    match s {
        Scope::Smart => "smart".into(),
        Scope::Sample { count, seed } => format!("sample {count} seed {seed}"),
        Scope::All { .. } => "all".into(),
    }
}

fn print_json(
    out: &mut Out,
    (old, new): (&str, &str),
    rules: &[RuleChanges],
    expanded: Option<&[ExpandedChange]>,
    symbols: &SymbolChanges,
    d: Option<&(Scope, DecisionDiff, f64)>,
) -> Result<(), CliError> {
    #[derive(Serialize)]
    struct Decisions<'a> {
        scope: String,
        computed: usize,
        seconds: f64,
        changes: &'a [DecisionChange],
    }
    #[derive(Serialize)]
    struct Report<'a> {
        old: &'a str,
        new: &'a str,
        rules: &'a [RuleChanges],
        #[serde(skip_serializing_if = "Option::is_none")]
        expanded: Option<&'a [ExpandedChange]>,
        symbols: &'a SymbolChanges,
        #[serde(skip_serializing_if = "Option::is_none")]
        decisions: Option<Decisions<'a>>,
    }
    let decisions = d.map(|(s, d, secs)| Decisions {
        scope: scope_name(s),
        computed: d.computed,
        seconds: *secs,
        changes: &d.changes,
    });
    let text = serde_json::to_string(&Report {
        old,
        new,
        rules,
        expanded,
        symbols,
        decisions,
    })
    .map_err(|e| format!("JSON output: {e}"))?;
    writeln!(out, "{text}")?;
    Ok(())
}

fn print_text(
    out: &mut Out,
    (old, new): (&str, &str),
    rules: &[RuleChanges],
    expanded: Option<&[ExpandedChange]>,
    symbols: &SymbolChanges,
    d: Option<&(Scope, DecisionDiff, f64)>,
) -> Result<(), CliError> {
    writeln!(out, "OLD: {old}\nNEW: {new}")?;
    let counts: Vec<String> = rules
        .iter()
        .map(|r| format!("{} +{} -{}", r.ruletype, r.added.len(), r.removed.len()))
        .collect();
    writeln!(
        out,
        "\nRules: {}",
        if counts.is_empty() {
            "no change".to_string()
        } else {
            counts.join(", ")
        }
    )?;
    for r in rules {
        for (sign, lines, what) in [("+", &r.added, "added"), ("-", &r.removed, "removed")] {
            if !lines.is_empty() {
                writeln!(out, "{} {} rules {what}:", lines.len(), r.ruletype)?;
                for l in lines.iter() {
                    writeln!(out, "  {sign} {l}")?;
                }
            }
        }
    }
    if let Some(x) = expanded {
        writeln!(
            out,
            "\nExpanded rules (sediff's view): {}",
            if x.is_empty() { "no change" } else { "" }.trim_end()
        )?;
        for c in x {
            let sign = match c.status {
                "added" => "+",
                "removed" => "-",
                _ => "*",
            };
            writeln!(out, "  {sign} {}", c.line())?;
        }
    }
    let sym = symbols.lines();
    writeln!(
        out,
        "\nSymbols: {}",
        if sym.is_empty() { "no change" } else { "" }.trim_end()
    )?;
    for l in sym {
        writeln!(out, "  {l}")?;
    }
    let Some((scope, d, secs)) = d else {
        return Ok(());
    };
    writeln!(
        out,
        "\nDecisions: {} of {} triples computed change ({}, {secs:.2} s)",
        d.changes.len(),
        d.computed,
        scope_name(scope)
    )?;
    let mut last: Option<(&str, &str)> = None;
    for c in &d.changes {
        if last != Some((&c.source, &c.target)) {
            writeln!(out, "{} -> {}", c.source, c.target)?;
            last = Some((&c.source, &c.target));
        }
        let mut perms: Vec<String> = c.gained.iter().map(|p| format!("+{}", p.perm)).collect();
        perms.extend(c.lost.iter().map(|p| format!("-{}", p.perm)));
        writeln!(out, "  {}: {}", c.class, perms.join(" "))?;
        for (sign, list) in [("+", &c.gained), ("-", &c.lost)] {
            for p in list.iter() {
                perm_lines(out, sign, p, "    ")?;
            }
        }
    }
    Ok(())
}

fn perm_lines(out: &mut Out, sign: &str, p: &PermChange, indent: &str) -> Result<(), CliError> {
    writeln!(out, "{indent}{sign}{}: OLD {}", p.perm, p.old)?;
    writeln!(
        out,
        "{indent}{}  NEW {}",
        " ".repeat(p.perm.len() + sign.len()),
        p.new
    )?;
    Ok(())
}

/// One distinct access of the logs whose decision changes.
#[derive(Serialize)]
struct Changed<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    /// The first record of the access.
    line: usize,
    /// How many records the logs hold of it.
    count: usize,
    scontext: &'a str,
    tcontext: &'a str,
    tclass: &'a str,
    perms: &'a [String],
    /// `granted` or `denied`, as the (first) record says.
    logged: &'static str,
    changes: Vec<PermChange>,
}

fn run_replay(
    out: &mut Out,
    a: &DiffArgs,
    old: &Side,
    new: &Side,
    names: (&str, &str),
) -> Result<bool, CliError> {
    let paths: Vec<PathBuf> = a
        .replay
        .iter()
        .filter(|p| p.as_os_str() != "-")
        .cloned()
        .collect();
    let stdin = a.replay.iter().any(|p| p.as_os_str() == "-");
    let mut logs: Vec<Log> = if paths.is_empty() {
        Vec::new()
    } else {
        read_logs(&paths)?
    };
    if stdin {
        logs.extend(read_logs(&[])?);
    }
    let mut ok = true;
    let mut records = 0usize;
    // Each distinct access once: its first record, how many, and what changes.
    let mut seen: HashMap<(String, String, String, Vec<String>), usize> = HashMap::new();
    let mut accesses: Vec<(&Log, audit::AvcRecord, usize, Vec<PermChange>)> = Vec::new();
    for log in &logs {
        for r in audit::read(&log.text) {
            let rec = match r {
                Ok(rec) => rec,
                Err(e) => {
                    ok = false;
                    warn(&log.prefixed(&e.to_string()));
                    continue;
                }
            };
            records += 1;
            let key = (
                rec.scontext.clone(),
                rec.tcontext.clone(),
                rec.tclass.clone(),
                rec.perms.clone(),
            );
            if let Some(&i) = seen.get(&key) {
                if let Some(x) = accesses.get_mut(i) {
                    x.2 += 1;
                }
                continue;
            }
            match replay(old, new, &rec) {
                Ok(changes) => {
                    seen.insert(key, accesses.len());
                    accesses.push((log, rec, 1, changes));
                }
                Err(e) => {
                    ok = false;
                    warn(&log.prefixed(&e.to_string()));
                }
            }
        }
    }
    let distinct = accesses.len();
    let changed: Vec<Changed> = accesses
        .iter()
        .filter(|(_, _, _, c)| !c.is_empty())
        .map(|(log, rec, count, changes)| Changed {
            file: log.name.as_deref(),
            line: rec.line,
            count: *count,
            scontext: &rec.scontext,
            tcontext: &rec.tcontext,
            tclass: &rec.tclass,
            perms: &rec.perms,
            logged: if rec.denied { "denied" } else { "granted" },
            changes: changes.clone(),
        })
        .collect();
    let broken = changed.iter().any(|c| {
        c.changes
            .iter()
            .any(|p| p.old.allowed() && !p.new.allowed())
    });
    if a.json {
        #[derive(Serialize)]
        struct Report<'a> {
            old: &'a str,
            new: &'a str,
            records: usize,
            accesses: usize,
            changed: &'a [Changed<'a>],
        }
        let text = serde_json::to_string(&Report {
            old: names.0,
            new: names.1,
            records,
            accesses: distinct,
            changed: &changed,
        })
        .map_err(|e| format!("JSON output: {e}"))?;
        writeln!(out, "{text}")?;
    } else {
        writeln!(out, "OLD: {}\nNEW: {}", names.0, names.1)?;
        writeln!(
            out,
            "Replay: {records} records, {distinct} distinct accesses, {} decided otherwise",
            changed.len()
        )?;
        for c in &changed {
            let at = match c.file {
                Some(f) => format!("{f}: line {}", c.line),
                None => format!("line {}", c.line),
            };
            let times = if c.count > 1 {
                format!(" ({} records)", c.count)
            } else {
                String::new()
            };
            writeln!(
                out,
                "\n{at}{times}: {} {} {} {{ {} }} ({} in the log)",
                c.scontext,
                c.tcontext,
                c.tclass,
                c.perms.join(" "),
                c.logged
            )?;
            for p in &c.changes {
                let sign = if p.new.allowed() { "+" } else { "-" };
                perm_lines(out, sign, p, "  ")?;
            }
        }
    }
    Ok(ok && !broken)
}
