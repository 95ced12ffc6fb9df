//! The text file_contexts reader: label_support.c's read_spec_entries and label_file.h's
//! process_line, line by line, with their errors, for one file of the set.

use std::path::Path;
use std::sync::Arc;

use crate::error::{LabelError, Result};
use crate::spec::{meta_chars, FileKind, Origin};

/// One specification as written, before the set gives it a stem and a place in the order.
pub struct RawSpec {
    pub regex: Arc<str>,
    pub mode: u32,
    pub context: Arc<str>,
    pub stem: Option<Arc<[u8]>>,
    pub has_meta: bool,
    pub prefix_len: u32,
    pub origin: Origin,
}

/// C's isspace in the "C" locale.
pub fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Splits a line into at most `max` whitespace-separated fields, as read_spec_entries does: a
/// comment or blank line has none, and a field with a byte outside ASCII is an error.
pub fn fields(line: &[u8], max: usize) -> std::result::Result<Vec<&[u8]>, &'static str> {
    // getline keeps the newline and the C code drops it; a NUL ends the C string.
    let line = line.split(|&c| c == 0).next().unwrap_or_default();
    let mut i = 0;
    while i < line.len() && is_space(line[i]) {
        i += 1;
    }
    if i == line.len() || line[i] == b'#' {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    while out.len() < max {
        while i < line.len() && is_space(line[i]) {
            i += 1;
        }
        let start = i;
        while i < line.len() && !is_space(line[i]) {
            if !line[i].is_ascii() {
                return Err("Non-ASCII characters found");
            }
            i += 1;
        }
        if i == start {
            break;
        }
        out.push(&line[start..i]);
    }
    Ok(out)
}

fn ascii(b: &[u8]) -> Arc<str> {
    // The fields are checked to be ASCII, so this never replaces anything.
    Arc::from(String::from_utf8_lossy(b).as_ref())
}

/// Reads a text file_contexts (already in memory) into specifications.
pub fn read(path: &Path, file: u16, bytes: &[u8]) -> Result<Vec<RawSpec>> {
    let mut specs = Vec::new();
    // A set names a few hundred contexts across thousands of lines: one copy each.
    let mut contexts: rustc_hash::FxHashMap<&[u8], Arc<str>> = rustc_hash::FxHashMap::default();
    for (n, line) in bytes.split(|&c| c == b'\n').enumerate() {
        let lineno = u32::try_from(n + 1).unwrap_or(u32::MAX);
        let syntax = |msg: String| LabelError::Syntax {
            path: path.to_path_buf(),
            line: lineno,
            msg,
        };
        let f = fields(line, 3).map_err(|e| syntax(format!("error due to: {e}")))?;
        let (regex, kind, context) = match f.as_slice() {
            [] => continue,
            [_] => {
                return Err(syntax(
                    "is missing fields (a specification is REGEX [TYPE] CONTEXT)".into(),
                ))
            }
            [r, c] => (*r, None, *c),
            [r, k, c, ..] => (*r, Some(*k), *c),
        };
        let mode = match kind {
            None => 0,
            Some(k) => match std::str::from_utf8(k)
                .ok()
                .and_then(FileKind::from_qualifier)
            {
                Some(kind) => kind.mode(),
                None => {
                    return Err(LabelError::FileType {
                        path: path.to_path_buf(),
                        line: lineno,
                        kind: String::from_utf8_lossy(k).into_owned(),
                    })
                }
            },
        };
        let (has_meta, prefix_len) = meta_chars(regex);
        let stem_len = crate::spec::spec_stem_len(regex);
        specs.push(RawSpec {
            regex: ascii(regex),
            mode,
            context: contexts
                .entry(context)
                .or_insert_with(|| ascii(context))
                .clone(),
            stem: (stem_len > 0).then(|| Arc::from(&regex[..stem_len])),
            has_meta,
            prefix_len,
            origin: Origin { file, line: lineno },
        });
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_follow_read_spec_entries() {
        assert_eq!(fields(b"  # x", 3), Ok(vec![]));
        assert_eq!(fields(b"   ", 3), Ok(vec![]));
        assert_eq!(fields(b"/a -- c d\r", 3), Ok(vec![&b"/a"[..], b"--", b"c"]));
        assert_eq!(fields(b"/a\tc", 3), Ok(vec![&b"/a"[..], b"c"]));
        assert!(fields("/\u{e9} c".as_bytes(), 3).is_err());
    }

    #[test]
    fn errors_name_the_line() {
        let p = Path::new("fc");
        let e = read(p, 0, b"/a u:r:t:s0\n/b\n")
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("fc:2: is missing fields (a specification is REGEX [TYPE] CONTEXT)")
        );
        let e = read(p, 0, b"\n\n/a -x u:r:t:s0\n")
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("fc:3: invalid file type -x (expected one of -- -d -l -c -b -s -p)")
        );
    }
}
