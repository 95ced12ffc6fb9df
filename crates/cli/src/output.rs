//! The command's one way to standard output and standard error, so that every subcommand handles
//! a closed output the same way instead of panicking in `println!`.

use std::fmt;
use std::io::{self, BufWriter, StdoutLock, Write};
use std::process::ExitCode;

/// The CLI's errors.
#[derive(Debug)]
pub(crate) enum CliError {
    /// Standard output's reader has gone (`seaccess info | head -3`): the command stops, but it
    /// has nothing to report.
    OutputClosed,
    /// Anything else, said in words that name what and where.
    Message(String),
}

impl From<String> for CliError {
    fn from(s: String) -> Self {
        CliError::Message(s)
    }
}

impl From<&str> for CliError {
    fn from(s: &str) -> Self {
        CliError::Message(s.to_string())
    }
}

impl CliError {
    fn from_stdout(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            CliError::OutputClosed
        } else {
            CliError::Message(format!("writing standard output: {e}"))
        }
    }

    /// The exit status for this error, after saying what went wrong.
    ///
    /// A closed output gives 141, the status a shell reports for a coreutils program killed by
    /// SIGPIPE: the Rust runtime ignores SIGPIPE and restoring its default action needs unsafe
    /// code, so the command exits as if the signal had ended it. That is what scripts already
    /// expect of `cat file | head`: quiet, success when the pipeline's status is `head`'s, and a
    /// failure under `set -o pipefail`, which is right since the output was cut short. It is
    /// also distinct from `check`'s 0 (allowed), 1 (denied) and 2 (error), so a cut-short check
    /// is never read as an answer.
    pub(crate) fn exit(self) -> ExitCode {
        match self {
            CliError::OutputClosed => ExitCode::from(141),
            CliError::Message(m) => {
                warn(&m);
                ExitCode::from(2)
            }
        }
    }
}

/// Standard output, locked and buffered for the whole command; `write!`/`writeln!` on it return
/// a [`CliError`], a closed pipe as [`CliError::OutputClosed`]. Holding the lock throughout means
/// nothing else in the process may print to standard output (nothing in the library crates does).
pub(crate) struct Out {
    w: BufWriter<StdoutLock<'static>>,
}

impl Out {
    pub(crate) fn new() -> Self {
        Out {
            w: BufWriter::with_capacity(1 << 16, io::stdout().lock()),
        }
    }

    /// What `write!` and `writeln!` call.
    pub(crate) fn write_fmt(&mut self, args: fmt::Arguments<'_>) -> Result<(), CliError> {
        self.w.write_fmt(args).map_err(CliError::from_stdout)
    }

    /// Bytes as they are (a path need not be UTF-8).
    pub(crate) fn bytes(&mut self, b: &[u8]) -> Result<(), CliError> {
        self.w.write_all(b).map_err(CliError::from_stdout)
    }

    pub(crate) fn flush(&mut self) -> Result<(), CliError> {
        self.w.flush().map_err(CliError::from_stdout)
    }
}

/// A problem on standard error, prefixed with the command's name.
pub(crate) fn warn(msg: &str) {
    note(&format!("{}: {msg}", env!("CARGO_BIN_NAME")));
}

/// A line on standard error. A failed write is ignored: with standard error gone there is no one
/// left to tell, and the exit status still tells.
pub(crate) fn note(line: &str) {
    let _ = writeln!(io::stderr().lock(), "{line}");
}
