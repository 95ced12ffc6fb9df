//! The lab's one statistic: medians, since these machines are noisy and a mean is pulled by
//! one slow round.

/// The process's CPU time so far (all threads, user and system), in seconds: what an
/// experiment on an oversubscribed machine costs, which the scheduler's choices of who runs
/// when do not change the way they change wall time.
pub fn cpu_seconds() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}

/// Keeps this thread, and every thread it makes from now on, to the first `n` CPUs it may run
/// on; returns their numbers. A run on one CPU is the scheduler's one queue, whose runs vary
/// less than runs spread over two; what it cannot show is two threads in a check at once.
pub fn pin_cpus(n: usize) -> std::io::Result<Vec<usize>> {
    use rustix::thread::{sched_getaffinity, sched_setaffinity, CpuSet};
    let now = sched_getaffinity(None)?;
    let cpus: Vec<usize> = (0..CpuSet::MAX_CPU)
        .filter(|c| now.is_set(*c))
        .take(n)
        .collect();
    if n == 0 || cpus.len() < n {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{n} CPUs asked, {} allowed",
                (0..CpuSet::MAX_CPU).filter(|c| now.is_set(*c)).count()
            ),
        ));
    }
    let mut set = CpuSet::new();
    for c in &cpus {
        set.set(*c);
    }
    sched_setaffinity(None, &set)?;
    Ok(cpus)
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
    pub fn between(
        before: seaccess_avc::CacheStats,
        after: seaccess_avc::CacheStats,
        messages: u64,
    ) -> CacheUse {
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
pub fn cache_use(
    runs: &[(seaccess_avc::CacheStats, seaccess_avc::CacheStats)],
    messages: u64,
) -> CacheUse {
    let mut total = CacheUse::default();
    for (b, a) in runs {
        let u = CacheUse::between(*b, *a, messages);
        total.lookups += u.lookups;
        total.hits += u.hits;
        total.misses += u.misses;
        total.reclaims += u.reclaims;
    }
    total.lookups_per_message =
        total.lookups as f64 / (messages.max(1) * runs.len().max(1) as u64) as f64;
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

/// A 95% confidence interval of the median of `v`'s distribution: the order statistics at
/// ranks n/2 - 0.98 sqrt(n) and 1 + n/2 + 0.98 sqrt(n) (the binomial's normal approximation; distribution-free). With
/// fewer than 6 values no interval reaches 95%: the extremes are given (NaN when empty).
pub fn median_ci(v: &[f64]) -> (f64, f64) {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return (f64::NAN, f64::NAN);
    }
    let half = 0.98 * (n as f64).sqrt();
    let lo = ((n as f64 / 2.0 - half).floor().max(1.0) as usize).min(n) - 1;
    let hi = ((1.0 + n as f64 / 2.0 + half).ceil() as usize).clamp(1, n) - 1;
    (
        v.get(lo).copied().unwrap_or(f64::NAN),
        v.get(hi).copied().unwrap_or(f64::NAN),
    )
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

    #[test]
    fn median_intervals() {
        // 100 values 1..=100: ranks 40.2 and 60.8, widened to the 40th and the 61st.
        let v: Vec<f64> = (1..=100).rev().map(f64::from).collect();
        assert_eq!(median_ci(&v), (40.0, 61.0));
        assert_eq!(median_ci(&[2.0, 1.0]), (1.0, 2.0));
        assert!(median_ci(&[]).0.is_nan());
    }
}
