//! Hostile policy files: truncated at many points and with thousands of random byte flips. Every
//! load must end in a valid policy or an error naming a section and offset, never a panic, and
//! memory must stay bounded. Where the damage is known to be found where it is (a truncation, a
//! count made huge), the error must name the damaged section and an offset inside it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_lab::XorShift;
use seaccess_policy::{read_policy, section_starts, PolicyError, Section};
use seaccess_testkit::*;

fn peak_rss_kib() -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn check_error(e: &PolicyError, len: usize) {
    assert!(
        e.offset() <= len,
        "error offset {} beyond the file ({len} bytes): {e}",
        e.offset()
    );
    assert!(!e.to_string().is_empty());
}

/// The section of the intact file holding byte `at`, and where it begins and ends (a section
/// the version lacks is empty: the byte belongs to the next one).
fn section_of(starts: &[(Section, usize)], len: usize, at: usize) -> (Section, usize, usize) {
    let i = starts.iter().rposition(|&(_, s)| s <= at).unwrap();
    let end = starts.get(i + 1).map_or(len, |&(_, s)| s);
    (starts[i].0, starts[i].1, end)
}

/// `e` is reported in the section holding byte `damage` of the intact file, at or after the
/// section's start and no further than `last` (the last byte it could have read up to).
fn check_in_section(
    e: &PolicyError,
    starts: &[(Section, usize)],
    len: usize,
    damage: usize,
    last: usize,
    what: &str,
) {
    let (section, start, _) = section_of(starts, len, damage);
    assert_eq!(
        e.section(),
        section,
        "{what}: damage at byte {damage} (in {section}, from byte {start}) reported as: {e}"
    );
    assert!(
        (start..=last).contains(&e.offset()),
        "{what}: damage at byte {damage} (in {section}, bytes {start}..) reported at: {e}"
    );
}

fn batter(data: &[u8], truncations: usize, flips: usize, seed: u64) {
    let starts = section_starts(data).expect("the intact policy must load");
    let mut rng = XorShift::new(seed);
    // Every prefix shorter than the file is an error, found in the section the cut falls in.
    let step = (data.len() / truncations).max(1);
    for cut in (0..data.len()).step_by(step).chain([data.len() - 1]) {
        match read_policy(&data[..cut]) {
            Ok(_) => panic!("a policy cut at byte {cut} of {} loaded", data.len()),
            Err(e) => {
                check_error(&e, cut);
                check_in_section(&e, &starts, data.len(), cut, cut, &format!("cut at {cut}"));
            }
        }
    }
    // Each section's first word (a count, a symbol table's value count, or a bitmap's map
    // unit) made huge: refused at that word, in that section.
    let mut buf = data.to_vec();
    for w in starts.windows(2) {
        let ((section, at), (_, end)) = (w[0], w[1]);
        if end < at + 4 || section == Section::Header {
            continue;
        }
        let saved: [u8; 4] = buf[at..at + 4].try_into().unwrap();
        buf[at..at + 4].copy_from_slice(&0xfff0_0000u32.to_le_bytes());
        match read_policy(&buf) {
            Ok(_) => panic!("{section}: a huge first word at byte {at} loaded"),
            Err(e) => check_in_section(
                &e,
                &starts,
                data.len(),
                at,
                end - 1,
                &format!("{section} word at {at}"),
            ),
        }
        buf[at..at + 4].copy_from_slice(&saved);
    }
    // Random corruption: one to four bytes changed at random places. A change may be found in a
    // later section (a count read wrong shifts everything after it) or an earlier one (a
    // smaller symbol count makes an earlier reference dangle), so only the file bounds hold.
    let mut errors = 0;
    for _ in 0..flips {
        let n = 1 + rng.below(4);
        let mut saved = Vec::new();
        for _ in 0..n {
            let i = rng.below(buf.len());
            saved.push((i, buf[i]));
            buf[i] = match rng.below(3) {
                0 => buf[i] ^ (1 << rng.below(8)),
                1 => 0xff,
                _ => rng.next_u64() as u8,
            };
        }
        if let Err(e) = read_policy(&buf) {
            check_error(&e, buf.len());
            errors += 1;
        }
        for (i, b) in saved.into_iter().rev() {
            buf[i] = b;
        }
    }
    assert!(errors > 0, "no corruption was detected at all");
}

#[test]
fn own_policies_survive_truncation_and_corruption() {
    for name in policy_names() {
        let v = *versions(&name).last().unwrap();
        let data = std::fs::read(compile(&name, v)).unwrap();
        batter(&data, 400, 2_000, 0x9e37_79b9_7f4a_7c15 ^ v as u64);
    }
    // checkpolicy's layouts too: symbol tables with values no entry names.
    for name in ["holes", "cond_rules"] {
        let data = std::fs::read(compile_conf(name, 33)).unwrap();
        batter(&data, 400, 2_000, 0x2545_f491_4f6c_dd1d);
    }
    assert!(
        peak_rss_kib() < 1024 * 1024,
        "peak memory {} KiB",
        peak_rss_kib()
    );
}

#[test]
fn debian_policy_survives_truncation_and_corruption() {
    let Some(p) = debian_policy("default") else {
        return;
    };
    let data = std::fs::read(p).unwrap();
    batter(&data, 300, 400, 42);
    assert!(
        peak_rss_kib() < 1024 * 1024,
        "peak memory {} KiB",
        peak_rss_kib()
    );
}

