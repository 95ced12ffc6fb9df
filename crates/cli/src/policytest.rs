//! `seaccess test`: Policy unit tests from a TOML file.

use clap::Args;

use crate::output::{CliError, Out};
use crate::PolicyArgs;

#[derive(Args)]
pub(crate) struct TestArgs {
    #[command(flatten)]
    pub(crate) policy: PolicyArgs,
}

pub(crate) fn run(_out: &mut Out, _a: &TestArgs) -> Result<bool, CliError> {
    Err("not built yet (issue 24)".into())
}
