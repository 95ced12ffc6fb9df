//! JUnit XML for the outcomes of one or more cases files, the report CI systems read: one
//! `testsuite` per file, one `testcase` per case (its kind as the classname), a `failure` with
//! the report for each case that failed.

use super::run::Outcome;

/// The JUnit XML document for `files`: each file's name and its cases' outcomes.
pub fn junit(files: &[(String, Vec<Outcome>)]) -> String {
    let total: usize = files.iter().map(|(_, o)| o.len()).sum();
    let failed: usize = files
        .iter()
        .map(|(_, o)| o.iter().filter(|c| !c.passed).count())
        .sum();
    let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    x += &format!("<testsuites name=\"seaccess test\" tests=\"{total}\" failures=\"{failed}\" errors=\"0\">\n");
    for (file, outcomes) in files {
        let f = outcomes.iter().filter(|c| !c.passed).count();
        x += &format!(
            "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{f}\" errors=\"0\" skipped=\"0\">\n",
            escape(file),
            outcomes.len()
        );
        for o in outcomes {
            let head = format!(
                "    <testcase name=\"{}\" classname=\"{}\" file=\"{}\" line=\"{}\"",
                escape(&o.title),
                o.kind.as_str(),
                escape(file),
                o.line
            );
            if o.passed {
                x += &format!("{head}/>\n");
                continue;
            }
            let message = format!("expected {}; got {}", o.expected, o.got);
            let mut body = format!("{file}:{}: {}: {message}\n", o.line, o.title);
            for d in &o.details {
                body += &format!("  {d}\n");
            }
            x += &format!(
                "{head}>\n      <failure message=\"{}\" type=\"{}\">{}</failure>\n    </testcase>\n",
                escape(&message),
                o.kind.as_str(),
                escape(&body)
            );
        }
        x += "  </testsuite>\n";
    }
    x += "</testsuites>\n";
    x
}

/// Text as XML character data or an attribute value: the five special characters escaped, line
/// breaks and tabs kept as references (attribute values would fold them into spaces), and the
/// characters XML 1.0 does not allow replaced by U+FFFD.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\t' => out.push_str("&#9;"),
            '\r' => out.push_str("&#13;"),
            c if allowed(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// XML 1.0's Char production.
fn allowed(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::Kind;

    #[test]
    fn special_and_forbidden_characters_escaped() {
        assert_eq!(
            escape("a<b>&\"c'\n\t\u{1}\u{FFFE}é"),
            "a&lt;b&gt;&amp;&quot;c&apos;&#10;&#9;\u{FFFD}\u{FFFD}é"
        );
        let o = |passed: bool| Outcome {
            kind: Kind::Deny,
            name: Some("<x>".into()),
            title: "<x>".into(),
            line: 3,
            passed,
            expected: "denied write".into(),
            got: "allowed write".into(),
            details: vec!["write: allowed".into()],
            violations: Vec::new(),
        };
        let x = junit(&[("a&b.toml".into(), vec![o(true), o(false)])]);
        assert!(
            x.contains("<testsuites name=\"seaccess test\" tests=\"2\" failures=\"1\""),
            "{x}"
        );
        assert!(
            x.contains("<testsuite name=\"a&amp;b.toml\" tests=\"2\" failures=\"1\""),
            "{x}"
        );
        assert!(x.contains("<testcase name=\"&lt;x&gt;\" classname=\"deny\" file=\"a&amp;b.toml\" line=\"3\"/>"), "{x}");
        assert!(x.contains("<failure message=\"expected denied write; got allowed write\" type=\"deny\">a&amp;b.toml:3: &lt;x&gt;: expected denied write; got allowed write&#10;  write: allowed&#10;</failure>"), "{x}");
    }
}
