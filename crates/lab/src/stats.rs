//! The lab's one statistic: medians, since these machines are noisy and a mean is pulled by
//! one slow round.

/// The process's CPU time so far (all threads, user and system), in seconds: what an
/// experiment on an oversubscribed machine costs, which the scheduler's choices of who runs
/// when do not change the way they change wall time.
pub fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// What seaccess's cache did during a mediator's runs: the kernel's avc/cache_stats counts,
/// and lookups per message (or per operation) delivered.
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct CacheUse {
    pub lookups: u64,
    pub hits: u64,
    pub misses: u64,
    pub reclaims: u64,
    pub lookups_per_message: f64,
}

impl CacheUse {
    /// The counts between `before` and `after`, over `messages` messages.
    pub fn between(before: seaccess_avc::CacheStats, after: seaccess_avc::CacheStats, messages: u64) -> CacheUse {
        let lookups = after.lookups.saturating_sub(before.lookups);
        CacheUse {
            lookups,
            hits: after.hits.saturating_sub(before.hits),
            misses: after.misses.saturating_sub(before.misses),
            reclaims: after.reclaims.saturating_sub(before.reclaims),
            lookups_per_message: lookups as f64 / messages.max(1) as f64,
        }
    }
}

/// The cache's use summed over runs of `messages` messages each, from each run's counts before
/// and after.
pub fn cache_use(runs: &[(seaccess_avc::CacheStats, seaccess_avc::CacheStats)], messages: u64) -> CacheUse {
    let mut total = CacheUse::default();
    for (b, a) in runs {
        let u = CacheUse::between(*b, *a, messages);
        total.lookups += u.lookups;
        total.hits += u.hits;
        total.misses += u.misses;
        total.reclaims += u.reclaims;
    }
    total.lookups_per_message = total.lookups as f64 / (messages.max(1) * runs.len().max(1) as u64) as f64;
    total
}

/// The median of `v` (NaN when empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match (v.get(n / 2), n % 2) {
        (None, _) => f64::NAN,
        (Some(&m), 1) => m,
        (Some(&m), _) => (m + v.get(n / 2 - 1).copied().unwrap_or(m)) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(Vec::new()).is_nan());
    }
}
