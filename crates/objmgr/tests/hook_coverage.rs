//! Every LSM hook SELinux registers (crates/objmgr/lsm-hooks.txt, read from hooks.c and dated)
//! has an objmgr function that implements it, or a line saying why it is left out; the coverage
//! table in docs/hook-coverage.md is made from the two here.
//!
//! A function implements a hook when its doc comment names the kernel function in parentheses,
//! "(selinux_file_open)" or "(selinux_task_getpgid, selinux_task_getsid)", the way every hook
//! cites the hooks.c function it follows. `SEACCESS_UPDATE_DOCS=1` writes the table into
//! docs/hook-coverage.md.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const BEGIN: &str = "<!-- hook coverage: written by crates/objmgr/tests/hook_coverage.rs -->";
const END: &str = "<!-- end of hook coverage -->";

/// One line of lsm-hooks.txt.
struct Listed {
    hook: String,
    kernel_fn: String,
    reason: Option<String>,
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn listed() -> Vec<Listed> {
    let text = std::fs::read_to_string(crate_dir().join("lsm-hooks.txt")).unwrap();
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let (names, reason) = match line.split_once(" -- ") {
            Some((a, r)) => (a, Some(r.trim().to_string())),
            None => (line, None),
        };
        let mut w = names.split_whitespace();
        let (Some(hook), Some(kernel_fn), None) = (w.next(), w.next(), w.next()) else {
            panic!(
                "lsm-hooks.txt:{}: want `hook selinux_function [-- reason]`: {line}",
                n + 1
            );
        };
        assert!(
            kernel_fn.starts_with("selinux_"),
            "lsm-hooks.txt:{}: {kernel_fn} is not a selinux_ function",
            n + 1
        );
        assert!(
            reason.as_deref() != Some(""),
            "lsm-hooks.txt:{}: an empty reason",
            n + 1
        );
        out.push(Listed {
            hook: hook.into(),
            kernel_fn: kernel_fn.into(),
            reason,
        });
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The kernel functions a doc comment cites: each "(selinux_a" and the ", selinux_b" or
/// " and selinux_b" that follow it inside the parenthesis.
fn cited(doc: &str) -> Vec<String> {
    let ident = |s: &str| {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<String>()
    };
    let mut out = Vec::new();
    let mut rest = doc;
    while let Some(i) = rest.find("(selinux_") {
        let mut at = &rest[i + 1..];
        loop {
            let name = ident(at);
            at = &at[name.len()..];
            out.push(name);
            let next = [", ", " and ", ", and "]
                .iter()
                .find_map(|sep| at.strip_prefix(sep).filter(|r| r.starts_with("selinux_")));
            match next {
                Some(r) => at = r,
                None => break,
            }
        }
        rest = at;
    }
    out
}

/// Every public function of the crate with the kernel functions its doc comment cites, as
/// (kernel function → "Type::function (file)").
fn implementations() -> BTreeMap<String, Vec<String>> {
    let src = crate_dir().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let rel = f.strip_prefix(crate_dir()).unwrap().display().to_string();
        let mut doc = String::new();
        let mut owner = String::new();
        for line in text.lines() {
            let t = line.trim_start();
            if let Some(d) = t.strip_prefix("///") {
                // One space between lines, so a citation list may break across them.
                doc.push_str(d.trim());
                doc.push(' ');
                continue;
            }
            if t.starts_with("#[") {
                continue;
            }
            if let Some(rest) = t.strip_prefix("impl").filter(|r| r.starts_with([' ', '<'])) {
                // `impl X {`, `impl Trait for X {`, `impl<'a> X<'a> {`: the type's bare name.
                let rest = if rest.starts_with('<') {
                    rest.split_once("> ").map_or(rest, |x| x.1)
                } else {
                    rest.trim_start()
                };
                let ty = rest.rsplit(" for ").next().unwrap_or(rest);
                owner = ty
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
            }
            if let Some(rest) = t.strip_prefix("pub fn ") {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                let indented = line.starts_with(' ');
                let who = if indented && !owner.is_empty() {
                    format!("{owner}::{name}")
                } else {
                    name
                };
                for k in cited(&doc) {
                    out.entry(k).or_default().push(format!("`{who}` ({rel})"));
                }
            }
            doc.clear();
        }
    }
    out
}

fn table(listed: &[Listed], imps: &BTreeMap<String, Vec<String>>) -> String {
    let done = listed
        .iter()
        .filter(|l| imps.contains_key(&l.kernel_fn))
        .count();
    let mut s = format!(
        "{BEGIN}\n{done} of the {} hooks SELinux registers have an objmgr function; the other {} are left out, each with its reason \
         (`crates/objmgr/lsm-hooks.txt`: hooks.c at 28254722a459, read 2026-11-26).\n\n| hook | hooks.c | seaccess |\n|---|---|---|\n",
        listed.len(),
        listed.len() - done
    );
    for l in listed {
        let what = match imps.get(&l.kernel_fn) {
            Some(fns) => fns.join(", "),
            None => format!("left out: {}", l.reason.as_deref().unwrap_or("?")),
        };
        s.push_str(&format!(
            "| {} | `{}` | {} |\n",
            l.hook,
            l.kernel_fn,
            what.replace('|', "\\|")
        ));
    }
    s.push_str(END);
    s
}

#[test]
fn doc_citations_are_found() {
    assert_eq!(cited("x (selinux_file_open): y"), ["selinux_file_open"]);
    assert_eq!(
        cited("(selinux_task_getpgid, selinux_task_getsid and selinux_x) then (selinux_y's"),
        [
            "selinux_task_getpgid",
            "selinux_task_getsid",
            "selinux_x",
            "selinux_y"
        ]
    );
    assert!(cited("as selinux_file_open does").is_empty());
}

#[test]
fn every_listed_hook_is_implemented_or_has_a_reason() {
    let listed = listed();
    assert!(
        listed.len() > 200,
        "the list has SELinux's hooks ({})",
        listed.len()
    );
    let imps = implementations();
    let mut missing = Vec::new();
    let mut stale = Vec::new();
    for l in &listed {
        match (imps.get(&l.kernel_fn), &l.reason) {
            (None, None) => missing.push(format!("{} ({})", l.hook, l.kernel_fn)),
            (Some(f), Some(_)) => stale.push(format!(
                "{} ({}): implemented by {}",
                l.hook,
                l.kernel_fn,
                f.join(", ")
            )),
            _ => {}
        }
    }
    assert!(
        missing.is_empty(),
        "hooks with neither an objmgr function citing them nor a reason in lsm-hooks.txt:\n{}",
        missing.join("\n")
    );
    assert!(
        stale.is_empty(),
        "hooks implemented that lsm-hooks.txt still says are left out:\n{}",
        stale.join("\n")
    );
}

#[test]
fn docs_have_the_coverage_table() {
    let listed = listed();
    let want = table(&listed, &implementations());
    let path = crate_dir().join("../../docs/hook-coverage.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (Some(b), Some(e)) = (doc.find(BEGIN), doc.find(END)) else {
        panic!("docs/hook-coverage.md has no coverage table between `{BEGIN}` and `{END}`");
    };
    let have = &doc[b..e + END.len()];
    if have == want {
        return;
    }
    if std::env::var_os("SEACCESS_UPDATE_DOCS").is_some() {
        let new = format!("{}{want}{}", &doc[..b], &doc[e + END.len()..]);
        std::fs::write(&path, new).unwrap();
        return;
    }
    panic!("docs/hook-coverage.md's hook coverage table is out of date: run SEACCESS_UPDATE_DOCS=1 cargo test -p seaccess-objmgr --test hook_coverage");
}

/// The table lives in docs/ alone: README links to it instead of carrying a second copy that
/// nothing would keep up to date.
#[test]
fn readme_links_to_the_table_and_does_not_repeat_it() {
    let readme = std::fs::read_to_string(crate_dir().join("../../README.md")).unwrap();
    assert!(
        !readme.contains(BEGIN) && !readme.contains("| hook | hooks.c | seaccess |"),
        "README.md repeats the hook coverage table; it belongs in docs/hook-coverage.md"
    );
    assert!(
        readme.contains("docs/hook-coverage.md"),
        "README.md does not link to docs/hook-coverage.md"
    );
}
