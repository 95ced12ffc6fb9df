//! `seaccess search`: The policy's rules, as sesearch finds them.

use clap::Args;

use crate::output::{CliError, Out};
use crate::PolicyArgs;

#[derive(Args)]
pub(crate) struct SearchArgs {
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
}

pub(crate) fn run(_out: &mut Out, _a: &SearchArgs) -> Result<bool, CliError> {
    Err("not built yet (issue 24)".into())
}
