//! `seaccess allow`: Allow rules for the AVC denials in a log, as audit2allow writes them.

use clap::Args;

use crate::output::{CliError, Out};
use crate::PolicyArgs;

#[derive(Args)]
pub(crate) struct AllowArgs {
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
}

pub(crate) fn run(_out: &mut Out, _a: &AllowArgs) -> Result<bool, CliError> {
    Err("not built yet (issue 24)".into())
}
