//! A check by numbers resolves, decides and records under one policy generation, and runs
//! again on the new one when a reload lands in between (crate::kernel::Kernel::with_generation
//! over the engine's retry loop). renumber_a.cil and renumber_b.cil differ only in the order of
//! `file` and `process` in classorder; both allow dom_t `process fork` on itself and nothing on
//! `file`, and `file read` and `process fork` are both bit 0 of their class, so a class number
//! of one policy paired with the other's decision turns a denial into a grant. Each test parks
//! its check between resolving and deciding (crate::park) and reloads the other policy
//! there.
#![allow(clippy::panic, clippy::unwrap_used)]

use seaccess_types::{lock, ClassId};

use crate::avc;
use crate::decision::AvDecisionC;
use crate::lookup::{
    errno, load_test_policy, server_numbers, test_dom_file_read, POLICY_TESTS, TEST_DOM as DOM,
};
use crate::park;
use crate::sid::SecurityId;

/// Whether the reload parked in the check ran (it is taken when it runs).
fn ran() -> bool {
    !park::pending()
}

// selinux_check_access(dom, dom, file, read) with renumber_b loaded between resolving the
// names under renumber_a and deciding: denied, as both policies deny it. A check that took the
// cache's decision of renumber_b for renumber_a's number of `file` (b's `process`) would grant
// `process fork`; one that never took the new generation would not settle.
#[test]
fn selinux_check_access_resolves_again_after_a_reload_in_between() {
    let _p = lock(&POLICY_TESTS);
    let k = load_test_policy("renumber_a.33");
    let file_a = server_numbers(k, "file", "read").unwrap();
    park::park(park::At::Decide, || {
        load_test_policy("renumber_b.33");
    });
    let rc = test_dom_file_read();
    let e = errno();
    assert!(ran(), "the reload did not land in the check");
    let file_b = server_numbers(k, "file", "read").unwrap();
    assert_ne!(file_a.0, file_b.0, "the reload did not renumber file");
    assert_eq!(
        (rc, e),
        (-1, libc::EACCES),
        "file read granted across a reload"
    );
}

// avc_has_perm_noaudit by numbers, renumber_b loaded between resolving the SIDs under
// renumber_a and deciding: the answer is renumber_b's decision for the number passed in (the
// caller's numbers are the current policy's, as on libselinux), of renumber_b's seqno, and the
// cache's: a check that fell back to the older generation's own decision reports its seqno.
#[test]
fn avc_has_perm_decides_in_the_generation_after_a_reload_in_between() {
    let _p = lock(&POLICY_TESTS);
    let k = load_test_policy("renumber_a.33");
    let mut sid: *mut SecurityId = std::ptr::null_mut();
    assert_eq!(
        crate::avc_life::avc_context_to_sid_raw(DOM.as_ptr(), &mut sid),
        0
    );
    let (file, read) = server_numbers(k, "file", "read").unwrap();
    let before = k.server.seqno();
    park::park(park::At::Decide, || {
        load_test_policy("renumber_b.33");
    });
    let mut avd = AvDecisionC::default();
    let rc = avc::avc_has_perm_noaudit(sid, sid, file.0, read.0, std::ptr::null_mut(), &mut avd);
    assert!(ran(), "the reload did not land in the check");
    let g = k.server.snapshot();
    assert_ne!(g.seqno(), before);
    assert_eq!(
        avd.seqno,
        g.seqno().0,
        "decided by a generation before the reload"
    );
    let s = g.context_to_sid(DOM.to_str().unwrap()).unwrap();
    let want = g.compute_av(s, s, ClassId(file.0)).unwrap();
    assert_eq!(avd, AvDecisionC::from(&want));
    let granted = want.allowed.0 & read.0 == read.0;
    assert_eq!(rc == 0, granted, "rc {rc} for {avd:?}");
}

/// Parks a reload of the other renumber policy in this thread's next check, and again in the
/// check's next attempt, `left` times in all: the policy changes under every attempt.
fn storm(left: usize, b: bool) {
    if left == 0 {
        return;
    }
    park::park(park::At::Decide, move || {
        load_test_policy(if b { "renumber_b.33" } else { "renumber_a.33" });
        storm(left - 1, !b);
    });
}

// A check the policy changes under at every attempt gives up after the engine's RETRIES and is
// refused (EACCES), never answered from a generation it did not resolve in: `process fork`,
// which both policies allow, is refused; with the storm over, it is granted again.
#[test]
fn a_check_that_never_settles_is_refused() {
    let _p = lock(&POLICY_TESTS);
    load_test_policy("renumber_a.33");
    let fork = || {
        avc::selinux_check_access(
            DOM.as_ptr(),
            DOM.as_ptr(),
            c"process".as_ptr(),
            c"fork".as_ptr(),
            std::ptr::null_mut(),
        )
    };
    storm(seaccess_engine::RETRIES + 1, true);
    let rc = fork();
    let e = errno();
    // The last reload parked waits still: no attempt was left to run it.
    assert!(park::pending(), "fewer attempts than the engine's RETRIES");
    park::unpark();
    assert_eq!(
        (rc, e),
        (-1, libc::EACCES),
        "an unsettled check was answered"
    );
    assert_eq!(fork(), 0, "process fork refused once the policy stays");
}
