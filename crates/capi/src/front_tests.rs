//! The per-thread front (crate::front) answers only what the cache would answer now: each test
//! fills it with a real grant, changes the world the way a program or an administrator can,
//! and asks again. front_a.cil and front_b.cil differ only in the order of `file` and
//! `process` in classorder; both allow dom_t `process fork` on itself (auditing nothing) and
//! nothing on `file`, and `file read` and `process fork` are both bit 0 of their class: a front
//! entry for a's number of `process` that survived a reload to b would grant `file read`,
//! which b denies.
#![allow(clippy::panic, clippy::unwrap_used)]

use seaccess_types::{lock, AccessVector, AvDecision, Seqno};

use crate::avc;
use crate::avc_life::{avc_cache_stats, avc_context_to_sid_raw, AvcCacheStats};
use crate::compute::security_setenforce;
use crate::decision::AvDecisionC;
use crate::front;
use crate::kernel::Kernel;
use crate::lookup::{
    errno, load_test_policy, server_numbers, test_dom_file_read, POLICY_TESTS, TEST_DOM as DOM,
};
use crate::park;
use crate::sid::SecurityId;

fn dom() -> *mut SecurityId {
    let mut sid: *mut SecurityId = std::ptr::null_mut();
    assert_eq!(avc_context_to_sid_raw(DOM.as_ptr(), &mut sid), 0);
    sid
}

