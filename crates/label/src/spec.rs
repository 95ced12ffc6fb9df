//! One file_contexts specification and what libselinux 3.4 derives from its regular expression
//! (label_file.h): the file-type qualifier, the "meta characters" test that decides the sort,
//! the fixed prefix length that best-match compares, and the stem (the first path component
//! when it is literal) that filters candidates.
//!
//! Besides libselinux's own derivations, [`Shape`] says what must be true of a path for the
//! anchored expression `^REGEX$` to match it, read conservatively from the expression's text:
//! the literal prefix every match starts with, and for the two forms that make up most of a
//! policy's specifications (a literal path; a literal path and everything under it) the whole
//! answer without running PCRE2. Anything the reader does not fully understand leaves a shorter
//! prefix and PCRE2 decides, so the shortcut can only skip expressions that cannot match.

use std::sync::Arc;

/// The file type of a lookup or a specification's qualifier, as `st_mode & S_IFMT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FileKind {
    /// No type: a lookup that matches specifications of every type.
    Any,
    File,
    Dir,
    Lnk,
    Chr,
    Blk,
    Sock,
    Fifo,
}

pub const S_IFMT: u32 = 0o170000;

impl FileKind {
    pub const ALL: [FileKind; 8] = [
        FileKind::Any,
        FileKind::File,
        FileKind::Dir,
        FileKind::Lnk,
        FileKind::Chr,
        FileKind::Blk,
        FileKind::Sock,
        FileKind::Fifo,
    ];

    /// The `st_mode` type bits (0 for [`FileKind::Any`]).
    pub fn mode(self) -> u32 {
        match self {
            FileKind::Any => 0,
            FileKind::File => 0o100000,
            FileKind::Dir => 0o040000,
            FileKind::Lnk => 0o120000,
            FileKind::Chr => 0o020000,
            FileKind::Blk => 0o060000,
            FileKind::Sock => 0o140000,
            FileKind::Fifo => 0o010000,
        }
    }

    /// The kind of an `st_mode`; a type Linux does not have answers as [`FileKind::Any`].
    pub fn from_mode(mode: u32) -> FileKind {
        match mode & S_IFMT {
            0o100000 => FileKind::File,
            0o040000 => FileKind::Dir,
            0o120000 => FileKind::Lnk,
            0o020000 => FileKind::Chr,
            0o060000 => FileKind::Blk,
            0o140000 => FileKind::Sock,
            0o010000 => FileKind::Fifo,
            _ => FileKind::Any,
        }
    }

    /// The SELinux class name (`file`, `dir`, ...), or `any`.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Any => "any",
            FileKind::File => "file",
            FileKind::Dir => "dir",
            FileKind::Lnk => "lnk_file",
            FileKind::Chr => "chr_file",
            FileKind::Blk => "blk_file",
            FileKind::Sock => "sock_file",
            FileKind::Fifo => "fifo_file",
        }
    }

    pub fn from_name(s: &str) -> Option<FileKind> {
        FileKind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// A file_contexts qualifier (`--`, `-d`, ...): label_file.h's string_to_mode.
    pub fn from_qualifier(s: &str) -> Option<FileKind> {
        Some(match s {
            "--" => FileKind::File,
            "-d" => FileKind::Dir,
            "-l" => FileKind::Lnk,
            "-c" => FileKind::Chr,
            "-b" => FileKind::Blk,
            "-s" => FileKind::Sock,
            "-p" => FileKind::Fifo,
            _ => return None,
        })
    }
}

/// Where a specification was read: the file's index in the set's list and its line (0 for a
/// compiled file, which keeps no lines).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Origin {
    pub file: u16,
    pub line: u32,
}

/// A specification's expression: a piece of its set's one buffer of expressions, so that a
/// set of thousands of specifications is one allocation, not one each (opening a set was
/// largely allocation).
#[derive(Clone)]
pub struct Text {
    /// An `Arc<String>` rather than an `Arc<str>`: the readers' buffer moves in whole, where
    /// an `Arc<str>` would copy it (and, on the open of a set, fault in fresh pages for the copy).
    buf: Arc<String>,
    start: u32,
    end: u32,
}

