//! The lab's one statistic: medians, since these machines are noisy and a mean is pulled by
//! one slow round.

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
