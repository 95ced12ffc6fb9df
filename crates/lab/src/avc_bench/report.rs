//! The run as one JSON object (`seaccess-lab bench avc --json`), for scripts and the README's
//! tables. Its key names are what readers depend on; numbers are rounded to what the
//! measurement can tell, and a figure that was not measured (NaN) is null.

use serde::ser::{Serialize, SerializeMap, Serializer};

use super::stall::ReloadStall;
use super::AvcBench;

/// A figure rounded to `D` decimals: an integer when `D` is 0, null when not finite.
#[derive(Clone, Copy)]
struct Dec<const D: i32>(f64);

impl<const D: i32> Serialize for Dec<D> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let scale = 10f64.powi(D);
        let v = (self.0 * scale).round() / scale;
        // 2^53: beyond it an f64 no longer holds every integer.
        if !v.is_finite() {
            s.serialize_none()
        } else if D == 0 && v.abs() < 9_007_199_254_740_992.0 {
            s.serialize_i64(v as i64)
        } else {
            s.serialize_f64(v)
        }
    }
}

/// A figure that may be missing altogether (a ratio whose operands were not both measured).
fn dec<const D: i32>(v: Option<f64>) -> Dec<D> {
    Dec(v.unwrap_or(f64::NAN))
}

/// Pairs serialised as a JSON object, in their order.
struct Ordered<K, V>(Vec<(K, V)>);

impl<K: Serialize, V: Serialize> Serialize for Ordered<K, V> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[derive(serde::Serialize)]
struct Report<'a> {
    policy: &'a str,
    capacity: usize,
    keys: usize,
    hit_ns_1t: Dec<2>,
    miss_ns: Dec<1>,
    /// `hit_ops_per_s_{threads}t` for each thread count, seaccess's throughput.
    #[serde(flatten)]
    hit_ops: Ordered<String, Dec<0>>,
    ratio_2t_vs_1t: Dec<3>,
    ratio_16t_vs_2t: Dec<3>,
    ratio_2t_vs_global_mutex: Dec<2>,
    min_ratio_vs_any_design: Dec<2>,
    reload: Reload,
    /// Capacity -> hit ratio.
    zipf_hit_ratio: Ordered<String, Dec<4>>,
    /// Design -> its rows.
    designs: Ordered<&'a str, Vec<DesignRow>>,
    #[serde(flatten)]
    libselinux: Option<Libselinux<'a>>,
    instructions_per_hit: Dec<1>,
}

#[derive(serde::Serialize)]
struct Reload {
    changes: usize,
    calls: u64,
    transitions: usize,
    transition_median_ns: Dec<0>,
    transition_max_ns: Dec<0>,
    misses: usize,
    miss_median_ns: Dec<0>,
    miss_p90_ns: Dec<0>,
    commit_median_ns: Dec<0>,
    commit_p90_ns: Dec<0>,
    reload_median_ns: Dec<0>,
    reload_p90_ns: Dec<0>,
    stall_vs_miss_median: Dec<2>,
    stall_vs_miss_p90: Dec<2>,
    reload_ms: Dec<1>,
    commit_us: Dec<1>,
    refreshed: usize,
    p9999_ns: Dec<0>,
    max_ns: Dec<0>,
    no_change_p9999_ns: Dec<0>,
    no_change_max_ns: Dec<0>,
}

#[derive(serde::Serialize)]
struct DesignRow {
    threads: usize,
    hit_ns: Dec<2>,
    hit_ops_per_s: Dec<0>,
}

/// libselinux's AVC: measured, or why not (no fields when no peer was given).
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Libselinux<'a> {
    Measured {
        ratio_1t_vs_libselinux: Dec<2>,
        libselinux_string_keyed_ns: Dec<2>,
        libselinux_misses: u64,
        libselinux_wrong: u64,
    },
    Failed {
        libselinux_error: &'a str,
    },
}

impl Reload {
    fn new(r: &ReloadStall) -> Self {
        let (vs_median, vs_p90) = r.vs_miss();
        Reload {
            changes: r.changes,
            calls: r.calls,
            transitions: r.transitions,
            transition_median_ns: Dec(r.transition_median_ns),
            transition_max_ns: Dec(r.transition_max_ns),
            misses: r.misses,
            miss_median_ns: Dec(r.miss.0),
            miss_p90_ns: Dec(r.miss.1),
            commit_median_ns: Dec(r.commit.0),
            commit_p90_ns: Dec(r.commit.1),
            reload_median_ns: Dec(r.reload.0),
            reload_p90_ns: Dec(r.reload.1),
            stall_vs_miss_median: Dec(vs_median),
            stall_vs_miss_p90: Dec(vs_p90),
            reload_ms: Dec(r.reload_ms),
            commit_us: Dec(r.commit_us),
            refreshed: r.refreshed,
            p9999_ns: Dec(r.p9999_ns),
            max_ns: Dec(r.max_ns),
            no_change_p9999_ns: Dec(r.baseline_p9999_ns),
            no_change_max_ns: Dec(r.baseline_max_ns),
        }
    }
}

impl AvcBench {
    /// The run as one JSON object; `instructions_per_hit` is measured outside the lab (under
    /// callgrind), null when it was not.
    pub fn to_json(&self, instructions_per_hit: Option<f64>) -> String {
        let seaccess = |t: usize| self.ops("seaccess", t);
        let hit_ops = self
            .designs
            .iter()
            .filter(|(name, _)| name == "seaccess")
            .flat_map(|(_, rows)| {
                rows.iter()
                    .map(|&(t, _, ops)| (format!("hit_ops_per_s_{t}t"), Dec(ops)))
            })
            .collect();
        let designs = self
            .designs
            .iter()
            .map(|(name, rows)| {
                let rows = rows.iter().map(|&(threads, ns, ops)| DesignRow {
                    threads,
                    hit_ns: Dec(ns),
                    hit_ops_per_s: Dec(ops),
                });
                (name.as_str(), rows.collect())
            })
            .collect();
        let libselinux = match &self.libselinux {
            Some(Ok(p)) => Some(Libselinux::Measured {
                ratio_1t_vs_libselinux: dec(Self::ratio(seaccess(1), self.ops("libselinux", 1))),
                libselinux_string_keyed_ns: dec(p.string_keyed_ns),
                libselinux_misses: p.misses,
                libselinux_wrong: p.wrong,
            }),
            Some(Err(e)) => Some(Libselinux::Failed {
                libselinux_error: e,
            }),
            None => None,
        };
        let report = Report {
            policy: &self.policy,
            capacity: self.capacity,
            keys: self.keys,
            hit_ns_1t: Dec(self.hit_ns_1t),
            miss_ns: Dec(self.miss_ns),
            hit_ops: Ordered(hit_ops),
            ratio_2t_vs_1t: dec(Self::ratio(seaccess(2), seaccess(1))),
            ratio_16t_vs_2t: dec(Self::ratio(seaccess(16), seaccess(2))),
            ratio_2t_vs_global_mutex: dec(Self::ratio(seaccess(2), self.ops("global_mutex", 2))),
            min_ratio_vs_any_design: dec(self.lead()),
            reload: Reload::new(&self.reload),
            zipf_hit_ratio: Ordered(
                self.hit_ratios
                    .iter()
                    .map(|&(c, h)| (c.to_string(), Dec(h)))
                    .collect(),
            ),
            designs: Ordered(designs),
            libselinux,
            instructions_per_hit: dec(instructions_per_hit),
        };
        // Serialising plain structs, strings and numbers into a String cannot fail; were it to,
        // the report says so rather than vanish.
        serde_json::to_string(&report)
            .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string())
    }
}
