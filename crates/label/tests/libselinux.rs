//! The labeling crate against libselinux 3.4 itself (tests/label/selabel_query.c calling
//! selabel_lookup, selabel_lookup_best_match): the same answer for every path of this machine's
//! tree under /usr /etc /var /opt /srv /home /root, every file type for a sample of them, and
//! paths made from every specification's fixed prefix; on Debian's default and MLS
//! file_contexts, each in a copy with `.local`, `.homedirs` and `.subs` beside it, read from the
//! text and from the compiled `.bin`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use seaccess_label::{FileContexts, FileKind};

const ROOTS: &[&str] = &["/usr", "/etc", "/var", "/opt", "/srv", "/home", "/root"];

/// This machine's tree: (path, lstat type), not following symlinks, without paths holding a
/// tab or a newline (the query protocol's separators).
fn real_tree() -> Vec<(Vec<u8>, FileKind)> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = ROOTS.iter().map(PathBuf::from).filter(|p| p.exists()).collect();
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else { continue };
        let kind = FileKind::from_mode(std::os::unix::fs::MetadataExt::mode(&m));
        let bytes = p.as_os_str().as_bytes().to_vec();
        if !bytes.contains(&b'\t') && !bytes.contains(&b'\n') {
            out.push((bytes, kind));
        }
        if m.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                stack.extend(rd.flatten().map(|e| e.path()));
            }
        }
    }
    out.sort();
    out
}

