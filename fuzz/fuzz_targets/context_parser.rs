//! Any text as a context against the bundled example policy: a SID or an error, never a panic;
//! a context that parses prints back to a string that parses to the same SID.
#![no_main]
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use seaccess_security::SecurityServer;

static SERVER: OnceLock<SecurityServer> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let server = SERVER.get_or_init(|| {
        let path = std::env::var("SEACCESS_FUZZ_POLICY")
            .unwrap_or_else(|_| "../target/policies/example.33".into());
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        SecurityServer::from_bytes(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"))
    });
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let g = server.snapshot();
    if let Ok(sid) = g.context_to_sid(text) {
        let back = g.sid_to_context(sid).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            g.context_to_sid(&back).ok(),
            Some(sid),
            "{text:?} printed as {back:?}"
        );
    }
});
