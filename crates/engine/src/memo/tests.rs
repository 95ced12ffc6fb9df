//! The memo answers what the generation asked would: through reloads, boolean commits, a
//! lookup parked across a reload, a full table and forged slot hints.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::{mpsc, Arc};

use super::*;
use crate::kept::tests::{park, reload, server, GONE, PROC};

const DATA: &str = "sys_u:object_r:data_t";

/// What the entry the memo's slots lead `text` to says, if one holds it.
fn found(m: &SidMemo, text: &str, seqno: Seqno) -> Option<Read> {
    m.hinted(m.hash(text))
        .map(|e| e.read(text.as_bytes(), seqno))
        .find(|r| !matches!(r, Read::Other))
}

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
        park("keep", move || {
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
// own, and once full new contexts take entries over instead of growing the memo or going
// unkept.
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
    // Entries taken over: the last few asked are kept, and answered from them.
    assert!(m.kept(g.seqno()) > 0, "nothing kept once full");
    let last = all.last().unwrap();
    assert!(
        matches!(found(&m, last, g.seqno()), Some(Read::Hit(_))),
        "{last} not kept once the memo was full"
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
    // gone_t's context and data_t's are the same length: only their bytes tell them apart.
    assert_eq!(GONE.len(), DATA.len());
    let p = m.sid(&g, GONE).unwrap();
    let slots = m.slots.get().unwrap();
    let h = m.hash(DATA);
    let bucket = m.bucket(slots, h).unwrap();
    // Entry 0 is gone_t's: point every slot of DATA's bucket at it, with DATA's tag.
    for slot in bucket {
        slot.store(h << 32 | 1, Release);
    }
    assert!(found(&m, DATA, g.seqno()).is_none());
    let d = m.sid(&g, DATA).unwrap();
    assert_ne!(d, p, "the forged hint answered for another text");
    assert_eq!(d, g.context_to_sid(DATA).unwrap());
}

// Two threads ask twelve contexts of a memo of four entries, so that entries are rewritten for
// other texts while the other thread reads them: every answer is still the context's own SID
// (a reader that took an entry's SID without checking its version again would, now and then,
// answer with the SID of the text written over the one it compared).
#[test]
fn entries_rewritten_under_a_reader_never_answer_for_another_text() {
    let s = server("example");
    let g = s.snapshot();
    let m = SidMemo::with_capacity(4);
    let asked: Vec<(String, Sid)> = many_contexts()
        .into_iter()
        .take(12)
        .map(|c| {
            let sid = g.context_to_sid(&c).unwrap();
            (c, sid)
        })
        .collect();
    std::thread::scope(|scope| {
        for t in 0..2 {
            let (m, g, asked) = (&m, &g, &asked);
            scope.spawn(move || {
                for n in 0..200_000 {
                    let (c, want) = &asked[(n * 5 + t * 7) % asked.len()];
                    assert_eq!(m.sid(g, c).unwrap(), *want, "{c} at {n}");
                }
            });
        }
    });
}

// A reader compares an entry's text with its own and parks before reading the SID; meanwhile
// the entry (the memo's only one) is rewritten for another context. The reader must not answer
// with the SID it then reads, which is the other context's.
#[test]
fn an_entry_rewritten_between_compare_and_read_is_not_taken() {
    let s = server("classorder_gone");
    let g = s.snapshot();
    let m = SidMemo::with_capacity(1);
    let p = m.sid(&g, PROC).unwrap();
    let (at_park, parked_rx) = mpsc::channel::<()>();
    let (release, release_rx) = mpsc::channel::<()>();
    let (p2, d) = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            park("read", move || {
                at_park.send(()).unwrap();
                release_rx.recv().unwrap();
            });
            m.sid(&g, PROC).unwrap()
        });
        parked_rx.recv().unwrap();
        let d = m.sid(&g, DATA).unwrap();
        let took_over = matches!(found(&m, DATA, g.seqno()), Some(Read::Hit(_)));
        // Released before any assertion, so that a failure does not leave the reader parked.
        release.send(()).unwrap();
        assert!(
            took_over,
            "DATA did not take the entry over: this proves nothing"
        );
        (reader.join().unwrap(), d)
    });
    assert_ne!(p, d);
    assert_eq!(
        p2, p,
        "answered with the SID of the text written over the one compared"
    );
}