impl Text {
    /// `buf[range]`; a range that is not one of `buf`'s pieces reads as the empty string (the
    /// readers only make pieces they appended whole).
    pub(crate) fn new(buf: Arc<String>, range: std::ops::Range<u32>) -> Text {
        Text {
            buf,
            start: range.start,
            end: range.end,
        }
    }

    pub fn as_str(&self) -> &str {
        self.buf
            .get(self.start as usize..self.end as usize)
            .unwrap_or_default()
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        let end = u32::try_from(s.len()).unwrap_or(u32::MAX);
        Text::new(Arc::new(s.to_owned()), 0..end)
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

/// One specification, as libselinux keeps it after reading.
#[derive(Clone, Debug)]
pub struct Spec {
    pub regex: Text,
    /// The qualifier's `st_mode` bits, 0 for none. A compiled file may hold any value here, and
    /// libselinux compares it as it is; so do we.
    pub mode: u32,
    /// The raw context, or `<<none>>`.
    pub context: Arc<str>,
    /// Index into the set's stems, or -1.
    pub stem: i32,
    /// label_file.h's hasMetaChars: decides the sort (specifications without come last).
    pub has_meta: bool,
    /// label_file.h's prefix_len: the offset of the first meta character (best match).
    pub prefix_len: u32,
    pub origin: Origin,
}

impl Spec {
    pub fn is_none(&self) -> bool {
        &*self.context == "<<none>>"
    }
}

/// label_file.h's spec_hasMetaChars: (has meta characters, offset of the first one or length).
pub fn meta_chars(regex: &[u8]) -> (bool, u32) {
    let mut i = 0;
    while i < regex.len() {
        match regex[i] {
            b'.' | b'^' | b'$' | b'?' | b'*' | b'+' | b'|' | b'[' | b'(' | b'{' => {
                return (true, i as u32)
            }
            // Skips the escaped character, even past the end, as the C loop does.
            b'\\' => i += 1,
            _ => {}
        }
        i += 1;
    }
    (false, regex.len() as u32)
}

/// label_file.h's get_stem_from_spec: the length of the leading `/component` when nothing in it
/// is a meta character and another `/` follows, else 0.
pub fn spec_stem_len(regex: &[u8]) -> usize {
    let Some(slash) = regex.iter().skip(1).position(|&c| c == b'/').map(|p| p + 1) else {
        return 0;
    };
    if regex[..slash].iter().any(|c| {
        matches!(
            c,
            b'.' | b'^' | b'$' | b'?' | b'*' | b'+' | b'|' | b'[' | b'(' | b'{'
        )
    }) {
        return 0;
    }
    slash
}

/// label_file.c's get_stem_from_file_name: the length of the leading `/component` of a path
/// that has a second `/`, else 0.
pub fn path_stem_len(path: &[u8]) -> usize {
    path.iter()
        .skip(1)
        .position(|&c| c == b'/')
        .map_or(0, |p| p + 1)
}

/// What the text of `^REGEX$` guarantees about the paths it matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// The expression is this literal string: it matches exactly it, and it followed by one
    /// newline (PCRE2's `$` also matches before a final newline).
    Exact(Vec<u8>),
    /// `LIT(/.*)?`: the literal itself, it with a final newline, and everything under `LIT/`.
    Under(Vec<u8>),
    /// Only PCRE2 can tell, but every match starts with this literal prefix.
    Prefix(Vec<u8>),
}

impl Shape {
    pub fn prefix(&self) -> &[u8] {
        match self {
            Shape::Exact(p) | Shape::Under(p) | Shape::Prefix(p) => p,
        }
    }
}

/// [`Shape`]'s kind, its literal kept elsewhere (the set's one buffer of literals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Exact,
    Under,
    Prefix,
}

