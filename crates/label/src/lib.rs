//! File labeling for seaccess: the policy's `file_contexts` read and answered as libselinux 3.4's
//! selabel file backend (label_file.c) answers it, for every path and file type: which of
//! several matching specifications wins, exact paths over expressions, file-type qualifiers,
//! `<<none>>`, `.homedirs`, `.local`, the `.subs`/`.subs_dist` substitutions, the compiled
//! `.bin`, and PCRE2's own regular expressions.
//!
//! It is used by whatever labels files (the `seaccess label` command, the enforcing
//! filesystem, the C library's `selabel_*`/`matchpathcon`), and must never depend on FUSE, the
//! CLI, the policy reader or the security server: a policy is asked about contexts only through
//! the caller's validator ([`OpenOptions::validate`]).
//!
//! Invariant: a [`FileContexts`] never changes after it is opened, so lookups from any number
//! of threads need no lock; a changed file_contexts is a new handle.

mod bin;
pub mod compiled;
mod error;
pub mod jit;
mod lookup;
mod matcher;
mod open;
mod partial;
pub mod restorecon;
pub mod spec;
mod subs;
mod text;
pub mod walk;
pub mod xattr;
mod xattrat;

use rustc_hash::FxHashMap as HashMap;
use std::path::{Path, PathBuf};

pub use error::{LabelError, Result};
pub use lookup::compile as compile_regex;
pub use open::{OpenOptions, Validator};
pub use spec::{FileKind, Origin, Spec, Text};
pub use subs::Subs;

use lookup::{Index, Matcher, Matchers, Table};

/// An opened file_contexts set, ready to answer lookups.
pub struct FileContexts {
    table: Table,
    notes: Vec<String>,
}

/// What a handle holds, for `seaccess label --stats` and the benchmark.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    pub specs: usize,
    pub exact: usize,
    pub under: usize,
    pub pcre: usize,
    pub stems: usize,
    pub trie_nodes: usize,
}

impl FileContexts {
    /// Opens the set whose base file is `path` (with its `.homedirs`, `.local`, `.subs` and
    /// `.subs_dist` beside it), without validating contexts.
    pub fn open(path: &Path) -> Result<FileContexts> {
        FileContexts::open_with(path, &OpenOptions::default())
    }

    pub fn open_with(path: &Path, opts: &OpenOptions<'_>) -> Result<FileContexts> {
        let fc = FileContexts::from_loaded(open::open(path, opts)?)?;
        if opts.check_regexes {
            fc.check_regexes()?;
        }
        Ok(fc)
    }

    /// One file's bytes (text, libselinux's `.bin` or seaccess's compiled form, told apart by
    /// their magic numbers) as a set of its own, with no files beside it; `path` names it in
    /// errors. Expressions are checked as [`OpenOptions::check_regexes`] does.
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<FileContexts> {
        if compiled::is_compiled(bytes) {
            return compiled::from_bytes(path, bytes);
        }
        let mut pool = text::Pool::default();
        let raw = if bin::is_binary(bytes) {
            bin::read(path, 0, bytes, &mut pool)?
        } else {
            text::read(path, 0, bytes, &mut pool)?
        };
        let mut loaded = open::Loaded {
            specs: Vec::new(),
            stems: HashMap::default(),
            files: vec![path.to_path_buf()],
            subs: Subs::default(),
            dist_subs: Subs::default(),
            notes: Vec::new(),
        };
        open::intern(&mut loaded, raw, pool);
        let fc = FileContexts::from_loaded(loaded)?;
        fc.check_regexes()?;
        Ok(fc)
    }

    /// Compiles every expression PCRE2 must run, so a broken one is reported with its file and
    /// line before anything is labeled.
    fn check_regexes(&self) -> Result<()> {
        for (s, m) in self.table.specs.iter().zip(&self.table.matchers().list) {
            if m.needs_pcre() {
                if let Err(msg) = m.prepare(&s.regex) {
                    return Err(LabelError::Regex {
                        path: self
                            .table
                            .files
                            .get(s.origin.file as usize)
                            .cloned()
                            .unwrap_or_default(),
                        line: s.origin.line,
                        regex: s.regex.to_string(),
                        msg,
                    });
                }
            }
        }
        Ok(())
    }