// The memo's one entry holds proc_t's context; data_t's old hint still points at it. A writer
// taking it over for data_t parks after writing the text and before the SID: a reader asking
// for data_t then finds its text with proc_t's SID beside it, and must not take it.
#[test]
fn an_entry_half_written_is_not_taken() {
    let s = server("classorder_gone");
    let g = s.snapshot();
    let m = SidMemo::with_capacity(1);
    let d = m.sid(&g, DATA).unwrap();
    let p = m.sid(&g, PROC).unwrap();
    assert!(
        found(&m, DATA, g.seqno()).is_none(),
        "PROC took the entry over"
    );
    // Taking the entry over replaced data_t's hint in this one bucket; in a larger memo it
    // would sit in another bucket and stay. Put it back beside proc_t's.
    let h = m.hash(DATA);
    let bucket = m.bucket(m.slots.get().unwrap(), h).unwrap();
    let free = bucket.iter().find(|x| x.load(Relaxed) == 0).unwrap();
    free.store(h << 32 | 1, Release);
    let (at_park, parked_rx) = mpsc::channel::<()>();
    let (release, release_rx) = mpsc::channel::<()>();
    let asked = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            park("write", move || {
                at_park.send(()).unwrap();
                release_rx.recv().unwrap();
            });
            m.sid(&g, DATA).unwrap()
        });
        parked_rx.recv().unwrap();
        let asked = m.sid(&g, DATA);
        release.send(()).unwrap();
        assert_eq!(writer.join().unwrap(), d);
        asked
    });
    assert_ne!(p, d);
    assert_eq!(
        asked.unwrap(),
        d,
        "a half-written entry answered with the SID of the text before"
    );
}

// Two contexts longer than an entry holds, of one length and alike in their first MEMO_TEXT
// bytes (their high levels end in c14 and c15): each is answered with its own SID, every
// time, and neither is kept.
#[test]
fn contexts_too_long_to_keep_are_resolved_at_every_ask() {
    let s = server("example");
    let g = s.snapshot();
    let m = SidMemo::new();
    let cats = |r: std::ops::Range<u32>| r.map(|c| format!("c{c}")).collect::<Vec<_>>();
    let low = cats(0..10).join(",");
    let high = |last: u32| [cats(0..14), vec![format!("c{last}")]].concat().join(",");
    let a = format!("system_u:object_r:user_home_dir_t:s0:{low}-s0:{}", high(14));
    let b = format!("system_u:object_r:user_home_dir_t:s0:{low}-s0:{}", high(15));
    assert!(a.len() > MEMO_TEXT && a.len() == b.len() && a[..MEMO_TEXT] == b[..MEMO_TEXT]);
    let want = |c: &str| g.context_to_sid(c).unwrap_or_else(|e| panic!("{c}: {e}"));
    let (sa, sb) = (want(&a), want(&b));
    assert_ne!(sa, sb);
    // Entry 0 a short context's; a long one, if kept, would be entry 1: b's hints are forged
    // to point there, as a hash collision would.
    m.sid(&g, "system_u:object_r:etc_t:s0").unwrap();
    assert_eq!(m.sid(&g, &a).unwrap(), sa);
    let h = m.hash(&b);
    for slot in m.bucket(m.slots.get().unwrap(), h).unwrap() {
        slot.store(h << 32 | 2, Release);
    }
    for _ in 0..3 {
        assert_eq!(
            m.sid(&g, &b).unwrap(),
            sb,
            "answered with the other long context's SID"
        );
        assert_eq!(m.sid(&g, &a).unwrap(), sa);
    }
    assert_eq!(m.kept(g.seqno()), 1, "only the short context is kept");
}

// A word of up to eight bytes is those bytes little-endian and zero past them, for every
// length: texts differing in any byte, or only in length, give other words.
#[test]
fn a_tail_word_is_its_bytes_and_zeros() {
    let bytes: Vec<u8> = (1..=8u8).map(|b| b * 17).collect();
    for n in 0..=8 {
        let c = &bytes[..n];
        let mut want = [0u8; 8];
        want[..n].copy_from_slice(c);
        assert_eq!(tail_word(c), u64::from_le_bytes(want), "{n} bytes");
    }
}
