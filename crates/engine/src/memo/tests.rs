//! The memo answers what the generation asked would: through reloads, boolean commits, a
//! lookup parked across a reload, a full table and forged slot hints.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{mpsc, Arc};

use super::*;
use crate::kept::tests::{park, reload, server, GONE, PROC};

const DATA: &str = "sys_u:object_r:data_t";

#[test]
fn a_reload_that_drops_a_context_is_not_answered_from_the_memo() {
    let s = server("classorder_gone");
    let m = SidMemo::new();
    let g1 = s.snapshot();
    let gone = m.sid(&g1, GONE).unwrap();
    let p = m.sid(&g1, PROC).unwrap();
    assert_eq!(m.sid(&g1, GONE).unwrap(), gone);
    assert_eq!(m.kept(g1.seqno()), 2);
    let at = reload(&s, "classorder_a");
    let g2 = s.snapshot();
    assert!(
        m.sid(&g2, GONE).is_err(),
        "a context the new policy refuses was answered from the memo"
    );
    assert_eq!(m.sid(&g2, PROC).unwrap(), p, "SIDs keep their meaning");
    assert_eq!((m.kept(at), m.kept(g1.seqno())), (1, 1));
    // The old generation, still held by a check, is answered by what it resolved.
    assert_eq!(m.sid(&g1, GONE).unwrap(), gone);
}

#[test]
fn a_boolean_commit_resolves_again_under_the_new_generation() {
    let s = server("classorder_gone");
    let m = SidMemo::new();
    let g1 = s.snapshot();
    let p = m.sid(&g1, PROC).unwrap();
    let d = m.sid(&g1, DATA).unwrap();
    let at = s.commit_booleans();
    assert_eq!(m.kept(at), 0, "kept across a boolean commit");
    let g2 = s.snapshot();
    assert_eq!(m.sid(&g2, PROC).unwrap(), p);
    assert_eq!((m.kept(at), m.kept(g1.seqno())), (1, 1));
    assert_eq!(m.sid(&g2, DATA).unwrap(), d);
    assert_eq!(m.kept(at), 2);
}

// A lookup of gone_t under classorder_gone parks between resolving and keeping while another
// thread reloads classorder_a and asks for gone_t there; the parked one then keeps its entry.
// The new generation refuses gone_t still.
#[test]
fn a_lookup_parked_across_a_reload_is_not_the_new_generations() {
    let s = Arc::new(server("classorder_gone"));
    let m = Arc::new(SidMemo::new());
    let (at_park, parked_rx) = mpsc::channel::<()>();
    let (release, release_rx) = mpsc::channel::<()>();
    let (s2, m2) = (s.clone(), m.clone());
    let racer = std::thread::spawn(move || {
        park(move || {
            at_park.send(()).unwrap();
            release_rx.recv().unwrap();
        });
        let g1 = s2.snapshot();
        (m2.sid(&g1, GONE).unwrap(), g1.seqno())
    });
    parked_rx.recv().unwrap();
    let at = reload(&s, "classorder_a");
    let g2 = s.snapshot();
    assert!(m.sid(&g2, GONE).is_err());
    release.send(()).unwrap();
    let (_, old) = racer.join().unwrap();
    assert_eq!(m.kept(old), 1, "the parked lookup kept its entry");
    assert!(
        m.sid(&g2, GONE).is_err(),
        "the new generation took the SID a parked lookup of the old one kept"
    );
    assert_eq!(m.kept(at), 0);
}

/// Contexts example.cil accepts, many more than a small memo holds: one file type at each
/// category set of up to two of its sixteen categories.
fn many_contexts() -> Vec<String> {
    let mut v = vec!["system_u:object_r:etc_t:s0".to_string()];
    for a in 0..16 {
        v.push(format!("system_u:object_r:etc_t:s0:c{a}"));
        for b in a + 1..16 {
            v.push(format!("system_u:object_r:etc_t:s0:c{a},c{b}"));
        }
    }
    v
}

// A memo of eight texts asked 137 contexts, three times over: every answer is the generation's
// own, the table renews when full instead of growing, and the contexts asked after a renewal
// are kept again.
#[test]
fn a_full_memo_still_answers_right() {
    let s = server("example");
    let g = s.snapshot();
    let m = SidMemo::with_capacity(8);
    let all = many_contexts();
    for round in 0..3 {
        for c in &all {
            let want = g.context_to_sid(c).unwrap_or_else(|e| panic!("{c}: {e}"));
            assert_eq!(m.sid(&g, c).unwrap(), want, "{c}, round {round}");
            assert!(m.kept(g.seqno()) <= 8, "past its capacity");
        }
    }
    // A table renewed: the last few asked are kept, and answered from it.
    let kept = m.kept(g.seqno());
    assert!(kept > 0, "a full table was never renewed");
    let t = m.table.load();
    let last = all.last().unwrap();
    assert!(
        t.find(t.hash(last), last).is_some(),
        "{last} not kept after a renewal"
    );
    assert!(m.sid(&g, "system_u:object_r:etc_t:s0:c99").is_err());
}

// A slot hint is only a hint: one forged to point the hash of one text at another's entry (a
// collision, as an attacker would aim for) makes a miss, never the other text's SID.
#[test]
fn a_forged_hint_is_not_taken_without_the_text() {
    let s = server("classorder_gone");
    let g = s.snapshot();
    let m = SidMemo::new();
    let p = m.sid(&g, PROC).unwrap();
    let t = m.table.load();
    let slots = t.slots.get().unwrap();
    let h = t.hash(DATA);
    let bucket = t.bucket(slots, h).unwrap();
    // Entry 0 is PROC's: point every slot of DATA's bucket at it, with DATA's tag.
    for slot in bucket {
        slot.store(h << 32 | 1, Release);
    }
    assert!(t.find(h, DATA).is_none());
    let d = m.sid(&g, DATA).unwrap();
    assert_ne!(d, p, "the forged hint answered for another text");
    assert_eq!(d, g.context_to_sid(DATA).unwrap());
}
