//! The criterion suite behind `seaccess-lab bench avc`: the hit path of seaccess's cache and of each
//! comparison design, one thread, and the miss path, on Debian's default policy where installed
//! (else the project's example policy, built by `make policies`).
//!
//! cargo bench -p seaccess-lab --bench avc
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use seaccess_avc::Avc;
use seaccess_engine::Engine;
use seaccess_lab::avc_bench::working_set;
use seaccess_lab::designs::*;
use seaccess_types::{AccessServer, ClassId, Sid};

fn policy() -> Engine {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let path = [
        "/etc/selinux/default/policy/policy.33".into(),
        root.join("target/policies/example.33"),
    ]
    .into_iter()
    .find(|p: &std::path::PathBuf| p.exists())
    .expect("no policy: install selinux-policy-default or run `make policies`");
    Engine::open(path).unwrap()
}

/// Measures `decide` cycling through the working set.
fn cycle<R>(
    c: &mut Criterion,
    name: &str,
    work: &[(Sid, Sid, ClassId)],
    decide: impl Fn(Sid, Sid, ClassId) -> R,
) {
    let mut i = 0;
    c.bench_function(name, |b| {
        b.iter(|| {
            let (s, t, k) = work[i];
            // No division on the measured path: it would cost as much as a hit.
            i += 1;
            if i == work.len() {
                i = 0;
            }
            black_box(decide(s, t, k))
        })
    });
}

fn hits<C: DecisionCache>(c: &mut Criterion, cache: &C, work: &[(Sid, Sid, ClassId)]) {
    for &(s, t, k) in work {
        let _ = cache.decide(s, t, k);
    }
    cycle(c, &format!("hit/{}", cache.name()), work, |s, t, k| {
        cache.decide(s, t, k).map(|d| d.allowed)
    });
}

fn bench(c: &mut Criterion) {
    let engine = policy();
    let server = engine.server();
    let work = working_set(server, 400, 1);
    let dynserver: Arc<dyn AccessServer> = server.clone();
    hits(c, &**engine.avc(), &work);
    hits(c, &GlobalMutex::new(dynserver.clone()), &work);
    hits(c, &GlobalRwLock::new(dynserver.clone()), &work);
    hits(c, &BucketMutex::new(dynserver.clone()), &work);
    hits(c, &BucketRwLock::new(dynserver.clone()), &work);
    hits(c, &BlockMutex::new(dynserver.clone()), &work);
    // A 16-entry cache cycling through 400 triples misses on every lookup (built by hand, not
    // by the engine: a comparison cache sized to miss).
    let small = Avc::new(dynserver, 16);
    cycle(c, "miss/seaccess", &work, |s, t, k| {
        small.decide(s, t, k).map(|d| d.allowed)
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
