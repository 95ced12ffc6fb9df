//! PCRE2's JIT keeps the executable memory of compiled expressions behind one process-wide
//! mutex (sljit's allocator lock), taken while an expression is compiled and while its code is
//! freed. A process that forks while another of its threads holds that mutex leaves the child a
//! lock no thread will ever release, and the child's first compile waits forever (seen:
//! `tests/capi/fork.c tables`, 2 hung children in about 1,500, each in `pcre2_jit_compile_8`
//! under `matchpathcon`).
//!
//! So every compile and every free of a compiled expression here runs under the read side of
//! one lock, and a library that lets its users fork takes the write side across the fork
//! ([`fork_guard`], from its `pthread_atfork` prepare handler): the child then finds no thread
//! inside PCRE2's JIT. The lock nests inside whatever the caller holds while it looks a path up
//! (a handle's lock), and nothing is taken under it.

use std::sync::{RwLock, RwLockWriteGuard};

use pcre2::bytes::Regex;

static JIT: RwLock<()> = RwLock::new(());

/// Holds off every compile and every free of compiled code until dropped: for a fork's prepare
/// handler, taken after every lock under which a lookup may run (it nests in those).
pub fn fork_guard() -> RwLockWriteGuard<'static, ()> {
    seaccess_types::lock::write(&JIT)
}

/// A compiled expression whose code is freed under the lock's read side.
pub struct Compiled(Option<Regex>);

impl Compiled {
    /// Builds `build`'s expression under the lock's read side.
    pub(crate) fn build<E>(build: impl FnOnce() -> Result<Regex, E>) -> Result<Compiled, E> {
        let _compiling = seaccess_types::lock::read(&JIT);
        build().map(|r| Compiled(Some(r)))
    }

    /// Whether `subject` matches (PCRE2's error as text).
    pub fn is_match(&self, subject: &[u8]) -> Result<bool, String> {
        match &self.0 {
            Some(r) => r.is_match(subject).map_err(|e| e.to_string()),
            // Only `drop` empties it, and nothing matches through a value being dropped.
            None => Err("the compiled expression was freed".into()),
        }
    }
}

impl Drop for Compiled {
    fn drop(&mut self) {
        if let Some(r) = self.0.take() {
            let _freeing = seaccess_types::lock::read(&JIT);
            drop(r);
        }
    }
}
