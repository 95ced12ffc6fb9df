//! The text file_contexts reader: label_support.c's read_spec_entries and label_file.h's
//! process_line, line by line, with their errors, for one file of the set.

use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::error::{LabelError, Result};
use crate::spec::{meta_chars, FileKind, Origin};

/// One specification as written, before the set gives it its place in the order.
pub struct RawSpec {
    /// Its expression in the set's [`Pool`].
    pub regex: Piece,
    pub mode: u32,
    /// Its context's number in the set's [`Pool`]: a number, not an `Arc`, so that reading
    /// and dropping a specification changes no reference count (atomic operations, three a
    /// specification, a tenth of a warm open under perf).
    pub context: u32,
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

/// Each stem's number.
pub type Stems = FxHashMap<Arc<[u8]>, i32>;

/// What a set's files share as they are read: one buffer for all the expressions, each stem
/// and each context once (a set names a few hundred contexts and stems across thousands of
/// specifications; one copy each, and no allocation per specification).
#[derive(Default)]
pub struct Pool {
    /// The expressions, each valid UTF-8 (the readers check), one after another.
    regexes: Vec<u8>,
    /// Each stem's number, in the order first read (libselinux numbers them so too).
    pub stem_ids: FxHashMap<Arc<[u8]>, i32>,
    /// Each context's number, and the contexts by number.
    context_ids: FxHashMap<Context, u32>,
    contexts: Vec<Arc<str>>,
}

/// A context in the pool, found by its bytes (a file's are not UTF-8 until checked once).
#[derive(PartialEq, Eq)]
struct Context(Arc<str>);

impl std::hash::Hash for Context {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.0.as_bytes().hash(h)
    }
}

impl std::borrow::Borrow<[u8]> for Context {
    fn borrow(&self) -> &[u8] {
        self.0.as_bytes()
    }
}

impl Pool {
    /// Appends an expression, which the caller has checked is UTF-8; `None` when the buffer
    /// would pass 4 GiB.
    pub fn regex(&mut self, s: &[u8]) -> Option<Piece> {
        let start = u32::try_from(self.regexes.len()).ok()?;
        let end = u32::try_from(self.regexes.len() + s.len()).ok()?;
        self.regexes.extend_from_slice(s);
        Some(Piece { start, end })
    }

    /// Room for `n` more bytes of expressions (what is never written costs no memory).
    pub fn reserve(&mut self, n: usize) {
        self.regexes.reserve(n);
    }

    pub fn regex_str(&self, p: Piece) -> &str {
        self.regexes
            .get(p.start as usize..p.end as usize)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or_default()
    }

