//! The cases file read into [`Suite`]: TOML in the shape `seaccess test` documents, every name
//! kept with its line so that a later error (an unknown class, a permission the class lacks)
//! can point at it. Text only: no policy is needed, so the reader fuzzes alone.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

use crate::ToolsError;

/// A value and the line (1-based) it was written on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spot<T> {
    pub value: T,
    pub line: usize,
}

/// Which table a case was written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Allow,
    Deny,
    Create,
    Relabel,
    Member,
    Neverallow,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Allow => "allow",
            Kind::Deny => "deny",
            Kind::Create => "create",
            Kind::Relabel => "relabel",
            Kind::Member => "member",
            Kind::Neverallow => "neverallow",
        }
    }
}

/// What a case asks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// `[[allow]]` (every permission allowed) or `[[deny]]` (every one denied).
    Access {
        scontext: Spot<String>,
        tcontext: Spot<String>,
        class: Spot<String>,
        perms: Vec<Spot<String>>,
    },
    /// `[[create]]`, `[[relabel]]`, `[[member]]`: the new context expected; `name` (create only)
    /// is the new object's name, for filename transitions.
    Label {
        scontext: Spot<String>,
        tcontext: Spot<String>,
        class: Spot<String>,
        name: Option<Spot<String>>,
        expect: Spot<String>,
    },
    /// `[[neverallow]]`: no type of `source` may have any of `perms` on any type of `target`.
    /// Names are types or attributes; one starting with `-` takes its types out again; the
    /// target `self` stands for each source type itself; the permission `*` for all of a class's.
    Neverallow {
        source: Vec<Spot<String>>,
        target: Vec<Spot<String>>,
        classes: Vec<Spot<String>>,
        perms: Vec<Spot<String>>,
    },
}

/// One case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    pub kind: Kind,
    /// The author's name for it, if given.
    pub name: Option<String>,
    /// The line its table starts on.
    pub line: usize,
    /// Booleans to evaluate it under (`with_booleans`), the others keeping the policy's values.
    pub booleans: Vec<(Spot<String>, bool)>,
    pub query: Query,
}

impl Case {
    /// The name to report it by: the author's, else its kind and line.
    pub fn title(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => format!("{} at line {}", self.kind.as_str(), self.line),
        }
    }
}

/// Every case of one file, in the file's order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suite {
    /// The file's name as given, for messages and the JUnit suite's name.
    pub file: String,
    pub cases: Vec<Case>,
}

/// One name or a list of names, each with its span (a lone string takes the field's).
struct Names(Vec<Spanned<String>>);

impl<'de> Deserialize<'de> for Names {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Names;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of strings")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Names, E> {
                Ok(Names(vec![Spanned::new(0..0, s.to_string())]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Names, A::Error> {
                let mut v = Vec::new();
                while let Some(s) = seq.next_element::<Spanned<String>>()? {
                    v.push(s);
                }
                Ok(Names(v))
            }
        }
        d.deserialize_any(V)
    }
}

type Bools = BTreeMap<Spanned<String>, bool>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAccess {
    name: Option<String>,
    scontext: Spanned<String>,
    tcontext: Spanned<String>,
    class: Spanned<String>,
    perms: Spanned<Names>,
    #[serde(default)]
    with_booleans: Bools,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLabel {
    name: Option<String>,
    scontext: Spanned<String>,
    tcontext: Spanned<String>,
    class: Spanned<String>,
    /// The new object's name (create only).
    object_name: Option<Spanned<String>>,
    expect: Spanned<String>,
    #[serde(default)]
    with_booleans: Bools,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNeverallow {
    name: Option<String>,
    source: Spanned<Names>,
    target: Spanned<Names>,
    classes: Spanned<Names>,
    perms: Spanned<Names>,
    #[serde(default)]
    with_booleans: Bools,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    allow: Vec<Spanned<RawAccess>>,
    #[serde(default)]
    deny: Vec<Spanned<RawAccess>>,
    #[serde(default)]
    create: Vec<Spanned<RawLabel>>,
    #[serde(default)]
    relabel: Vec<Spanned<RawLabel>>,
    #[serde(default)]
    member: Vec<Spanned<RawLabel>>,
    #[serde(default)]
    neverallow: Vec<Spanned<RawNeverallow>>,
}

/// Line numbers of byte offsets in one text.
struct Lines<'a>(&'a str);

impl Lines<'_> {
    fn at(&self, offset: usize) -> usize {
        let end = offset.min(self.0.len());
        self.0
            .as_bytes()
            .get(..end)
            .map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count())
            + 1
    }
    fn spot(&self, s: Spanned<String>) -> Spot<String> {
        let line = self.at(s.span().start);
        Spot {
            value: s.into_inner(),
            line,
        }
    }
    /// Each name with its own line, or the field's where it has none (a lone string).
    fn names(&self, field: &str, n: Spanned<Names>) -> Result<Vec<Spot<String>>, (usize, String)> {
        let at = self.at(n.span().start);
        let v: Vec<Spot<String>> = n
            .into_inner()
            .0
            .into_iter()
            .map(|s| {
                let own = s.span();
                let line = if own.is_empty() {
                    at
                } else {
                    self.at(own.start)
                };
                Spot {
                    value: s.into_inner(),
                    line,
                }
            })
            .collect();
        if v.is_empty() {
            return Err((at, format!("{field} is empty")));
        }
        if let Some(s) = v.iter().find(|s| s.value.trim().is_empty()) {
            return Err((s.line, format!("{field} has an empty name")));
        }
        Ok(v)
    }
    fn bools(&self, b: Bools) -> Vec<(Spot<String>, bool)> {
        b.into_iter().map(|(k, v)| (self.spot(k), v)).collect()
    }
}

