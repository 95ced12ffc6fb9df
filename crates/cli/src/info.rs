//! `seaccess info`: a policy's summary, and seinfo's listings.

use clap::Args;

use crate::output::{CliError, Out};
use crate::PolicyArgs;

#[derive(Args)]
pub(crate) struct InfoArgs {
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
}

pub(crate) fn run(out: &mut Out, a: &InfoArgs) -> Result<bool, CliError> {
    summary(out, &a.policy)?;
    Ok(true)
}

fn summary(out: &mut Out, policy: &PolicyArgs) -> Result<(), CliError> {
    let server = crate::load(policy)?;
    let g = server.snapshot();
    let p = g.policy();
    writeln!(out, "version {}", p.version)?;
    writeln!(out, "mls {}", p.mls)?;
    writeln!(out, "handle_unknown {:?}", p.handle_unknown)?;
    writeln!(out, "classes {}", p.classes.len())?;
    writeln!(out, "types {} ({} attributes)", p.types.len(), p.types.iter().filter(|t| t.attribute).count())?;
    writeln!(out, "roles {}", p.roles.len())?;
    writeln!(out, "users {}", p.users.len())?;
    writeln!(out, "booleans {}", p.bools.len())?;
    writeln!(out, "sensitivities {}", p.sens.len())?;
    writeln!(out, "categories {}", p.cat_names.len())?;
    let (rules, cond_rules) = g.rule_counts();
    writeln!(out, "rules {rules} unconditional, {cond_rules} conditional")?;
    writeln!(out, "conditionals {}", g.conditionals().len())?;
    writeln!(out, "permissive types {}", p.permissive.len())?;
    Ok(())
}