impl Kind {
    pub(crate) fn shape(self, lit: &[u8]) -> Shape {
        match self {
            Kind::Exact => Shape::Exact(lit.to_vec()),
            Kind::Under => Shape::Under(lit.to_vec()),
            Kind::Prefix => Shape::Prefix(lit.to_vec()),
        }
    }

    pub(crate) fn of(shape: &Shape) -> Kind {
        match shape {
            Shape::Exact(_) => Kind::Exact,
            Shape::Under(_) => Kind::Under,
            Shape::Prefix(_) => Kind::Prefix,
        }
    }
}

/// The bytes that end a run of literal ones in an expression (meta characters and `\\`).
const SPECIAL: [bool; 256] = {
    let mut t = [false; 256];
    let s = b".^$[()|?*+{}]\\";
    let mut i = 0;
    while i < s.len() {
        t[s[i] as usize] = true;
        i += 1;
    }
    t
};

/// Reads the literal head of a regular expression, appending it to `lit`: the bytes every
/// match of `^REGEX` must start with. Returns where the head ends (past the end when the rest
/// cannot be read as a plain tail).
fn literal_head(regex: &[u8], lit: &mut Vec<u8>) -> usize {
    let mut i = 0;
    loop {
        // A run of bytes that stand for themselves: PCRE2 without UTF treats every byte but
        // the meta characters as itself (a non-ASCII byte is refused by the readers before it
        // gets here).
        let mut j = i;
        while j < regex.len() && !SPECIAL[regex[j] as usize] {
            j += 1;
        }
        if j > i {
            // The run's last byte made optional or repeated is not part of every match.
            if quantified(regex, j) {
                lit.extend_from_slice(&regex[i..j - 1]);
                return regex.len() + 1;
            }
            lit.extend_from_slice(&regex[i..j]);
        }
        if j == regex.len() {
            return regex.len();
        }
        if regex[j] != b'\\' {
            return j;
        }
        match regex.get(j + 1) {
            // A backslash before any ASCII character that is not a letter or digit matches
            // that character (PCRE2's rule); anything else is a class, an anchor, a back
            // reference or a quoting mode: stop there.
            Some(&n) if n.is_ascii() && !n.is_ascii_alphanumeric() && n != 0 => {
                if quantified(regex, j + 2) {
                    return regex.len() + 1;
                }
                lit.push(n);
                i = j + 2;
            }
            _ => return regex.len() + 1,
        }
    }
}

/// Whether the atom ending before `at` is made optional or repeated by what follows it.
fn quantified(regex: &[u8], at: usize) -> bool {
    matches!(regex.get(at), Some(b'?' | b'*' | b'+' | b'{'))
}

/// Whether the expression has an alternation outside every group and class: `^a|b$` is
/// `(^a)|(b$)`, so no prefix holds for it.
pub(crate) fn top_level_alternation(regex: &[u8]) -> bool {
    // Without a `|` there is no alternation, and without a `[` no class to doubt: most
    // expressions of a set, each asked at open.
    if memchr::memchr2(b'|', b'[', regex).is_none() {
        return false;
    }
    let mut depth = 0i32;
    let mut i = 0;
    while i < regex.len() {
        match regex[i] {
            b'\\' => {
                // \Q...\E quotes everything to \E.
                if regex.get(i + 1) == Some(&b'Q') {
                    match regex[i + 2..].windows(2).position(|w| w == b"\\E") {
                        Some(p) => i += 2 + p + 1,
                        None => return false,
                    }
                } else {
                    i += 1;
                }
            }
            b'[' => {
                // An unterminated POSIX class inside is a doubt: say yes, and no prefix is read.
                let (end, clean) = skip_class(regex, i);
                if !clean {
                    return true;
                }
                i = end;
                continue;
            }
            b'(' => depth += 1,
            b')' => depth -= 1,
            b'|' if depth <= 0 => return true,
            _ => {}
        }
        i += 1;
    }
    false
}

