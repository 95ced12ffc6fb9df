//! The filesystems map (what an inode nobody labeled is decided with, by its file system's
//! type) against setools' own reading of Debian's default and MLS policies: `seinfo --fs_use
//! -x`, `seinfo --genfscon -x` and `seinfo --initialsid -x`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use seaccess_enforce::filesystems;
use seaccess_enforce::layout::{FsKey, FS_CREATOR, FS_FIXED, FS_UNCHECKED};
use seaccess_engine::Engine;
use seaccess_types::Sid;

/// seinfo's statements of one kind, as lines of words (the trailing ';' dropped), the header
/// left out.
fn seinfo(policy: &Path, what: &str, keyword: &str) -> Option<Vec<Vec<String>>> {
    let out = Command::new("seinfo")
        .arg(what)
        .arg("-x")
        .arg(policy)
        .output()
        .ok()?;
    assert!(out.status.success(), "seinfo {what} failed");
    let text = String::from_utf8(out.stdout).unwrap();
    Some(
        text.lines()
            .map(|l| l.trim().trim_end_matches(';'))
            .filter(|l| l.starts_with(keyword))
            .map(|l| l.split_whitespace().map(String::from).collect())
            .collect(),
    )
}

/// A context as seinfo prints it (words from `from` on; an MLS range as "s0 - s15:c0.c1023"),
/// as the server prints it.
fn context(w: &[String], from: usize) -> String {
    w[from..].join(" ").replace(" - ", "-")
}

/// What setools says an inode nobody labeled is on each named file system type: a context,
/// "creator" or "unchecked".
fn expected(policy: &Path) -> Option<BTreeMap<String, String>> {
    let initial: BTreeMap<String, String> = seinfo(policy, "--initialsid", "sid ")?
        .into_iter()
        .map(|w| (w[1].clone(), context(&w, 2)))
        .collect();
    let mut out = BTreeMap::new();
    for w in seinfo(policy, "--fs_use", "fs_use_")? {
        let v = match w[0].as_str() {
            "fs_use_xattr" => initial["file"].clone(),
            "fs_use_trans" => context(&w, 2),
            "fs_use_task" => "creator".to_string(),
            other => panic!("seinfo printed {other}"),
        };
        out.insert(w[1].clone(), v);
    }
    // genfscon NAME PATH [-TYPE] CONTEXT
    let mut genfs: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for w in seinfo(policy, "--genfscon", "genfscon ")? {
        genfs.entry(w[1].clone()).or_default().push(w);
    }
    for (name, entries) in genfs {
        if out.contains_key(&name) {
            continue;
        }
        let v = match entries.as_slice() {
            [one] if one[2] == "/" && !one[3].starts_with('-') => context(one, 3),
            _ => "unchecked".to_string(),
        };
        out.insert(name, v);
    }
    Some(out)
}

fn compare(which: &str) {
    let Some(policy) = seaccess_testkit::debian_policy(which) else {
        println!("SKIP: Debian's {which} policy is not installed");
        return;
    };
    let Some(want) = expected(&policy) else {
        println!("SKIP: seinfo (setools) is not installed");
        return;
    };
    let engine = Engine::builder().open(&policy).unwrap();
    let ctx = |s: u32| engine.server().sid_to_context(Sid(s)).unwrap();
    let (table, too_long) = engine
        .with_generation(|g| Ok(filesystems::table(g.policy())))
        .unwrap();
    assert!(too_long.is_empty(), "names left out: {too_long:?}");
    let got: BTreeMap<String, String> = table
        .iter()
        .map(|(k, d)| {
            let name = String::from_utf8(k.name.split(|&b| b == 0).next().unwrap().to_vec());
            let v = match d.kind {
                FS_FIXED => ctx(d.sid),
                FS_CREATOR => "creator".to_string(),
                FS_UNCHECKED => "unchecked".to_string(),
                k => panic!("kind {k}"),
            };
            (name.unwrap(), v)
        })
        .collect();
    assert_eq!(got, want, "{which}: the filesystems map against seinfo");
    for kind in ["creator", "unchecked"] {
        assert!(
            got.values().any(|v| v == kind),
            "{which}: no {kind} type met"
        );
    }
    // A type the policy does not name is left to the BPF side's own default (unlabeled).
    assert!(!got.contains_key("seaccessfs"));
    println!("{which}: {} file system types agree with seinfo", got.len());
}

#[test]
fn the_default_policys_file_systems_agree_with_seinfo() {
    compare("default");
}

#[test]
fn the_mls_policys_file_systems_agree_with_seinfo() {
    compare("mls");
}

#[test]
fn a_name_that_does_not_fit_the_key_is_refused() {
    assert!(FsKey::new("ext4").is_some());
    assert!(FsKey::new("infinibandeventfs").is_some());
    assert!(FsKey::new(&"x".repeat(31)).is_some());
    assert!(FsKey::new(&"x".repeat(32)).is_none());
    assert!(FsKey::new("nul\0inside").is_none());
}
