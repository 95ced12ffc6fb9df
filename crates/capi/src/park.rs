//! What a test runs once at a named moment of a check on its own thread (a reload, to land in
//! between two steps the check must keep together): checks other tests make at the same time
//! never run it. Compiled into tests only.

use std::cell::RefCell;

/// The moments a test can park at.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(crate) enum At {
    /// A check's moment between resolving its numbers and deciding (crate::avc).
    Decide,
    /// A front's fill, after its stamp and its lookup were read (crate::front).
    Fill,
    /// A query front's hit, after its stamp was read, before its strings are compared
    /// (crate::front::query).
    Comparing,
    /// A query front's hit, after its strings were compared (crate::front::query).
    Compared,
}

type Hook = (At, Box<dyn FnOnce()>);

thread_local! {
    static PARK: RefCell<Option<Hook>> = const { RefCell::new(None) };
}

/// Runs `f` once, at this thread's next moment `at`.
pub(crate) fn park(at: At, f: impl FnOnce() + 'static) {
    PARK.with(|p| *p.borrow_mut() = Some((at, Box::new(f))));
}

/// Drops this thread's parked hook, if one is waiting.
pub(crate) fn unpark() {
    PARK.with(|p| p.borrow_mut().take());
}

/// Whether a parked hook is still waiting on this thread.
pub(crate) fn pending() -> bool {
    PARK.with(|p| p.borrow().is_some())
}

/// Runs this thread's hook if it waits for moment `at`.
pub(crate) fn parked(at: At) {
    let hook = PARK.with(|p| {
        let mut p = p.borrow_mut();
        match p.take() {
            Some((want, h)) if want == at => Some(h),
            other => {
                *p = other;
                None
            }
        }
    });
    if let Some(h) = hook {
        h();
    }
}
