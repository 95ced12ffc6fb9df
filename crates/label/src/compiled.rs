//! seaccess's own compiled file_contexts: a set read, validated, ordered and checked once
//! (`seaccess label --compile`), written to one file that loads without parsing text or
//! compiling expressions (PCRE2 compiles an expression the first time a lookup needs it).
//!
//! Layout, little-endian: the magic `SEACFC\0\0`, a version, then length-prefixed tables (the
//! source files, both substitution lists, the stems, the contexts, the specifications in
//! lookup order with each expression's analysis (shape, literal prefix, tail, inner literals),
//! the prefix index), and last a 64-bit FNV-1a checksum of everything before it. The analysis
//! is stored, not redone, which is most of what loading saves: the file is as trusted as the
//! file_contexts it was made from, and the checksum guards it against damage, not against its
//! writer. The loader checks
//! every length against what is left and every index against its table, so a truncated or
//! corrupt file is an error naming the byte, never a wrong answer.
//!
//! A compiled file holds no expression PCRE2 rejected: the writer only takes a set opened with
//! [`crate::FileContexts::open_with`], which compiled them all.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seaccess_types::bytes::Cursor;

use crate::error::{LabelError, Result};
use crate::lookup::{Index, Lit, Matcher, Matchers};
use crate::spec::{Kind, Origin, Spec, Text};
use crate::subs::Subs;
use crate::FileContexts;

const MAGIC: &[u8; 8] = b"SEACFC\0\0";
const VERSION: u32 = 3;

/// A checksum over 8-byte words (FNV-1a's constants, a word at a time, the tail byte-wise):
/// against damage, not against an adversary.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut words = bytes.chunks_exact(8);
    for w in &mut words {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        h ^= u64::from_le_bytes(b);
        h = h.wrapping_mul(0x0100_0000_01b3).rotate_left(29);
    }
    for &b in words.remainder() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

struct Out(Vec<u8>);

impl Out {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.0.extend_from_slice(b);
    }
}

/// The compiled form of an opened set.
pub fn to_bytes(fc: &FileContexts) -> Vec<u8> {
    let mut o = Out(Vec::new());
    o.0.extend_from_slice(MAGIC);
    o.u32(VERSION);
    o.len(fc.files().len());
    for f in fc.files() {
        o.bytes(f.as_os_str().as_encoded_bytes());
    }
    let (subs, dist) = fc.subs();
    for list in [subs, dist] {
        let pairs = list.pairs();
        o.len(pairs.len());
        for (s, d) in pairs {
            o.bytes(s);
            o.bytes(d);
        }
    }
    let stems = fc.stems_in_order();
    o.len(stems.len());
    for s in &stems {
        o.bytes(s);
    }
    let mut ctx_ids: rustc_hash::FxHashMap<&str, u32> = rustc_hash::FxHashMap::default();
    let mut ctxs: Vec<&str> = Vec::new();
    for s in fc.specs() {
        ctx_ids.entry(&s.context).or_insert_with(|| {
            ctxs.push(&s.context);
            (ctxs.len() - 1) as u32
        });
    }
    o.len(ctxs.len());
    for c in &ctxs {
        o.bytes(c.as_bytes());
    }
    o.len(fc.specs().len());
    for (s, m) in fc.specs().iter().zip(fc.matchers()) {
        let (tail, inner) = m.filter_parts(&s.regex);
        let kind = match m.kind {
            Kind::Exact => 0,
            Kind::Under => 1,
            Kind::Prefix => 2,
        };
        o.u32(kind);
        o.bytes(m.lit.get(fc.lits()));
        o.bytes(tail);
        o.len(inner.len());
        for l in inner {
            o.bytes(l);
        }
        o.bytes(s.regex.as_bytes());
        o.u32(ctx_ids.get(&*s.context).copied().unwrap_or(0));
        o.u32(s.mode);
        o.u32(s.stem as u32);
        o.u32(u32::from(s.has_meta));
        o.u32(s.prefix_len);
        o.u32(u32::from(s.origin.file));
        o.u32(s.origin.line);
    }
    let parts: Vec<_> = fc.index().parts(fc.lits()).collect();
    o.len(parts.len());
    for (prefix, parent, ids) in parts {
        o.bytes(prefix);
        o.u32(parent);
        o.len(ids.len());
        for &id in ids {
            o.u32(id);
        }
    }
    let sum = fnv1a(&o.0);
    o.0.extend_from_slice(&sum.to_le_bytes());
    o.0
}

