//! The compiled `file_contexts.bin` that sefcontext_compile writes and libselinux prefers when
//! it is at least as new as the text (label_file.c's load_mmap, format versions 1 to 5).
//!
//! The file also carries each expression compiled by PCRE2 for one PCRE2 version and one
//! machine; we read the expressions' text and compile them ourselves, which gives the same
//! matches, so that part is skipped. Every length is checked against what is left of the file:
//! a short or corrupt file is an error naming the byte offset, never a read past its end.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use crate::error::{LabelError, Result};
use crate::spec::Origin;
use crate::text::{Pool, RawSpec};

pub const MAGIC: u32 = 0xf97c_ff8a;
const PCRE_VERS: u32 = 2;
const PREFIX_LEN_VERS: u32 = 4;
const REGEX_ARCH_VERS: u32 = 5;

/// How much of the file is read at a time. The file is mostly PCRE2 code we skip (about 1.3 KB
/// an expression against 90 bytes of the rest): read whole, a 7 MB buffer cost fresh pages on
/// a process's first open and the kernel's copy into memory no cache held; a small buffer
/// stays in the cache and below malloc's mmap threshold.
const CHUNK: usize = 64 * 1024;

/// Whether the bytes start with the compiled format's magic number (fcontext_is_binary).
pub fn is_binary(bytes: &[u8]) -> bool {
    bytes
        .get(..4)
        .is_some_and(|m| u32::from_ne_bytes([m[0], m[1], m[2], m[3]]) == MAGIC)
}

/// The file read through a buffer of [`CHUNK`] bytes: `buf[pos..end]` is what has been read
/// and not yet taken, `buf[0]` is at `base` in the file.
struct Reader<'p, R> {
    src: R,
    /// The file's length when opened: what a length is checked against.
    len: u64,
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    base: u64,
    path: &'p Path,
}

impl<R: Read + Seek> Reader<'_, R> {
    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    fn left(&self) -> u64 {
        self.len.saturating_sub(self.offset())
    }

    fn err(&self, msg: impl Into<String>) -> LabelError {
        LabelError::Binary {
            path: self.path.to_path_buf(),
            offset: usize::try_from(self.offset()).unwrap_or(usize::MAX),
            msg: msg.into(),
        }
    }

    fn short(&self, n: usize, what: &str) -> LabelError {
        self.err(format!("{what}: {n} bytes wanted, {} left", self.left()))
    }

    /// Makes `n` bytes available at `pos`, reading more behind what is left in the buffer.
    #[inline(always)]
    fn fill(&mut self, n: usize, what: &str) -> Result<()> {
        if self.end - self.pos >= n {
            return Ok(());
        }
        self.refill(n, what)
    }

    #[cold]
    #[inline(never)]
    fn refill(&mut self, n: usize, what: &str) -> Result<()> {
        if n as u64 > self.left() {
            return Err(self.short(n, what));
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.base += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        if self.buf.len() < n.max(CHUNK) {
            self.buf.resize(n.max(CHUNK), 0);
        }
        while self.end < n {
            match self.src.read(&mut self.buf[self.end..]) {
                // The file shrank since its length was taken.
                Ok(0) => {
                    self.len = self.base + self.end as u64;
                    return Err(self.short(n, what));
                }
                Ok(k) => self.end += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io(e)),
            }
        }
        Ok(())
    }

    fn io(&self, source: std::io::Error) -> LabelError {
        LabelError::Io {
            path: self.path.to_path_buf(),
            source,
        }
    }

    /// The next `n` bytes, as a range of `buf`.
    #[inline(always)]
    fn take(&mut self, n: usize, what: &str) -> Result<std::ops::Range<usize>> {
        self.fill(n, what)?;
        let at = self.pos;
        self.pos += n;
        Ok(at..at + n)
    }

    /// Passes over `n` bytes: what is not in the buffer is not read but sought past.
    fn skip(&mut self, n: usize, what: &str) -> Result<()> {
        let have = self.end - self.pos;
        if have >= n {
            self.pos += n;
            return Ok(());
        }
        if n as u64 > self.left() {
            return Err(self.short(n, what));
        }
        let past = (n - have) as i64;
        self.src
            .seek(SeekFrom::Current(past))
            .map_err(|e| self.io(e))?;
        self.base += (self.end + n - have) as u64;
        self.pos = 0;
        self.end = 0;
        Ok(())
    }

    #[inline(always)]
    fn u32(&mut self, what: &str) -> Result<u32> {
        let r = self.take(4, what)?;
        Ok(ne32(&self.buf[r]))
    }

    /// The `N` words that follow, read at once when the buffer holds them all, else one by
    /// one (so that a short file's error names the word it lacks).
    #[inline(always)]
    fn words<const N: usize>(&mut self, what: [&str; N]) -> Result<[u32; N]> {
        let mut out = [0u32; N];
        if self.end - self.pos >= 4 * N {
            let b = &self.buf[self.pos..self.pos + 4 * N];
            for (i, w) in out.iter_mut().enumerate() {
                *w = ne32(&b[4 * i..]);
            }
            self.pos += 4 * N;
        } else {
            for (w, what) in out.iter_mut().zip(what) {
                *w = self.u32(what)?;
            }
        }
        Ok(out)
    }

    /// A string stored with its terminating NUL, `len` counting the NUL; as C, the string ends
    /// at its first NUL. A range of `buf`, checked to be UTF-8.
    fn cstr(&mut self, len: u32, what: &str) -> Result<std::ops::Range<usize>> {
        if len == 0 {
            return Err(self.err(format!("{what}: zero length")));
        }
        let r = self.take(len as usize, what)?;
        let b = &self.buf[r.clone()];
        if b.last() != Some(&0) {
            return Err(self.err(format!("{what}: not NUL-terminated")));
        }
        let n = memchr::memchr(0, b).unwrap_or(b.len());
        let s = &b[..n];
        // Expressions and contexts are ASCII but for the odd one.
        if s.is_ascii() || std::str::from_utf8(s).is_ok() {
            Ok(r.start..r.start + n)
        } else {
            Err(self.err(format!("{what}: not valid UTF-8")))
        }
    }
}

