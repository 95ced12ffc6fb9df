//! Setting and reading a pending boolean by name while another thread reloads between two
//! policies that number their booleans differently: the name must be resolved under the
//! same policy as the pending values it indexes, or the write lands on another boolean.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use seaccess_testkit::*;

/// booleans.cil with five more booleans declared first (names sorting first too), so that
/// t1, t2, f1, f2 and f3 take other values than in booleans.cil.
fn renumbered() -> std::path::PathBuf {
    compile_variant("booleans", "booleans-renumbered", 33, |src| {
        let extra = "(boolean a0 false)\n(boolean a1 false)\n(boolean a2 false)\n(boolean a3 false)\n(boolean a4 false)\n";
        src.replacen("(boolean t1 true)", &format!("{extra}(boolean t1 true)"), 1)
    })
}

#[test]
fn set_boolean_racing_reload_writes_the_named_boolean() {
    let _deadline = seaccess_testkit::deadline(
        "set_boolean_racing_reload_writes_the_named_boolean",
        std::time::Duration::from_secs(60),
    );
    let a = std::fs::read(compile("booleans", 33)).unwrap();
    let b = std::fs::read(renumbered()).unwrap();
    let s = Arc::new(load(&compile("booleans", 33)));
    {
        // The premise: the two policies number f1 differently.
        let other = load(&renumbered());
        let pos = |bools: Vec<(String, bool)>| bools.iter().position(|(n, _)| n == "f1").unwrap();
        assert_ne!(
            pos(s.snapshot().booleans()),
            pos(other.snapshot().booleans())
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    let reloader = {
        let (s, stop) = (s.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut n = 0u32;
            while !stop.load(Ordering::Relaxed) {
                s.reload(if n & 1 == 0 { &b } else { &a }).unwrap();
                n += 1;
            }
            n
        })
    };
    // Nothing commits, so every boolean's pending value is its default unless it is set: f1
    // (default false) is set to true over and over; no other boolean may change, and f1 reads
    // back true unless a reload (which resets pending values to the current ones, as the
    // kernel's selinuxfs does) came in between.
    let defaults = [
        ("t1", true),
        ("t2", true),
        ("f2", false),
        ("f3", false),
        ("a0", false),
        ("a1", false),
        ("a2", false),
        ("a3", false),
        ("a4", false),
    ];
    let mut wrong = Vec::new();
    let mut checked = 0;
    let t0 = std::time::Instant::now();
    while t0.elapsed() < std::time::Duration::from_secs(3) && wrong.len() < 10 {
        let before = s.seqno();
        s.set_boolean("f1", true).unwrap();
        let v = s.pending_boolean("f1").unwrap();
        if !v && s.seqno() == before {
            wrong.push("f1 read back false with no reload in between".to_string());
        }
        for (name, d) in defaults {
            if let Ok(v) = s.pending_boolean(name) {
                if v != d {
                    wrong.push(format!("{name} is {v}, never set"));
                }
            }
        }
        checked += 1;
    }
    stop.store(true, Ordering::Relaxed);
    let reloads = reloader.join().unwrap();
    assert!(reloads > 10, "only {reloads} reloads");
    assert!(
        wrong.is_empty(),
        "after {checked} rounds and {reloads} reloads: {wrong:#?}"
    );
}
