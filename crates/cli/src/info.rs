//! `seaccess info`: a policy's summary, and seinfo's listings (types, attributes, roles, users,
//! classes, booleans; `-x` expanded). The listings themselves are
//! `seaccess_tools::search::listing`; this file reads the options and prints.

use std::path::PathBuf;

use clap::Args;
use seaccess_tools::search::listing::{list, Component};

use crate::output::{CliError, Out};
use crate::PolicyArgs;

const AFTER_HELP: &str = "\
Examples:
  seaccess info -p /etc/selinux/default/policy/policy.33     the summary
  seaccess info -t sshd_t -x                                 sshd_t with its aliases and attributes
  seaccess info -a domain -x                                 the attribute's member types
  seaccess info -r -u                                        every role and user
  seaccess info -c file -x --json                            the class's permissions, as JSON

With a listing option, the output is seinfo's (setools 4.4): for each listing a blank line, a
heading with the count (\"Types: 3936\"), and one entry a line, indented three spaces (--flat: no
heading, no indentation); -x prints each entry's statement (`type sshd_t, domain, ...;`). Listings
come in seinfo's order: booleans, classes, roles, types, attributes, users. Without one, a summary
of the policy. --json prints an object: the summary's counts, or one list per listing, each entry
with its name, its parts and seinfo's statement.

Exit status: 0, or 2 on an error (a name the policy does not have names the nearest it has).";

/// A policy's summary, or seinfo's listings.
#[derive(Args)]
#[command(
    long_about = "A summary of a policy (version, MLS, handle-unknown, symbol and rule counts), or \
seinfo's listings of its types, attributes, roles, users, classes and booleans, all or one by name.",
    after_help = AFTER_HELP
)]
pub(crate) struct InfoArgs {
    /// The compiled policy, as seinfo takes it (same as --policy); default: the installed policy.
    #[arg(value_name = "POLICY")]
    policy_file: Option<PathBuf>,
    /// The compiled policy (kernel binary format, e.g. /etc/selinux/default/policy/policy.33).
    #[arg(long, short = 'p', value_name = "FILE")]
    policy: Option<PathBuf>,
    /// Types, or the type NAME (an alias names its type).
    #[arg(short = 't', long = "type", value_name = "NAME", num_args = 0..=1, help_heading = "Listings")]
    types: Option<Option<String>>,
    /// Type attributes, or the attribute NAME; with -x, each with its member types.
    #[arg(short = 'a', long = "attribute", value_name = "NAME", num_args = 0..=1, help_heading = "Listings")]
    attributes: Option<Option<String>>,
    /// Roles, or the role NAME; with -x, each with its types.
    #[arg(short = 'r', long = "role", value_name = "NAME", num_args = 0..=1, help_heading = "Listings")]
    roles: Option<Option<String>>,
    /// Users, or the user NAME; with -x, each with its roles, default level and range.
    #[arg(short = 'u', long = "user", value_name = "NAME", num_args = 0..=1, help_heading = "Listings")]
    users: Option<Option<String>>,
    /// Object classes, or the class NAME; with -x, each with its common and permissions.
    #[arg(short = 'c', long = "class", value_name = "NAME", num_args = 0..=1, help_heading = "Listings")]
    classes: Option<Option<String>>,
    /// Booleans, or the boolean NAME; with -x, each with its default value.
    #[arg(short = 'b', long = "bool", value_name = "NAME", num_args = 0..=1, help_heading = "Listings")]
    bools: Option<Option<String>>,
    /// Print each entry's statement, as seinfo -x does.
    #[arg(short = 'x', long = "expand")]
    expand: bool,
    /// No headings and no indentation, as seinfo --flat.
    #[arg(long)]
    flat: bool,
    /// JSON output (see below).
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(out: &mut Out, a: &InfoArgs) -> Result<bool, CliError> {
    // seinfo's order of listings.
    let wanted: Vec<(Component, Option<&str>)> = [
        (Component::Booleans, &a.bools),
        (Component::Classes, &a.classes),
        (Component::Roles, &a.roles),
        (Component::Types, &a.types),
        (Component::Attributes, &a.attributes),
        (Component::Users, &a.users),
    ]
    .into_iter()
    .filter_map(|(c, o)| o.as_ref().map(|name| (c, name.as_deref())))
    .collect();
    let path = crate::search::policy_path(a.policy_file.as_deref(), a.policy.as_deref())?;
    if wanted.is_empty() {
        return summary(
            out,
            &PolicyArgs {
                policy: Some(path),
                bools: Vec::new(),
            },
            a.json,
        )
        .map(|_| true);
    }
    let policy = crate::read_policy(&path)?;
    let mut json = serde_json::Map::new();
    for (c, name) in wanted {
        let items = list(&policy, c, name).map_err(|e| e.to_string())?;
        if a.json {
            json.insert(
                c.key().to_string(),
                serde_json::to_value(&items).map_err(|e| format!("JSON output: {e}"))?,
            );
            continue;
        }
        if !a.flat {
            writeln!(out, "\n{}: {}", c.title(), items.len())?;
        }
        let indent = if a.flat { "" } else { "   " };
        for i in &items {
            writeln!(
                out,
                "{indent}{}",
                if a.expand { &i.statement } else { &i.name }
            )?;
        }
    }
    if a.json {
        writeln!(out, "{}", serde_json::Value::Object(json))?;
    }
    Ok(true)
}

fn summary(out: &mut Out, policy: &PolicyArgs, json: bool) -> Result<(), CliError> {
    let engine = crate::load(policy)?;
    let server = engine.server();
    let g = server.snapshot();
    let p = g.policy();
    let (rules, cond_rules) = g.rule_counts();
    if json {
        let v = serde_json::json!({
            "version": p.version,
            "mls": p.mls,
            "handle_unknown": format!("{:?}", p.handle_unknown),
            "classes": p.classes.len(),
            "types": p.types.len(),
            "attributes": p.types.iter().filter(|t| t.attribute).count(),
            "roles": p.roles.len(),
            "users": p.users.len(),
            "booleans": p.bools.len(),
            "sensitivities": p.sens.len(),
            "categories": p.cat_names.len(),
            "rules": rules,
            "conditional_rules": cond_rules,
            "conditionals": g.conditionals().len(),
            "permissive_types": p.permissive.len(),
        });
        writeln!(out, "{v}")?;
        return Ok(());
    }
    writeln!(out, "version {}", p.version)?;
    writeln!(out, "mls {}", p.mls)?;
    writeln!(out, "handle_unknown {:?}", p.handle_unknown)?;
    writeln!(out, "classes {}", p.classes.len())?;
    writeln!(
        out,
        "types {} ({} attributes)",
        p.types.len(),
        p.types.iter().filter(|t| t.attribute).count()
    )?;
    writeln!(out, "roles {}", p.roles.len())?;
    writeln!(out, "users {}", p.users.len())?;
    writeln!(out, "booleans {}", p.bools.len())?;
    writeln!(out, "sensitivities {}", p.sens.len())?;
    writeln!(out, "categories {}", p.cat_names.len())?;
    writeln!(out, "rules {rules} unconditional, {cond_rules} conditional")?;
    writeln!(out, "conditionals {}", g.conditionals().len())?;
    writeln!(out, "permissive types {}", p.permissive.len())?;
    Ok(())
}