    /// A set read from its files (each expression's shape and literal prefix read, and the
    /// prefix index built, when a lookup first needs them).
    fn from_loaded(l: open::Loaded) -> Result<FileContexts> {
        if let Some(i) = lookup::Matchers::fits(&l.specs) {
            let origin = l
                .specs
                .get(i)
                .map(|s| s.origin)
                .unwrap_or(Origin { file: 0, line: 0 });
            return Err(LabelError::Syntax {
                path: l
                    .files
                    .get(origin.file as usize)
                    .cloned()
                    .unwrap_or_default(),
                line: origin.line,
                msg: "the set's literal prefixes pass 4 GiB".into(),
            });
        }
        Ok(FileContexts::assemble(
            l.specs,
            None,
            None,
            l.stems,
            l.subs,
            l.dist_subs,
            l.files,
            l.notes,
        ))
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn assemble(
        specs: Vec<Spec>,
        matchers: Option<Matchers>,
        index: Option<Index>,
        stems: HashMap<std::sync::Arc<[u8]>, i32>,
        subs: Subs,
        dist_subs: Subs,
        files: Vec<PathBuf>,
        notes: Vec<String>,
    ) -> FileContexts {
        FileContexts {
            table: Table {
                specs,
                matchers: {
                    let cell = once_cell::race::OnceBox::new();
                    if let Some(m) = matchers {
                        // A fresh cell: the value is always taken.
                        let _ = cell.set(Box::new(m));
                    }
                    cell
                },
                index: {
                    let cell = once_cell::race::OnceBox::new();
                    if let Some(index) = index {
                        // A fresh cell: the value is always taken.
                        let _ = cell.set(Box::new(index));
                    }
                    cell
                },
                scans: std::sync::atomic::AtomicU32::new(0),
                stems,
                subs,
                dist_subs,
                files,
            },
            notes,
        }
    }

    pub(crate) fn matchers(&self) -> &[Matcher] {
        &self.table.matchers().list
    }

    pub(crate) fn index(&self) -> &Index {
        self.table.index()
    }

    pub(crate) fn lits(&self) -> &[u8] {
        &self.table.matchers().lits
    }

    /// The specification that labels `path` as a file of `kind` (selabel_lookup): `Ok(None)`
    /// where no specification matches or the matching one says `<<none>>`.
    pub fn lookup(&self, path: &[u8], kind: FileKind) -> Result<Option<&Spec>> {
        Ok(self
            .table
            .find(path, kind, false)?
            .map(|i| &self.table.specs[i])
            .filter(|s| !s.is_none()))
    }

    /// The context for `path`, or `None` (see [`FileContexts::lookup`]).
    pub fn context(&self, path: &[u8], kind: FileKind) -> Result<Option<&str>> {
        Ok(self.lookup(path, kind)?.map(|s| &*s.context))
    }

    /// selabel_lookup_best_match: the path and its aliases (other names of the same file, such
    /// as its hard links) are each looked up; an exact path specification of any of them wins
    /// at once, else the match with the longest fixed prefix, the path's on a tie.
    pub fn lookup_best_match(
        &self,
        path: &[u8],
        aliases: &[&[u8]],
        kind: FileKind,
    ) -> Result<Option<&Spec>> {
        let first = self.lookup(path, kind)?;
        if aliases.is_empty() {
            return Ok(first);
        }
        let mut best: Option<&Spec> = None;
        let mut best_len = 0u32;
        for (n, name) in std::iter::once(path)
            .chain(aliases.iter().copied())
            .enumerate()
        {
            let found = if n == 0 {
                first
            } else {
                self.lookup(name, kind)?
            };
            let Some(s) = found else { continue };
            if !s.has_meta {
                return Ok(Some(s));
            }
            // The path's own match is taken even with prefix 0; an alias must be longer.
            if (n == 0 && best.is_none()) || s.prefix_len > best_len {
                best = Some(s);
                best_len = s.prefix_len;
            }
        }
        Ok(best)
    }

    /// selabel_partial_match: whether a specification matches `path` or could match a longer
    /// path starting with it (a path below it), so that a walk must go into it. An expression
    /// whose partial matches cannot be decided (see partial.rs) is an error, not a guess.
    pub fn partial_match(&self, path: &[u8]) -> Result<bool> {
        Ok(self
            .table
            .find(path, FileKind::Any, true)?
            .is_some_and(|i| !self.table.specs[i].is_none()))
    }

    /// selabel_hash_all_partial_matches' specifications: every one that matches `path` or could
    /// match a path below it, from the last back, stopping at a `<<none>>` one (libselinux's
    /// lookup_all with a match count keeps the matches before it).
    pub fn partial_matches_all(&self, path: &[u8]) -> Result<Vec<&Spec>> {
        Ok(self
            .table
            .find_partial_all(path)?
            .into_iter()
            .filter_map(|i| self.table.specs.get(i))
            .collect())
    }

    /// Every specification, in the order libselinux tries them from the end.
    pub fn specs(&self) -> &[Spec] {
        &self.table.specs
    }

    /// The files read, in order (each the text or the compiled one that was used).
    pub fn files(&self) -> &[PathBuf] {
        &self.table.files
    }

    /// What was read in place of what.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    pub fn stats(&self) -> Stats {
        let mut st = Stats {
            specs: self.table.specs.len(),
            exact: 0,
            under: 0,
            pcre: 0,
            stems: self.table.stems.len(),
            trie_nodes: self.table.index().node_count(),
        };
        for m in &self.table.matchers().list {
            match m.kind {
                spec::Kind::Exact => st.exact += 1,
                spec::Kind::Under => st.under += 1,
                spec::Kind::Prefix => st.pcre += 1,
            }
        }
        st
    }

    pub(crate) fn stems_in_order(&self) -> Vec<std::sync::Arc<[u8]>> {
        let mut v: Vec<_> = self
            .table
            .stems
            .iter()
            .map(|(s, &i)| (i, s.clone()))
            .collect();
        v.sort_by_key(|(i, _)| *i);
        v.into_iter().map(|(_, s)| s).collect()
    }

    pub(crate) fn subs(&self) -> (&Subs, &Subs) {
        (&self.table.subs, &self.table.dist_subs)
    }
}
