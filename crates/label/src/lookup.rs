//! Answering a path: label_file.c's lookup_all, lookup_best_match and partial_match, with the
//! same answer and a fraction of the work.
//!
//! libselinux tries every specification from the last to the first, skipping those whose stem
//! or file type rules them out, and runs PCRE2 on each of the rest until one matches. The
//! answer is the highest-numbered specification that passes those filters and matches. We
//! find the same one: a byte trie over each specification's literal prefix yields, in one walk
//! of the path, exactly the specifications that can match it (a specification whose prefix is
//! not a prefix of the path cannot), and those are tried highest first with the same filters;
//! the two common forms (a literal path, a path and everything under it) are decided without
//! PCRE2. Nothing is skipped that could have matched, so the first match is libselinux's.

use rustc_hash::FxHashMap as HashMap;
use std::sync::Arc;

use once_cell::race::OnceBox;

use pcre2::bytes::RegexBuilder;

use crate::jit::Compiled;

use crate::error::{LabelError, Result};
use crate::partial::{Partial, PartialDfa};
use crate::spec::{
    inner_literals, kind_matches, literal_tail, path_stem_len, shape_into, tail_allows, FileKind,
    Kind, Spec, S_IFMT,
};
use crate::subs::Subs;

/// Where a literal (a specification's prefix) is in its set's one buffer of literals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Lit {
    pub(crate) start: u32,
    pub(crate) len: u32,
}

impl Lit {
    pub(crate) fn get(self, lits: &[u8]) -> &[u8] {
        let start = self.start as usize;
        lits.get(start..start + self.len as usize)
            .unwrap_or_default()
    }
}

/// How many of a literal's first bytes its sort key holds.
const KEY_BYTES: usize = 12;

/// A literal's first 12 bytes (zeros after its end) above its number: one integer, a coarser
/// order than the bytes' own (two literals in order never have keys out of order), so the
/// sort moves 16-byte integers and looks at the bytes only where keys agree on 12. (Two keys
/// of 32 bytes and a number made a 48-byte element and a sort twice as slow.)
fn key12(p: &[u8], id: u32) -> u128 {
    let mut b = [0u8; 16];
    let n = p.len().min(KEY_BYTES);
    b[..n].copy_from_slice(&p[..n]);
    b[KEY_BYTES..].copy_from_slice(&id.to_be_bytes());
    u128::from_be_bytes(b)
}

/// The specifications' literal prefixes, sorted, each with its nearest ancestor (the longest
/// other prefix in the set that is a prefix of it) and the specifications that have it. The
/// prefixes are kept in the set's buffer of literals (each the first specification's that has
/// it), not copied.
///
/// Why this finds every prefix of a path: take the greatest prefix `P` not above the path in
/// byte order. Every set member `Q` that is a prefix of the path lies between `Q` and the path
/// in that order too, so it is a prefix of `P`, and so on `P`'s ancestor chain. The chain is
/// short (a prefix's ancestors are prefixes of it), and building is one sort.
pub(crate) struct Index {
    prefixes: Vec<Lit>,
    parent: Vec<u32>,
    /// Prefix `i`'s specifications are `specs[starts[i]..starts[i + 1]]` (to the end for the
    /// last): one buffer for all, not one allocation per prefix.
    starts: Vec<u32>,
    specs: Vec<u32>,
}

const NO_PARENT: u32 = u32::MAX;

