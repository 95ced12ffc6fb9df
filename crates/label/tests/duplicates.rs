//! Duplicate specifications (the same expression twice, for file types that overlap), judged
//! as `setfiles -c POLICY FILE` judges them (libselinux's nodups_specs, run by every validating
//! open): refused by a default open, with or without a policy to validate against, and
//! accepted only when the caller asks for libselinux's non-validating behaviour
//! (`allow_duplicates`, what the C library's selabel_open sets without SELABEL_OPT_VALIDATE).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

use seaccess_label::{FileContexts, LabelError, OpenOptions};

fn setfiles_accepts(policy: &Path, fc: &Path) -> bool {
    Command::new("setfiles")
        .arg("-c")
        .arg(policy)
        .arg(fc)
        .output()
        .expect("setfiles (policycoreutils, make deps)")
        .status
        .success()
}

/// Sets of two or three lines: duplicates of each kind, and near misses that are not.
const SETS: &[&str] = &[
    "/x(/.*)?\tsystem_u:object_r:etc_t:s0\n/x(/.*)?\tsystem_u:object_r:etc_t:s0\n",
    "/x(/.*)?\tsystem_u:object_r:etc_t:s0\n/x(/.*)?\tsystem_u:object_r:bin_t:s0\n",
    "/x\t-d\tsystem_u:object_r:etc_t:s0\n/x\t--\tsystem_u:object_r:bin_t:s0\n",
    "/x\t-d\tsystem_u:object_r:etc_t:s0\n/x\tsystem_u:object_r:bin_t:s0\n",
    "/x\t--\tsystem_u:object_r:etc_t:s0\n/x\t--\tsystem_u:object_r:bin_t:s0\n",
    "/x\tsystem_u:object_r:etc_t:s0\n/x/\tsystem_u:object_r:bin_t:s0\n",
    "/x(/.*)?\tsystem_u:object_r:etc_t:s0\n/y\tsystem_u:object_r:bin_t:s0\n/x(/.*)?\t<<none>>\n",
];

#[test]
fn duplicates_are_refused_as_setfiles_refuses_them() {
    let Some(policy) = seaccess_testkit::debian_policy("default") else {
        return;
    };
    let server = seaccess_testkit::load(&policy);
    let g = server.snapshot();
    let check = |c: &str| g.context_to_sid(c).map(|_| ()).map_err(|e| e.to_string());
    let dir = std::env::temp_dir().join(format!("seaccess-dups-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut refused, mut accepted) = (0, 0);
    for (i, set) in SETS.iter().enumerate() {
        let fc = dir.join(format!("fc{i}"));
        std::fs::write(&fc, set).unwrap();
        let theirs = setfiles_accepts(&policy, &fc);
        let plain = FileContexts::open(&fc);
        let validated = FileContexts::open_with(
            &fc,
            &OpenOptions {
                validate: Some(&check),
                ..Default::default()
            },
        );
        for (how, ours) in [("without a policy", plain), ("validating", validated)] {
            match (ours, theirs) {
                (Ok(_), true) => {}
                (Err(LabelError::Duplicate { msg, .. }), false) => {
                    // The message names both lines.
                    assert!(
                        msg.contains("line 1") && msg.contains("line 2")
                            || msg.contains("line 1") && msg.contains("line 3"),
                        "{set:?}: {msg}"
                    );
                }
                (ours, theirs) => panic!(
                    "{set:?} {how}: setfiles -c {}, seaccess {:?}",
                    if theirs { "accepts" } else { "refuses" },
                    ours.err()
                ),
            }
        }
        if theirs {
            accepted += 1;
        } else {
            refused += 1;
        }
        // libselinux's open without validation takes every one of them.
        FileContexts::open_with(
            &fc,
            &OpenOptions {
                allow_duplicates: true,
                ..Default::default()
            },
        )
        .unwrap();
    }
    assert!(
        refused >= 3 && accepted >= 2,
        "both sides must be tested: {refused} refused, {accepted} accepted"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
