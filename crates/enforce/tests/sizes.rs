//! The sizes of a generation on Debian's default policy, for the report and README: run with
//! `cargo test --profile ci -p seaccess-enforce --test sizes -- --ignored --nocapture`
//! (`SEACCESS_ENFORCE_TREES=/etc:/usr/bin` for other trees, `SEACCESS_ENFORCE_START` for other
//! start contexts, comma-separated).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeSet;
use std::os::fd::AsFd;
use std::path::Path;
use std::time::Instant;

use seaccess_enforce::label::{self, TreeOptions};
use seaccess_enforce::tables::{self, Limits, Universe};
use seaccess_engine::Engine;
use seaccess_label::FileContexts;

#[test]
#[ignore]
fn sizes() {
    let Some(policy) = seaccess_testkit::debian_policy("default") else {
        return;
    };
    let Some(fc_path) = seaccess_testkit::debian_file_contexts("default") else {
        return;
    };
    let e = Engine::open(policy).unwrap();
    let fc = FileContexts::open(&fc_path).unwrap();
    let trees = std::env::var("SEACCESS_ENFORCE_TREES").unwrap_or_else(|_| "/etc".into());
    let start = std::env::var("SEACCESS_ENFORCE_START")
        .unwrap_or_else(|_| "system_u:system_r:initrc_t:s0".into());
    let t = Instant::now();
    let (mut labels, mut dirs, mut files) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    let mut inodes = 0u64;
    for tree in trees.split(':') {
        let fd = label::open_root(Path::new(tree)).unwrap();
        let opts = TreeOptions {
            key: tree.as_bytes().to_vec(),
            cross_mounts: false,
        };
        let c = label::label_tree(&e, &fc, fd.as_fd(), Path::new(tree), &opts, &mut |l| {
            labels.insert(l.sid);
            if l.kind == seaccess_label::FileKind::Dir {
                dirs.insert(l.sid);
            } else {
                files.insert(l.sid);
            }
            Ok(())
        })
        .unwrap();
        inodes += c.labeled + c.unmatched;
        eprintln!(
            "{tree}: labeled {}, unmatched {}, invalid {}, mounts skipped {}, errors {}",
            c.labeled,
            c.unmatched,
            c.invalid,
            c.mounts_skipped,
            c.errors.len()
        );
    }
    let labeled_in = t.elapsed();
    let u = Universe {
        tasks: start.split(',').map(|c| e.sid(c).unwrap()).collect(),
        dirs: dirs.iter().copied().collect(),
        files: files.iter().copied().collect(),
    };
    let t = Instant::now();
    match tables::build(&e, &u, true, &Limits::default()) {
        Ok(g) => {
            let refused: Vec<String> = g
                .transitions
                .iter()
                .filter(|(_, t)| t.newsid == 0)
                .map(|(k, _)| {
                    let c = |s: u32| e.server().sid_to_context(seaccess_types::Sid(s)).unwrap();
                    format!("{} {} class {}", c(k.ssid), c(k.tsid), k.tclass)
                })
                .collect();
            eprintln!(
                "{} transitions to a context the policy does not define, e.g. {:?}",
                refused.len(),
                refused.iter().take(3).collect::<Vec<_>>()
            );
            eprintln!(
            "trees {trees}: {inodes} inodes, {} labels ({} of directories, {} of files), labeled in {labeled_in:?}; start {start}: {} task SIDs, {} object SIDs, {} decisions, {} transitions, {} entries, built in {:?}",
            labels.len(),
            dirs.len(),
            files.len(),
            g.sids.tasks.len(),
            g.sids.objects.len(),
            g.decisions.len(),
            g.transitions.len(),
            g.entries(),
            t.elapsed()
        )
        }
        Err(err) => eprintln!(
            "trees {trees}: {inodes} inodes, {} labels; start {start}: {err} after {:?}",
            labels.len(),
            t.elapsed()
        ),
    }
}
