//! `seaccess allow`: a policy module of allow rules for the AVC denials in a kernel log or
//! audit.log, as audit2allow writes it (crates/tools' `allow`); `-M` also compiles it as
//! audit2allow -M does (checkmodule, semodule_package).

use std::path::PathBuf;
use std::process::Command;

use clap::Args;
use seaccess_tools::allow::{module, Options};

use crate::explain::{explain_logs, read_logs};
use crate::output::{CliError, Out};
use crate::PolicyArgs;

#[derive(Args)]
#[command(
    after_help = "Examples:\n  ausearch -m avc -ts today | seaccess allow\n  seaccess allow -m local /var/log/audit/audit.log\n  seaccess allow -M local /var/log/audit/audit.log && semodule -i local.pp"
)]
pub(crate) struct AllowArgs {
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
    /// Write a module named NAME: `module NAME 1.0;` and a require block (audit2allow -m).
    #[arg(
        short = 'm',
        long = "module",
        value_name = "NAME",
        conflicts_with = "package"
    )]
    module: Option<String>,
    /// Write NAME.te and compile it to NAME.pp with checkmodule and semodule_package
    /// (audit2allow -M).
    #[arg(short = 'M', long = "module-package", value_name = "NAME")]
    package: Option<String>,
    /// dontaudit rules instead of allow rules (audit2allow -D).
    #[arg(short = 'D', long)]
    dontaudit: bool,
    /// For denials a boolean would allow, the `setsebool` that would instead of the rule (the
    /// rule is left commented out).
    #[arg(long)]
    boolean_hints: bool,
    /// Kernel logs or audit logs to read; standard input when none.
    logs: Vec<PathBuf>,
}

pub(crate) fn run(out: &mut Out, a: &AllowArgs) -> Result<bool, CliError> {
    let engine = crate::load(&a.policy)?;
    let server = engine.server();
    let g = server.snapshot();
    let logs = read_logs(&a.logs)?;
    let (denials, all) = explain_logs(&g, &logs);
    let name = a.package.as_ref().or(a.module.as_ref());
    if let Some(n) = name {
        // The name becomes a module statement and, with -M, file names.
        if n.is_empty()
            || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || n.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(format!(
                "module name {n:?}: letters, digits and underscores, not starting with a digit"
            )
            .into());
        }
    }
    let opts = Options {
        module: name.cloned(),
        dontaudit: a.dontaudit,
        boolean_hints: a.boolean_hints,
    };
    let text = module(
        denials.iter().map(|(_, r, w)| {
            (
                r.scontext.as_str(),
                r.tcontext.as_str(),
                r.tclass.as_str(),
                r.perms.as_slice(),
                w,
            )
        }),
        &opts,
    );
    match &a.package {
        None => write!(out, "{text}")?,
        Some(n) => {
            package(n, &text, g.policy().mls)?;
            writeln!(out, "******************** IMPORTANT ***********************\nTo make this policy package active, execute:\n\nsemodule -i {n}.pp\n")?;
        }
    }
    Ok(all)
}

/// NAME.te written, compiled to NAME.mod and packaged as NAME.pp; NAME.mod removed after, as
/// sepolgen's ModuleCompiler does.
fn package(name: &str, text: &str, mls: bool) -> Result<(), CliError> {
    let (te, m, pp) = (
        format!("{name}.te"),
        format!("{name}.mod"),
        format!("{name}.pp"),
    );
    std::fs::write(&te, text).map_err(|e| format!("{te}: {e}"))?;
    let mut check = Command::new("checkmodule");
    if mls {
        check.arg("-M");
    }
    run_tool(check.args(["-m", "-o", &m, &te]), "checkmodule")?;
    run_tool(
        Command::new("semodule_package").args(["-o", &pp, "-m", &m]),
        "semodule_package",
    )?;
    std::fs::remove_file(&m).map_err(|e| format!("{m}: {e}"))?;
    Ok(())
}

fn run_tool(cmd: &mut Command, what: &str) -> Result<(), CliError> {
    let o = cmd.output().map_err(|e| format!("{what}: {e} (checkmodule is in Debian's checkpolicy package, semodule_package in semodule-utils)"))?;
    if !o.status.success() {
        return Err(format!(
            "{what} failed ({}): {}{}",
            o.status,
            String::from_utf8_lossy(&o.stdout).trim(),
            String::from_utf8_lossy(&o.stderr).trim()
        )
        .into());
    }
    Ok(())
}