impl Index {
    /// The index of the `n` specifications whose prefixes are `prefix(0..n)`, in `lits`.
    pub(crate) fn build(lits: &[u8], n: usize, prefix: impl Fn(usize) -> Lit) -> Index {
        let mut all: Vec<u128> = (0..n)
            .map(|i| key12(prefix(i).get(lits), i as u32))
            .collect();
        all.sort_unstable();
        // Literals that agree on their first 12 bytes are put in order by the rest.
        let bytes = |k: u128| prefix(k as u32 as usize).get(lits);
        let mut at = 0;
        while at < all.len() {
            let key = all[at] >> 32;
            let run = all[at..].iter().take_while(|&&e| e >> 32 == key).count();
            // Keys hold the whole of literals shorter than 12 bytes: equal keys and equal
            // lengths under 12 are equal literals, whose order is already the numbers'.
            let len0 = prefix(all[at] as u32 as usize).len;
            let same = all[at..at + run]
                .iter()
                .all(|&e| prefix(e as u32 as usize).len == len0);
            if run > 1 && !(same && (len0 as usize) < KEY_BYTES) {
                all[at..at + run].sort_unstable_by(|&a, &b| {
                    bytes(a).cmp(bytes(b)).then((a as u32).cmp(&(b as u32)))
                });
            }
            at += run;
        }
        // The order alone, and the keys freed before the index's tables are made: their 16
        // bytes a specification are a block the four tables, 4 bytes each, then fill, not a
        // hole left in the heap under an open handle.
        let order: Vec<u32> = all.iter().map(|&k| k as u32).collect();
        drop(all);
        // The prefixes' tables grow (reserved for a prefix a specification and shrunk after,
        // they made a 1.4 ms warm open of Debian's .bin 1.7 ms: glibc's heap dynamics, not
        // fewer bytes).
        let mut idx = Index {
            prefixes: Vec::new(),
            parent: Vec::new(),
            starts: Vec::new(),
            specs: Vec::with_capacity(n),
        };
        // The chain of the previous prefix, as indexes: each one a prefix of the next.
        let mut stack: Vec<u32> = Vec::new();
        for id in order {
            let lit = prefix(id as usize);
            let p = lit.get(lits);
            if idx.prefixes.last().is_some_and(|last| last.get(lits) == p) {
                idx.specs.push(id);
                continue;
            }
            while let Some(&top) = stack.last() {
                if p.starts_with(idx.prefixes[top as usize].get(lits)) {
                    break;
                }
                stack.pop();
            }
            idx.parent.push(stack.last().copied().unwrap_or(NO_PARENT));
            idx.prefixes.push(lit);
            idx.starts.push(idx.specs.len() as u32);
            idx.specs.push(id);
            stack.push(idx.prefixes.len() as u32 - 1);
        }
        idx.prefixes.shrink_to_fit();
        idx.parent.shrink_to_fit();
        idx.starts.shrink_to_fit();
        idx
    }

    /// Every specification whose prefix is a prefix of `key`, highest number first.
    fn candidates(&self, lits: &[u8], key: &[u8], out: &mut Vec<u32>) {
        out.clear();
        let j = self.prefixes.partition_point(|p| p.get(lits) <= key);
        let mut at = if j == 0 { NO_PARENT } else { j as u32 - 1 };
        while at != NO_PARENT {
            let i = at as usize;
            if key.starts_with(self.prefixes[i].get(lits)) {
                out.extend_from_slice(self.ids(i));
            }
            at = self.parent[i];
        }
        out.sort_unstable_by(|a, b| b.cmp(a));
    }