/// avc_has_perm(dom, dom, class, perm): 0, or -1 and errno.
fn check(s: *mut SecurityId, class: u16, perm: u32) -> (i32, i32) {
    crate::ffi::set_errno(0);
    let rc = avc::avc_has_perm(
        s,
        s,
        class,
        perm,
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    (rc, if rc == 0 { 0 } else { errno() })
}

/// The lookups, hits and misses counted between `before` and `after`: libselinux 3.4's
/// avc_cache_stats reports hits and misses in its cav_ fields (its entry_hits is always 0).
fn counted(before: &AvcCacheStats, after: &AvcCacheStats) -> (u32, u32, u32) {
    (
        after.cav_lookups - before.cav_lookups,
        after.cav_hits - before.cav_hits,
        after.cav_misses - before.cav_misses,
    )
}

fn stats() -> AvcCacheStats {
    let mut s = AvcCacheStats::default();
    avc_cache_stats(&mut s);
    s
}

/// front_a loaded and dom's `process fork` on itself asked until this thread's front holds
/// it: the SID, and a's numbers for `process` and `fork`.
fn warm() -> (&'static Kernel, *mut SecurityId, u16, u32) {
    let k = load_test_policy("front_a.33");
    let s = dom();
    let (class, perm) = server_numbers(k, "process", "fork").unwrap();
    for _ in 0..3 {
        assert_eq!(
            check(s, class.0, perm.0),
            (0, 0),
            "process fork under front_a"
        );
    }
    assert!(
        front::holds(s, s, class.0, perm.0),
        "the front was never filled"
    );
    (k, s, class.0, perm.0)
}

// The third ask is answered by the front, counted as a hit of the cache and nothing else.
#[test]
fn a_repeated_grant_comes_from_the_front_and_counts_as_one_hit() {
    let _p = lock(&POLICY_TESTS);
    let (_, s, class, perm) = warm();
    assert!(front::hit(s, s, class, perm), "the front does not answer");
    let before = stats();
    assert_eq!(check(s, class, perm), (0, 0));
    assert_eq!(
        counted(&before, &stats()),
        (1, 1, 0),
        "a front hit is one lookup and one hit"
    );
    // An empty request is never a hit: enforcing refuses it.
    assert!(!front::hit(s, s, class, 0));
    assert_eq!(check(s, class, 0).0, -1);
}

// A reload moves the cache's stamp: the front's grant of a's `process fork` is not used, and
// the same numbers now mean b's `file read`, denied.
#[test]
fn a_reload_leaves_the_front_unused() {
    let _p = lock(&POLICY_TESTS);
    let (_, s, class, perm) = warm();
    load_test_policy("front_b.33");
    assert!(
        !front::hit(s, s, class, perm),
        "the front answered after a reload"
    );
    assert_eq!(
        check(s, class, perm),
        (-1, libc::EACCES),
        "a's grant used under b"
    );
}

// Three keys whose first place is one entry all stay held: the one it held moves to its
// second place (when both ways were one set's, the third fill evicted the first key, and a
// program cycling through the three missed on every check). The other two keys are pointers
// no SID has: a fill and `holds` compare them, never read them.
#[test]
fn three_keys_sharing_a_first_place_are_all_held() {
    let _p = lock(&POLICY_TESTS);
    let (k, s, class, perm) = warm();
    let (first, second) = front::places(s as u64, s as u64, class);
    let others: Vec<u64> = (1..u64::from(u32::MAX))
        .map(|i| i << 7)
        .filter(|&p| {
            let (f, o) = front::places(p, p, class);
            f == first && o != second
        })
        .take(2)
        .collect();
    assert_eq!(others.len(), 2, "no keys sharing the first place");
    let mut seconds: Vec<usize> = others
        .iter()
        .map(|&p| front::places(p, p, class).1)
        .collect();
    seconds.dedup();
    assert_eq!(
        seconds.len(),
        2,
        "the two keys share their second place too"
    );
    let at = front::stamp(&k.avc);
    let mut d = AvDecision::deny_all(Seqno(at.seqno()));
    d.allowed = AccessVector(perm);
    d.decided = AccessVector::ALL;
    d.auditdeny = AccessVector::NONE;
    for &p in &others {
        let p = p as *const SecurityId;
        front::fill(&k.avc, at, p, p, class, &d);
        assert!(front::holds(p, p, class, perm), "a fill was not held");
    }
    assert!(
        front::holds(s, s, class, perm),
        "the first key was evicted by two others of its place"
    );
    assert!(
        front::hit(s, s, class, perm),
        "the first key is held but not answered"
    );
    let p = others[0] as *const SecurityId;
    assert!(
        front::holds(p, p, class, perm),
        "the second key was evicted by the third"
    );
}

// The attacker's order: a check reads the stamp, finds a's grant in the cache, and the reload
// to b lands before the fill stores it. The entry is stored under a's stamp and never used:
// the next check is b's denial. (With the stamp read after the lookup, the entry would carry
// b's stamp and grant `file read`.)
#[test]
fn a_reload_between_a_fills_lookup_and_its_store_leaves_nothing_usable() {
    let _p = lock(&POLICY_TESTS);
    let k = load_test_policy("front_a.33");
    let s = dom();
    let (class, perm) = server_numbers(k, "process", "fork").unwrap();
    // The cache learns the decision the full way (the front is filled from a cache hit).
    assert_eq!(check(s, class.0, perm.0), (0, 0));
    park::park(park::At::Fill, || {
        load_test_policy("front_b.33");
    });
    assert_eq!(
        check(s, class.0, perm.0),
        (0, 0),
        "decided under a, before the reload"
    );
    assert!(!park::pending(), "the reload did not land in the fill");
    assert!(
        front::holds(s, s, class.0, perm.0),
        "the fill stored nothing"
    );
    assert_eq!(
        check(s, class.0, perm.0),
        (-1, libc::EACCES),
        "a grant stored across a reload was used"
    );
}

// A permissive grant remembered on the front is revoked by the switch back to enforcing.
#[test]
fn enforcing_revokes_a_permissive_grant_on_the_front() {
    let _p = lock(&POLICY_TESTS);
    let k = load_test_policy("front_a.33");
    let s = dom();
    let (class, perm) = server_numbers(k, "file", "read").unwrap();
    assert_eq!(
        check(s, class.0, perm.0),
        (-1, libc::EACCES),
        "file read enforcing"
    );
    assert_eq!(security_setenforce(0), 0);
    for _ in 0..3 {
        assert_eq!(check(s, class.0, perm.0), (0, 0), "file read permissive");
    }
    let held = front::holds(s, s, class.0, perm.0);
    assert_eq!(security_setenforce(1), 0);
    assert!(held, "the permissive grant never reached the front");
    assert_eq!(
        check(s, class.0, perm.0),
        (-1, libc::EACCES),
        "a permissive grant outlived enforcing"
    );
}

/// A grant the policy never gave, of the cache's current stamp: `perm` and the bit above it
/// (returned too), every permission decided, nothing audited. A test that fills a front with
/// it drops it with the stamp (front::invalidate) before any real check can find it.
fn made_up_grant(k: &Kernel, perm: u32) -> (front::Stamp, AvDecision, u32) {
    let other = perm << 1;
    let at = front::stamp(&k.avc);
    let d = AvDecision {
        allowed: AccessVector(perm | other),
        ..AvDecision::deny_all(Seqno(at.seqno()))
    };
    (at, d, other)
}

// A check that finds its thread's front busy (a signal handler's, interrupting a check on the
// same thread) neither reads it nor writes it.
#[test]
fn a_check_inside_a_busy_front_neither_reads_nor_writes_it() {
    let _p = lock(&POLICY_TESTS);
    let (k, s, class, perm) = warm();
    let (at, made_up, other) = made_up_grant(k, perm);
    front::set_busy(true);
    let hit = front::hit(s, s, class, perm);
    front::fill(&k.avc, at, s, s, class, &made_up);
    let wrote = front::holds(s, s, class, perm | other);
    front::set_busy(false);
    assert!(!hit, "a busy front was read");
    assert!(!wrote, "a busy front was written");
    // Not busy, the same fill is stored (so the test above could see it): the made-up grant is
    // then dropped with the stamp, as no real check must find it.
    front::fill(&k.avc, at, s, s, class, &made_up);
    let stored = front::holds(s, s, class, perm | other);
    front::invalidate(&k.avc);
    assert!(stored, "a fill stores nothing: the test proves nothing");
    assert!(!front::hit(s, s, class, perm | other));
}

// A front keeps only a decision of its stamp's seqno that audits no grant and decides every
// permission (front::keeps, the rule of both tables): a made-up grant breaking any one of
// these is not stored, and the same grant keeping them all is.
#[test]
fn a_front_keeps_only_a_whole_silent_decision_of_its_stamp() {
    let _p = lock(&POLICY_TESTS);
    let (k, s, class, perm) = warm();
    let (at, made_up, other) = made_up_grant(k, perm);
    for (d, what) in [
        (
            AvDecision {
                auditallow: AccessVector(other),
                ..made_up
            },
            "a decision auditing a grant",
        ),
        (
            AvDecision {
                decided: AccessVector(perm | other),
                ..made_up
            },
            "a decision deciding some permissions",
        ),
        (
            AvDecision {
                seqno: Seqno(at.seqno().wrapping_add(1)),
                ..made_up
            },
            "a decision of another seqno",
        ),
    ] {
        front::fill(&k.avc, at, s, s, class, &d);
        assert!(!front::holds(s, s, class, perm | other), "{what} was kept");
    }
    front::fill(&k.avc, at, s, s, class, &made_up);
    let stored = front::holds(s, s, class, perm | other);
    front::invalidate(&k.avc);
    assert!(stored, "a fill stores nothing: the test proves nothing");
}

// avc_has_perm_noaudit answered by the front reports the decision the cache's way reports:
// the same allowed, decided, auditallow, auditdeny, seqno and flags.
#[test]
fn noaudit_from_the_front_reports_the_caches_decision() {
    let _p = lock(&POLICY_TESTS);
    let (_, s, class, perm) = warm();
    let ask = || {
        let mut avd = AvDecisionC::default();
        let rc = avc::avc_has_perm_noaudit(s, s, class, perm, std::ptr::null_mut(), &mut avd);
        (rc, avd)
    };
    assert!(
        front::decision(s, s, class, perm).is_some(),
        "the front does not answer"
    );
    let from_front = ask();
    // The cache's way: the front's stamp moved (nothing else), then asked once.
    let k = crate::state::kernel().unwrap();
    front::invalidate(&k.avc);
    assert!(front::decision(s, s, class, perm).is_none());
    let from_cache = ask();
    assert_eq!(from_front.0, 0);
    assert_eq!(
        AvDecisionC {
            seqno: 0,
            ..from_front.1
        },
        AvDecisionC {
            seqno: 0,
            ..from_cache.1
        }
    );
    assert_eq!(from_front.1.seqno, from_cache.1.seqno, "the seqno");
    assert_ne!(from_front.1.allowed & perm, 0);
}

// selinux_check_access may resolve its names from a memo of an older generation (its numbers
// then paired only with a decision of that generation). The front holds grants keyed by the
// current generation's numbers, so it must not answer for another generation's: front_a's
// `file` (3) is front_b's `process`, whose `fork` (bit 0, as `read`) front_b grants and the
// front holds; `file read` is denied by both.
#[test]
fn check_access_takes_no_grant_for_another_generations_numbers() {
    let _p = lock(&POLICY_TESTS);
    let ask = || {
        crate::ffi::set_errno(0);
        let rc = test_dom_file_read();
        (rc, if rc == 0 { 0 } else { errno() })
    };
    let k = load_test_policy("front_a.33");
    let (file_a, read_a) = server_numbers(k, "file", "read").unwrap();
    assert_eq!(ask(), (-1, libc::EACCES), "front_a: file read");
    load_test_policy("front_b.33");
    let (process_b, fork_b) = server_numbers(k, "process", "fork").unwrap();
    assert_eq!(
        (process_b.0, fork_b.0),
        (file_a.0, read_a.0),
        "the policies renumber"
    );
    let s = dom();
    for _ in 0..3 {
        assert_eq!(
            check(s, process_b.0, fork_b.0),
            (0, 0),
            "front_b: process fork"
        );
    }
    assert!(front::holds(s, s, process_b.0, fork_b.0));
    assert_eq!(
        ask(),
        (-1, libc::EACCES),
        "front_b: file read granted from the front"
    );
}

/// selinux_check_access's four arguments: source and target contexts, class, permission.
type Args = [*const std::ffi::c_char; 4];

/// selinux_check_access(source, target, class, perm): 0, or -1 and errno.
fn ask(args: Args) -> (i32, i32) {
    crate::ffi::set_errno(0);
    let rc = avc::selinux_check_access(args[0], args[1], args[2], args[3], std::ptr::null_mut());
    (rc, if rc == 0 { 0 } else { errno() })
}

/// `process fork` of dom on itself, as selinux_check_access's four arguments.
fn fork_query() -> Args {
    [
        DOM.as_ptr(),
        DOM.as_ptr(),
        c"process".as_ptr(),
        c"fork".as_ptr(),
    ]
}

/// front_a loaded and `process fork` asked of dom on itself by `args` until the query table
/// answers it.
fn warm_query(args: Args) -> &'static Kernel {
    let k = load_test_policy("front_a.33");
    for _ in 0..3 {
        assert_eq!(ask(args), (0, 0), "process fork under front_a");
    }
    assert!(
        front::query::holds(args),
        "the query table was never filled"
    );
    k
}