/// The shape of `^REGEX$`. Conservative: when in doubt the prefix is shorter and PCRE2 decides.
pub fn shape(regex: &[u8]) -> Shape {
    let mut lit = Vec::new();
    let kind = shape_into(regex, &mut lit);
    kind.shape(&lit)
}

/// [`shape`], its literal appended to `lits` (a set's one buffer) rather than allocated.
pub(crate) fn shape_into(regex: &[u8], lits: &mut Vec<u8>) -> Kind {
    if top_level_alternation(regex) {
        return Kind::Prefix;
    }
    let end = literal_head(regex, lits);
    if end == regex.len() {
        return Kind::Exact;
    }
    if end < regex.len() && &regex[end..] == b"(/.*)?" {
        return Kind::Under;
    }
    Kind::Prefix
}

/// The literal tail of `^REGEX$`: bytes every match ends with (before PCRE2's optional final
/// newline), read backwards from the end of the expression up to the first byte that is not a
/// plain literal. None where an inline option or verb (`(?i)`, `(*CR)`) could change what the
/// tail matches, or where an alternation outside any group leaves no common end.
pub fn literal_tail(regex: &[u8]) -> Vec<u8> {
    // \Q quotes what follows (escapes included), \k<name> and \g<n> end in `>` or `'`.
    if regex
        .windows(2)
        .any(|w| matches!(w, b"(?" | b"(*" | b"\\Q" | b"\\k" | b"\\g"))
        || top_level_alternation(regex)
    {
        return Vec::new();
    }
    let mut tail = Vec::new();
    let mut j = regex.len();
    while j > 0 {
        let c = regex[j - 1];
        // How many backslashes stand right before c: an odd number escapes it.
        let slashes = regex[..j - 1]
            .iter()
            .rev()
            .take_while(|&&b| b == b'\\')
            .count();
        if slashes % 2 == 1 {
            if c.is_ascii_alphanumeric() || !c.is_ascii() {
                // An escape such as \x41, \101, \cA or \12 takes the letters and digits after
                // it: none of them are literal.
                while tail.last().is_some_and(|b: &u8| b.is_ascii_alphanumeric()) {
                    tail.pop();
                }
                break;
            }
            tail.push(c);
            j -= 2;
            continue;
        }
        if b".^$[]()|?*+{}\\".contains(&c) || !c.is_ascii() {
            break;
        }
        tail.push(c);
        j -= 1;
    }
    // A literal run that reaches the start is the whole expression, handled as Exact; the byte
    // before the run may be a quantifier's atom only if it is not itself quantified, which the
    // stop at `?*+{}` already guarantees.
    tail.reverse();
    tail
}

