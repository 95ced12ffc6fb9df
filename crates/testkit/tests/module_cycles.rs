//! No import cycle inside a crate (issue 36, item 2). For every crate target under crates/ (its
//! lib.rs or main.rs), the modules are the nodes, found by following `mod` declarations (inline
//! blocks and `#[path]` included, `#[cfg(test)]` items left out: a test module may use anything
//! it tests). A module has an edge to every module a path in it names (`crate::a::b`, `super::`,
//! `self::`, a child's name; in `use` trees and in code, macro arguments included), and to the
//! children it declares. An edge to the module itself or to one of its ancestors is not counted:
//! a child using what its parent gathers is how a Rust module tree is built, and the crate root
//! declares everything. A strongly connected component of two modules or more is a cycle: a
//! module that, through others, names itself back, so neither can be understood or moved alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Cycles allowed for now, each (crate directory, a module the cycle contains, why). Any other
/// cycle fails the test, and so does a new one through an allowed crate that leaves out the
/// module named here. None is left (issue 36 item 2): the last, capi's ring around its state,
/// was broken by moving the loaded kernel (kernel.rs), the C decision (decision.rs) and the
/// AVC's life (avc_life.rs) below the modules that named each other through them.
const ALLOWED: &[(&str, &str, &str)] = &[];

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    PathSep,
    Punct(char),
}

