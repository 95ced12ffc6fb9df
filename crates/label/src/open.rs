//! Opening a file_contexts set as libselinux 3.4's selabel file backend does (label_file.c's
//! init, process_file, open_file): the substitution files, then the base file, then
//! `.homedirs` and `.local`, each from its text or its `.bin`, whichever is newer (the `.bin`
//! when they are the same age); then the exact paths moved after the expressions.
//!
//! Two deliberate differences, both towards refusing rather than guessing. libselinux falls
//! back to an older compiled file when the newer text fails to read, so a typo in an edited
//! file_contexts is silently replaced by the old rules; we report the typo. And libselinux
//! compiles an expression only when a lookup first reaches it, so a broken one fails some
//! lookups later; [`OpenOptions::check_regexes`] compiles every one that PCRE2 must run at
//! open and names its line (without it, as libselinux, the lookup that reaches it fails).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{LabelError, Result};
use crate::spec::{Origin, Spec, Text};
use crate::subs::Subs;
use crate::text::{Pool, RawSpec};

/// Checks a context against a policy: `Err` says why it is invalid.
pub type Validator<'a> = &'a dyn Fn(&str) -> std::result::Result<(), String>;

/// How to open a set.
#[derive(Clone, Copy, Default)]
pub struct OpenOptions<'a> {
    /// Only the base file: no `.homedirs`, no `.local` (SELABEL_OPT_BASEONLY).
    pub base_only: bool,
    /// Validate every context, as a validating selabel_open does (SELABEL_OPT_VALIDATE).
    pub validate: Option<Validator<'a>>,
    /// Accept duplicate specifications in the base file (the same expression twice, for file
    /// types that overlap), as libselinux's open without SELABEL_OPT_VALIDATE does: the C
    /// library's drop-in sets it when its caller did not ask to validate. Otherwise they are
    /// refused, as setfiles and a validating open refuse them: which of two lines labels a
    /// file would be an accident of their order.
    pub allow_duplicates: bool,
    /// Compile every expression at open, so a broken one fails the open naming its line (as a
    /// validating selabel_open does). Otherwise, as libselinux's default open, an expression is
    /// compiled when a lookup first needs it, and a broken one fails that lookup, naming its
    /// line. Whatever labels files should set this: it refuses a half-usable file up front.
    pub check_regexes: bool,
}

/// The specifications of a set, in libselinux's order, with where they came from.
pub struct Loaded {
    pub specs: Vec<Spec>,
    /// Each stem's number.
    pub stems: HashMap<Arc<[u8]>, i32>,
    pub files: Vec<PathBuf>,
    pub subs: Subs,
    pub dist_subs: Subs,
    /// What was read in place of what (a compiled file that failed and its text read instead).
    pub notes: Vec<String>,
}

fn io(path: &Path, source: std::io::Error) -> LabelError {
    LabelError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(".");
    s.push(suffix);
    PathBuf::from(s)
}

/// One file of the set: its text and compiled forms, newest first (the compiled one on a tie,
/// comparing whole seconds as libselinux does). `None` when neither exists.
fn candidates(base: &Path) -> Result<Option<Vec<PathBuf>>> {
    let bin = with_suffix(base, "bin");
    let mut found: Vec<(PathBuf, i64)> = Vec::new();
    for p in [base.to_path_buf(), bin] {
        match std::fs::metadata(&p) {
            Ok(m) => {
                use std::os::unix::fs::MetadataExt;
                found.push((p, m.mtime()));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(&p, e)),
        }
    }
    Ok(match found.as_slice() {
        [] => None,
        [(a, _)] => Some(vec![a.clone()]),
        [(text, t), (bin, b), ..] => Some(if b >= t {
            vec![bin.clone(), text.clone()]
        } else {
            vec![text.clone(), bin.clone()]
        }),
    })
}

/// Reads one file of the set (text or compiled, by its magic number). A compiled file that
/// fails leaves what it had put in `pool` there, unused. A compiled file is read a piece at a
/// time (bin.rs's reader), a text file whole.
fn read_one(path: &Path, file: u16, pool: &mut Pool) -> Result<Vec<RawSpec>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let len = f.metadata().map_err(|e| io(path, e))?.len();
    let mut head = Vec::with_capacity(usize::try_from(len).unwrap_or(0).min(4));
    (&mut f)
        .take(4)
        .read_to_end(&mut head)
        .map_err(|e| io(path, e))?;
    if crate::bin::is_binary(&head) {
        return crate::bin::read_from(path, file, f, len, head, pool);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    bytes.extend_from_slice(&head);
    f.read_to_end(&mut bytes).map_err(|e| io(path, e))?;
    crate::text::read(path, file, &bytes, pool)
}

