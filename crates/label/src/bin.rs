//! The compiled `file_contexts.bin` that sefcontext_compile writes and libselinux prefers when
//! it is at least as new as the text (label_file.c's load_mmap, format versions 1 to 5).
//!
//! The file also carries each expression compiled by PCRE2 for one PCRE2 version and one
//! machine; we read the expressions' text and compile them ourselves, which gives the same
//! matches, so that part is skipped. Every length is checked against what is left of the file:
//! a short or corrupt file is an error naming the byte offset, never a read past its end.

use std::path::Path;
use std::sync::Arc;

use seaccess_types::bytes::Cursor;

use crate::error::{LabelError, Result};
use crate::spec::Origin;
use crate::text::{Pool, RawSpec};

pub const MAGIC: u32 = 0xf97c_ff8a;
const PCRE_VERS: u32 = 2;
const PREFIX_LEN_VERS: u32 = 4;
const REGEX_ARCH_VERS: u32 = 5;

/// Whether the bytes start with the compiled format's magic number (fcontext_is_binary).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes
        .get(..4)
        .is_some_and(|m| u32::from_ne_bytes([m[0], m[1], m[2], m[3]]) == MAGIC)
}

struct Reader<'a> {
    cur: Cursor<'a>,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    fn err(&self, msg: impl Into<String>) -> LabelError {
        LabelError::Binary {
            path: self.path.to_path_buf(),
            offset: self.cur.offset(),
            msg: msg.into(),
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        match self.cur.take(n) {
            Some(s) => Ok(s),
            None => Err(self.err(format!(
                "{what}: {n} bytes wanted, {} left",
                self.cur.remaining()
            ))),
        }
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        match self.cur.u32_ne() {
            Some(v) => Ok(v),
            None => Err(self.err(format!(
                "{what}: 4 bytes wanted, {} left",
                self.cur.remaining()
            ))),
        }
    }

    /// A string stored with its terminating NUL, `len` counting the NUL; as C, the string ends
    /// at its first NUL. Borrowed from the file's bytes, checked to be UTF-8.
    fn cstr_ref(&mut self, len: u32, what: &str) -> Result<&'a [u8]> {
        if len == 0 {
            return Err(self.err(format!("{what}: zero length")));
        }
        let b = self.take(len as usize, what)?;
        if b.last() != Some(&0) {
            return Err(self.err(format!("{what}: not NUL-terminated")));
        }
        let s = match memchr::memchr(0, b) {
            Some(n) => &b[..n],
            None => b,
        };
        // Expressions and contexts are ASCII but for the odd one.
        if s.is_ascii() || std::str::from_utf8(s).is_ok() {
            Ok(s)
        } else {
            Err(self.err(format!("{what}: not valid UTF-8")))
        }
    }
}

/// Reads a compiled file into specifications, in the file's order, their expressions, stems
/// and contexts kept in `pool`.
pub fn read(path: &Path, file: u16, bytes: &[u8], pool: &mut Pool) -> Result<Vec<RawSpec>> {
    let mut r = Reader {
        cur: Cursor::new(bytes),
        path,
    };
    if r.u32("magic")? != MAGIC {
        return Err(r.err("not a compiled file_contexts (bad magic)"));
    }
    let version = r.u32("version")?;
    if version > REGEX_ARCH_VERS {
        return Err(r.err(format!(
            "format version {version} is newer than the newest known, {REGEX_ARCH_VERS}"
        )));
    }
    if version >= PCRE_VERS {
        let n = r.u32("regex version length")?;
        r.take(n as usize, "regex version")?;
        if version >= REGEX_ARCH_VERS {
            let n = r.u32("regex arch length")?;
            r.take(n as usize, "regex arch")?;
        }
    }
    let nstems = r.u32("stem count")?;
    // The file's stem numbers, as the set's.
    let mut stems: Vec<i32> = Vec::new();
    for _ in 0..nstems {
        let len = r.u32("stem length")?;
        if len == 0 || len == u32::MAX {
            return Err(r.err("stem length out of range"));
        }
        let b = r.take(len as usize + 1, "stem")?;
        if b[len as usize] != 0 {
            return Err(r.err("stem not NUL-terminated"));
        }
        stems.push(pool.stem(&b[..len as usize]));
    }
    let nspecs = r.u32("specification count")?;
    if nspecs == 0 {
        return Err(r.err("no specifications"));
    }
    // Each specification takes at least 24 bytes, so a count the file cannot hold reserves no
    // more than the file could.
    let mut specs = Vec::with_capacity((nspecs as usize).min(bytes.len() / 24));
    // A context is most often the previous specification's: one comparison, not a hash.
    let mut last: Option<(&[u8], Arc<str>)> = None;
    for _ in 0..nspecs {
        let n = r.u32("context length")?;
        let text = r.cstr_ref(n, "context")?;
        let context = match &last {
            Some((t, c)) if *t == text => c.clone(),
            _ => {
                let c = pool
                    .context(text)
                    .ok_or_else(|| r.err("context: not valid UTF-8"))?;
                last = Some((text, c.clone()));
                c
            }
        };
        let n = r.u32("regex length")?;
        let regex = r.cstr_ref(n, "regex")?;
        let regex = pool
            .regex(regex)
            .ok_or_else(|| r.err("the set's expressions pass 4 GiB"))?;
        // Before version 3 the mode was a mode_t, which is 4 bytes on Linux too.
        let mode = r.u32("mode")?;
        let stem_id = r.u32("stem id")? as i32;
        let stem = usize::try_from(stem_id)
            .ok()
            .and_then(|i| stems.get(i))
            .copied()
            .unwrap_or(-1);
        // hasMetaChars is a char in libselinux: the low byte of the stored word decides.
        let has_meta = r.u32("meta flag")? & 0xff != 0;
        let prefix_len = if version >= PREFIX_LEN_VERS {
            r.u32("prefix length")?
        } else {
            0
        };
        let n = r.u32("compiled regex length")?;
        r.take(n as usize, "compiled regex")?;
        specs.push(RawSpec {
            regex,
            mode,
            context,
            stem,
            has_meta,
            prefix_len,
            origin: Origin { file, line: 0 },
        });
    }
    Ok(specs)
}