fn ne32(b: &[u8]) -> u32 {
    u32::from_ne_bytes([b[0], b[1], b[2], b[3]])
}

/// Reads a compiled file held in memory (see [`read_from`]).
pub fn read(path: &Path, file: u16, bytes: &[u8], pool: &mut Pool) -> Result<Vec<RawSpec>> {
    let len = bytes.len() as u64;
    read_from(
        path,
        file,
        std::io::Cursor::new(bytes),
        len,
        Vec::new(),
        pool,
    )
}

/// Reads a compiled file into specifications, in the file's order, their expressions, stems
/// and contexts kept in `pool`. `src` is the file of `len` bytes after `head`, its first bytes
/// already read.
pub fn read_from<R: Read + Seek>(
    path: &Path,
    file: u16,
    src: R,
    len: u64,
    head: Vec<u8>,
    pool: &mut Pool,
) -> Result<Vec<RawSpec>> {
    let mut r = Reader {
        src,
        len,
        end: head.len(),
        buf: head,
        pos: 0,
        base: 0,
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
        r.skip(n as usize, "regex version")?;
        if version >= REGEX_ARCH_VERS {
            let n = r.u32("regex arch length")?;
            r.skip(n as usize, "regex arch")?;
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
        let b = &r.buf[b];
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
    let cap = usize::try_from(len / 24).unwrap_or(usize::MAX);
    let mut specs = Vec::with_capacity((nspecs as usize).min(cap));
    // A context is most often the previous specification's: one comparison, not a hash.
    let mut last: Option<u32> = None;
    for _ in 0..nspecs {
        let n = r.u32("context length")?;
        let text = r.cstr(n, "context")?;
        let text = &r.buf[text];
        let context = match &last {
            Some(c) if pool.context_str(*c).as_bytes() == text => *c,
            _ => {
                let c = pool
                    .context(text)
                    .ok_or_else(|| r.err("context: not valid UTF-8"))?;
                last = Some(c);
                c
            }
        };
        let n = r.u32("regex length")?;
        let regex = r.cstr(n, "regex")?;
        let regex = pool
            .regex(&r.buf[regex])
            .ok_or_else(|| r.err("the set's expressions pass 4 GiB"))?;
        // Before version 3 the mode was a mode_t, which is 4 bytes on Linux too.
        let (mode, stem_id, meta, prefix_len, n) = if version >= PREFIX_LEN_VERS {
            let [m, s, f, p, n] = r.words([
                "mode",
                "stem id",
                "meta flag",
                "prefix length",
                "compiled regex length",
            ])?;
            (m, s, f, p, n)
        } else {
            let [m, s, f, n] =
                r.words(["mode", "stem id", "meta flag", "compiled regex length"])?;
            (m, s, f, 0, n)
        };
        let stem = usize::try_from(stem_id as i32)
            .ok()
            .and_then(|i| stems.get(i))
            .copied()
            .unwrap_or(-1);
        // hasMetaChars is a char in libselinux: the low byte of the stored word decides.
        let has_meta = meta & 0xff != 0;
        r.skip(n as usize, "compiled regex")?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A version-5 file: one stem, then each (context, regex, stem id, compiled length) with
    /// that many bytes of "compiled code".
    fn file(specs: &[(&str, &str, i32, usize)]) -> Vec<u8> {
        let mut b = Vec::new();
        let w = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_ne_bytes());
        let s = |b: &mut Vec<u8>, t: &str| {
            w(b, t.len() as u32 + 1);
            b.extend_from_slice(t.as_bytes());
            b.push(0);
        };
        w(&mut b, MAGIC);
        w(&mut b, REGEX_ARCH_VERS);
        w(&mut b, 4);
        b.extend_from_slice(b"10.4");
        w(&mut b, 6);
        b.extend_from_slice(b"x86-64");
        w(&mut b, 1);
        w(&mut b, 4);
        b.extend_from_slice(b"/usr\0");
        w(&mut b, specs.len() as u32);
        for &(ctx, re, stem, code) in specs {
            s(&mut b, ctx);
            s(&mut b, re);
            w(&mut b, 0);
            w(&mut b, stem as u32);
            w(&mut b, u32::from(re.contains('(')));
            w(&mut b, re.find('(').unwrap_or(re.len()) as u32);
            w(&mut b, code as u32);
            b.extend((0..code).map(|i| i as u8));
        }
        b
    }

    /// Reads `bytes` through a file (the chunked reader, its seeks) and from memory.
    fn both(name: &str, bytes: &[u8]) -> [Result<Vec<(String, String, i32)>>; 2] {
        let dir = std::env::temp_dir().join(format!("seaccess-bin-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).ok();
        let path = dir.join("fc.bin");
        std::fs::write(&path, bytes).ok();
        let show = |pool: &Pool, specs: Vec<RawSpec>| {
            specs
                .into_iter()
                .map(|s| {
                    (
                        pool.context_str(s.context).to_string(),
                        pool.regex_str(s.regex).to_string(),
                        s.stem,
                    )
                })
                .collect::<Vec<_>>()
        };
        let mut pool = Pool::default();
        let via_file = std::fs::File::open(&path)
            .map_err(|e| LabelError::Io {
                path: path.clone(),
                source: e,
            })
            .and_then(|f| read_from(&path, 0, f, bytes.len() as u64, Vec::new(), &mut pool))
            .map(|s| show(&pool, s));
        let mut pool = Pool::default();
        let in_memory = read(&path, 0, bytes, &mut pool).map(|s| show(&pool, s));
        let _ = std::fs::remove_dir_all(&dir);
        [via_file, in_memory]
    }

    fn specs() -> Vec<(&'static str, &'static str, i32, usize)> {
        let mut v = vec![("u:r:a:s0", "/usr/a(/.*)?", 0, 300)];
        // Code longer than the buffer (sought past), then enough specifications to refill
        // it several times.
        v.push(("u:r:b:s0", "/usr/big", 0, 3 * CHUNK + 17));
        for _ in 0..200 {
            v.push(("u:r:c:s0", "/etc/x.*", -1, 1300));
        }
        v.push(("u:r:d:s0", "/last", -1, 5));
        v
    }

    #[test]
    fn a_file_read_in_pieces_reads_as_in_memory() {
        let bytes = file(&specs());
        let [f, m] = both("whole", &bytes);
        let f = f.map_err(|e| e.to_string());
        assert_eq!(f, m.map_err(|e| e.to_string()));
        let f = f.unwrap_or_default();
        assert_eq!(f.len(), 203);
        assert_eq!(f[1], ("u:r:b:s0".into(), "/usr/big".into(), 0));
        assert_eq!(f[202], ("u:r:d:s0".into(), "/last".into(), -1));
    }

    /// Cut anywhere, the file is an error naming the path and the byte where it fell short,
    /// the same through the file and in memory (a cut inside code that was sought past too).
    #[test]
    fn a_truncated_file_is_an_error_naming_the_offset() {
        let bytes = file(&specs());
        // Where the big specification's code starts: the header, the first specification,
        // the big one's fields.
        let header = 4 + 4 + (4 + 4) + (4 + 6) + 4 + (4 + 5) + 4;
        let big_code = header + (4 + 9 + 4 + 13 + 20 + 300) + (4 + 9 + 4 + 9 + 20);
        for cut in [
            3,
            9,
            30,
            big_code + 100,
            big_code + 20 + CHUNK,
            bytes.len() - 1,
        ] {
            let [f, m] = both(&format!("cut{cut}"), &bytes[..cut]);
            let (f, m) = (
                f.err().map(|e| e.to_string()),
                m.err().map(|e| e.to_string()),
            );
            assert_eq!(f, m, "cut at {cut}");
            let f = f.unwrap_or_default();
            assert!(f.contains("fc.bin: at byte "), "cut at {cut}: {f}");
            assert!(f.contains("bytes wanted"), "cut at {cut}: {f}");
        }
        // A length past the end names the field and what is left.
        let mut bad = bytes.clone();
        let at = header;
        bad[at..at + 4].copy_from_slice(&u32::MAX.to_ne_bytes());
        let [f, _] = both("len", &bad);
        let left = bad.len() - at - 4;
        assert_eq!(
            f.err().map(|e| e.to_string()).unwrap_or_default(),
            format!(
                "{}: at byte {}: context: {} bytes wanted, {left} left",
                std::env::temp_dir()
                    .join(format!("seaccess-bin-{}-len", std::process::id()))
                    .join("fc.bin")
                    .display(),
                at + 4,
                u32::MAX
            )
        );
    }
}