    /// Prefix `i`'s specifications.
    fn ids(&self, i: usize) -> &[u32] {
        let start = self.starts.get(i).map_or(self.specs.len(), |&s| s as usize);
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.specs.len(), |&s| s as usize);
        self.specs.get(start..end).unwrap_or_default()
    }

    pub(crate) fn node_count(&self) -> usize {
        self.prefixes.len()
    }

    /// The index's tables, for the compiled form: (prefix, nearest ancestor, specifications).
    pub(crate) fn parts<'a>(
        &'a self,
        lits: &'a [u8],
    ) -> impl Iterator<Item = (&'a [u8], u32, &'a [u32])> {
        self.prefixes
            .iter()
            .zip(&self.parent)
            .enumerate()
            .map(move |(i, (p, &a))| (p.get(lits), a, self.ids(i)))
    }

    /// An index from the compiled form's tables, checked: prefixes strictly increasing, each
    /// ancestor earlier and a proper prefix, each specification number below `nspecs`.
    pub(crate) fn from_parts(
        parts: Vec<(Lit, u32, Vec<u32>)>,
        lits: &[u8],
        nspecs: usize,
    ) -> std::result::Result<Index, String> {
        let mut idx = Index {
            prefixes: Vec::with_capacity(parts.len()),
            parent: Vec::with_capacity(parts.len()),
            starts: Vec::with_capacity(parts.len()),
            specs: Vec::new(),
        };
        for (i, (lit, a, ids)) in parts.into_iter().enumerate() {
            let p = lit.get(lits);
            if idx.prefixes.last().is_some_and(|last| last.get(lits) >= p) {
                return Err(format!("index entry {i} is out of order"));
            }
            if a != NO_PARENT
                && (a as usize >= i
                    || !p.starts_with(idx.prefixes[a as usize].get(lits))
                    || idx.prefixes[a as usize].len as usize >= p.len())
            {
                return Err(format!("index entry {i} has a wrong ancestor"));
            }
            if ids.iter().any(|&id| id as usize >= nspecs) {
                return Err(format!(
                    "index entry {i} names a specification out of range"
                ));
            }
            idx.prefixes.push(lit);
            idx.parent.push(a);
            idx.starts.push(idx.specs.len() as u32);
            idx.specs.extend(ids);
        }
        Ok(idx)
    }
}

/// A specification's matcher: its shape (kind and literal prefix, the literal in the set's
/// buffer of literals), and PCRE2 compiled when the shape cannot decide.
pub(crate) struct Matcher {
    pub(crate) kind: Kind,
    pub(crate) lit: Lit,
    /// What every match ends with and contains, checked before PCRE2 runs: worked out from
    /// the expression the first time a lookup reaches it, as the expression is compiled then
    /// (at open, for thousands of expressions most lookups never reach, this analysis and its
    /// allocations were a large part of opening a set). Given at once by the compiled form.
    filters: OnceBox<Filters>,
    /// Compiled the first time a lookup needs it. Two threads may both compile it, one result
    /// kept: no thread ever waits for another here, so a child forked while a thread of its
    /// parent compiles finds nothing half done to wait for (a OnceLock would hang it).
    regex: OnceBox<std::result::Result<Compiled, String>>,
    /// Built the first time a partial match needs it (the same way).
    partial: OnceBox<std::result::Result<PartialDfa, String>>,
}

/// What every match of an expression PCRE2 must run ends with (spec.rs's literal_tail) and
/// contains after its literal prefix (inner_literals); empty for the other shapes.
struct Filters {
    tail: Box<[u8]>,
    inner: Box<[memchr::memmem::Finder<'static>]>,
}

impl Filters {
    fn of(kind: Kind, regex: &[u8]) -> Filters {
        if kind != Kind::Prefix {
            return Filters {
                tail: Box::default(),
                inner: Box::default(),
            };
        }
        Filters::from_parts(literal_tail(regex), &inner_literals(regex))
    }

    fn from_parts(tail: Vec<u8>, inner: &[Vec<u8>]) -> Filters {
        Filters {
            tail: tail.into(),
            inner: inner
                .iter()
                .map(|l| memchr::memmem::Finder::new(l).into_owned())
                .collect(),
        }
    }