/// Rust source as tokens, without comments; string literals keep their text (for `#[path]`).
fn tokens(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    let newlines = |s: &[char]| s.iter().filter(|&&x| x == '\n').count();
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && c.get(i + 1) == Some(&'*') {
            let (start, mut depth) = (i, 0);
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            line += newlines(&c[start..i]);
        } else if let Some((end, text)) = raw_string(&c, i) {
            out.push((Tok::Str(text), line));
            line += newlines(&c[i..end]);
            i = end;
        } else if ch == '"' || (ch == 'b' && c.get(i + 1) == Some(&'"')) {
            let start = i;
            i += if ch == 'b' { 2 } else { 1 };
            let mut text = String::new();
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    i += 1;
                }
                text.extend(c.get(i));
                i += 1;
            }
            i += 1;
            out.push((Tok::Str(text), line));
            line += newlines(&c[start..i.min(c.len())]);
        } else if ch == '\'' || (ch == 'b' && c.get(i + 1) == Some(&'\'')) {
            // A char literal ('x', '\n', b'x') or a lifetime ('a): only the literal has a
            // closing quote right after its one (possibly escaped) character.
            let q = if ch == 'b' { i + 1 } else { i };
            if c.get(q + 1) == Some(&'\\') {
                i = q + 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(q + 2) == Some(&'\'') {
                i = q + 3;
            } else {
                i = q + 1;
                while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                    i += 1;
                }
            }
        } else if ch.is_alphabetic() || ch == '_' {
            let start = i;
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
            let word: String = c[start..i].iter().collect();
            out.push((Tok::Ident(word.trim_start_matches("r#").to_string()), line));
        } else if ch.is_ascii_digit() {
            while i < c.len() && (c[i].is_alphanumeric() || c[i] == '_') {
                i += 1;
            }
        } else if ch == ':' && c.get(i + 1) == Some(&':') {
            out.push((Tok::PathSep, line));
            i += 2;
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// A raw string (r"..", r#".."#, br".."), if one starts at `i`: where it ends and its text.
fn raw_string(c: &[char], i: usize) -> Option<(usize, String)> {
    let mut j = i;
    if c.get(j) == Some(&'b') {
        j += 1;
    }
    if c.get(j) != Some(&'r') {
        return None;
    }
    j += 1;
    let hashes = c[j..].iter().take_while(|&&x| x == '#').count();
    j += hashes;
    if c.get(j) != Some(&'"') {
        return None;
    }
    let start = j + 1;
    let mut k = start;
    while k < c.len() {
        if c[k] == '"'
            && c[k + 1..]
                .iter()
                .take(hashes)
                .filter(|&&x| x == '#')
                .count()
                == hashes
        {
            return Some((k + 1 + hashes, c[start..k].iter().collect()));
        }
        k += 1;
    }
    Some((c.len(), c[start..].iter().collect()))
}

/// One module: its path from the crate root, its children by name, and the paths it names.
#[derive(Default)]
struct Module {
    children: BTreeMap<String, usize>,
    parent: Option<usize>,
    name: String,
    /// (path segments, file, line)
    paths: Vec<(Vec<String>, String, usize)>,
}

struct Crate {
    modules: Vec<Module>,
}

impl Crate {
    fn path_of(&self, m: usize) -> String {
        let mut parts = Vec::new();
        let mut at = Some(m);
        while let Some(i) = at {
            if self.modules[i].parent.is_some() {
                parts.push(self.modules[i].name.clone());
            }
            at = self.modules[i].parent;
        }
        parts.reverse();
        if parts.is_empty() {
            "crate".to_string()
        } else {
            parts.join("::")
        }
    }

    fn is_ancestor_or_self(&self, a: usize, of: usize) -> bool {
        let mut at = Some(of);
        while let Some(i) = at {
            if i == a {
                return true;
            }
            at = self.modules[i].parent;
        }
        false
    }

    /// The module a path written in `m` names (the longest prefix that is a module), if the
    /// path starts inside this crate.
    fn resolve(&self, m: usize, segs: &[String]) -> Option<usize> {
        let (mut at, mut rest) = match segs.first()?.as_str() {
            "crate" => (0, &segs[1..]),
            "self" => (m, &segs[1..]),
            "super" => {
                let mut at = m;
                let mut n = 0;
                while segs.get(n).map(String::as_str) == Some("super") {
                    at = self.modules[at].parent?;
                    n += 1;
                }
                (at, &segs[n..])
            }
            first if self.modules[m].children.contains_key(first) => (m, segs),
            _ => return None,
        };
        while let Some(next) = rest.first().and_then(|s| self.modules[at].children.get(s)) {
            at = *next;
            rest = &rest[1..];
        }
        Some(at)
    }
}

/// Loads the module tree whose root file is `root`.
fn load_crate(root: &Path) -> Crate {
    let mut krate = Crate {
        modules: vec![Module::default()],
    };
    load_file(&mut krate, 0, root, true);
    krate
}

fn load_file(krate: &mut Crate, m: usize, file: &Path, owns_dir: bool) {
    let src = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let toks = tokens(&src);
    // The directory a child module's file is looked up in: beside a mod.rs/lib.rs/main.rs, in
    // the directory named after the module otherwise.
    let dir = if owns_dir {
        file.parent().unwrap().to_path_buf()
    } else {
        file.with_extension("")
    };
    let mut at = 0;
    scan(
        krate,
        m,
        &toks,
        &mut at,
        &dir,
        &file.display().to_string(),
        false,
    );
}

/// Reads items from `toks[*at..]` into module `m` until the block's closing brace (or the end).
fn scan(
    krate: &mut Crate,
    m: usize,
    toks: &[(Tok, usize)],
    at: &mut usize,
    dir: &Path,
    file: &str,
    inline: bool,
) {
    let ident = |i: usize| match toks.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let mut path_attr: Option<String> = None;
    let mut depth = 0usize;
    while *at < toks.len() {
        let (tok, line) = &toks[*at];
        match tok {
            Tok::Punct('#') if matches!(toks.get(*at + 1), Some((Tok::Punct('['), _))) => {
                let end = matching(toks, *at + 1);
                let attr: Vec<&Tok> = toks[*at + 2..end].iter().map(|(t, _)| t).collect();
                let is = |w: &str| matches!(attr.first(), Some(Tok::Ident(s)) if s == w);
                if is("cfg") && attr.get(2) == Some(&&Tok::Ident("test".into())) && attr.len() == 4
                {
                    *at = skip_item(toks, end + 1);
                    continue;
                }
                if is("path") {
                    if let Some(Tok::Str(p)) = attr.last() {
                        path_attr = Some(p.clone());
                    }
                }
                *at = end + 1;
                continue;
            }
            Tok::Ident(w) if w == "mod" && ident(*at + 1).is_some() => {
                let name = ident(*at + 1).unwrap().to_string();
                let child = krate.modules.len();
                krate.modules.push(Module {
                    parent: Some(m),
                    name: name.clone(),
                    ..Default::default()
                });
                krate.modules[m].children.insert(name.clone(), child);
                match toks.get(*at + 2) {
                    Some((Tok::Punct('{'), _)) => {
                        *at += 3;
                        scan(krate, child, toks, at, &dir.join(&name), file, true);
                    }
                    _ => {
                        let path = match path_attr.take() {
                            // Rust's rule: beside the file that declares the module, unless the
                            // declaration is inside an inline module block (then under it).
                            Some(p) if !inline => Path::new(file)
                                .parent()
                                .map_or_else(|| dir.join(&p), |d| d.join(&p)),
                            Some(p) => dir.join(p),
                            None if dir.join(format!("{name}.rs")).exists() => {
                                dir.join(format!("{name}.rs"))
                            }
                            None => dir.join(&name).join("mod.rs"),
                        };
                        let owns = path.file_name().is_some_and(|f| f == "mod.rs");
                        load_file(krate, child, &path, owns);
                        *at += 3;
                    }
                }
                continue;
            }
            Tok::Ident(w) if w == "use" => {
                let end = (*at..toks.len())
                    .find(|&i| toks[i].0 == Tok::Punct(';'))
                    .unwrap();
                let mut trees = Vec::new();
                use_tree(&toks[*at + 1..end], Vec::new(), &mut trees);
                for segs in trees {
                    krate.modules[m].paths.push((segs, file.to_string(), *line));
                }
                *at = end + 1;
            }
            Tok::Ident(w)
                if w == "pub" && toks.get(*at + 1).map(|t| &t.0) == Some(&Tok::Punct('(')) =>
            {
                // pub(crate), pub(super), pub(in a::b) restrict who sees an item: no use.
                *at = matching(toks, *at + 1) + 1;
            }
            Tok::Ident(_) if toks.get(*at + 1).map(|t| &t.0) == Some(&Tok::PathSep) => {
                let mut segs = Vec::new();
                while let Some(s) = ident(*at) {
                    segs.push(s.to_string());
                    if toks.get(*at + 1).map(|t| &t.0) != Some(&Tok::PathSep) {
                        break;
                    }
                    *at += 2;
                }
                krate.modules[m].paths.push((segs, file.to_string(), *line));
                *at += 1;
            }
            Tok::Punct('{') => {
                depth += 1;
                *at += 1;
            }
            Tok::Punct('}') => {
                *at += 1;
                if depth == 0 && inline {
                    return;
                }
                depth = depth.saturating_sub(1);
            }
            _ => *at += 1,
        }
    }
}

/// The index of the bracket closing the one at `open`.
fn matching(toks: &[(Tok, usize)], open: usize) -> usize {
    let mut depth = 0i32;
    for (i, (t, _)) in toks.iter().enumerate().skip(open) {
        match t {
            Tok::Punct('(' | '[' | '{') => depth += 1,
            Tok::Punct(')' | ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    toks.len() - 1
}

/// Past the item starting at `at` (its attributes, then up to its `;` or its braced body).
fn skip_item(toks: &[(Tok, usize)], mut at: usize) -> usize {
    while at < toks.len() {
        match &toks[at].0 {
            Tok::Punct(';') => return at + 1,
            Tok::Punct('{') => return matching(toks, at) + 1,
            Tok::Punct('(' | '[') => at = matching(toks, at) + 1,
            _ => at += 1,
        }
    }
    at
}

/// Every path a `use` tree names, its groups expanded.
fn use_tree(toks: &[(Tok, usize)], prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut segs = prefix;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Ident(s) if s == "as" => break,
            Tok::Ident(s) => segs.push(s.clone()),
            Tok::Punct('{') => {
                let end = matching(toks, i);
                let mut start = i + 1;
                let mut depth = 0;
                for j in i + 1..=end {
                    match &toks[j].0 {
                        Tok::Punct('{') => depth += 1,
                        Tok::Punct('}') if depth > 0 => depth -= 1,
                        Tok::Punct(',') | Tok::Punct('}') if depth == 0 => {
                            use_tree(&toks[start..j], segs.clone(), out);
                            start = j + 1;
                        }
                        _ => {}
                    }
                }
                return;
            }
            _ => {}
        }
        i += 1;
    }
    if !segs.is_empty() {
        out.push(segs);
    }
}

/// Tarjan's strongly connected components of the module graph, the ones of two modules or more.
fn cycles(edges: &BTreeMap<usize, BTreeSet<usize>>, n: usize) -> Vec<Vec<usize>> {
    struct T<'a> {
        edges: &'a BTreeMap<usize, BTreeSet<usize>>,
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(t: &mut T, v: usize) {
        t.index[v] = Some(t.next);
        t.low[v] = t.next;
        t.next += 1;
        t.stack.push(v);
        t.on[v] = true;
        for &w in t.edges.get(&v).into_iter().flatten() {
            match t.index[w] {
                None => {
                    visit(t, w);
                    t.low[v] = t.low[v].min(t.low[w]);
                }
                Some(iw) if t.on[w] => t.low[v] = t.low[v].min(iw),
                _ => {}
            }
        }
        if Some(t.low[v]) == t.index[v] {
            let mut scc = Vec::new();
            while let Some(w) = t.stack.pop() {
                t.on[w] = false;
                scc.push(w);
                if w == v {
                    break;
                }
            }
            if scc.len() > 1 {
                t.out.push(scc);
            }
        }
    }
    let mut t = T {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        on: vec![false; n],
        stack: Vec::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in 0..n {
        if t.index[v].is_none() {
            visit(&mut t, v);
        }
    }
    t.out
}

/// Each cycle in the crate rooted at `root`: its modules and the references that make it.
fn crate_cycles(root: &Path) -> Vec<(BTreeSet<String>, Vec<String>)> {
    let krate = load_crate(root);
    let n = krate.modules.len();
    let mut edges: BTreeMap<usize, BTreeSet<usize>> = BTreeMap::new();
    let mut evidence: BTreeMap<(usize, usize), (String, usize)> = BTreeMap::new();
    for (m, module) in krate.modules.iter().enumerate() {
        for &child in module.children.values() {
            edges.entry(m).or_default().insert(child);
        }
        for (segs, file, line) in &module.paths {
            let Some(to) = krate.resolve(m, segs) else {
                continue;
            };
            if krate.is_ancestor_or_self(to, m) {
                continue;
            }
            edges.entry(m).or_default().insert(to);
            evidence.entry((m, to)).or_insert((file.clone(), *line));
        }
    }
    let mut out = Vec::new();
    for scc in cycles(&edges, n) {
        let set: BTreeSet<usize> = scc.iter().copied().collect();
        let names = scc.iter().map(|&m| krate.path_of(m)).collect();
        let mut why = Vec::new();
        for (&(a, b), (file, line)) in &evidence {
            if set.contains(&a) && set.contains(&b) {
                let (pa, pb) = (krate.path_of(a), krate.path_of(b));
                why.push(format!("{pa} -> {pb} ({file}:{line})"));
            }
        }
        out.push((names, why));
    }
    out
}

fn crate_roots() -> Vec<(String, PathBuf)> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf();
    let mut roots = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        for root in ["lib.rs", "main.rs"] {
            let file = dir.join("src").join(root);
            if file.exists() {
                roots.push((name.clone(), file));
            }
        }
    }
    roots.sort();
    roots
}

#[test]
fn no_import_cycle_inside_a_crate() {
    let mut found = Vec::new();
    for (name, root) in crate_roots() {
        for (modules, why) in crate_cycles(&root) {
            let allowed = ALLOWED
                .iter()
                .any(|(c, m, _)| *c == name && modules.contains(*m));
            let list: Vec<&str> = modules.iter().map(String::as_str).collect();
            let text = format!("{name}: {}\n    {}", list.join(", "), why.join("\n    "));
            if allowed {
                eprintln!("allowed (see ALLOWED): {text}");
            } else {
                found.push(text);
            }
        }
    }
    assert!(
        found.is_empty(),
        "import cycles inside crates:\n{}",
        found.join("\n")
    );
}

/// The checker itself finds a cycle, through a `use` group, a `super::` path and a path in code,
/// and leaves out test modules and edges to ancestors.
#[test]
fn the_checker_sees_cycles() {
    let dir = std::env::temp_dir().join(format!("seaccess-cycles-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("b")).unwrap();
    let write = |f: &str, s: &str| std::fs::write(dir.join(f), s).unwrap();
    write("lib.rs", "mod a;\nmod b;\nmod c;\npub use a::X;\n");
    write("a.rs", "use crate::{b::{Y}, c};\npub struct X;\n");
    write(
        "b/mod.rs",
        "mod inner;\npub struct Y;\n#[cfg(test)]\nmod tests { use crate::a::X; }\n",
    );
    write(
        "b/inner.rs",
        "fn f() { let _ = super::super::a::X; let _ = crate::Z; }\n",
    );
    write(
        "c.rs",
        "// crate::a::X in a comment\nconst S: &str = \"crate::b::Y\";\npub struct Z;\n",
    );
    let found = crate_cycles(&dir.join("lib.rs"));
    let sets: Vec<Vec<String>> = found
        .iter()
        .map(|(m, _)| m.iter().cloned().collect())
        .collect();
    assert_eq!(
        sets,
        vec![vec!["a".to_string(), "b".into(), "b::inner".into()]],
        "{found:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// capi's fork handlers stay out of any cycle: fork.rs, which every module that makes state
/// registers with, names none of them back (the crate root lists what the handlers hold).
#[test]
fn capis_fork_handlers_are_in_no_cycle() {
    let (_, root) = crate_roots()
        .into_iter()
        .find(|(name, _)| name == "capi")
        .expect("crates/capi");
    for (modules, why) in crate_cycles(&root) {
        assert!(
            !modules.iter().any(|m| m == "fork"),
            "capi's fork is in a cycle: {:?}\n    {}",
            modules,
            why.join("\n    ")
        );
    }
}