/// Paths made from each specification's fixed prefix, where the interesting boundaries are.
fn synthetic(fc: &FileContexts) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for s in fc.specs() {
        let fixed: Vec<u8> = s.regex.as_bytes()[..(s.prefix_len as usize).min(s.regex.len())].iter().copied().filter(|&c| c != b'\\').collect();
        for suffix in [&b""[..], b"/", b"/x", b"x", b"/a/b", b".d", b"/.git", b"/lib/x.so", b"-1.2", b"//y"] {
            let mut p = fixed.clone();
            p.extend_from_slice(suffix);
            if !p.is_empty() && !p.contains(&b'\t') && !p.contains(&b'\n') {
                out.push(p);
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

fn ask(peer: &Path, fc: &Path, queries: &[u8]) -> Vec<Vec<u8>> {
    let mut child = Command::new(peer).arg(fc).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let q = queries.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&q));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "selabel_query {}: {}", fc.display(), String::from_utf8_lossy(&out.stderr));
    out.stdout.split(|&c| c == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect()
}

fn ours(fc: &FileContexts, path: &[u8], kind: FileKind) -> Vec<u8> {
    let ctx = match fc.lookup(path, kind) {
        Ok(Some(s)) => s.context.as_bytes().to_vec(),
        Ok(None) => b"<<none>>".to_vec(),
        Err(seaccess_label::LabelError::EmptyPath) => b"<<error:EINVAL>>".to_vec(),
        Err(e) => panic!("{}: {e}", String::from_utf8_lossy(path)),
    };
    let mut line = path.to_vec();
    line.push(b'\t');
    line.extend_from_slice(&ctx);
    line
}

/// Compares every query's answer; returns the number compared.
fn compare(peer: &Path, fc_path: &Path, queries: &[(Vec<u8>, FileKind)]) -> usize {
    let fc = FileContexts::open(fc_path).unwrap();
    let mut q = Vec::new();
    for (p, k) in queries {
        q.extend_from_slice(format!("lookup\t{}\t", k.name()).as_bytes());
        q.extend_from_slice(p);
        q.push(b'\n');
    }
    let theirs = ask(peer, fc_path, &q);
    assert_eq!(theirs.len(), queries.len(), "libselinux answered {} of {} queries", theirs.len(), queries.len());
    let mut diffs = Vec::new();
    for ((p, k), t) in queries.iter().zip(&theirs) {
        let o = ours(&fc, p, *k);
        if &o != t {
            diffs.push(format!("{} as {}: libselinux {:?}, seaccess {:?}", String::from_utf8_lossy(p), k.name(), String::from_utf8_lossy(t), String::from_utf8_lossy(&o)));
        }
    }
    assert!(diffs.is_empty(), "{} differences on {}, first: {:#?}", diffs.len(), fc_path.display(), &diffs[..diffs.len().min(10)]);
    queries.len()
}

/// A copy of a flavour's file_contexts set with a `.local` (an override, a typed entry, a
/// `<<none>>`), a `.subs` and its own `.homedirs` and `.subs_dist`; `with_bin` keeps the
/// compiled `.bin` files (copied with their times, so libselinux prefers them).
fn test_copy(flavour: &str, with_bin: bool) -> Option<(tempdir::Dir, PathBuf)> {
    let src = seaccess_testkit::debian_file_contexts(flavour)?;
    let dir = tempdir::Dir::new(&format!("label-{flavour}-{with_bin}"));
    let dst = dir.0.join("file_contexts");
    let mut names = vec!["", ".homedirs", ".subs_dist"];
    if with_bin {
        names.extend([".bin", ".homedirs.bin"]);
    }
    for n in names {
        let from = PathBuf::from(format!("{}{n}", src.display()));
        if from.exists() {
            let st = Command::new("cp").arg("-p").arg(&from).arg(format!("{}{n}", dst.display())).status().unwrap();
            assert!(st.success());
        }
    }
    let range = ":s0";
    std::fs::write(
        dir.0.join("file_contexts.local"),
        format!(
            "# local\n/usr/bin/ls\tsystem_u:object_r:etc_t{range}\n/opt/local(/.*)?\tsystem_u:object_r:usr_t{range}\n/opt/local/none(/.*)?\t<<none>>\n/etc/localdir -d system_u:object_r:tmp_t{range}\n"
        ),
    )
    .unwrap();
    std::fs::write(dir.0.join("file_contexts.subs"), "/web /var/www\n/altroot/usr /usr\n").unwrap();
    Some((dir, dst))
}

mod tempdir {
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new(name: &str) -> Dir {
            let p = std::env::temp_dir().join(format!("seaccess-{name}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&p);
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// The queries for one set: the real tree's paths one in `step` (with their lstat types), every
/// type for one in `50 * step`, and the synthetic paths one in `step` (every type for one in
/// `8 * step`). libselinux takes up to 0.4 ms a lookup under /usr, so only the installed set
/// is asked about every path; the copies are sampled.
fn queries(fc: &FileContexts, tree: &[(Vec<u8>, FileKind)], step: usize) -> Vec<(Vec<u8>, FileKind)> {
    let mut q: Vec<(Vec<u8>, FileKind)> = tree.iter().step_by(step).cloned().collect();
    for (p, _) in tree.iter().step_by(50 * step) {
        q.extend(FileKind::ALL.iter().map(|k| (p.clone(), *k)));
    }
    for (i, p) in synthetic(fc).into_iter().enumerate().filter(|(i, _)| i % step == 0) {
        if i % (8 * step) == 0 {
            q.extend(FileKind::ALL.iter().map(|k| (p.clone(), *k)));
        } else {
            q.push((p, FileKind::Any));
        }
    }
    // The paths the test copy's .local and .subs are about, and path clean-up.
    for p in ["/usr/bin/ls", "/opt/local/x", "/opt/local/none/y", "/etc/localdir", "/web/index.html", "/web", "/webx", "/altroot/usr/bin/ls", "/usr//bin///ls", "/usr/bin/", "/", "//", "/etc/passwd\\", "/etc/passwd.", "/var/run/lock", "/run/lock", "/./etc/passwd", "etc/passwd", ""] {
        q.extend(FileKind::ALL.iter().map(|k| (p.as_bytes().to_vec(), *k)));
    }
    q
}

#[test]
fn lookups_equal_libselinux_on_debian_file_contexts() {
    let Some(peer) = seaccess_testkit::label_peer() else { return };
    let tree = real_tree();
    assert!(tree.len() > 1000, "the real tree has only {} paths", tree.len());
    let mut total = 0;
    // The installed default set, as matchpathcon reads it: every path of the tree.
    let Some(fc_path) = seaccess_testkit::debian_file_contexts("default") else { return };
    let fc = FileContexts::open(&fc_path).unwrap();
    total += compare(&peer, &fc_path, &queries(&fc, &tree, 1));
    for flavour in ["default", "mls"] {
        for with_bin in [false, true] {
            let Some((_dir, fc_path)) = test_copy(flavour, with_bin) else { return };
            let fc = FileContexts::open(&fc_path).unwrap();
            let bin_used = fc.files()[0].extension().is_some_and(|e| e == "bin");
            assert_eq!(bin_used, with_bin, "{flavour}: read {:?}", fc.files());
            assert_eq!(fc.files().len(), 3, "base, .homedirs and .local: {:?}", fc.files());
            total += compare(&peer, &fc_path, &queries(&fc, &tree, 23));
        }
    }
    eprintln!("{total} lookups answered as libselinux answers them");
}

#[test]
fn best_match_and_partial_equal_libselinux() {
    let Some(peer) = seaccess_testkit::label_peer() else { return };
    let Some(fc_path) = seaccess_testkit::debian_file_contexts("default") else { return };
    let fc = FileContexts::open(&fc_path).unwrap();
    let tree = real_tree();
    let mut q = Vec::new();
    let mut asked = Vec::new();
    // Each path with two of its neighbours as aliases (hard links in restorecon's use).
    for w in tree.windows(3).step_by(97) {
        let (p, k) = &w[0];
        let aliases = [w[1].0.clone(), w[2].0.clone(), b"/etc/passwd".to_vec()];
        q.extend_from_slice(format!("best\t{}\t", k.name()).as_bytes());
        q.extend_from_slice(p);
        for a in &aliases {
            q.push(b'\t');
            q.extend_from_slice(a);
        }
        q.push(b'\n');
        asked.push((p.clone(), *k, aliases));
    }
    let theirs = ask(&peer, &fc_path, &q);
    assert_eq!(theirs.len(), asked.len());
    for ((p, k, aliases), t) in asked.iter().zip(&theirs) {
        let al: Vec<&[u8]> = aliases.iter().map(Vec::as_slice).collect();
        let o = fc.lookup_best_match(p, &al, *k).unwrap();
        let mut line = p.clone();
        line.push(b'\t');
        line.extend_from_slice(o.map_or(&b"<<none>>"[..], |s| s.context.as_bytes()));
        assert_eq!(String::from_utf8_lossy(&line), String::from_utf8_lossy(t));
    }
    // Partial match where the crate decides it (paths the literal prefixes run past).
    let mut pq = Vec::new();
    let mut pasked = Vec::new();
    for p in ["/", "/usr", "/usr/lib", "/usr/share/doc", "/opt", "/sys", "/sys/fs", "/nonexistent", "/var/lib/xyz"] {
        pq.extend_from_slice(format!("partial\t{p}\n").as_bytes());
        pasked.push(p);
    }
    let theirs = ask(&peer, &fc_path, &pq);
    for (p, t) in pasked.iter().zip(&theirs) {
        if let Ok(o) = fc.partial_match(p.as_bytes()) {
            assert_eq!(format!("{p}\t{}", u8::from(o)), String::from_utf8_lossy(t), "partial {p}");
        }
    }
}