/// Reads a cases file. `file` names it in errors, which say its line and what is wrong.
pub fn read(file: &str, text: &str) -> Result<Suite, ToolsError> {
    let lines = Lines(text);
    let err = |line: usize, what: String| ToolsError::Cases {
        file: file.to_string(),
        line,
        what,
    };
    let raw: RawFile = toml::from_str(text).map_err(|e| {
        err(
            e.span().map_or(0, |s| lines.at(s.start)),
            e.message().to_string(),
        )
    })?;
    let mut cases = Vec::new();
    let mut fail: Option<(usize, usize, String)> = None;
    let mut add = |kind: Kind, start: usize, r: Result<Case, (usize, String)>| match r {
        Ok(c) => cases.push((start, c)),
        // Report the first problem in the file's order.
        Err((line, what)) => {
            if fail.as_ref().is_none_or(|(at, _, _)| start < *at) {
                fail = Some((start, line, format!("[[{}]]: {what}", kind.as_str())));
            }
        }
    };
    for (kind, list) in [(Kind::Allow, raw.allow), (Kind::Deny, raw.deny)] {
        for c in list {
            let start = c.span().start;
            add(kind, start, access(&lines, kind, c));
        }
    }
    for (kind, list) in [
        (Kind::Create, raw.create),
        (Kind::Relabel, raw.relabel),
        (Kind::Member, raw.member),
    ] {
        for c in list {
            let start = c.span().start;
            add(kind, start, label(&lines, kind, c));
        }
    }
    for c in raw.neverallow {
        let start = c.span().start;
        add(Kind::Neverallow, start, neverallow(&lines, c));
    }
    if let Some((_, line, what)) = fail {
        return Err(err(line, what));
    }
    if cases.is_empty() {
        return Err(err(0, "no cases: expected [[allow]], [[deny]], [[create]], [[relabel]], [[member]] or [[neverallow]] tables".into()));
    }
    cases.sort_by_key(|(start, _)| *start);
    Ok(Suite {
        file: file.to_string(),
        cases: cases.into_iter().map(|(_, c)| c).collect(),
    })
}

fn access(lines: &Lines<'_>, kind: Kind, c: Spanned<RawAccess>) -> Result<Case, (usize, String)> {
    let line = lines.at(c.span().start);
    let r = c.into_inner();
    let perms = lines.names("perms", r.perms)?;
    let query = Query::Access {
        scontext: lines.spot(r.scontext),
        tcontext: lines.spot(r.tcontext),
        class: lines.spot(r.class),
        perms,
    };
    Ok(Case {
        kind,
        name: r.name,
        line,
        booleans: lines.bools(r.with_booleans),
        query,
    })
}

fn label(lines: &Lines<'_>, kind: Kind, c: Spanned<RawLabel>) -> Result<Case, (usize, String)> {
    let line = lines.at(c.span().start);
    let r = c.into_inner();
    let name = r.object_name.map(|n| lines.spot(n));
    if let Some(n) = &name {
        if kind != Kind::Create {
            return Err((
                n.line,
                "object_name is for [[create]] (filename transitions) only".into(),
            ));
        }
    }
    let query = Query::Label {
        scontext: lines.spot(r.scontext),
        tcontext: lines.spot(r.tcontext),
        class: lines.spot(r.class),
        name,
        expect: lines.spot(r.expect),
    };
    Ok(Case {
        kind,
        name: r.name,
        line,
        booleans: lines.bools(r.with_booleans),
        query,
    })
}