/// Writes the compiled form atomically (a temporary file renamed over `dest`).
pub fn write(fc: &FileContexts, dest: &Path) -> Result<()> {
    let bytes = to_bytes(fc);
    let mut tmp = dest.as_os_str().to_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let io = |p: &Path, source| LabelError::Io {
        path: p.to_path_buf(),
        source,
    };
    std::fs::write(&tmp, &bytes).map_err(|e| io(&tmp, e))?;
    std::fs::rename(&tmp, dest).map_err(|e| io(dest, e))
}

struct In<'a> {
    cur: Cursor<'a>,
    path: &'a Path,
}

impl<'a> In<'a> {
    fn err(&self, msg: &str) -> LabelError {
        LabelError::Compiled {
            path: self.path.to_path_buf(),
            msg: format!("at byte {}: {msg}", self.cur.offset()),
        }
    }
    #[inline]
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8]> {
        match self.cur.take(n) {
            Some(s) => Ok(s),
            None => Err(self.err(&format!("{what} runs past the end"))),
        }
    }
    #[inline]
    fn u32(&mut self, what: &str) -> Result<u32> {
        match self.cur.u32_le() {
            Some(v) => Ok(v),
            None => Err(self.err(&format!("{what} runs past the end"))),
        }
    }
    fn bytes(&mut self, what: &str) -> Result<&'a [u8]> {
        let n = self.u32(what)? as usize;
        self.take(n, what)
    }
    fn str(&mut self, what: &str) -> Result<&'a str> {
        let b = self.bytes(what)?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(s),
            Err(_) => Err(self.err(&format!("{what} is not UTF-8"))),
        }
    }
    /// A count, bounded by what is left so a corrupt count cannot ask for a huge allocation.
    fn count(&mut self, what: &str, min_item: usize) -> Result<usize> {
        let n = self.u32(what)? as usize;
        if !self.cur.holds(n, min_item) {
            return Err(self.err(&format!("{what} {n} is more than the file holds")));
        }
        Ok(n)
    }
}