/// The query table's hit on a warm `process fork` (see [`warm_query`]) with `f` run at its
/// moment `at`: the query's arguments and the hit's answer.
fn hit_parked(at: park::At, f: impl FnOnce() + 'static) -> (Args, Result<(), (Args, bool)>) {
    let args = fork_query();
    warm_query(args);
    park::park(at, f);
    let answer = front::query::hit(args);
    assert!(!park::pending(), "the hit never came to {at:?}");
    (args, answer)
}

// A repeated selinux_check_access is answered from the query table: one lookup and one hit
// of the cache, nothing resolved.
#[test]
fn a_repeated_query_comes_from_the_query_table() {
    let _p = lock(&POLICY_TESTS);
    let args = fork_query();
    warm_query(args);
    let before = stats();
    assert_eq!(ask(args), (0, 0));
    assert_eq!(
        counted(&before, &stats()),
        (1, 1, 0),
        "a query table hit is one lookup and one hit"
    );
    assert_eq!(front::query::hit(args), Ok(()));
}

// A program may rewrite a string in place: the same four pointers then ask another query, which
// the table must not answer. dom_t may fork itself and do nothing else, and obj_t nothing.
#[test]
fn a_string_rewritten_in_place_is_not_answered_from_the_query_table() {
    let _p = lock(&POLICY_TESTS);
    let mut scon = [0u8; 32];
    let mut perm = [0u8; 16];
    scon[..DOM.to_bytes().len()].copy_from_slice(DOM.to_bytes());
    perm[..4].copy_from_slice(b"fork");
    let args = [
        scon.as_ptr() as *const std::ffi::c_char,
        DOM.as_ptr(),
        c"process".as_ptr(),
        perm.as_ptr() as *const std::ffi::c_char,
    ];
    warm_query(args);
    perm[..7].copy_from_slice(b"signal\0");
    assert_eq!(
        front::query::hit(args).map_err(|(_, rewritten)| rewritten),
        Err(true),
        "a rewritten string not told apart"
    );
    assert_eq!(
        ask(args),
        (-1, libc::EACCES),
        "process signal granted as fork"
    );
    perm[..5].copy_from_slice(b"fork\0");
    assert_eq!(ask(args), (0, 0));
    let other = b"u:object_r:obj_t:s0\0";
    scon[..other.len()].copy_from_slice(other);
    assert_eq!(
        ask(args),
        (-1, libc::EACCES),
        "obj_t's fork granted as dom_t's"
    );
}