/// Opens the set whose base file is `path`.
pub fn open(path: &Path, opts: &OpenOptions<'_>) -> Result<Loaded> {
    let dist_subs = Subs::read(&with_suffix(path, "subs_dist"))?;
    let subs = Subs::read(&with_suffix(path, "subs"))?;
    let mut loaded = Loaded {
        specs: Vec::new(),
        stems: HashMap::default(),
        files: Vec::new(),
        subs,
        dist_subs,
        notes: Vec::new(),
    };
    let mut pool = Pool::default();
    let mut raw: Vec<RawSpec> = Vec::new();
    let parts: &[Option<&str>] = if opts.base_only {
        &[None]
    } else {
        &[None, Some("homedirs"), Some("local")]
    };
    for (n, part) in parts.iter().enumerate() {
        let base = match part {
            None => path.to_path_buf(),
            Some(s) => with_suffix(path, s),
        };
        let Some(cands) = candidates(&base)? else {
            if part.is_none() {
                return Err(io(path, std::io::Error::from(std::io::ErrorKind::NotFound)));
            }
            continue;
        };
        let mut got = None;
        let mut first_err = None;
        for cand in &cands {
            let file = u16::try_from(loaded.files.len()).unwrap_or(u16::MAX);
            match read_one(cand, file, &mut pool) {
                Ok(specs) => {
                    loaded.files.push(cand.clone());
                    got = Some(specs);
                    break;
                }
                // Only a compiled file is given up for the text beside it.
                Err(e @ LabelError::Binary { .. }) if cands.len() > 1 && first_err.is_none() => {
                    loaded
                        .notes
                        .push(format!("{e}; read {} instead", cands[1].display()));
                    first_err = Some(e);
                }
                Err(e) => return Err(e),
            }
        }
        let Some(specs) = got else {
            return Err(first_err
                .unwrap_or_else(|| io(&base, std::io::Error::from(std::io::ErrorKind::NotFound))));
        };
        if let Some(check) = opts.validate {
            validate(&loaded.files, &specs, &pool, check)?;
        }
        if n == 0 && (opts.validate.is_some() || !opts.allow_duplicates) {
            no_duplicates(&loaded.files, &specs, &pool)?;
        }
        if raw.is_empty() {
            raw = specs;
        } else {
            raw.extend(specs);
        }
    }
    intern(&mut loaded, raw, pool);
    Ok(loaded)
}

fn validate(files: &[PathBuf], specs: &[RawSpec], pool: &Pool, check: Validator<'_>) -> Result<()> {
    let mut seen: HashSet<u32> = HashSet::default();
    for s in specs {
        let context = pool.context_str(s.context);
        if context == "<<none>>" || seen.contains(&s.context) {
            continue;
        }
        if let Err(msg) = check(context) {
            return Err(LabelError::Context {
                path: file_of(files, s.origin),
                line: s.origin.line,
                context: context.to_string(),
                msg,
            });
        }
        seen.insert(s.context);
    }
    Ok(())
}

fn file_of(files: &[PathBuf], o: Origin) -> PathBuf {
    files.get(o.file as usize).cloned().unwrap_or_default()
}

/// label_file.c's nodups_specs: the same expression twice with types that overlap.
fn no_duplicates(files: &[PathBuf], specs: &[RawSpec], pool: &Pool) -> Result<()> {
    let mut by_regex: HashMap<&str, Vec<&RawSpec>> = HashMap::default();
    for s in specs {
        let same = by_regex.entry(pool.regex_str(s.regex)).or_default();
        if let Some(prev) = same
            .iter()
            .find(|p| p.mode == 0 || s.mode == 0 || p.mode == s.mode)
        {
            let what = if prev.context == s.context {
                "the same specification twice"
            } else {
                "two different specifications"
            };
            return Err(LabelError::Duplicate {
                path: file_of(files, s.origin),
                msg: format!(
                    "{what} for {} (line {}: {}, line {}: {})",
                    pool.regex_str(s.regex),
                    prev.origin.line,
                    pool.context_str(prev.context),
                    s.origin.line,
                    pool.context_str(s.context)
                ),
            });
        }
        same.push(s);
    }
    Ok(())
}

/// Gives each specification libselinux's place: every expression with a meta character first,
/// then the exact paths, each group in reading order (sort_specs).
pub(crate) fn intern(loaded: &mut Loaded, raw: Vec<RawSpec>, pool: Pool) {
    let (buf, stems, contexts) = pool.into_regexes();
    loaded.stems = stems;
    loaded.specs.reserve_exact(raw.len());
    for meta in [true, false] {
        for r in raw.iter().filter(|r| r.has_meta == meta) {
            loaded.specs.push(Spec {
                regex: Text::new(buf.clone(), r.regex.start..r.regex.end),
                mode: r.mode,
                context: contexts
                    .get(r.context as usize)
                    .cloned()
                    .unwrap_or_else(|| Arc::from("")),
                stem: r.stem,
                has_meta: r.has_meta,
                prefix_len: r.prefix_len,
                origin: r.origin,
            });
        }
    }
}
