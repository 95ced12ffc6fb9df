//! The one set of poison-tolerant lock helpers every crate uses. Library code must not panic,
//! so another thread's panic while holding a lock is not passed on: each caller's critical
//! section is a short update (a list push, a pointer swap, a counter) that a panic elsewhere
//! cannot leave half made, and a caller for which that is not so must not use these.

use std::sync::{
    Condvar, Mutex, MutexGuard, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard,
    TryLockError, WaitTimeoutResult,
};
use std::time::Duration;

/// A mutex's guard, poisoned or not.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A mutex's guard if no thread holds it now, poisoned or not; None while one does.
pub fn try_lock<T>(m: &Mutex<T>) -> Option<MutexGuard<'_, T>> {
    match m.try_lock() {
        Ok(g) => Some(g),
        Err(TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(TryLockError::WouldBlock) => None,
    }
}

/// A mutex's value through an exclusive borrow (no locking needed), poisoned or not.
pub fn get_mut<T>(m: &mut Mutex<T>) -> &mut T {
    m.get_mut().unwrap_or_else(PoisonError::into_inner)
}

/// A read guard of an RwLock, poisoned or not.
pub fn read<T>(l: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    l.read().unwrap_or_else(PoisonError::into_inner)
}

/// A write guard of an RwLock, poisoned or not.
pub fn write<T>(l: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    l.write().unwrap_or_else(PoisonError::into_inner)
}

/// Waits on `cv`, giving `guard` back when woken, poisoned or not.
pub fn wait<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(guard).unwrap_or_else(PoisonError::into_inner)
}

/// Waits on `cv` for at most `dur`, giving `guard` back (and whether the time ran out) when
/// woken, poisoned or not.
pub fn wait_timeout<'a, T>(
    cv: &Condvar,
    guard: MutexGuard<'a, T>,
    dur: Duration,
) -> (MutexGuard<'a, T>, WaitTimeoutResult) {
    cv.wait_timeout(guard, dur)
        .unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use std::sync::Arc;

    /// Each helper hands out the value of a lock another thread poisoned, with the value the
    /// panicking thread left.
    #[test]
    fn poisoned_locks_still_give_their_value() {
        let m = Arc::new(Mutex::new(1));
        let l = Arc::new(RwLock::new(1));
        let (m2, l2) = (m.clone(), l.clone());
        let r = std::thread::spawn(move || {
            let mut g = m2.lock().unwrap();
            let mut w = l2.write().unwrap();
            *g = 2;
            *w = 2;
            panic!("poison both");
        })
        .join();
        assert!(r.is_err());
        assert!(m.is_poisoned() && l.is_poisoned());
        assert_eq!(*lock(&m), 2);
        assert_eq!(try_lock(&m).map(|g| *g), Some(2));
        let held = lock(&m);
        assert!(std::thread::scope(|s| s
            .spawn(|| try_lock(&m).is_none())
            .join()
            .unwrap()));
        drop(held);
        assert_eq!(*read(&l), 2);
        *write(&l) = 3;
        assert_eq!(*read(&l), 3);
        let cv = Condvar::new();
        let (g, timed_out) = wait_timeout(&cv, lock(&m), Duration::from_millis(1));
        assert!(timed_out.timed_out());
        assert_eq!(*g, 2);
        drop(g);
        let mut owned = Arc::try_unwrap(m).unwrap();
        *get_mut(&mut owned) = 4;
        assert_eq!(*lock(&owned), 4);
    }
}
