//! The text file_contexts reader: label_support.c's read_spec_entries and label_file.h's
//! process_line, line by line, with their errors, for one file of the set.

use std::path::Path;
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use crate::error::{LabelError, Result};
use crate::spec::{meta_chars, FileKind, Origin};

/// One specification as written, before the set gives it its place in the order.
pub struct RawSpec {
    /// Its expression in the set's [`Pool`].
    pub regex: Piece,
    pub mode: u32,
    pub context: Arc<str>,
    /// Its stem's number in the set's [`Pool`], or -1.
    pub stem: i32,
    pub has_meta: bool,
    pub prefix_len: u32,
    pub origin: Origin,
}

/// Where an expression is in its set's buffer of expressions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub start: u32,
    pub end: u32,
}

/// What a set's files share as they are read: one buffer for all the expressions, each stem
/// and each context once (a set names a few hundred contexts and stems across thousands of
/// specifications; one copy each, and no allocation per specification).
#[derive(Default)]
pub struct Pool {
    pub regexes: String,
    /// Each stem's number, in the order first read (libselinux numbers them so too).
    pub stem_ids: FxHashMap<Arc<[u8]>, i32>,
    contexts: FxHashSet<Arc<str>>,
}

impl Pool {
    /// Appends an expression; `None` when the buffer would pass 4 GiB.
    pub fn regex(&mut self, s: &str) -> Option<Piece> {
        let start = u32::try_from(self.regexes.len()).ok()?;
        let end = u32::try_from(self.regexes.len() + s.len()).ok()?;
        self.regexes.push_str(s);
        Some(Piece { start, end })
    }

    pub fn regex_str(&self, p: Piece) -> &str {
        self.regexes
            .get(p.start as usize..p.end as usize)
            .unwrap_or_default()
    }

    /// The stem's number, given one at its first sight.
    pub fn stem(&mut self, stem: &[u8]) -> i32 {
        if let Some(&id) = self.stem_ids.get(stem) {
            return id;
        }
        let id = self.stem_ids.len() as i32;
        self.stem_ids.insert(Arc::from(stem), id);
        id
    }

    /// The set's one copy of a context.
    pub fn context(&mut self, c: &str) -> Arc<str> {
        if let Some(a) = self.contexts.get(c) {
            return a.clone();
        }
        let a: Arc<str> = Arc::from(c);
        self.contexts.insert(a.clone());
        a
    }
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

/// The fields are checked to be ASCII, so this never fails on them.
fn ascii(b: &[u8]) -> &str {
    std::str::from_utf8(b).unwrap_or_default()
}

/// Reads a text file_contexts (already in memory) into specifications, their expressions,
/// stems and contexts kept in `pool`.
pub fn read(path: &Path, file: u16, bytes: &[u8], pool: &mut Pool) -> Result<Vec<RawSpec>> {
    let mut specs = Vec::new();
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
            regex: pool
                .regex(ascii(regex))
                .ok_or_else(|| syntax("the set's expressions pass 4 GiB".into()))?,
            mode,
            context: pool.context(ascii(context)),
            stem: if stem_len > 0 {
                pool.stem(&regex[..stem_len])
            } else {
                -1
            },
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
        let e = read(p, 0, b"/a u:r:t:s0\n/b\n", &mut Pool::default())
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("fc:2: is missing fields (a specification is REGEX [TYPE] CONTEXT)")
        );
        let e = read(p, 0, b"\n\n/a -x u:r:t:s0\n", &mut Pool::default())
            .err()
            .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("fc:3: invalid file type -x (expected one of -- -d -l -c -b -s -p)")
        );
    }
}
