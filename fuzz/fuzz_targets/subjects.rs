//! Any bytes as a `seaccess mount` subjects file: rules or an error naming the line, never a
//! panic; the rules written back out parse to the same rules (an exe= path names the same
//! file again), and matching never panics.
#![no_main]
use libfuzzer_sys::fuzz_target;
use seaccess_fs::subjects::{CallerInfo, FileId, Match, Subjects};

fuzz_target!(|data: &[u8]| {
    let Ok(s) = Subjects::parse("fuzz", data) else {
        return;
    };
    let mut text = String::new();
    for r in &s.rules {
        let m = match &r.matches {
            Match::Exe(p) => format!("exe={}", p.path),
            Match::Uid(u) => format!("uid={u}"),
            Match::Cgroup(c) => format!("cgroup={c}"),
            Match::Transition => "transition".into(),
            Match::Default => "default".into(),
        };
        text.push_str(&format!("{m} {}\n", r.context));
    }
    let back = Subjects::parse("fuzz", text.as_bytes()).unwrap_or_else(|e| panic!("{e}: {text:?}"));
    assert_eq!(
        s.rules
            .iter()
            .map(|r| (&r.matches, &r.context))
            .collect::<Vec<_>>(),
        back.rules
            .iter()
            .map(|r| (&r.matches, &r.context))
            .collect::<Vec<_>>()
    );
    for who in [
        CallerInfo::default(),
        CallerInfo {
            exe: Some(FileId { dev: 1, ino: 2 }),
            uid: 1001,
            cgroup: Some("/system.slice/a.service".into()),
        },
    ] {
        let _ = s.find(&who);
    }
});
