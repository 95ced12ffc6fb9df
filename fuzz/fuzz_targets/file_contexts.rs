//! Any bytes as a file_contexts (text, libselinux's `.bin` or seaccess's compiled form) and as a
//! `.subs` file: a set or an error naming where, never a panic or a hang; a set that opens
//! answers lookups, and its compiled form loads back to the same answers.
#![no_main]
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use seaccess_label::{compiled, FileContexts, FileKind, Subs};

const PATHS: &[&[u8]] = &[
    b"/",
    b"/etc/passwd",
    b"/usr/lib/x.so",
    b"//a//b/",
    b"/home/u/.ssh",
    b"/a\n",
];

fuzz_target!(|data: &[u8]| {
    let subs = Subs::parse(data);
    for p in PATHS {
        let _ = subs.apply(p);
    }
    let Ok(fc) = FileContexts::from_bytes(Path::new("fuzz"), data) else {
        return;
    };
    let back = compiled::from_bytes(Path::new("fuzz.compiled"), &compiled::to_bytes(&fc))
        .unwrap_or_else(|e| panic!("{e}"));
    for p in PATHS {
        for k in FileKind::ALL {
            let a = fc.context(p, k).map_err(|e| e.to_string());
            let b = back.context(p, k).map_err(|e| e.to_string());
            assert_eq!(a.as_ref().ok(), b.as_ref().ok(), "{p:?} as {k:?}");
        }
        let _ = fc.partial_match(p);
        let _ = fc.lookup_best_match(p, &[b"/etc/x", b"/usr"], FileKind::File);
    }
});
