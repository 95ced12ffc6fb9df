//! A policy module of allow rules for a log's denials, as audit2allow writes it (sepolgen's
//! policygen and output modules): denials grouped by source type, target type, class and
//! verdict, their permissions merged; rules sorted by source, target and class (a stable sort,
//! so rules for one triple keep the order their verdicts first appeared in); a `#=====` header
//! per source type; the `#!!!!` notes audit2allow writes for denials the current policy already
//! allows or dontaudits, that a boolean would allow, or that a constraint forbids; with a module
//! name, `module NAME 1.0;` and a `require` block of the types and class permissions used.

use std::collections::BTreeSet;

use crate::audit::context_type;
use crate::explain::{Verdict, Why};
/// The rule text for one denial (used by `explain` as well: it lives below both).
pub use crate::rule::rule_text;
use crate::rule::{rule_line, space_set};

/// How to write the module.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `module NAME 1.0;` and a require block (audit2allow's `-m NAME`).
    pub module: Option<String>,
    /// `dontaudit` rules instead of `allow` rules (audit2allow's `-D`).
    pub dontaudit: bool,
    /// For denials a boolean would allow, the `setsebool` that would, instead of a rule.
    pub boolean_hints: bool,
}

/// One rule: the denials of one (source type, target type, class, verdict), merged.
struct Entry<'a> {
    source: String,
    target: String,
    class: String,
    perms: BTreeSet<String>,
    /// The first denial's verdict: later ones of the same kind merge into it, as audit2allow's
    /// AccessVectorSet keeps the first access vector's data.
    verdict: &'a Verdict,
}

/// The module for `denials` (each record's source and target contexts, class and permissions,
/// with its explanation), in input order. Granted records are the caller's to leave out.
pub fn module<'a, I>(denials: I, opts: &Options) -> String
where
    I: IntoIterator<Item = (&'a str, &'a str, &'a str, &'a [String], &'a Why)>,
{
    let mut entries: Vec<Entry<'a>> = Vec::new();
    for (scontext, tcontext, class, perms, why) in denials {
        let (source, mut target) = (
            context_type(scontext).to_string(),
            context_type(tcontext).to_string(),
        );
        // As sepolgen's AVRule: an access to the source's own type is written `self`.
        if target == source {
            target = "self".into();
        }
        let same = |e: &&mut Entry<'a>| {
            e.source == source
                && e.target == target
                && e.class == class
                && e.verdict.name() == why.verdict.name()
        };
        if let Some(e) = entries.iter_mut().find(same) {
            e.perms.extend(perms.iter().cloned());
            continue;
        }
        // audit2allow keeps its accesses in nested dictionaries (source, then target, then class
        // and verdict), so a new entry goes after the last of its source and target, else after
        // the last of its source: the order its require block lists classes in.
        let at = match entries
            .iter()
            .rposition(|e| e.source == source && e.target == target)
        {
            Some(i) => i + 1,
            None => entries
                .iter()
                .rposition(|e| e.source == source)
                .map_or(entries.len(), |i| i + 1),
        };
        entries.insert(
            at,
            Entry {
                source,
                target,
                class: class.to_string(),
                perms: perms.iter().cloned().collect(),
                verdict: &why.verdict,
            },
        );
    }
    let mut out = String::from("\n");
    if let Some(name) = &opts.module {
        out.push_str(&format!("module {name} 1.0;\n\n"));
        out.push_str(&require(&entries));
    }
    entries.sort_by(|a, b| (&a.source, &a.target, &a.class).cmp(&(&b.source, &b.target, &b.class)));
    out.push('\n');
    let mut current: Option<&str> = None;
    for e in &entries {
        if current != Some(e.source.as_str()) {
            if current.is_some() {
                out.push('\n');
            }
            out.push_str(&format!("#============= {} ==============\n", e.source));
            current = Some(&e.source);
        }
        let perms: Vec<&str> = e.perms.iter().map(String::as_str).collect();
        if let (true, Verdict::Boolean(fixes)) = (opts.boolean_hints, e.verdict) {
            out.push_str(&format!(
                "\n#!!!! {} instead of this rule:\n",
                if fixes.len() > 1 {
                    "Any one of these booleans would allow it"
                } else {
                    "This boolean would allow it"
                }
            ));
            for f in fixes {
                out.push_str(&format!(
                    "# setsebool -P {} {}\n",
                    f.name,
                    u8::from(f.value)
                ));
            }
            out.push_str(&format!(
                "# {}\n",
                rule_line("allow", &e.source, &e.target, &e.class, &perms)
            ));
            continue;
        }
        out.push_str(&note(e.verdict));
        out.push_str(&rule_line(
            if opts.dontaudit { "dontaudit" } else { "allow" },
            &e.source,
            &e.target,
            &e.class,
            &perms,
        ));
        out.push('\n');
    }
    out
}

