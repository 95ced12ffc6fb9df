//! Any byte string: the reader returns a policy or an error, never panics; a policy it accepts
//! must also be accepted by the security server and answer a query without panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = seaccess_policy::read_policy(data) {
        let server = seaccess_security::SecurityServer::new(p);
        let g = server.snapshot();
        let n = g.policy().ocontexts.initial_sids.len() as u32;
        for s in 1..=n.min(4) {
            for c in 1..=(g.policy().classes.len() as u16).min(4) {
                let _ = g.compute_av(
                    seaccess_types::Sid(s),
                    seaccess_types::Sid(1),
                    seaccess_types::ClassId(c),
                );
                let _ = g.compute_create(
                    seaccess_types::Sid(s),
                    seaccess_types::Sid(1),
                    seaccess_types::ClassId(c),
                    Some("x"),
                );
            }
        }
    }
});