    /// Whether `key` may match: it ends with the tail and holds every inner literal after the
    /// prefix (`prefix_len` bytes).
    fn allow(&self, prefix_len: usize, key: &[u8]) -> bool {
        let rest = key.get(prefix_len..).unwrap_or_default();
        tail_allows(&self.tail, key) && self.inner.iter().all(|f| f.find(rest).is_some())
    }
}

/// Compiles `^REGEX$` as libselinux does (regex.c's regex_prepare_data: PCRE2_DOTALL only; no
/// UTF, so bytes are bytes).
/// Compiled under the JIT's fork lock ([`crate::jit`]).
pub fn compile(regex: &str) -> std::result::Result<Compiled, String> {
    let anchored = format!("^{regex}$");
    Compiled::build(|| {
        RegexBuilder::new()
            .dotall(true)
            .jit_if_available(true)
            .build(&anchored)
    })
    .map_err(|e| e.to_string())
}

impl Matcher {
    /// The matcher of `regex`, its literal prefix appended to `lits`. Should `lits` pass 4 GiB
    /// (an open refuses such a set first, [`Matchers::fits`]), the prefix is dropped and PCRE2
    /// decides: the conservative reading, never a wrong one.
    pub(crate) fn new(regex: &str, lits: &mut Vec<u8>) -> Matcher {
        let start = lits.len();
        let kind = shape_into(regex.as_bytes(), lits);
        let (kind, lit) = match (u32::try_from(start), u32::try_from(lits.len() - start)) {
            (Ok(start), Ok(len)) if u32::try_from(lits.len()).is_ok() => (kind, Lit { start, len }),
            _ => {
                lits.truncate(start);
                (Kind::Prefix, Lit { start: 0, len: 0 })
            }
        };
        Matcher {
            kind,
            lit,
            filters: OnceBox::new(),
            regex: OnceBox::new(),
            partial: OnceBox::new(),
        }
    }

    /// A matcher from the compiled form's analysis of its expression.
    pub(crate) fn from_parts(kind: Kind, lit: Lit, tail: Vec<u8>, inner: Vec<Vec<u8>>) -> Matcher {
        let filters = OnceBox::new();
        // A fresh cell: the value is always taken.
        let _ = filters.set(Box::new(Filters::from_parts(tail, &inner)));
        Matcher {
            kind,
            lit,
            filters,
            regex: OnceBox::new(),
            partial: OnceBox::new(),
        }
    }

    /// The analysis the compiled form stores: tail and inner literals (of `regex`, this
    /// matcher's expression).
    pub(crate) fn filter_parts(&self, regex: &str) -> (&[u8], Vec<&[u8]>) {
        let f = self.filters(regex);
        (&f.tail, f.inner.iter().map(|f| f.needle()).collect())
    }

    /// The tail and inner literals of `regex`, this matcher's expression.
    fn filters(&self, regex: &str) -> &Filters {
        self.filters
            .get_or_init(|| Box::new(Filters::of(self.kind, regex.as_bytes())))
    }

    pub(crate) fn needs_pcre(&self) -> bool {
        self.kind == Kind::Prefix
    }

    /// Compiles now (at open), so a broken expression is reported with its line.
    pub(crate) fn prepare(&self, regex: &str) -> std::result::Result<(), String> {
        match self.regex.get_or_init(|| Box::new(compile(regex))) {
            Ok(_) => Ok(()),
            Err(e) => Err(e.clone()),
        }
    }

    fn matches(
        &self,
        spec: &Spec,
        files: &[std::path::PathBuf],
        lits: &[u8],
        key: &[u8],
    ) -> Result<bool> {
        if let Some(m) = kind_matches(self.kind, self.lit.get(lits), key) {
            return Ok(m);
        }
        // Compiled before the tail is looked at, so a broken expression fails the lookup that
        // reaches it, as in libselinux, whether or not the tail could match.
        match self.regex.get_or_init(|| Box::new(compile(&spec.regex))) {
            Ok(_) if !self.filters(&spec.regex).allow(self.lit.len as usize, key) => Ok(false),
            Ok(re) => re.is_match(key).map_err(|msg| LabelError::Match {
                path: String::from_utf8_lossy(key).into_owned(),
                regex: spec.regex.to_string(),
                msg,
            }),
            Err(msg) => Err(LabelError::Regex {
                path: files
                    .get(spec.origin.file as usize)
                    .cloned()
                    .unwrap_or_default(),
                line: spec.origin.line,
                regex: spec.regex.to_string(),
                msg: msg.clone(),
            }),
        }
    }
}

/// The specifications' matchers and, in one buffer, their literal prefixes.
pub(crate) struct Matchers {
    pub(crate) list: Vec<Matcher>,
    pub(crate) lits: Box<[u8]>,
}

impl Matchers {
    /// Each specification's expression read for its shape and literal prefix.
    pub(crate) fn of(specs: &[Spec]) -> Matchers {
        // A literal prefix is at most its expression: reserved once, not grown by doubling
        // (each growth a copy, and a freed block left in the heap of an open handle).
        let mut lits = Vec::with_capacity(specs.iter().map(|s| s.regex.len()).sum());
        let list = specs
            .iter()
            .map(|s| Matcher::new(s.regex.as_str(), &mut lits))
            .collect();
        Matchers {
            list,
            lits: lits.into_boxed_slice(),
        }
    }

