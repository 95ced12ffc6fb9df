/// The tools' errors: each names what was wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolsError {
    /// An AVC record that cannot be read: its line (1-based) and what is wrong with it.
    #[error("line {line}: {what}")]
    Record { line: usize, what: String },
    /// A policy unit tests file that cannot be read or run: the file, the line (1-based; 0 for
    /// the file as a whole) and what is wrong.
    #[error("{}", at(file, *line, what))]
    Cases {
        file: String,
        line: usize,
        what: String,
    },
    /// A name the policy does not have as `what`, with the nearest it has ("; did you mean x?").
    #[error("unknown {what} {name}{hint}")]
    Unknown {
        what: &'static str,
        name: String,
        hint: String,
    },
    /// A search or listing that cannot be run as given: what is wrong with it.
    #[error("{0}")]
    Query(String),
}

fn at(file: &str, line: usize, what: &str) -> String {
    if line == 0 {
        format!("{file}: {what}")
    } else {
        format!("{file}:{line}: {what}")
    }
}