/// Whether the bytes are seaccess's compiled form.
pub fn is_compiled(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Loads a compiled set from its bytes (`path` names it in errors).
pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<FileContexts> {
    let body_len = bytes
        .len()
        .checked_sub(8)
        .ok_or_else(|| LabelError::Compiled {
            path: path.to_path_buf(),
            msg: "too short".into(),
        })?;
    let (body, sum) = bytes.split_at(body_len);
    let mut sb = [0u8; 8];
    sb.copy_from_slice(sum);
    if !is_compiled(body) {
        return Err(LabelError::Compiled {
            path: path.to_path_buf(),
            msg: "not a seaccess compiled file_contexts".into(),
        });
    }
    if fnv1a(body) != u64::from_le_bytes(sb) {
        return Err(LabelError::Compiled {
            path: path.to_path_buf(),
            msg: "checksum mismatch (the file is damaged)".into(),
        });
    }
    let mut r = In {
        cur: Cursor::new(body).at(MAGIC.len()),
        path,
    };
    let v = r.u32("version")?;
    if v != VERSION {
        return Err(r.err(&format!("version {v}, expected {VERSION}")));
    }
    let n = r.count("file count", 4)?;
    let mut files = Vec::with_capacity(n);
    for _ in 0..n {
        use std::os::unix::ffi::OsStrExt;
        files.push(PathBuf::from(std::ffi::OsStr::from_bytes(
            r.bytes("file name")?,
        )));
    }
    let mut lists = Vec::new();
    for _ in 0..2 {
        let n = r.count("substitution count", 8)?;
        let mut pairs = Vec::with_capacity(n);
        for _ in 0..n {
            let s = r.bytes("substitution source")?.to_vec();
            let d = r.bytes("substitution target")?.to_vec();
            pairs.push((s, d));
        }
        lists.push(Subs::from_pairs(pairs));
    }
    let dist_subs = lists.pop().unwrap_or_default();
    let subs = lists.pop().unwrap_or_default();
    let n = r.count("stem count", 4)?;
    let mut stems: rustc_hash::FxHashMap<Arc<[u8]>, i32> = rustc_hash::FxHashMap::default();
    for i in 0..n {
        stems.insert(Arc::from(r.bytes("stem")?), i as i32);
    }
    if stems.len() != n {
        return Err(r.err("a stem is listed twice"));
    }
    let n = r.count("context count", 4)?;
    let mut ctxs: Vec<Arc<str>> = Vec::with_capacity(n);
    for _ in 0..n {
        ctxs.push(Arc::from(r.str("context")?));
    }
    let n = r.count("specification count", 48)?;
    let mut specs = Vec::with_capacity(n);
    let mut matchers = Vec::with_capacity(n);
    // The expressions and the literal prefixes, each in one buffer, as an opened set has them.
    let mut regexes = String::new();
    let mut pieces: Vec<std::ops::Range<u32>> = Vec::with_capacity(n);
    let mut lits: Vec<u8> = Vec::new();
    let too_big = |r: &In<'_>| r.err("the set passes 4 GiB");
    // Each specification's expression until the buffer of them is complete.
    let empty: Arc<String> = Arc::default();
    for _ in 0..n {
        let kind = match r.u32("shape")? {
            0 => Kind::Exact,
            1 => Kind::Under,
            2 => Kind::Prefix,
            _ => return Err(r.err("unknown shape")),
        };
        let prefix = r.bytes("prefix")?;
        let start = u32::try_from(lits.len()).map_err(|_| too_big(&r))?;
        lits.extend_from_slice(prefix);
        let lit = Lit {
            start,
            len: u32::try_from(prefix.len()).map_err(|_| too_big(&r))?,
        };
        let tail = r.bytes("tail")?.to_vec();
        let ninner = r.count("inner literal count", 4)?;
        let mut inner = Vec::with_capacity(ninner);
        for _ in 0..ninner {
            inner.push(r.bytes("inner literal")?.to_vec());
        }
        matchers.push(Matcher::from_parts(kind, lit, tail, inner));
        let regex = r.str("regex")?;
        let start = u32::try_from(regexes.len()).map_err(|_| too_big(&r))?;
        let end = u32::try_from(regexes.len() + regex.len()).map_err(|_| too_big(&r))?;
        regexes.push_str(regex);
        pieces.push(start..end);
        let ctx = r.u32("context index")? as usize;
        let context = ctxs
            .get(ctx)
            .cloned()
            .ok_or_else(|| r.err("context index out of range"))?;
        let mode = r.u32("mode")?;
        let stem = r.u32("stem")? as i32;
        if stem < -1 || stem >= n_stems(&stems) {
            return Err(r.err("stem index out of range"));
        }
        let has_meta = r.u32("meta flag")? != 0;
        let prefix_len = r.u32("prefix length")?;
        let file =
            u16::try_from(r.u32("file index")?).map_err(|_| r.err("file index out of range"))?;
        let line = r.u32("line")?;
        specs.push(Spec {
            regex: Text::new(empty.clone(), 0..0),
            mode,
            context,
            stem,
            has_meta,
            prefix_len,
            origin: Origin { file, line },
        });
    }
    let buf = Arc::new(regexes);
    for (s, p) in specs.iter_mut().zip(pieces) {
        s.regex = Text::new(buf.clone(), p);
    }
    let nidx = r.count("index count", 12)?;
    let mut parts = Vec::with_capacity(nidx);
    // Every specification must be in the index once, under its own prefix, or a lookup could
    // never find it.
    let mut seen = vec![false; specs.len()];
    for _ in 0..nidx {
        let prefix = r.bytes("index prefix")?;
        let parent = r.u32("index ancestor")?;
        let nids = r.count("index entry size", 4)?;
        let mut ids = Vec::with_capacity(nids);
        for _ in 0..nids {
            ids.push(r.u32("index entry")?);
        }
        for &id in &ids {
            let i = id as usize;
            if i >= seen.len() || seen[i] || matchers[i].lit.get(&lits) != prefix {
                return Err(
                    r.err("the index does not list each specification once under its prefix")
                );
            }
            seen[i] = true;
        }
        // The prefix is its first specification's; an entry with none has its own copy.
        let lit = match ids.first() {
            Some(&id) => matchers[id as usize].lit,
            None => {
                let start = u32::try_from(lits.len()).map_err(|_| too_big(&r))?;
                lits.extend_from_slice(prefix);
                Lit {
                    start,
                    len: u32::try_from(prefix.len()).map_err(|_| too_big(&r))?,
                }
            }
        };
        parts.push((lit, parent, ids));
    }
    if seen.iter().any(|s| !s) {
        return Err(r.err("the index leaves a specification out"));
    }
    let index = Index::from_parts(parts, &lits, specs.len()).map_err(|e| r.err(&e))?;
    if r.cur.remaining() != 0 {
        return Err(r.err("bytes left after the index"));
    }
    Ok(FileContexts::assemble(
        specs,
        Some(Matchers {
            list: matchers,
            lits: lits.into_boxed_slice(),
        }),
        Some(index),
        stems,
        subs,
        dist_subs,
        files,
        Vec::new(),
    ))
}

fn n_stems(stems: &rustc_hash::FxHashMap<Arc<[u8]>, i32>) -> i32 {
    i32::try_from(stems.len()).unwrap_or(i32::MAX)
}

/// Loads a compiled set from a file.
pub fn load(path: &Path) -> Result<FileContexts> {
    let bytes = std::fs::read(path).map_err(|source| LabelError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    from_bytes(path, &bytes)
}