#[test]
fn huge_counts_are_rejected_before_allocation() {
    let Some(p) = debian_policy("default") else {
        return;
    };
    let mut data = std::fs::read(p).unwrap();
    // The first symbol table's element count, right after the header and two bitmaps: set every
    // u32 in the first kilobyte to a huge value in turn; each must fail fast and small.
    let before = peak_rss_kib();
    for i in (8..1024).step_by(4) {
        let saved: [u8; 4] = data[i..i + 4].try_into().unwrap();
        data[i..i + 4].copy_from_slice(&0xfff0_0000u32.to_le_bytes());
        if let Err(e) = read_policy(&data) {
            check_error(&e, data.len());
        }
        data[i..i + 4].copy_from_slice(&saved);
    }
    assert!(
        peak_rss_kib() - before < 256 * 1024,
        "memory grew by {} KiB",
        peak_rss_kib() - before
    );
}

#[test]
fn errors_name_section_and_offset() {
    let Some(p) = debian_policy("default") else {
        return;
    };
    let data = std::fs::read(p).unwrap();
    let e = read_policy(&data[..100]).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("byte"), "{msg}");
    let mut bad = data.clone();
    bad[0] ^= 1;
    let msg = read_policy(&bad).unwrap_err().to_string();
    assert!(msg.contains("magic"), "{msg}");
    let mut bad = data.clone();
    bad[16..20].copy_from_slice(&99u32.to_le_bytes());
    let msg = read_policy(&bad).unwrap_err().to_string();
    assert!(msg.contains("version 99"), "{msg}");
    let mut extra = data.clone();
    extra.push(0);
    let msg = read_policy(&extra).unwrap_err().to_string();
    assert!(msg.contains("after the last section"), "{msg}");
}

/// Version 34 only adds extended permissions inside conditionals: a version-33 image relabelled
/// 34 must load and decide identically; versions outside 24..=34 are refused.
#[test]
fn version_34_and_out_of_range_versions() {
    let Some(p) = debian_policy("default") else {
        return;
    };
    let data = std::fs::read(p).unwrap();
    // magic, length, "SE Linux", then the version.
    assert_eq!(u32::from_le_bytes(data[16..20].try_into().unwrap()), 33);
    let mut v34 = data.clone();
    v34[16..20].copy_from_slice(&34u32.to_le_bytes());
    let a = seaccess_security::SecurityServer::from_bytes(&data).unwrap();
    let b = seaccess_security::SecurityServer::from_bytes(&v34).unwrap();
    assert_eq!(b.snapshot().policy().version, 34);
    if let Some(oracle) = oracle() {
        let queries = gen(
            &oracle,
            std::path::Path::new("/etc/selinux/default/policy/policy.33"),
            5,
            2000,
        );
        let (ga, gb) = (a.snapshot(), b.snapshot());
        for q in &queries {
            assert_eq!(answer(&ga, "av", q), answer(&gb, "av", q), "{q}");
        }
    }
    for bad in [23u32, 35, 0, u32::MAX] {
        let mut d = data.clone();
        d[16..20].copy_from_slice(&bad.to_le_bytes());
        let e = read_policy(&d).unwrap_err().to_string();
        assert!(e.contains(&format!("version {bad}")), "{e}");
    }
}

/// Inputs the fuzzers found; each must load or fail cleanly, and a loaded one must answer
/// queries, all in bounded memory.
#[test]
fn fuzz_regressions() {
    let dir = root().join("testdata/fuzz-regressions");
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let data = std::fs::read(&path).unwrap();
        if let Ok(p) = read_policy(&data) {
            let s = seaccess_security::SecurityServer::new(p);
            let g = s.snapshot();
            for a in 1..=4 {
                for c in 1..=4 {
                    let _ = g.compute_av(
                        seaccess_types::Sid(a),
                        seaccess_types::Sid(1),
                        seaccess_types::ClassId(c),
                    );
                    let _ = g.compute_create(
                        seaccess_types::Sid(a),
                        seaccess_types::Sid(1),
                        seaccess_types::ClassId(c),
                        Some("x"),
                    );
                }
            }
        }
        n += 1;
    }
    assert!(n > 0);
    assert!(
        peak_rss_kib() < 1024 * 1024,
        "peak memory {} KiB",
        peak_rss_kib()
    );
}

/// A symbol table may declare values no entry names (holes), but at most one per 8 bytes left
/// in the file beyond its entries, so a forged count cannot claim memory beyond a small multiple
/// of the file's size.
#[test]
fn symbol_holes_are_bounded_by_the_file() {
    let data = std::fs::read(compile_conf("holes", 33)).unwrap();
    let starts = section_starts(&data).unwrap();
    let &(_, at) = starts.iter().find(|(s, _)| *s == Section::Roles).unwrap();
    let word = |d: &[u8], i: usize| u32::from_le_bytes(d[i..i + 4].try_into().unwrap());
    let (nprim, nel) = (word(&data, at), word(&data, at + 4));
    assert_eq!(
        (nprim, nel),
        (5, 4),
        "holes.conf: four roles and one role attribute"
    );
    let limit = nel + ((data.len() - (at + 8)) / 8) as u32;
    let with = |n: u32| {
        let mut d = data.clone();
        d[at..at + 4].copy_from_slice(&n.to_le_bytes());
        read_policy(&d)
    };
    let p = with(limit).expect("holes up to the limit load");
    assert_eq!(p.roles.len(), limit as usize);
    let Err(e) = with(limit + 1) else {
        panic!("a hole beyond the limit loads")
    };
    assert_eq!((e.section(), e.offset()), (Section::Roles, at), "{e}");
}