    /// The first specification whose expression would take the literal prefixes past 4 GiB
    /// (a prefix is at most its expression), if any: what an open refuses.
    pub(crate) fn fits(specs: &[Spec]) -> Option<usize> {
        let mut total = 0usize;
        specs.iter().position(|s| {
            total = total.saturating_add(s.regex.len());
            u32::try_from(total).is_err()
        })
    }
}

/// What a lookup reads: the specifications, their matchers and the prefix trie.
pub(crate) struct Table {
    pub(crate) specs: Vec<Spec>,
    /// Built when a lookup first needs them (with the index), as libselinux compiles a text
    /// set's expressions when a lookup first needs them: reading thousands of expressions for
    /// their shape was a quarter of opening a set (callgrind), and a handle opened for its
    /// specifications alone never needs it. Given at once by the compiled form, which stores
    /// them. Two threads may both build them, one kept, as for the expressions' code: nothing
    /// waits.
    pub(crate) matchers: OnceBox<Matchers>,
    /// Built when a lookup first needs it, after the matchers, whose literal prefixes it
    /// sorts (a quarter of opening a set before it was deferred). Given at once by the
    /// compiled form.
    pub(crate) index: OnceBox<Index>,
    pub(crate) stems: HashMap<Arc<[u8]>, i32>,
    pub(crate) subs: Subs,
    pub(crate) dist_subs: Subs,
    pub(crate) files: Vec<std::path::PathBuf>,
}

/// label_file.c's key clean-up: runs of `/` become one, a final `/` goes (but not from `/`),
/// then the substitutions (`.subs` first, `.subs_dist` on its result; else `.subs_dist`).
pub(crate) fn clean_key<'k>(
    key: &'k [u8],
    subs: &Subs,
    dist_subs: &Subs,
) -> Result<std::borrow::Cow<'k, [u8]>> {
    use std::borrow::Cow;
    let mut k: Cow<'k, [u8]> = Cow::Borrowed(key);
    if key.windows(2).any(|w| w == b"//") {
        let mut out = Vec::with_capacity(key.len());
        for &c in key {
            if !(c == b'/' && out.last() == Some(&b'/')) {
                out.push(c);
            }
        }
        k = Cow::Owned(out);
    }
    if k.is_empty() {
        return Err(LabelError::EmptyPath);
    }
    if k.len() > 1 && k.last() == Some(&b'/') {
        let n = k.len() - 1;
        k = Cow::Owned(k[..n].to_vec());
    }
    let subbed = match subs.apply(&k) {
        Some(s) => Some(dist_subs.apply(&s).unwrap_or(s)),
        None => dist_subs.apply(&k),
    };
    Ok(match subbed {
        Some(s) => Cow::Owned(s),
        None => k,
    })
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

impl Table {
    /// The matchers, read from the expressions the first time they are asked for.
    pub(crate) fn matchers(&self) -> &Matchers {
        self.matchers
            .get_or_init(|| Box::new(Matchers::of(&self.specs)))
    }

    /// The prefix index, built from the matchers' literals the first time it is asked for.
    pub(crate) fn index(&self) -> &Index {
        self.index.get_or_init(|| {
            let m = self.matchers();
            Box::new(Index::build(&m.lits, m.list.len(), |i| {
                m.list
                    .get(i)
                    .map(|m| m.lit)
                    .unwrap_or(Lit { start: 0, len: 0 })
            }))
        })
    }

