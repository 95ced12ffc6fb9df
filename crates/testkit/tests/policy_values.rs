//! Raw values no compiler writes but the kernel's policydb_read loads, and the ones it refuses:
//! the reader must load the first (and answer as the kernel does with them) and refuse the
//! second, naming where.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_policy::read_policy;
use seaccess_security::{FsUseBehavior, SecurityServer};
use seaccess_testkit::*;

/// Where `pattern` occurs in `data`: exactly once, or the test is not patching what it means to.
fn find_once(data: &[u8], pattern: &[u8], what: &str) -> usize {
    let at: Vec<usize> = data
        .windows(pattern.len())
        .enumerate()
        .filter(|(_, w)| *w == pattern)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "{what}");
    at[0]
}

/// example.cil plus an fs_use rule for "zzfs", with its behaviour word set to `behaviour`.
fn fs_use_of(behaviour: u32) -> Vec<u8> {
    let path = compile_variant("example", "fsuse_zzfs", 33, |s| {
        format!("{s}\n(fsuse xattr zzfs fs_ctx)\n")
    });
    let mut data = std::fs::read(path).unwrap();
    // ocontext_read's OCON_FSUSE record: behaviour, name length, name, context.
    let name = [&4u32.to_le_bytes()[..], b"zzfs"].concat();
    let at = find_once(&data, &name, "zzfs's fs_use record") - 4;
    assert_eq!(
        data[at..at + 4],
        1u32.to_le_bytes(),
        "fs_use_xattr is behaviour 1"
    );
    data[at..at + 4].copy_from_slice(&behaviour.to_le_bytes());
    data
}

/// policydb.c's ocontext_read refuses SECURITY_FS_USE_MNTPOINT (6: "determined at runtime, not
/// in policy DB") and anything above SECURITY_FS_USE_MAX (7), and loads the rest: 0 (named by
/// no SECURITY_FS_USE_*), xattr 1, trans 2, task 3, genfs 4, none 5, native 7.
#[test]
fn fs_use_behaviours_as_the_kernel_reads_them() {
    let loads = [
        (0, FsUseBehavior::Unspecified),
        (1, FsUseBehavior::Xattr),
        (2, FsUseBehavior::Trans),
        (3, FsUseBehavior::Task),
        (4, FsUseBehavior::Genfs),
        (5, FsUseBehavior::None),
        (7, FsUseBehavior::Native),
    ];
    for (raw, want) in loads {
        let p = read_policy(&fs_use_of(raw))
            .unwrap_or_else(|e| panic!("behaviour {raw}: the kernel loads it: {e}"));
        let s = SecurityServer::new(p);
        let g = s.snapshot();
        let (b, sid) = g.fs_use("zzfs").unwrap();
        assert_eq!(b, want, "behaviour {raw}");
        assert_eq!(
            g.sid_to_context(sid).unwrap(),
            g.sid_to_context(g.fs_use("ext4").unwrap().1).unwrap()
        );
    }
    for raw in [6, 8, 0x100] {
        let data = fs_use_of(raw);
        let Err(e) = read_policy(&data) else {
            panic!("behaviour {raw}: the kernel refuses it")
        };
        let msg = e.to_string();
        assert!(
            msg.starts_with("object contexts, byte ")
                && msg.contains(&format!("behaviour {raw}"))
                && msg.contains("zzfs"),
            "{msg}"
        );
        assert_eq!(
            data[e.offset()..e.offset() + 4],
            raw.to_le_bytes(),
            "{msg}: not at the behaviour"
        );
    }
}

/// transitions.cil with the dir class's four default words (user target 2, role target 2,
/// range target low-high 6, type source 1, as its defaultuser/role/range/type rules say)
/// replaced by `words`.
fn dir_defaults(label: &str, words: [u32; 4]) -> SecurityServer {
    let mut data = std::fs::read(compile("transitions", 33)).unwrap();
    let old: Vec<u8> = [2u32, 2, 6, 1]
        .iter()
        .flat_map(|w| w.to_le_bytes())
        .collect();
    // Found once in the file; that they are dir's is shown by the last check of the test below.
    let at = find_once(&data, &old, "dir's default words");
    for (i, w) in words.iter().enumerate() {
        data[at + 4 * i..at + 4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    SecurityServer::new(
        read_policy(&data).unwrap_or_else(|e| panic!("{label}: the kernel loads it: {e}")),
    )
}

/// policydb.c's class_read loads any default_user, default_role, default_range and
/// default_type word, and security_compute_sid and mls_compute_sid act only on the values
/// they name (DEFAULT_SOURCE, DEFAULT_TARGET, DEFAULT_SOURCE_LOW ... DEFAULT_GLBLUB), so an
/// unknown one answers as 0 (no default rule) does. (libsepol refuses such a policy; the
/// kernel is the specification.)
#[test]
fn unknown_default_values_load_and_act_as_no_default() {
    let none = dir_defaults("defaults_none", [0, 0, 0, 0]);
    let g0 = none.snapshot();
    let queries: Vec<String> = all_triples(g0.policy())
        .into_iter()
        .filter(|q| q.ends_with(" dir"))
        .collect();
    assert!(queries.len() > 100);
    let unknown = [
        ("defaults_user9", [9, 0, 0, 0]),
        ("defaults_role9", [0, 9, 0, 0]),
        ("defaults_range99", [0, 0, 99, 0]),
        ("defaults_type3", [0, 0, 0, 3]),
    ];
    for (label, words) in unknown {
        let s = dir_defaults(label, words);
        let g = s.snapshot();
        for mode in ["create", "relabel", "member"] {
            for q in &queries {
                assert_eq!(
                    answer(&g, mode, q),
                    answer(&g0, mode, q),
                    "{label}: {mode} {q}"
                );
            }
        }
    }
    // The words patched are dir's: its real defaults answer differently from none at all.
    let real = dir_defaults("defaults_real", [2, 2, 6, 1]);
    let g = real.snapshot();
    assert!(queries
        .iter()
        .any(|q| answer(&g, "create", q) != answer(&g0, "create", q)));
}
