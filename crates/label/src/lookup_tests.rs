//! The prefix index's and the matchers' unit tests (crate::lookup).

use super::*;

/// The context `fc` gives `k` as a file, if any.
fn context_of(fc: &crate::FileContexts, k: &str) -> Option<String> {
    fc.lookup(k.as_bytes(), FileKind::File)
        .ok()
        .flatten()
        .map(|s| s.context.to_string())
}

/// Four threads look up `keys` on `fc` at once, each from another key on: each gets `want`.
fn race_to_agree(fc: &crate::FileContexts, keys: &[String], want: &[Option<String>]) {
    std::thread::scope(|s| {
        for t in 0..4 {
            s.spawn(move || {
                for (i, k) in keys.iter().enumerate().skip(t) {
                    assert_eq!(context_of(fc, k), want[i], "{k}");
                }
            });
        }
    });
}

/// The index is built by the first lookup; threads that race to it on a fresh handle each
/// get the answers a handle built before them gives.
#[test]
fn lookups_racing_to_build_the_index_agree() {
    let mut text = String::new();
    for i in 0..300 {
        text.push_str(&format!("/usr/lib/d{i}(/.*)? u:object_r:t{i}_t:s0\n"));
        text.push_str(&format!(
            "/usr/lib/d{i}/x\\.[0-9]+ -- u:object_r:x{i}_t:s0\n"
        ));
    }
    let path = std::path::Path::new("fc");
    let open = || crate::FileContexts::from_bytes(path, text.as_bytes());
    let warm = open();
    assert!(warm.is_ok(), "the test set opens");
    let Ok(warm) = warm else { return };
    let keys: Vec<String> = (0..300)
        .flat_map(|i| [format!("/usr/lib/d{i}/a"), format!("/usr/lib/d{i}/x.12")])
        .collect();
    let want: Vec<_> = keys.iter().map(|k| context_of(&warm, k)).collect();
    assert!(want.iter().all(|w| w.is_some()));
    for _ in 0..4 {
        let Ok(fresh) = open() else { return };
        race_to_agree(&fresh, &keys, &want);
    }
}