    /// The expressions as one string (each piece was checked, so the whole is UTF-8).
    pub fn into_regexes(self) -> (Arc<String>, Stems, Vec<Arc<str>>) {
        let mut buf = String::from_utf8(self.regexes).unwrap_or_default();
        // What the buffer grew by and never used (a text file reserves its own size).
        buf.shrink_to_fit();
        let buf = Arc::new(buf);
        (buf, self.stem_ids, self.contexts)
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

    /// The number of the set's one copy of a context; `None` when it is not UTF-8 or the set
    /// has 4G of them.
    pub fn context(&mut self, c: &[u8]) -> Option<u32> {
        if let Some(&id) = self.context_ids.get(c) {
            return Some(id);
        }
        let id = u32::try_from(self.contexts.len()).ok()?;
        let a: Arc<str> = Arc::from(std::str::from_utf8(c).ok()?);
        self.contexts.push(a.clone());
        self.context_ids.insert(Context(a), id);
        Some(id)
    }

    /// Context number `id` (the empty string for a number the pool did not give).
    pub fn context_str(&self, id: u32) -> &str {
        self.contexts.get(id as usize).map_or("", |c| c)
    }
}

/// C's isspace in the "C" locale.
pub const fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

const ASCII: u8 = 0;
const SPACE: u8 = 1;
const OTHER: u8 = 2;

/// Each byte's class for [`fields`]: [`is_space`], other ASCII, or neither.
const CLASS: [u8; 256] = {
    let mut t = [OTHER; 256];
    let mut c = 0;
    while c < 128 {
        t[c] = if is_space(c as u8) { SPACE } else { ASCII };
        c += 1;
    }
    t
};

/// A line's fields: at most three.
#[derive(Debug, PartialEq, Eq)]
pub struct Fields<'a> {
    f: [&'a [u8]; 3],
    n: usize,
}

impl<'a> Fields<'a> {
    pub fn as_slice(&self) -> &[&'a [u8]] {
        &self.f[..self.n]
    }
}

/// Splits a line into at most three whitespace-separated fields, as read_spec_entries does: a
/// comment or blank line has none, and a field with a byte outside ASCII is an error.
/// `nul` says whether the line may hold a NUL.
pub fn fields(line: &[u8], nul: bool) -> std::result::Result<Fields<'_>, &'static str> {
    // getline keeps the newline and the C code drops it; a NUL ends the C string.
    let line = match nul.then(|| memchr::memchr(0, line)).flatten() {
        Some(n) => &line[..n],
        None => line,
    };
    let mut out = Fields { f: [&[]; 3], n: 0 };
    let mut i = 0;
    while i < line.len() && CLASS[line[i] as usize] == SPACE {
        i += 1;
    }
    if i == line.len() || line[i] == b'#' {
        return Ok(out);
    }
    while out.n < 3 {
        while i < line.len() && CLASS[line[i] as usize] == SPACE {
            i += 1;
        }
        let start = i;
        while i < line.len() {
            match CLASS[line[i] as usize] {
                ASCII => i += 1,
                SPACE => break,
                _ => return Err("Non-ASCII characters found"),
            }
        }
        if i == start {
            break;
        }
        out.f[out.n] = &line[start..i];
        out.n += 1;
    }
    Ok(out)
}

/// Reads a text file_contexts (already in memory) into specifications, their expressions,
/// stems and contexts kept in `pool`.
pub fn read(path: &Path, file: u16, bytes: &[u8], pool: &mut Pool) -> Result<Vec<RawSpec>> {
    // At most a specification a line, and their expressions at most the file.
    let mut specs = Vec::with_capacity(memchr::memchr_iter(b'\n', bytes).count() + 1);
    pool.reserve(bytes.len());
    // A NUL ends its line's C string; most files have none, and their lines are not searched.
    let nul = memchr::memchr(0, bytes).is_some();
    let mut ends = memchr::memchr_iter(b'\n', bytes);
    let mut at = 0;
    let mut n = 0usize;
    // A context is often the previous line's: one comparison, not a hash.
    let mut last: Option<(&[u8], u32)> = None;
    // The lines as `split` gives them (the last one after the last newline, empty or not).
    while at <= bytes.len() {
        let end = ends.next().unwrap_or(bytes.len());
        let line = &bytes[at..end];
        at = end + 1;
        n += 1;
        let lineno = u32::try_from(n).unwrap_or(u32::MAX);
        let syntax = |msg: String| LabelError::Syntax {
            path: path.to_path_buf(),
            line: lineno,
            msg,
        };
        let f = fields(line, nul).map_err(|e| syntax(format!("error due to: {e}")))?;
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
        // The fields are ASCII (fields checked), so UTF-8 as the pool requires.
        specs.push(RawSpec {
            regex: pool
                .regex(regex)
                .ok_or_else(|| syntax("the set's expressions pass 4 GiB".into()))?,
            mode,
            context: match &last {
                Some((t, c)) if *t == context => *c,
                _ => {
                    let c = pool
                        .context(context)
                        .ok_or_else(|| syntax("the context is not UTF-8".into()))?;
                    last = Some((context, c));
                    c
                }
            },
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
        let f = |l: &'static [u8]| fields(l, true).map(|f| f.as_slice().to_vec());
        assert_eq!(f(b"  # x"), Ok(vec![]));
        assert_eq!(f(b"   "), Ok(vec![]));
        assert_eq!(f(b"/a -- c d\r"), Ok(vec![&b"/a"[..], b"--", b"c"]));
        assert_eq!(f(b"/a\tc"), Ok(vec![&b"/a"[..], b"c"]));
        assert_eq!(f(b"/a\0 c"), Ok(vec![&b"/a"[..]]));
        // Past the third field nothing is read, as in C.
        assert_eq!(
            f("/a -- c \u{e9}".as_bytes()),
            Ok(vec![&b"/a"[..], b"--", b"c"])
        );
        assert!(f("/\u{e9} c".as_bytes()).is_err());
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
