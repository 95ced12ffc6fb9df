//! selabel_partial_match's question for one expression: does `^REGEX$` match this path, or
//! could it match a longer path that starts with it (PCRE2_PARTIAL_SOFT)? Restorecon asks it to
//! decide whether a walk must enter a directory.
//!
//! PCRE2's partial matching is not in the safe PCRE2 binding, so the expression is built a
//! second time as a minimized DFA (regex-automata, bytes, no Unicode, `.` matching newline as
//! PCRE2_DOTALL does) and the path is fed to it: a dead state means no path starting with this
//! one can match; the end-of-input transition says whether it matches as it is. Minimizing
//! merges every state from which no match is reachable into the dead state, so "not dead" is
//! exactly "some continuation matches". PCRE2's `$` (end, or before a final newline) is written
//! `\n?\z`. The DFA's syntax is PCRE2's for the constructs file_contexts use (classes, groups,
//! alternation inside groups, counted repetition, escapes); an expression it cannot read, or one
//! with an alternation outside any group, is an error, never a guess.

use regex_automata::dfa::{dense, Automaton, StartKind};
use regex_automata::util::{start, syntax};
use regex_automata::Anchored;

pub(crate) struct PartialDfa {
    dfa: dense::DFA<Vec<u32>>,
}

/// What a path is to an expression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Partial {
    Match,
    Prefix,
    No,
}

impl PartialDfa {
    pub(crate) fn build(regex: &str) -> Result<PartialDfa, String> {
        let pattern = format!("^(?:{regex})\\n?\\z");
        let dfa = dense::Builder::new()
            .syntax(
                syntax::Config::new()
                    .unicode(false)
                    .utf8(false)
                    .dot_matches_new_line(true),
            )
            .configure(
                dense::Config::new()
                    .minimize(true)
                    .start_kind(StartKind::Anchored)
                    .dfa_size_limit(Some(8 << 20))
                    .determinize_size_limit(Some(8 << 20)),
            )
            .build(&pattern)
            .map_err(|e| format!("cannot decide partial matches of this expression: {e}"))?;
        Ok(PartialDfa { dfa })
    }

    pub(crate) fn run(&self, key: &[u8]) -> Result<Partial, String> {
        let cfg = start::Config::new().anchored(Anchored::Yes);
        let mut sid = self.dfa.start_state(&cfg).map_err(|e| e.to_string())?;
        for &b in key {
            sid = self.dfa.next_state(sid, b);
            if self.dfa.is_dead_state(sid) {
                return Ok(Partial::No);
            }
        }
        if self.dfa.is_match_state(self.dfa.next_eoi_state(sid)) {
            return Ok(Partial::Match);
        }
        // An empty path inspects nothing, and PCRE2 reports no partial match for it.
        Ok(if key.is_empty() {
            Partial::No
        } else {
            Partial::Prefix
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(re: &str, key: &str) -> Partial {
        PartialDfa::build(re)
            .and_then(|d| d.run(key.as_bytes()))
            .unwrap_or(Partial::No)
    }

    #[test]
    fn partial_follows_pcre2_soft() {
        assert_eq!(p("/usr/lib(/.*)?", "/usr/lib/x"), Partial::Match);
        assert_eq!(p("/usr/lib(/.*)?", "/usr/li"), Partial::Prefix);
        assert_eq!(p("/usr/lib(/.*)?", "/usr/lix"), Partial::No);
        assert_eq!(p("/abc/efg/(/.*)?", "/abc"), Partial::Prefix);
        assert_eq!(p("/var/[^/]*\\.log", "/var/a/b"), Partial::No);
        assert_eq!(p("/var/[^/]*\\.log", "/var/x.lo"), Partial::Prefix);
        assert_eq!(p("/etc/passwd", "/etc/passwd\n"), Partial::Match);
        // A class nothing can satisfy leaves no continuation.
        assert_eq!(p("/x[^\\x00-\\xff]", "/x"), Partial::No);
    }
}
