//! What the C library's fuzz targets (`check_access`, `has_perm`) share: the policy both
//! libseaccess and the oracle load, the contexts they ask with, and a quiet log.

use std::ffi::{c_char, c_int, CString};

use seaccess_security::{Generation, SecurityServer};
use seaccess_types::Sid;

extern "C" {
    fn selinux_set_callback(
        kind: c_int,
        cb: unsafe extern "C" fn(c_int, *const c_char, ...) -> c_int,
    );
}

/// The log callback: the records (a denial's, an unknown name's) are not the test's.
unsafe extern "C" fn quiet(_kind: c_int, _fmt: *const c_char, _args: ...) -> c_int {
    0
}

/// selinux_set_callback's SELINUX_CB_LOG.
const SELINUX_CB_LOG: c_int = 0;

/// The policy (`SEACCESS_FUZZ_POLICY`, else the example policy): its path, for reloads, and the
/// security server the oracle asks. libseaccess is pointed at the same file and told to log
/// nothing; call before its first call, before any thread of its own exists.
pub fn policy() -> (CString, SecurityServer) {
    let path = std::env::var("SEACCESS_FUZZ_POLICY")
        .unwrap_or_else(|_| "../target/policies/example.33".into());
    std::env::set_var("SEACCESS_POLICY", &path);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let server = SecurityServer::from_bytes(&bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
    // SAFETY: a function of the log callback's type, for the process's life.
    unsafe { selinux_set_callback(SELINUX_CB_LOG, quiet) };
    (CString::new(path).unwrap_or_else(|e| panic!("{e}")), server)
}

/// Contexts to ask with: the initial SIDs' own, then each one's user, role and level with every
/// type the policy lets them have (at most 2,000 in all), so that some queries are granted and
/// fill the fast paths.
pub fn contexts(g: &Generation) -> Vec<String> {
    let initial: Vec<String> = (1..=40)
        .filter_map(|s| g.sid_to_context(Sid(s)).ok())
        .collect();
    let mut shapes: Vec<(String, String, String)> = initial
        .iter()
        .filter_map(|c| {
            let mut f = c.splitn(4, ':');
            let (u, r, _t) = (f.next()?, f.next()?, f.next()?);
            let l = f.next().map_or(String::new(), |l| format!(":{l}"));
            Some((u.to_owned(), r.to_owned(), l))
        })
        .collect();
    shapes.sort();
    shapes.dedup();
    let mut pool = initial;
    for (u, r, l) in &shapes {
        for t in g.policy().type_names.by_value.iter() {
            let c = format!("{u}:{r}:{t}{l}");
            if pool.len() < 2000 && g.context_to_sid(&c).is_ok() {
                pool.push(c);
            }
        }
    }
    pool
}
