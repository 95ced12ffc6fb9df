//! The JSON report of `seaccess-lab bench avc --json`: its keys are what scripts and the README's
//! tables read, so they are pinned here (as the report has printed them since it was written),
//! and it must stay valid JSON whatever was or was not measured.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::fmt;

use seaccess_lab::avc_bench::{AvcBench, PeerRun, ReloadStall};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A JSON document's shape with its keys in the order written (serde_json's `Value` sorts them).
enum Tree {
    Object(Vec<(String, Tree)>),
    Array(Vec<Tree>),
    Scalar,
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tree;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Tree, A::Error> {
                let mut v = Vec::new();
                while let Some((k, t)) = m.next_entry::<String, Tree>()? {
                    v.push((k, t));
                }
                Ok(Tree::Object(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Tree, A::Error> {
                let mut v = Vec::new();
                while let Some(t) = s.next_element::<Tree>()? {
                    v.push(t);
                }
                Ok(Tree::Array(v))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Tree, E> {
                Ok(Tree::Scalar)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Tree, E> {
                Ok(Tree::Scalar)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Tree, E> {
                Ok(Tree::Scalar)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Tree, E> {
                Ok(Tree::Scalar)
            }
            fn visit_str<E>(self, _: &str) -> Result<Tree, E> {
                Ok(Tree::Scalar)
            }
            fn visit_unit<E>(self) -> Result<Tree, E> {
                Ok(Tree::Scalar)
            }
        }
        d.deserialize_any(V)
    }
}

impl Tree {
    fn at(&self, key: &str) -> &Tree {
        match self {
            Tree::Object(v) => {
                &v.iter()
                    .find(|(k, _)| k == key)
                    .unwrap_or_else(|| panic!("no key {key}"))
                    .1
            }
            _ => panic!("{key}: not an object"),
        }
    }
    fn keys(&self) -> Vec<&str> {
        match self {
            Tree::Object(v) => v.iter().map(|(k, _)| k.as_str()).collect(),
            _ => panic!("not an object"),
        }
    }
}

/// The report's text, checked to be JSON.
fn text(b: &AvcBench, instructions_per_hit: Option<f64>) -> String {
    let text = b.to_json(instructions_per_hit);
    if let Err(e) = serde_json::from_str::<IgnoredAny>(&text) {
        panic!("not JSON ({e}): {text}");
    }
    text
}

fn json(b: &AvcBench, instructions_per_hit: Option<f64>) -> Value {
    serde_json::from_str(&text(b, instructions_per_hit)).unwrap()
}

fn tree(b: &AvcBench, instructions_per_hit: Option<f64>) -> Tree {
    serde_json::from_str(&text(b, instructions_per_hit)).unwrap()
}

fn bench(libselinux: Option<Result<PeerRun, String>>) -> AvcBench {
    let rows = |base: f64| {
        vec![
            (1, 10.0, base),
            (2, 20.0, base * 1.9),
            (16, 100.0, base * 2.0),
        ]
    };
    AvcBench {
        policy: "pol\"icy".into(),
        capacity: 8192,
        keys: 400,
        hit_ns_1t: 10.123,
        designs: vec![
            ("seaccess".into(), rows(100e6)),
            ("global_mutex".into(), rows(20e6)),
            ("libselinux".into(), rows(10e6)),
        ],
        miss_ns: 700.24,
        reload: ReloadStall {
            changes: 12,
            calls: 1000,
            transitions: 3,
            transition_median_ns: 500.0,
            transition_max_ns: 900.0,
            reload_ms: 70.0,
            commit_us: 700.0,
            refreshed: 400,
            misses: 90,
            miss: (1000.0, 2000.0),
            commit: (500.0, 800.0),
            reload: (600.0, 900.0),
            p9999_ns: 500.0,
            max_ns: 1e5,
            baseline_p9999_ns: 400.0,
            baseline_max_ns: 5e4,
        },
        hit_ratios: vec![(512, 0.43), (8192, 0.73)],
        libselinux,
    }
}

fn peer() -> PeerRun {
    PeerRun {
        rows: vec![],
        string_keyed_ns: Some(587.0),
        misses: 0,
        wrong: 2,
    }
}

const TOP: &[&str] = &[
    "policy",
    "capacity",
    "keys",
    "hit_ns_1t",
    "miss_ns",
    "hit_ops_per_s_1t",
    "hit_ops_per_s_2t",
    "hit_ops_per_s_16t",
    "ratio_2t_vs_1t",
    "ratio_16t_vs_2t",
    "ratio_2t_vs_global_mutex",
    "min_ratio_vs_any_design",
    "reload",
    "zipf_hit_ratio",
    "designs",
];

const RELOAD: &[&str] = &[
    "changes",
    "calls",
    "transitions",
    "transition_median_ns",
    "transition_max_ns",
    "misses",
    "miss_median_ns",
    "miss_p90_ns",
    "commit_median_ns",
    "commit_p90_ns",
    "reload_median_ns",
    "reload_p90_ns",
    "stall_vs_miss_median",
    "stall_vs_miss_p90",
    "reload_ms",
    "commit_us",
    "refreshed",
    "p9999_ns",
    "max_ns",
    "no_change_p9999_ns",
    "no_change_max_ns",
];

#[test]
fn the_report_has_the_keys_it_always_had_in_order() {
    let v = tree(&bench(Some(Ok(peer()))), Some(1.5));
    let mut want: Vec<&str> = TOP.to_vec();
    want.extend([
        "ratio_1t_vs_libselinux",
        "libselinux_string_keyed_ns",
        "libselinux_misses",
        "libselinux_wrong",
        "instructions_per_hit",
    ]);
    assert_eq!(v.keys(), want);
    assert_eq!(v.at("reload").keys(), RELOAD);
    assert_eq!(v.at("zipf_hit_ratio").keys(), ["512", "8192"]);
    assert_eq!(
        v.at("designs").keys(),
        ["seaccess", "global_mutex", "libselinux"]
    );
    let Tree::Array(rows) = v.at("designs").at("global_mutex") else {
        panic!("rows: not an array")
    };
    assert_eq!(rows.len(), 3);
    for row in rows {
        assert_eq!(row.keys(), ["threads", "hit_ns", "hit_ops_per_s"]);
    }
}

#[test]
fn the_report_carries_the_measurements() {
    let v = json(&bench(Some(Ok(peer()))), Some(1.5));
    assert_eq!(v["policy"], "pol\"icy");
    assert_eq!(v["capacity"], 8192);
    assert_eq!(v["hit_ns_1t"].as_f64(), Some(10.12));
    assert_eq!(v["miss_ns"].as_f64(), Some(700.2));
    assert_eq!(v["hit_ops_per_s_2t"].as_f64(), Some(190e6));
    // 190e6 / 100e6, and seaccess's lead: its worst ratio to another design is 10x over
    // global_mutex and libselinux at every thread count.
    assert_eq!(v["ratio_2t_vs_1t"].as_f64(), Some(1.9));
    assert_eq!(v["ratio_2t_vs_global_mutex"].as_f64(), Some(5.0));
    assert_eq!(v["min_ratio_vs_any_design"].as_f64(), Some(5.0));
    assert_eq!(v["ratio_1t_vs_libselinux"].as_f64(), Some(10.0));
    assert_eq!(v["reload"]["miss_p90_ns"].as_f64(), Some(2000.0));
    // The larger of commit and reload over one miss: 600 / 1000 and 900 / 2000.
    assert_eq!(v["reload"]["stall_vs_miss_median"].as_f64(), Some(0.6));
    assert_eq!(v["reload"]["stall_vs_miss_p90"].as_f64(), Some(0.45));
    assert_eq!(v["zipf_hit_ratio"]["8192"].as_f64(), Some(0.73));
    assert_eq!(v["designs"]["seaccess"][2]["threads"], 16);
    assert_eq!(v["libselinux_wrong"], 2);
    assert_eq!(v["instructions_per_hit"].as_f64(), Some(1.5));
}

#[test]
fn the_libselinux_fields_follow_whether_the_peer_ran() {
    let failed = bench(Some(Err("no \"peer\"".into())));
    let mut want: Vec<&str> = TOP.to_vec();
    want.extend(["libselinux_error", "instructions_per_hit"]);
    assert_eq!(tree(&failed, None).keys(), want);
    let failed = json(&failed, None);
    assert_eq!(failed["libselinux_error"], "no \"peer\"");
    assert_eq!(failed["instructions_per_hit"], Value::Null);

    let mut want: Vec<&str> = TOP.to_vec();
    want.push("instructions_per_hit");
    assert_eq!(tree(&bench(None), None).keys(), want);
}

/// A figure that could not be measured (no calls timed, a peer that printed nothing) is null,
/// never a bare NaN that no JSON reader accepts.
#[test]
fn unmeasured_figures_are_null() {
    let mut b = bench(Some(Ok(PeerRun {
        string_keyed_ns: None,
        ..peer()
    })));
    b.hit_ns_1t = f64::NAN;
    b.reload.miss = (f64::NAN, f64::NAN);
    b.reload.transition_median_ns = f64::NAN;
    let v = json(&b, Some(f64::INFINITY));
    assert_eq!(v["hit_ns_1t"], Value::Null);
    assert_eq!(v["reload"]["miss_median_ns"], Value::Null);
    assert_eq!(v["reload"]["transition_median_ns"], Value::Null);
    assert_eq!(v["libselinux_string_keyed_ns"], Value::Null);
    assert_eq!(v["instructions_per_hit"], Value::Null);
}
