//! `seaccess explain`: Why each AVC denial in a log happened (audit2why's verdicts).

use clap::Args;

use crate::output::{CliError, Out};
use crate::PolicyArgs;

#[derive(Args)]
pub(crate) struct ExplainArgs {
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
}

pub(crate) fn run(_out: &mut Out, _a: &ExplainArgs) -> Result<bool, CliError> {
    Err("not built yet (issue 24)".into())
}