/// Runs of literal bytes that every match of `^REGEX$` contains, read at the top level of the
/// expression (outside groups and classes, without the atom a `?`, `*` or `{` makes optional),
/// each of at least two bytes, the literal head excluded (it is checked as the prefix). Empty
/// where an inline option, verb, quoting or alternation outside any group could change what
/// they match (as for [`literal_tail`]).
pub fn inner_literals(regex: &[u8]) -> Vec<Vec<u8>> {
    if regex
        .windows(2)
        .any(|w| matches!(w, b"(?" | b"(*" | b"\\Q" | b"\\k" | b"\\g"))
        || top_level_alternation(regex)
    {
        return Vec::new();
    }
    let mut runs: Vec<Vec<u8>> = Vec::new();
    let mut cur: Vec<u8> = Vec::new();
    let mut head = true;
    let mut end_run = |cur: &mut Vec<u8>, head: &mut bool| {
        if !*head && cur.len() >= 2 {
            runs.push(std::mem::take(cur));
        }
        cur.clear();
        *head = false;
    };
    let mut i = 0;
    while i < regex.len() {
        let c = regex[i];
        match c {
            b'\\' => match regex.get(i + 1) {
                Some(&n) if n.is_ascii() && !n.is_ascii_alphanumeric() => {
                    cur.push(n);
                    i += 2;
                    continue;
                }
                n => {
                    end_run(&mut cur, &mut head);
                    i = skip_escape(regex, i, n.copied());
                    continue;
                }
            },
            b'[' => {
                end_run(&mut cur, &mut head);
                i = skip_class(regex, i).0;
                continue;
            }
            b'(' => {
                end_run(&mut cur, &mut head);
                let mut depth = 0i32;
                while i < regex.len() {
                    match regex[i] {
                        b'\\' => i += 1,
                        b'[' => {
                            i = skip_class(regex, i).0;
                            continue;
                        }
                        b'(' => depth += 1,
                        b')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
            }
            b'?' | b'*' => {
                cur.pop();
                end_run(&mut cur, &mut head);
            }
            b'{' => {
                // A counted repeat: the atom before it may be absent ({0,n}), and what is inside
                // the braces is not matched.
                cur.pop();
                end_run(&mut cur, &mut head);
                match regex[i..].iter().position(|&b| b == b'}') {
                    Some(p) => i += p,
                    None => break,
                }
            }
            b'+' | b'.' | b'^' | b'$' | b')' | b'|' | b'}' | b']' => end_run(&mut cur, &mut head),
            _ if !c.is_ascii() => end_run(&mut cur, &mut head),
            _ => cur.push(c),
        }
        i += 1;
    }
    end_run(&mut cur, &mut head);
    runs
}

/// The index just past the escape with a letter or digit at `i` (`\\x41`, `\\x{41}`, `\\101`,
/// `\\12`, `\\cA`, `\\p{L}`, `\\d`): the bytes it takes are not literals.
fn skip_escape(regex: &[u8], i: usize, letter: Option<u8>) -> usize {
    let mut j = i + 2;
    let hex = |b: &u8| b.is_ascii_hexdigit();
    match letter {
        Some(b'x') if regex.get(j) == Some(&b'{') => {}
        Some(b'x') => {
            while j < regex.len() && j < i + 4 && hex(&regex[j]) {
                j += 1;
            }
            return j;
        }
        Some(b'c') => return j + 1,
        Some(d) if d.is_ascii_digit() => {
            while j < regex.len() && regex[j].is_ascii_digit() {
                j += 1;
            }
            return j;
        }
        _ => {}
    }
    if regex.get(j) == Some(&b'{') {
        match regex[j..].iter().position(|&b| b == b'}') {
            Some(p) => return j + p + 1,
            None => return regex.len(),
        }
    }
    j
}

/// The index just past the class that starts at `i` (`]` first, or after `^`, is a member;
/// escapes and POSIX classes inside are skipped), and whether every POSIX class in it was
/// terminated (an unterminated `[:` is read as literal members).
fn skip_class(regex: &[u8], mut i: usize) -> (usize, bool) {
    let mut clean = true;
    i += 1;
    if regex.get(i) == Some(&b'^') {
        i += 1;
    }
    if regex.get(i) == Some(&b']') {
        i += 1;
    }
    while i < regex.len() && regex[i] != b']' {
        if regex[i] == b'\\' {
            i += 1;
        } else if regex[i] == b'[' && matches!(regex.get(i + 1), Some(b':' | b'.' | b'=')) {
            let close = regex[i + 1];
            match regex[i + 2..]
                .windows(2)
                .position(|w| w[0] == close && w[1] == b']')
            {
                Some(p) => i += 2 + p + 1,
                None => clean = false,
            }
        }
        i += 1;
    }
    (i + 1, clean)
}

/// Whether `path` can match an expression whose literal tail is `tail`.
pub fn tail_allows(tail: &[u8], path: &[u8]) -> bool {
    path.ends_with(tail) || (path.last() == Some(&b'\n') && path[..path.len() - 1].ends_with(tail))
}

/// Whether a path matches a shape that needs no PCRE2 (`None` for [`Shape::Prefix`]).
pub fn shape_matches(shape: &Shape, path: &[u8]) -> Option<bool> {
    kind_matches(Kind::of(shape), shape.prefix(), path)
}

/// [`shape_matches`] for a kind and its literal.
pub(crate) fn kind_matches(kind: Kind, lit: &[u8], path: &[u8]) -> Option<bool> {
    match kind {
        Kind::Exact => Some(exact_or_newline(lit, path)),
        Kind::Under => Some(
            exact_or_newline(lit, path)
                || (path.len() > lit.len() && path.starts_with(lit) && path[lit.len()] == b'/'),
        ),
        Kind::Prefix => None,
    }
}

fn exact_or_newline(lit: &[u8], path: &[u8]) -> bool {
    path == lit
        || (path.len() == lit.len() + 1 && path.starts_with(lit) && path[lit.len()] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An expression without `|` has no top-level alternation, but one with a POSIX class not
    /// closed inside a bracket is a doubt, read as one (no prefix is taken from it), with or
    /// without a `|`.
    #[test]
    fn an_unterminated_class_is_a_doubt_even_without_a_bar() {
        assert!(!top_level_alternation(b"/usr/lib(/.*)?"));
        assert!(top_level_alternation(b"/usr/a|/usr/b"));
        assert!(top_level_alternation(b"/usr/[[:alpha]x"));
        assert_eq!(shape(b"/usr/[[:alpha]x"), Shape::Prefix(Vec::new()));
    }

    #[test]
    fn meta_chars_follow_label_file_h() {
        assert_eq!(meta_chars(b"/etc/passwd"), (false, 11));
        assert_eq!(meta_chars(b"/usr/lib(/.*)?"), (true, 8));
        // An escaped dot is not a meta character for the sort, though it is a regex.
        assert_eq!(meta_chars(b"/etc/a\\.b"), (false, 9));
        assert_eq!(meta_chars(b"/x\\"), (false, 3));
    }

    #[test]
    fn stems_follow_label_file_h() {
        assert_eq!(spec_stem_len(b"/usr/lib(/.*)?"), 4);
        assert_eq!(spec_stem_len(b"/usr(/.*)?"), 0);
        assert_eq!(spec_stem_len(b"/usr"), 0);
        assert_eq!(spec_stem_len(b"/u.r/lib"), 0);
        assert_eq!(path_stem_len(b"/usr/lib"), 4);
        assert_eq!(path_stem_len(b"/usr"), 0);
        assert_eq!(path_stem_len(b"/"), 0);
    }

    #[test]
    fn shapes_are_conservative() {
        assert_eq!(shape(b"/etc/passwd"), Shape::Exact(b"/etc/passwd".to_vec()));
        assert_eq!(shape(b"/etc/a\\.b"), Shape::Exact(b"/etc/a.b".to_vec()));
        assert_eq!(shape(b"/usr/lib(/.*)?"), Shape::Under(b"/usr/lib".to_vec()));
        // The atom before a quantifier is not part of the prefix.
        assert_eq!(shape(b"/etc/ab?c"), Shape::Prefix(b"/etc/a".to_vec()));
        assert_eq!(shape(b"/etc/a\\.?c"), Shape::Prefix(b"/etc/a".to_vec()));
        assert_eq!(shape(b"/etc/ab{2}"), Shape::Prefix(b"/etc/a".to_vec()));
        assert_eq!(shape(b"/etc/ab+"), Shape::Prefix(b"/etc/a".to_vec()));
        // Alternation at the top binds weaker than the anchors.
        assert_eq!(shape(b"/a|/b"), Shape::Prefix(Vec::new()));
        assert_eq!(shape(b"/x(a|b)"), Shape::Prefix(b"/x".to_vec()));
        assert_eq!(shape(b"/x[|]"), Shape::Prefix(b"/x".to_vec()));
        assert_eq!(shape(b"/x\\d"), Shape::Prefix(b"/x".to_vec()));
    }

    #[test]
    fn tails_are_conservative() {
        assert_eq!(
            literal_tail(b"/usr/lib/[^/]*/colord/colord"),
            b"/colord/colord".to_vec()
        );
        assert_eq!(literal_tail(b"/usr/(.*/)?lib(/.*)?"), Vec::<u8>::new());
        assert_eq!(
            literal_tail(b"/usr/lib/[^/]*/run-mozilla\\.sh"),
            b"/run-mozilla.sh".to_vec()
        );
        // An escaped letter is a class, a quantified atom is not fixed.
        assert_eq!(literal_tail(b"/a/.*\\d/x"), b"/x".to_vec());
        assert_eq!(literal_tail(b"/a/.*\\x41"), Vec::<u8>::new());
        assert_eq!(literal_tail(b"/a/.*\\cA"), Vec::<u8>::new());
        assert_eq!(literal_tail(b"/a/(b)\\12"), Vec::<u8>::new());
        assert_eq!(literal_tail(b"/a/.*xy?"), Vec::<u8>::new());
        assert_eq!(literal_tail(b"/a/.*x\\\\"), b"x\\".to_vec());
        assert_eq!(literal_tail(b"(?i)/a/.*xyz"), Vec::<u8>::new());
        assert_eq!(literal_tail(b"/a\\Qa\\.b"), Vec::<u8>::new());
        assert_eq!(literal_tail(b"/(a)/\\k<x>"), Vec::<u8>::new());
        assert_eq!(literal_tail(b"/a/.*x|/b"), Vec::<u8>::new());
        assert!(tail_allows(b"/colord", b"/usr/lib/x/colord/colord\n"));
        assert!(!tail_allows(b"/colord", b"/usr/lib/x/colord/colordx"));
    }

    #[test]
    fn inner_literals_are_conservative() {
        let v = |r: &[u8]| inner_literals(r);
        assert_eq!(v(b"/usr/(.*/)?sbin(/.*)?"), vec![b"sbin".to_vec()]);
        assert_eq!(
            v(b"/usr/(.*/)?java/.+\\.jar"),
            vec![b"java/".to_vec(), b".jar".to_vec()]
        );
        // The atom before ? is optional; \x41 is one byte, not "41".
        assert_eq!(v(b"/a(x)bcd?e"), vec![b"bc".to_vec()]);
        assert_eq!(v(b"/a(x)\\x41yz"), vec![b"yz".to_vec()]);
        assert_eq!(
            v(b"/a(x)[ab]cd[^]x]ef"),
            vec![b"cd".to_vec(), b"ef".to_vec()]
        );
        assert!(v(b"/a(x)bc|de").is_empty());
        assert!(v(b"(?i)/a(x)bc").is_empty());
        assert_eq!(v(b"/a(x)b{10}cd"), vec![b"cd".to_vec()]);
        assert_eq!(
            v(b"/a(x)\\x{41}yz\\12ab\\cAbc"),
            vec![b"yz".to_vec(), b"ab".to_vec(), b"bc".to_vec()]
        );
    }

    #[test]
    fn shapes_answer_as_pcre2_would() {
        let under = shape(b"/usr/lib(/.*)?");
        assert_eq!(shape_matches(&under, b"/usr/lib"), Some(true));
        assert_eq!(shape_matches(&under, b"/usr/lib\n"), Some(true));
        assert_eq!(shape_matches(&under, b"/usr/lib/a\nb"), Some(true));
        assert_eq!(shape_matches(&under, b"/usr/lib64"), Some(false));
        assert_eq!(shape_matches(&under, b"/usr/lib\n\n"), Some(false));
        let exact = shape(b"/etc/passwd");
        assert_eq!(shape_matches(&exact, b"/etc/passwd\n"), Some(true));
        assert_eq!(shape_matches(&exact, b"/etc/passwdx"), Some(false));
    }
}
