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
//! PCRE2. Nothing is skipped that could have matched, so the first match is libselinux's. A
//! handle's first lookups find the same specifications by reading every literal prefix
//! ([`SCANS_BEFORE_INDEX`]): for a program that opens a set to label one file, sorting the
//! prefixes cost more than the lookup.

use rustc_hash::FxHashMap as HashMap;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::sync::Arc;

use once_cell::race::OnceBox;

use crate::error::{LabelError, Result};
pub use crate::matcher::compile;
pub(crate) use crate::matcher::{Lit, Matcher, Matchers};
use crate::partial::{Partial, PartialDfa};
use crate::spec::{kind_matches, path_stem_len, FileKind, Kind, Spec, S_IFMT};
use crate::subs::Subs;

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

/// How many lookups of a handle find their candidates by reading every specification's literal
/// prefix before one builds the prefix index. A program that labels a file or two (restorecon of
/// one path, matchpathcon) opens a set for one lookup: sorting five thousand prefixes for it cost
/// more than half of that lookup and a third of the open (Debian's MLS set, callgrind: the index
/// 3.1M instructions, a scan 0.1M). Past this many scans the index has paid for itself at worst
/// twice over; a walk of a tree builds it at once.
const SCANS_BEFORE_INDEX: u32 = 16;

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
    /// Built by the lookup after the first [`SCANS_BEFORE_INDEX`], from the matchers, whose
    /// literal prefixes it sorts (a quarter of opening a set before it was deferred, then more
    /// than half of a one-file lookup). Given at once by the compiled form.
    pub(crate) index: OnceBox<Index>,
    /// Lookups that found their candidates without the index (see [`SCANS_BEFORE_INDEX`]).
    pub(crate) scans: AtomicU32,
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

    /// The prefix index if it is built, or once this handle has made [`SCANS_BEFORE_INDEX`]
    /// lookups without it (then built now); None while a scan is cheaper.
    fn index_if_built_or_due(&self) -> Option<&Index> {
        if let Some(index) = self.index.get() {
            return Some(index);
        }
        // Relaxed: the count only chooses between two ways to the same candidates.
        (self.scans.fetch_add(1, Relaxed) >= SCANS_BEFORE_INDEX).then(|| self.index())
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
            match self.index_if_built_or_due() {
                Some(index) => index.candidates(&m.lits, &key, cands),
                None => m.candidates(&key, cands),
            }
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
