/// The tools' errors: each names what was wrong and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolsError {
    /// An AVC record that cannot be read: its line (1-based) and what is wrong with it.
    #[error("line {line}: {what}")]
    Record { line: usize, what: String },
}
