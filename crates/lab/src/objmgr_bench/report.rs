//! The run as one JSON object (`seaccess-lab bench objmgr --json`). The key names are what readers
//! depend on (issue 10 fixes `treewalk`, `readwrite`, `pathwalk`, each with `vanilla_ns`,
//! `slow_overhead_pct` and `fast_overhead_pct`, and `pathwalk`'s
//! `lookups_per_component_warm`); figures are rounded to what a noisy machine can tell, and
//! one that was not measured (NaN) is null.

use serde::Serialize;

use super::{Figures, ObjmgrBench};

/// `v` rounded to `d` decimals.
fn round(v: f64, d: i32) -> f64 {
    let scale = 10f64.powi(d);
    (v * scale).round() / scale
}

#[derive(Serialize)]
struct Experiment {
    vanilla_ns: f64,
    slow_ns: f64,
    fast_ns: f64,
    slow_overhead_pct: f64,
    fast_overhead_pct: f64,
    slow_best_pct: f64,
    fast_best_pct: f64,
    slow_hooks_ns: f64,
    fast_hooks_ns: f64,
    fast_hooks_pct: f64,
    ops_per_pass: usize,
    ops_per_unit: usize,
    units: usize,
    lookups_per_op_slow: f64,
    lookups_per_op_fast: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    lookups_per_component_warm: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lookups_per_component_slow: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deep_paths: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_depth: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_depth: Option<usize>,
}

impl Experiment {
    fn new(f: &Figures) -> Experiment {
        Experiment {
            vanilla_ns: round(f.vanilla_ns, 1),
            slow_ns: round(f.slow_ns, 1),
            fast_ns: round(f.fast_ns, 1),
            slow_overhead_pct: round(f.slow_overhead_pct, 2),
            fast_overhead_pct: round(f.fast_overhead_pct, 2),
            slow_best_pct: round(f.slow_best_pct, 2),
            fast_best_pct: round(f.fast_best_pct, 2),
            slow_hooks_ns: round(f.slow_hooks_ns, 1),
            fast_hooks_ns: round(f.fast_hooks_ns, 1),
            fast_hooks_pct: round(f.fast_hooks_pct(), 2),
            ops_per_pass: f.ops,
            ops_per_unit: f.unit,
            units: f.units,
            lookups_per_op_slow: round(f.lookups_per_op_slow, 3),
            lookups_per_op_fast: round(f.lookups_per_op_fast, 3),
            lookups_per_component_warm: None,
            lookups_per_component_slow: None,
            deep_paths: None,
            min_depth: None,
            max_depth: None,
        }
    }
}

#[derive(Serialize)]
struct Report<'a> {
    policy: &'a str,
    subject: &'a str,
    object: &'a str,
    rounds: usize,
    /// Present (true) only in a control run, whose fast figures are no hooks' at all.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    control: bool,
    dirs: usize,
    files: usize,
    treewalk: Experiment,
    readwrite: Experiment,
    pathwalk: Experiment,
}

impl ObjmgrBench {
    /// The run as one JSON object.
    pub fn to_json(&self) -> String {
        let mut pathwalk = Experiment::new(&self.pathwalk);
        pathwalk.lookups_per_component_warm = Some(round(self.lookups_per_component_warm, 4));
        pathwalk.lookups_per_component_slow = Some(round(self.lookups_per_component_slow, 4));
        pathwalk.deep_paths = Some(self.deep_paths);
        pathwalk.min_depth = Some(self.depth.0);
        pathwalk.max_depth = Some(self.depth.1);
        let report = Report {
            policy: &self.policy,
            subject: &self.subject,
            object: &self.object,
            rounds: self.rounds,
            control: self.control,
            dirs: self.dirs,
            files: self.files,
            treewalk: Experiment::new(&self.treewalk),
            readwrite: Experiment::new(&self.readwrite),
            pathwalk,
        };
        // Serialising plain structs, strings and numbers (a NaN becomes null) into a String
        // cannot fail; were it to, the report says so rather than vanish.
        serde_json::to_string(&report)
            .unwrap_or_else(|e| serde_json::json!({ "error": e.to_string() }).to_string())
    }
}