/// The `#!!!!` lines audit2allow writes above a rule, each after an empty line.
fn note(v: &Verdict) -> String {
    match v {
        Verdict::Allowed => "\n#!!!! This avc is allowed in the current policy\n".into(),
        Verdict::Dontaudit => "\n#!!!! This avc has a dontaudit rule in the current policy\n".into(),
        Verdict::Boolean(fixes) => match fixes.as_slice() {
            [one] => format!("\n#!!!! This avc can be allowed using the boolean '{}'\n", one.name),
            _ => format!("\n#!!!! This avc can be allowed using one of the these booleans:\n#     {}\n", fixes.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")),
        },
        Verdict::Constraint(r) => format!(
            "\n#!!!! This avc is a constraint violation.  You would need to modify the attributes of either the source or target types to allow this access.\n#Constraint rule: \n#\t{r}\n"
        ),
        Verdict::Te | Verdict::Role { .. } | Verdict::Bounds { .. } => String::new(),
    }
}

/// The require block: every type the rules name, sorted, then each class with the permissions
/// the rules use, in the order the classes first appear.
fn require(entries: &[Entry<'_>]) -> String {
    let types: BTreeSet<&str> = entries
        .iter()
        .flat_map(|e| [e.source.as_str(), e.target.as_str()])
        .filter(|t| *t != "self")
        .collect();
    let mut classes: Vec<(&str, BTreeSet<&str>)> = Vec::new();
    for e in entries {
        let perms = e.perms.iter().map(String::as_str);
        match classes.iter_mut().find(|(c, _)| *c == e.class) {
            Some((_, p)) => p.extend(perms),
            None => classes.push((&e.class, perms.collect())),
        }
    }
    let mut out = String::from("require {\n");
    for t in types {
        out.push_str(&format!("\ttype {t};\n"));
    }
    for (c, perms) in classes {
        let perms: Vec<&str> = perms.into_iter().collect();
        out.push_str(&format!("\tclass {c} {};\n", space_set(&perms)));
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn why(verdict: Verdict) -> Why {
        Why {
            verdict,
            denied: Vec::new(),
            rule: String::new(),
        }
    }

    #[test]
    fn grouped_merged_sorted_as_audit2allow() {
        let te = why(Verdict::Te);
        let b = why(Verdict::Boolean(vec![crate::explain::BooleanFix {
            name: "b1".into(),
            value: true,
        }]));
        let read = vec!["read".to_string()];
        let write_open = vec!["write".to_string(), "open".to_string()];
        let connect = vec!["name_connect".to_string()];
        let s = "system_u:system_r:httpd_t:s0";
        let recs: Vec<(&str, &str, &str, &[String], &Why)> = vec![
            (
                "system_u:system_r:sshd_t:s0",
                "system_u:object_r:shadow_t:s0",
                "dir",
                &read,
                &te,
            ),
            (s, "system_u:object_r:shadow_t:s0", "file", &read, &te),
            (s, "system_u:object_r:port_t:s0", "tcp_socket", &connect, &b),
            (s, "system_u:object_r:shadow_t:s0", "file", &write_open, &te),
            (s, s, "process", &read, &te),
        ];
        let m = module(recs.clone(), &Options::default());
        let want = "\n\n#============= httpd_t ==============\n\n#!!!! This avc can be allowed using the boolean 'b1'\nallow httpd_t port_t:tcp_socket name_connect;\nallow httpd_t self:process read;\nallow httpd_t shadow_t:file { open read write };\n\n#============= sshd_t ==============\nallow sshd_t shadow_t:dir read;\n";
        assert_eq!(m, want);
        let m = module(
            recs,
            &Options {
                module: Some("local".into()),
                ..Options::default()
            },
        );
        assert!(m.starts_with("\nmodule local 1.0;\n\nrequire {\n\ttype httpd_t;\n\ttype port_t;\n\ttype shadow_t;\n\ttype sshd_t;\n\tclass dir read;\n\tclass file { open read write };\n\tclass tcp_socket name_connect;\n\tclass process read;\n}\n\n#="), "{m}");
    }
}
