//! The rule, on its own: a kept number is used only with the generation that found it, through
//! reloads, boolean commits and a thread racing a reload.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cell::RefCell;
use std::sync::mpsc;

use super::*;
use seaccess_security::SecurityServer;
use seaccess_testkit::compile;

pub(crate) const PROC: &str = "sys_u:sys_r:proc_t";
/// In classorder_gone, not in classorder_a.
pub(crate) const GONE: &str = "sys_u:object_r:gone_t";

/// A hook and the place it waits for.
type Hook = (&'static str, Box<dyn FnOnce()>);

thread_local! {
    /// Hooks run once, on this thread, when it reaches the named place: "keep" between a
    /// lookup and the keeping of its answer, "read" between a memo entry's text compare and its
    /// SID's read, "write" between a memo entry's new text and its SID.
    static PARKS: RefCell<Vec<Hook>> = const { RefCell::new(Vec::new()) };
}

/// Runs this thread's hook for `place`, if one is set.
pub(crate) fn parked(place: &'static str) {
    let hook = PARKS.with(|p| {
        let mut p = p.borrow_mut();
        let i = p.iter().position(|(at, _)| *at == place)?;
        Some(p.remove(i).1)
    });
    if let Some(f) = hook {
        f();
    }
}

/// Sets this thread's hook for `place`.
pub(crate) fn park(place: &'static str, f: impl FnOnce() + 'static) {
    PARKS.with(|p| p.borrow_mut().push((place, Box::new(f))));
}

pub(crate) fn server(name: &str) -> SecurityServer {
    SecurityServer::from_bytes(&std::fs::read(compile(name, 33)).unwrap()).unwrap()
}

pub(crate) fn reload(s: &SecurityServer, name: &str) -> Seqno {
    s.reload(&std::fs::read(compile(name, 33)).unwrap())
        .unwrap()
}

#[test]
fn a_value_is_only_for_its_generation() {
    let k: Kept = Kept::new();
    assert_eq!(
        k.get(Seqno(0)),
        None,
        "nothing kept reads as nothing, even for seqno 0"
    );
    assert_eq!(k.load(), None);
    k.keep(Seqno(7), Sid(3));
    assert_eq!(k.get(Seqno(7)), Some(Sid(3)));
    assert_eq!(k.get(Seqno(8)), None);
    assert_eq!(k.get(Seqno(6)), None);
    assert_eq!(k.load(), Some((Sid(3), Seqno(7))));
    k.keep(Seqno(u32::MAX), Sid(u32::MAX));
    assert_eq!(k.get(Seqno(u32::MAX)), Some(Sid(u32::MAX)));
    assert_eq!(k.get(Seqno(7)), None, "the older value is gone");
    k.keep(Seqno(9), Sid::NULL);
    assert_eq!(k.load(), None, "SID 0 is not kept, nor the SID before it");

    let c: Kept<ClassBit> = Kept::new();
    let file_read = ClassBit {
        class: ClassId(0),
        bit: 0,
    };
    c.keep(Seqno(0), file_read);
    assert_eq!(
        c.get(Seqno(0)),
        Some(file_read),
        "class 0 bit 0 of seqno 0 is a value"
    );
    assert_eq!(c.get(Seqno(1)), None);
    let high = ClassBit {
        class: ClassId(u16::MAX),
        bit: 31,
    };
    c.keep(Seqno(2), high);
    assert_eq!(c.load(), Some((high, Seqno(2))));
    assert_eq!(high.perm(), AccessVector(1 << 31));
    c.keep(
        Seqno(3),
        ClassBit {
            class: ClassId(1),
            bit: 32,
        },
    );
    assert_eq!(
        c.load(),
        None,
        "bit 32 is no permission: not kept, nor the numbers before it"
    );
}

#[test]
fn two_sids_go_together_only_from_one_generation() {
    let (a, b): (Kept, Kept) = (Kept::new(), Kept::new());
    assert_eq!(Kept::both(&a, &b), None);
    a.keep(Seqno(4), Sid(10));
    assert_eq!(Kept::both(&a, &b), None, "one not kept");
    b.keep(Seqno(5), Sid(11));
    assert_eq!(Kept::both(&a, &b), None, "two generations");
    b.keep(Seqno(4), Sid(11));
    assert_eq!(Kept::both(&a, &b), Some((Sid(10), Sid(11), Seqno(4))));
    assert_eq!(Kept::both(&b, &a), Some((Sid(11), Sid(10), Seqno(4))));
}

// classorder_a does not define gone_t: a SID kept from classorder_gone must not answer for it.
#[test]
fn a_reload_that_drops_a_context_resolves_it_again_and_refuses_it() {
    let s = server("classorder_gone");
    let k: Kept = Kept::new();
    let g1 = s.snapshot();
    let gone = k.sid_in(&g1, GONE).unwrap();
    assert_eq!(k.sid_in(&g1, GONE).unwrap(), gone);
    let at = reload(&s, "classorder_a");
    let g2 = s.snapshot();
    assert_eq!(g2.seqno(), at);
    assert_eq!(k.get(at), None);
    assert!(
        k.sid_in(&g2, GONE).is_err(),
        "a context the new policy refuses was answered from what the old one kept"
    );
    assert_eq!(
        k.load(),
        Some((gone, g1.seqno())),
        "a failed lookup keeps nothing"
    );
    // The old generation, still held, keeps its own answer.
    assert_eq!(k.sid_in(&g1, GONE).unwrap(), gone);
}

// A boolean commit is a new generation: the SID is looked up again and kept for it.
#[test]
fn a_boolean_commit_is_a_new_generation() {
    let s = server("classorder_gone");
    let k: Kept = Kept::new();
    let g1 = s.snapshot();
    let p = k.sid_in(&g1, PROC).unwrap();
    let at = s.commit_booleans();
    assert!(at.is_after(g1.seqno()));
    assert_eq!(k.get(at), None, "kept across a boolean commit");
    let mut asked = 0;
    let again = k.get_or_find(at, || {
        asked += 1;
        s.snapshot().context_to_sid(PROC)
    });
    assert_eq!(
        (again.unwrap(), asked),
        (p, 1),
        "not looked up in the new generation"
    );
    assert_eq!(k.load(), Some((p, at)));
    let again = k.get_or_find(at, || -> Result<Sid, SecurityError> { panic!("kept") });
    assert_eq!(again.unwrap(), p);
}

// One thread resolves gone_t under classorder_gone and parks before keeping it; meanwhile the
// policy is reloaded to classorder_a and gone_t asked there (refused). The parked thread then
// keeps its old-generation SID: the new generation still refuses gone_t.
#[test]
fn a_lookup_parked_across_a_reload_keeps_nothing_the_new_generation_uses() {
    let s = std::sync::Arc::new(server("classorder_gone"));
    let k: std::sync::Arc<Kept> = std::sync::Arc::new(Kept::new());
    let (at_park, parked_rx) = mpsc::channel::<()>();
    let (release, release_rx) = mpsc::channel::<()>();
    let (s2, k2) = (s.clone(), k.clone());
    let racer = std::thread::spawn(move || {
        park("keep", move || {
            at_park.send(()).unwrap();
            release_rx.recv().unwrap();
        });
        let g1 = s2.snapshot();
        (k2.sid_in(&g1, GONE).unwrap(), g1.seqno())
    });
    parked_rx.recv().unwrap();
    let at = reload(&s, "classorder_a");
    let g2 = s.snapshot();
    assert!(k.sid_in(&g2, GONE).is_err());
    release.send(()).unwrap();
    let (gone, old) = racer.join().unwrap();
    assert_eq!(
        k.load(),
        Some((gone, old)),
        "the parked thread kept its answer"
    );
    assert!(
        k.sid_in(&g2, GONE).is_err(),
        "the new generation took the SID a parked lookup of the old one kept"
    );
    assert_eq!(k.get(at), None);
}

/// `class perm`'s numbers in generation `g`.
fn class_bit(g: &Generation, class: &str, perm: &str) -> Result<ClassBit, SecurityError> {
    let c = g.class(class)?;
    let bit = g.perms(c, &[perm])?.bits().next().unwrap();
    Ok(ClassBit {
        class: c,
        bit: bit as u8,
    })
}

// classorder_a and classorder_b number `file` differently. One thread looks up `file read` in
// a and parks before keeping it; meanwhile b is loaded and the numbers looked up and kept there.
// The parked thread's numbers, kept last, are a's: b must not take them (a keep that stamped
// the newest seqno seen, to spare the race a lookup, would hand them to b).
#[test]
fn numbers_parked_across_a_renumbering_reload_stay_their_generations() {
    let s = std::sync::Arc::new(server("classorder_a"));
    let k: std::sync::Arc<Kept<ClassBit>> = std::sync::Arc::new(Kept::new());
    let (at_park, parked_rx) = mpsc::channel::<()>();
    let (release, release_rx) = mpsc::channel::<()>();
    let (s2, k2) = (s.clone(), k.clone());
    let racer = std::thread::spawn(move || {
        park("keep", move || {
            at_park.send(()).unwrap();
            release_rx.recv().unwrap();
        });
        let g1 = s2.snapshot();
        let v = k2.get_or_find(g1.seqno(), || class_bit(&g1, "file", "read"));
        (v.unwrap(), g1.seqno())
    });
    parked_rx.recv().unwrap();
    let at = reload(&s, "classorder_b");
    let g2 = s.snapshot();
    let theirs = class_bit(&g2, "file", "read").unwrap();
    assert_eq!(
        k.get_or_find(at, || class_bit(&g2, "file", "read"))
            .unwrap(),
        theirs
    );
    release.send(()).unwrap();
    let (ours, old) = racer.join().unwrap();
    assert_ne!(
        ours, theirs,
        "the two policies number file read alike: this proves nothing"
    );
    assert_eq!(k.load(), Some((ours, old)));
    assert_eq!(
        k.get(at),
        None,
        "the new generation takes the old one's numbers"
    );
    assert_eq!(
        k.get_or_find(at, || class_bit(&g2, "file", "read"))
            .unwrap(),
        theirs
    );
}
