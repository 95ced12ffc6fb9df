//! A specification's matcher: what its expression guarantees about the paths it matches (its
//! shape and literal prefix, read without PCRE2), and PCRE2's code for it when the shape cannot
//! decide, compiled the first time a lookup reaches it; and the set's matchers, with their
//! literal prefixes in one buffer, which the prefix index ([`crate::lookup`]) sorts.

use once_cell::race::OnceBox;
use pcre2::bytes::RegexBuilder;

use crate::error::{LabelError, Result};
use crate::jit::Compiled;
use crate::partial::PartialDfa;
use crate::spec::{
    inner_literals, kind_matches, literal_tail, shape_into, tail_allows, Kind, Spec,
};

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
    pub(crate) partial: OnceBox<std::result::Result<PartialDfa, String>>,
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

    pub(crate) fn matches(
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

    /// Every specification whose literal prefix is a prefix of `key`, highest number first:
    /// [`Index::candidates`] without the index, reading each prefix.
    pub(crate) fn candidates(&self, key: &[u8], out: &mut Vec<u32>) {
        out.clear();
        for (i, m) in self.list.iter().enumerate().rev() {
            if key.starts_with(m.lit.get(&self.lits)) {
                // The list's length fits u32 (an open refuses more, `Matchers::fits`).
                out.push(i as u32);
            }
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