    /// The index of the specification that answers `key` (libselinux's lookup_all without
    /// match_count), or `None`; `<<none>>` is returned as the specification it is.
    pub(crate) fn find(&self, key: &[u8], kind: FileKind, partial: bool) -> Result<Option<usize>> {
        if self.specs.is_empty() {
            return Ok(None);
        }
        let key = clean_key(key, &self.subs, &self.dist_subs)?;
        if partial {
            return self.find_partial(&key);
        }
        let stem_len = path_stem_len(&key);
        let file_stem = if stem_len == 0 {
            -1
        } else {
            self.stems.get(&key[..stem_len]).copied().unwrap_or(-1)
        };
        let mode = kind.mode() & S_IFMT;
        SCRATCH.with(|cell| {
            let mut guard = cell.try_borrow_mut();
            let mut local = Vec::new();
            let cands: &mut Vec<u32> = match guard.as_mut() {
                Ok(v) => v,
                Err(_) => &mut local,
            };
            let m = self.matchers();
            self.index().candidates(&m.lits, &key, cands);
            for &i in cands.iter() {
                let i = i as usize;
                let (Some(s), Some(matcher)) = (self.specs.get(i), m.list.get(i)) else {
                    continue;
                };
                if !(s.stem == -1 || s.stem == file_stem)
                    || !(mode == 0 || s.mode == 0 || mode == s.mode)
                {
                    continue;
                }
                if matcher.matches(s, &self.files, &m.lits, &key)? {
                    return Ok(Some(i));
                }
            }
            Ok(None)
        })
    }

    /// selabel_partial_match's search (lookup_all with partial set): from the last
    /// specification, with no stem or type filter, the first that matches the path or could
    /// match a longer one.
    fn find_partial(&self, key: &[u8]) -> Result<Option<usize>> {
        for i in (0..self.specs.len()).rev() {
            if self.partial_hit(i, key)? && !key.is_empty() {
                return Ok(Some(i));
            }
        }
        Ok(None)
    }

    /// lookup_all with partial set and a match count (selabel_hash_all_partial_matches): every
    /// specification that matches `key` or could match a longer path, from the last one back,
    /// up to the first `<<none>>` one, where libselinux's search stops and keeps what it found.
    pub(crate) fn find_partial_all(&self, key: &[u8]) -> Result<Vec<usize>> {
        let key = clean_key(key, &self.subs, &self.dist_subs)?;
        let mut found = Vec::new();
        if key.is_empty() {
            return Ok(found);
        }
        for i in (0..self.specs.len()).rev() {
            if self.partial_hit(i, &key)? {
                if self.specs[i].is_none() {
                    break;
                }
                found.push(i);
            }
        }
        Ok(found)
    }

    /// Whether specification `i` matches `key` or could match a path below it.
    fn partial_hit(&self, i: usize, key: &[u8]) -> Result<bool> {
        let all = self.matchers();
        let Some(m) = all.list.get(i) else {
            return Ok(false);
        };
        let lit = m.lit.get(&all.lits);
        let hit = match m.kind {
            Kind::Exact | Kind::Under => {
                lit.starts_with(key) || kind_matches(m.kind, lit, key) == Some(true)
            }
            Kind::Prefix => {
                let prefix = lit;
                if !prefix.starts_with(key) && !key.starts_with(prefix) {
                    false
                } else {
                    let spec = &self.specs[i];
                    let err = |msg: String| LabelError::Match {
                        path: String::from_utf8_lossy(key).into_owned(),
                        regex: spec.regex.to_string(),
                        msg,
                    };
                    if crate::spec::top_level_alternation(spec.regex.as_bytes()) {
                        return Err(err("partial matching of an expression with an alternation outside any group is not supported".into()));
                    }
                    match m
                        .partial
                        .get_or_init(|| Box::new(PartialDfa::build(&spec.regex)))
                    {
                        Ok(dfa) => dfa.run(key).map_err(err)? != Partial::No,
                        Err(e) => return Err(err(e.clone())),
                    }
                }
            }
        };
        Ok(hit)
    }
}

#[cfg(test)]
#[path = "lookup_tests.rs"]
mod tests;
