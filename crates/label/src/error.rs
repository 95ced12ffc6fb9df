//! The one error type of the labeling crate: every failure names the file, and the line or byte
//! offset where it was found, so a broken file_contexts is fixed from the message alone.

use std::path::PathBuf;

/// Why a file_contexts set could not be opened, or a lookup could not answer.
#[derive(Debug, thiserror::Error)]
pub enum LabelError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {msg}")]
    Syntax {
        path: PathBuf,
        line: u32,
        msg: String,
    },
    #[error("{path}:{line}: invalid file type {kind} (expected one of -- -d -l -c -b -s -p)")]
    FileType {
        path: PathBuf,
        line: u32,
        kind: String,
    },
    #[error("{path}:{line}: invalid regular expression {regex}: {msg}")]
    Regex {
        path: PathBuf,
        line: u32,
        regex: String,
        msg: String,
    },
    #[error("{path}:{line}: invalid context {context}: {msg}")]
    Context {
        path: PathBuf,
        line: u32,
        context: String,
        msg: String,
    },
    #[error("{path}: {msg}")]
    Duplicate { path: PathBuf, msg: String },
    #[error("{path}: at byte {offset}: {msg}")]
    Binary {
        path: PathBuf,
        offset: usize,
        msg: String,
    },
    #[error("{path}: {msg}")]
    Compiled { path: PathBuf, msg: String },
    #[error("an empty path has no label")]
    EmptyPath,
    #[error("matching {path:?} against {regex}: {msg}")]
    Match {
        path: String,
        regex: String,
        msg: String,
    },
}

pub type Result<T> = std::result::Result<T, LabelError>;
