//! Any bytes as a `seaccess test` cases file: cases or an error naming the file and a line of
//! the text (or none), never a panic; every case's lines lie within the text.
#![no_main]
use libfuzzer_sys::fuzz_target;
use seaccess_tools::cases::{self, Query};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let lines = text.split('\n').count();
    let within = |l: usize| (1..=lines).contains(&l);
    match cases::read("f.toml", text) {
        Ok(s) => {
            assert!(!s.cases.is_empty());
            for c in &s.cases {
                assert!(within(c.line), "case line {} of {lines}", c.line);
                assert!(c.booleans.iter().all(|(b, _)| within(b.line)));
                let spots: Vec<_> = match &c.query {
                    Query::Access {
                        scontext,
                        tcontext,
                        class,
                        perms,
                    } => [scontext, tcontext, class]
                        .into_iter()
                        .chain(perms)
                        .collect(),
                    Query::Label {
                        scontext,
                        tcontext,
                        class,
                        name,
                        expect,
                    } => [scontext, tcontext, class, expect]
                        .into_iter()
                        .chain(name)
                        .collect(),
                    Query::Neverallow {
                        source,
                        target,
                        classes,
                        perms,
                    } => source
                        .iter()
                        .chain(target)
                        .chain(classes)
                        .chain(perms)
                        .collect(),
                };
                assert!(spots.iter().all(|s| within(s.line)), "{c:?}");
            }
        }
        Err(seaccess_tools::ToolsError::Cases { file, line, .. }) => {
            assert_eq!(file, "f.toml");
            assert!(line == 0 || within(line), "error line {line} of {lines}");
        }
        Err(e) => panic!("not a cases error: {e:?}"),
    }
});