/// An open reads no expression for its shape: the matchers and the index are built by the
/// first lookup, and threads racing to it on a fresh handle each get the answers of a handle
/// whose matchers were built before them (the validating open's).
#[test]
fn an_open_leaves_the_matchers_to_the_first_lookup() {
    let mut text = String::new();
    for i in 0..200 {
        text.push_str(&format!("/srv/e{i} u:object_r:e{i}_t:s0\n"));
        text.push_str(&format!("/srv/u{i}(/.*)? u:object_r:u{i}_t:s0\n"));
        text.push_str(&format!("/srv/u{i}/p[0-9]+ -- u:object_r:p{i}_t:s0\n"));
    }
    let dir = std::env::temp_dir().join(format!("seaccess-lazy-{}", std::process::id()));
    let _ = std::fs::create_dir_all(&dir);
    let file = dir.join("file_contexts");
    assert!(std::fs::write(&file, &text).is_ok(), "the set is written");
    let checked = crate::FileContexts::from_bytes(&file, text.as_bytes());
    assert!(checked.is_ok(), "the test set opens");
    let Ok(checked) = checked else { return };
    assert!(
        checked.table.matchers.get().is_some(),
        "a validating open reads them"
    );
    let keys: Vec<String> = (0..200)
        .flat_map(|i| {
            [
                format!("/srv/e{i}"),
                format!("/srv/u{i}/a"),
                format!("/srv/u{i}/p12"),
                format!("/srv/u{i}/pq"),
            ]
        })
        .collect();
    let want: Vec<_> = keys.iter().map(|k| context_of(&checked, k)).collect();
    assert!(want.iter().all(|w| w.is_some()));
    assert_eq!(
        want.get(2).cloned().flatten().as_deref(),
        Some("u:object_r:p0_t:s0")
    );
    for _ in 0..4 {
        let fresh = crate::FileContexts::open(&file);
        assert!(fresh.is_ok(), "the test set opens from its file");
        let Ok(fresh) = fresh else { return };
        assert!(
            fresh.table.matchers.get().is_none(),
            "the open read the shapes"
        );
        assert!(
            fresh.table.index.get().is_none(),
            "the open built the index"
        );
        race_to_agree(&fresh, &keys, &want);
        assert!(fresh.table.matchers.get().is_some());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The index's sort compares the first 12 bytes as numbers and the rest only on a tie:
/// literals that agree on 12 bytes or more, and short ones of every length, must still
/// give each path exactly the specifications whose literal is a prefix of it.
#[test]
fn the_index_finds_every_prefix_past_its_sort_key() {
    let long = "/usr/lib/systemd/system-generators/"; // 35 bytes
    let words: Vec<String> = vec![
        format!("{long}b"),
        format!("{long}ab"),
        format!("{long}a"),
        long.to_string(),
        format!("{long}a"),
        format!("{long}abc/d"),
        long[..32].to_string(),
        long[..31].to_string(),
        format!("{}x", &long[..31]),
        long[..13].to_string(),
        long[..12].to_string(),
        long[..11].to_string(),
        format!("{}x", &long[..11]),
        "/usr".into(),
        String::new(),
        "/usr/lib".into(),
    ];
    let mut lits = Vec::new();
    let mut ranges = Vec::new();
    for w in &words {
        ranges.push(Lit {
            start: lits.len() as u32,
            len: w.len() as u32,
        });
        lits.extend_from_slice(w.as_bytes());
    }
    let idx = Index::build(&lits, ranges.len(), |i| ranges[i]);
    let keys = [
        format!("{long}abc/d/e"),
        format!("{long}ab"),
        format!("{long}b"),
        format!("{long}c"),
        format!("{}xy", &long[..31]),
        format!("{}xy", &long[..11]),
        long[..12].to_string(),
        long[..33].to_string(),
        "/usr/lib64".into(),
        "/".into(),
    ];
    for key in &keys {
        let mut got = Vec::new();
        idx.candidates(&lits, key.as_bytes(), &mut got);
        let want: Vec<u32> = (0..words.len() as u32)
            .rev()
            .filter(|&i| key.starts_with(&words[i as usize]))
            .collect();
        assert_eq!(got, want, "{key}");
    }
}

/// A handle's first lookups find their candidates by reading every literal prefix, the index
/// left unbuilt, and answer as a handle with the index does; the lookup after them builds it.
#[test]
fn the_first_lookups_scan_and_agree_with_the_index() {
    let mut text = String::new();
    for i in 0..50 {
        text.push_str(&format!("/opt/a{i}(/.*)? u:object_r:a{i}_t:s0\n"));
        text.push_str(&format!("/opt/a{i}/b[0-9]+ -- u:object_r:b{i}_t:s0\n"));
        text.push_str(&format!("/opt/a{i}/c u:object_r:c{i}_t:s0\n"));
    }
    text.push_str("/opt/a1.* u:object_r:late_t:s0\n");
    let path = std::path::Path::new("fc");
    let indexed = crate::FileContexts::from_bytes(path, text.as_bytes());
    assert!(indexed.is_ok(), "the test set opens");
    let Ok(indexed) = indexed else { return };
    let _ = indexed.table.index();
    let keys: Vec<String> = [
        "/opt/a1/b7",
        "/opt/a1/c",
        "/opt/a12/b7",
        "/opt/a2/b7",
        "/opt/a2/c",
        "/opt/a2/bx",
        "/opt/a49/c",
        "/opt/a3",
        "/opt",
    ]
    .iter()
    .map(|k| k.to_string())
    .collect();
    let want: Vec<_> = keys.iter().map(|k| context_of(&indexed, k)).collect();
    // The last specification covers every /opt/a1 path: the highest number wins.
    assert_eq!(want[0].as_deref(), Some("u:object_r:late_t:s0"));
    assert_eq!(want[3].as_deref(), Some("u:object_r:b2_t:s0"));
    assert_eq!(want[5].as_deref(), Some("u:object_r:a2_t:s0"));
    assert_eq!(want[8], None);
    let fresh = crate::FileContexts::from_bytes(path, text.as_bytes());
    let Ok(fresh) = fresh else { return };
    for n in 0..SCANS_BEFORE_INDEX as usize {
        let i = n % keys.len();
        assert_eq!(context_of(&fresh, &keys[i]), want[i], "{}", keys[i]);
        assert!(
            fresh.table.index.get().is_none(),
            "lookup {n} built the index"
        );
    }
    assert_eq!(context_of(&fresh, &keys[0]), want[0]);
    assert!(fresh.table.index.get().is_some());
    for (k, w) in keys.iter().zip(&want) {
        assert_eq!(&context_of(&fresh, k), w, "{k}");
    }
}

/// On the installed policy's set, the scan and the index give every path the same candidates
/// in the same order: each specification's literal prefix, each with a byte more and with a
/// component more, and the paths under /usr and /etc.
#[test]
fn the_scan_and_the_index_agree_on_the_installed_set() {
    let file = std::path::Path::new("/etc/selinux/default/contexts/files/file_contexts");
    if !file.exists() {
        println!(
            "SKIP: {} is not installed (Debian's selinux-policy-default)",
            file.display()
        );
        return;
    }
    let fc = crate::FileContexts::open(file);
    assert!(fc.is_ok(), "the installed set opens");
    let Ok(fc) = fc else { return };
    let m = fc.table.matchers();
    let index = fc.table.index();
    let mut keys: Vec<Vec<u8>> = Vec::new();
    for x in &m.list {
        let lit = x.lit.get(&m.lits).to_vec();
        keys.push([&lit[..], b"x"].concat());
        keys.push([&lit[..], b"/y"].concat());
        keys.push(lit);
    }
    for root in ["/usr", "/etc"] {
        let mut dirs = vec![std::path::PathBuf::from(root)];
        while let Some(d) = dirs.pop() {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                if e.file_type().is_ok_and(|t| t.is_dir()) && keys.len() < 60_000 {
                    dirs.push(p.clone());
                }
                keys.push(p.into_os_string().into_encoded_bytes());
            }
        }
    }
    assert!(keys.len() > 3 * m.list.len());
    let (mut scanned, mut indexed) = (Vec::new(), Vec::new());
    for k in &keys {
        m.candidates(k, &mut scanned);
        index.candidates(&m.lits, k, &mut indexed);
        assert_eq!(scanned, indexed, "{}", String::from_utf8_lossy(k));
    }
}