fn neverallow(lines: &Lines<'_>, c: Spanned<RawNeverallow>) -> Result<Case, (usize, String)> {
    let line = lines.at(c.span().start);
    let r = c.into_inner();
    let query = Query::Neverallow {
        source: lines.names("source", r.source)?,
        target: lines.names("target", r.target)?,
        classes: lines.names("classes", r.classes)?,
        perms: lines.names("perms", r.perms)?,
    };
    Ok(Case {
        kind: Kind::Neverallow,
        name: r.name,
        line,
        booleans: lines.bools(r.with_booleans),
        query,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn spot(value: &str, line: usize) -> Spot<String> {
        Spot {
            value: value.into(),
            line,
        }
    }

    fn error(text: &str) -> (usize, String) {
        match read("t.toml", text) {
            Err(ToolsError::Cases { file, line, what }) => {
                assert_eq!(file, "t.toml");
                (line, what)
            }
            other => panic!("{other:?}"),
        }
    }

    const FILE: &str = r#"# a comment
[[neverallow]]
name = "n"
source = ["domain",
  "-kernel_t"]
target = "shadow_t"
classes = "file"
perms = ["write"]

[[allow]]
scontext = "u:r:a_t"
tcontext = "u:r:b_t"
class = "file"
perms = ["read",
   "open"]
with_booleans = { b1 = true, b2 = false }

[[create]]
name = "with a name"
scontext = "u:r:a_t"
tcontext = "u:object_r:tmp_t"
class = "file"
object_name = "x"
expect = "u:object_r:x_t"

[[deny]]
scontext = "u:r:a_t"
tcontext = "u:r:b_t"
class = "dir"
perms = "search"

[[relabel]]
name = "no fields"
"#;

    #[test]
    fn cases_in_file_order_with_lines() {
        let s = read(
            "t.toml",
            &FILE.replace("[[relabel]]\nname = \"no fields\"\n", ""),
        )
        .unwrap();
        let kinds: Vec<(Kind, usize)> = s.cases.iter().map(|c| (c.kind, c.line)).collect();
        assert_eq!(
            kinds,
            vec![
                (Kind::Neverallow, 2),
                (Kind::Allow, 10),
                (Kind::Create, 18),
                (Kind::Deny, 26)
            ]
        );
        assert_eq!(s.cases[0].title(), "n");
        assert_eq!(s.cases[1].title(), "allow at line 10");
        let Query::Neverallow {
            source,
            target,
            classes,
            perms,
        } = &s.cases[0].query
        else {
            panic!()
        };
        assert_eq!(source, &vec![spot("domain", 4), spot("-kernel_t", 5)]);
        assert_eq!(target, &vec![spot("shadow_t", 6)]);
        assert_eq!(classes, &vec![spot("file", 7)]);
        assert_eq!(perms, &vec![spot("write", 8)]);
        let Query::Access {
            scontext,
            class,
            perms,
            ..
        } = &s.cases[1].query
        else {
            panic!()
        };
        assert_eq!((scontext, class), (&spot("u:r:a_t", 11), &spot("file", 13)));
        assert_eq!(perms, &vec![spot("read", 14), spot("open", 15)]);
        assert_eq!(
            s.cases[1].booleans,
            vec![(spot("b1", 16), true), (spot("b2", 16), false)]
        );
        let Query::Label { name, expect, .. } = &s.cases[2].query else {
            panic!()
        };
        assert_eq!(
            (name, expect),
            (&Some(spot("x", 23)), &spot("u:object_r:x_t", 24))
        );
        let Query::Access { perms, .. } = &s.cases[3].query else {
            panic!()
        };
        assert_eq!(perms, &vec![spot("search", 30)]);
    }

    #[test]
    fn errors_name_the_line() {
        // A table without its required fields.
        let (line, what) = error(FILE);
        assert_eq!(line, 32, "{what}");
        assert!(what.contains("missing field"), "{what}");
        let (line, what) = error("[[allow]]\nscontext = \"a\"\nperm = [\"x\"]\n");
        assert_eq!(line, 3);
        assert!(what.contains("unknown field `perm`"), "{what}");
        assert_eq!(error("\n[[allow]]\nscontext = \"a\n").0, 3);
        assert!(error("[[alow]]\n").1.contains("unknown field `alow`"));
        let base = "[[deny]]\nscontext = \"a\"\ntcontext = \"b\"\nclass = \"c\"\n";
        assert_eq!(
            error(&format!("{base}perms = []\n")),
            (5, "[[deny]]: perms is empty".into())
        );
        assert_eq!(
            error(&format!("{base}perms = [\"read\",\n \" \"]\n")),
            (6, "[[deny]]: perms has an empty name".into())
        );
        assert_eq!(
            error(&format!(
                "{base}perms = [\"read\"]\nwith_booleans = {{ b = 1 }}\n"
            ))
            .0,
            6
        );
        let relabel = "[[relabel]]\nscontext = \"a\"\ntcontext = \"b\"\nclass = \"c\"\nexpect = \"d\"\nobject_name = \"x\"\n";
        assert_eq!(
            error(relabel),
            (
                6,
                "[[relabel]]: object_name is for [[create]] (filename transitions) only".into()
            )
        );
        assert_eq!(error("# nothing\n").0, 0);
        // The first problem in the file's order, whatever the kinds' order in the reader.
        assert_eq!(error(&format!("{base}perms = []\n{relabel}")).0, 5);
        assert_eq!(error(&format!("{relabel}{base}perms = []\n")).0, 6);
    }
}
