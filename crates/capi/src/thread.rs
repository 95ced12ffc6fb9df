//! A cheap identity of the calling thread, for the cache's statistics: the thread pointer,
//! read with one instruction. Through a `thread_local!` it would be a call to
//! `__tls_get_addr` on every check (a shared library uses the general-dynamic TLS model).

/// The calling thread's pointer: nonzero, and no other live thread's (it addresses the
/// thread's own control block). 0 where it cannot be read so cheaply: the cache then finds the
/// thread's counters its usual way.
#[inline(always)]
pub(crate) fn id() -> u64 {
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        let tp: u64;
        // SAFETY: on x86-64 Linux, %fs holds the thread pointer of every thread and its first
        // word points to itself (the TLS ABI's tcbhead_t.tcb); the load reads only that word,
        // touches no memory Rust knows of and leaves the flags alone.
        unsafe {
            std::arch::asm!("mov {}, qword ptr fs:[0]", out(reg) tp, options(nostack, readonly, preserves_flags))
        };
        tp
    }
    #[cfg(all(target_arch = "aarch64", target_os = "linux"))]
    {
        let tp: u64;
        // SAFETY: reads the thread pointer register (TPIDR_EL0), which the C library sets for
        // every thread; no memory is touched.
        unsafe {
            std::arch::asm!("mrs {}, tpidr_el0", out(reg) tp, options(nostack, nomem, preserves_flags))
        };
        tp
    }
    #[cfg(not(any(
        all(target_arch = "x86_64", target_os = "linux"),
        all(target_arch = "aarch64", target_os = "linux")
    )))]
    {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Nonzero, the same on every call of one thread, and different between two live threads.
    #[test]
    fn a_thread_pointer_is_its_threads_own() {
        let me = id();
        assert_eq!(me, id());
        if cfg!(all(
            target_os = "linux",
            any(target_arch = "x86_64", target_arch = "aarch64")
        )) {
            assert_ne!(me, 0);
            // Read while this thread is alive too.
            let theirs = std::thread::spawn(id).join().map_err(|_| ()).unwrap_or(0);
            assert_ne!(theirs, 0);
            assert_ne!(theirs, me);
        }
    }
}