// The query table follows the cache's stamp: a reload leaves it unused until the query is
// granted again under the new policy.
#[test]
fn a_reload_leaves_the_query_table_unused() {
    let _p = lock(&POLICY_TESTS);
    let args = fork_query();
    let k = warm_query(args);
    load_test_policy("front_b.33");
    assert_eq!(
        front::query::hit(args).map_err(|(_, rewritten)| rewritten),
        Err(false),
        "the query table answered after a reload, or took its strings for rewritten"
    );
    // A fill of the SID-keyed table under the new stamp empties the query table too: both are
    // only ever of the front's one stamp.
    let (class, perm) = server_numbers(k, "process", "fork").unwrap();
    let s = dom();
    for _ in 0..3 {
        assert_eq!(check(s, class.0, perm.0), (0, 0), "front_b: process fork");
    }
    assert!(front::holds(s, s, class.0, perm.0));
    assert!(
        !front::query::holds(args),
        "a query entry of the old stamp survived a restamp"
    );
    for _ in 0..3 {
        assert_eq!(ask(args), (0, 0), "process fork under front_b");
    }
    assert_eq!(front::query::hit(args), Ok(()));
}

// avc_destroy retires the SIDs whose texts the table compares with: it moves the stamp.
#[test]
fn avc_destroy_leaves_the_query_table_unused() {
    let _p = lock(&POLICY_TESTS);
    let args = fork_query();
    warm_query(args);
    crate::avc_life::avc_destroy();
    assert!(
        front::query::hit(args).is_err(),
        "the query table answered after avc_destroy"
    );
    assert_eq!(ask(args), (0, 0), "process fork after avc_destroy");
}

// The stamp is read again after the comparisons: a change landing while the strings are
// compared (a reload here; a retirement of the SIDs compared with in avc_destroy, which moves
// the stamp before it zeroes their texts) sends the check the full way.
#[test]
fn a_change_during_the_comparisons_sends_the_query_the_full_way() {
    let _p = lock(&POLICY_TESTS);
    let (_, answer) = hit_parked(park::At::Compared, || {
        load_test_policy("front_b.33");
    });
    assert!(
        answer.is_err(),
        "answered though the stamp moved during the comparisons"
    );
}

// avc_destroy landing after the hit read the stamp and before it compares the strings retires
// the SIDs whose texts it compares with (their texts are NULL from then on): the hit answers
// nothing (and reads through no NULL), and the query is answered the full way.
#[test]
fn a_retirement_before_the_comparisons_sends_the_query_the_full_way() {
    let _p = lock(&POLICY_TESTS);
    let (args, answer) = hit_parked(park::At::Comparing, || crate::avc_life::avc_destroy());
    assert!(answer.is_err(), "answered from retired SIDs");
    assert_eq!(ask(args), (0, 0), "process fork after avc_destroy");
}
