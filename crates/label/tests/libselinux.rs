//! The labeling crate against libselinux 3.4 itself (tests/label/selabel_query.c calling
//! selabel_lookup, selabel_lookup_best_match): the same answer for every path of this machine's
//! tree under /usr /etc /var /opt /srv /home /root, every file type for a sample of them, and
//! paths made from every specification's fixed prefix; on Debian's default and MLS
//! file_contexts, each in a copy with `.local`, `.homedirs` and `.subs` beside it, read from the
//! text and from the compiled `.bin`. And context validation against a policy, compared with
//! `setfiles -c POLICY FILE` (which validates each context with libsepol).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use seaccess_label::{FileContexts, FileKind, LabelError, OpenOptions};

const ROOTS: &[&str] = &["/usr", "/etc", "/var", "/opt", "/srv", "/home", "/root"];

/// This machine's tree: (path, lstat type), not following symlinks, without paths holding a
/// tab or a newline (the query protocol's separators).
fn real_tree() -> Vec<(Vec<u8>, FileKind)> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = ROOTS
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect();
    while let Some(p) = stack.pop() {
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
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
        let fixed: Vec<u8> = s.regex.as_bytes()[..(s.prefix_len as usize).min(s.regex.len())]
            .iter()
            .copied()
            .filter(|&c| c != b'\\')
            .collect();
        for suffix in [
            &b""[..],
            b"/",
            b"/x",
            b"x",
            b"/a/b",
            b".d",
            b"/.git",
            b"/lib/x.so",
            b"-1.2",
            b"//y",
        ] {
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

/// `n` paths made by mutating the synthetic paths and the tree's (seeded, so the same each run):
/// up to three pieces each inserted, put in place of a byte or run, or appended, or bytes
/// deleted, the pieces being what path clean-up and regular expressions meet (slashes, dots,
/// backslashes, metacharacters, bytes that are not UTF-8, a control byte).
fn mutated(fc: &FileContexts, tree: &[(Vec<u8>, FileKind)], n: usize) -> Vec<Vec<u8>> {
    const PIECES: &[&[u8]] = &[
        b"/",
        b".",
        b"..",
        b"//",
        b"-",
        b"_",
        b"a",
        b"Z",
        b"0",
        b"\\",
        b"*",
        b"?",
        b"[",
        b"]",
        b"(",
        b")",
        b"+",
        b"|",
        b"$",
        b"^",
        b" ",
        b"\xff",
        b"\xc3\xa9",
        b"\x01",
        b"~",
        b"%",
        b"lib",
        b"bin",
        b".so",
        b"/.git",
        b"/x",
    ];
    let seeds: Vec<Vec<u8>> = synthetic(fc)
        .into_iter()
        .chain(tree.iter().step_by(7).map(|(p, _)| p.clone()))
        .collect();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |m: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % m.max(1) as u64) as usize
    };
    let mut out = Vec::with_capacity(n);
    while out.len() < n && !seeds.is_empty() {
        let mut p = seeds[next(seeds.len())].clone();
        for _ in 0..next(4) {
            let at = next(p.len() + 1);
            let piece = PIECES[next(PIECES.len())];
            match next(4) {
                0 => drop(p.splice(at..at, piece.iter().copied())),
                1 => drop(p.drain(at..(at + 1 + next(3)).min(p.len()))),
                2 => drop(p.splice(at..(at + 1).min(p.len()), piece.iter().copied())),
                _ => p.extend_from_slice(piece),
            }
        }
        if !p.is_empty() && !p.iter().any(|&c| matches!(c, b'\t' | b'\n' | 0)) {
            out.push(p);
        }
    }
    out
}

fn ask_one(peer: &Path, fc: &Path, queries: Vec<u8>) -> Vec<Vec<u8>> {
    let mut child = Command::new(peer)
        .arg(fc)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&queries));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "selabel_query {}: {}",
        fc.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
        .split(|&c| c == b'\n')
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect()
}

/// libselinux's answers, in query order; a long list is split between two processes (the
/// machines this runs on have two cores, and libselinux takes up to 0.4 ms a lookup).
fn ask(peer: &Path, fc: &Path, queries: &[u8]) -> Vec<Vec<u8>> {
    let lines = queries.iter().filter(|&&c| c == b'\n').count();
    if lines < 20_000 {
        return ask_one(peer, fc, queries.to_vec());
    }
    // Alternate lines, so each process gets its share of the slow /usr paths.
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (i, line) in queries.split_inclusive(|&c| c == b'\n').enumerate() {
        if i % 2 == 0 { &mut a } else { &mut b }.extend_from_slice(line);
    }
    let (pa, fa) = (peer.to_path_buf(), fc.to_path_buf());
    let first = std::thread::spawn(move || ask_one(&pa, &fa, a));
    let second = ask_one(peer, fc, b);
    let first = first.join().unwrap();
    let mut all = Vec::with_capacity(first.len() + second.len());
    let mut sec = second.into_iter();
    for x in first {
        all.push(x);
        all.extend(sec.next());
    }
    all
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
    assert_eq!(
        theirs.len(),
        queries.len(),
        "libselinux answered {} of {} queries",
        theirs.len(),
        queries.len()
    );
    let mut diffs = Vec::new();
    for ((p, k), t) in queries.iter().zip(&theirs) {
        let o = ours(&fc, p, *k);
        if &o != t {
            diffs.push(format!(
                "{} as {}: libselinux {:?}, seaccess {:?}",
                String::from_utf8_lossy(p),
                k.name(),
                String::from_utf8_lossy(t),
                String::from_utf8_lossy(&o)
            ));
        }
    }
    assert!(
        diffs.is_empty(),
        "{} differences on {}, first: {:#?}",
        diffs.len(),
        fc_path.display(),
        &diffs[..diffs.len().min(10)]
    );
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
            let st = Command::new("cp")
                .arg("-p")
                .arg(&from)
                .arg(format!("{}{n}", dst.display()))
                .status()
                .unwrap();
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
    std::fs::write(
        dir.0.join("file_contexts.subs"),
        "/web /var/www\n/altroot/usr /usr\n",
    )
    .unwrap();
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
fn queries(
    fc: &FileContexts,
    tree: &[(Vec<u8>, FileKind)],
    step: usize,
) -> Vec<(Vec<u8>, FileKind)> {
    let mut q: Vec<(Vec<u8>, FileKind)> = tree.iter().step_by(step).cloned().collect();
    for (p, _) in tree.iter().step_by(50 * step) {
        q.extend(FileKind::ALL.iter().map(|k| (p.clone(), *k)));
    }
    for (i, p) in synthetic(fc)
        .into_iter()
        .enumerate()
        .filter(|(i, _)| i % step == 0)
    {
        if i % (8 * step) == 0 {
            q.extend(FileKind::ALL.iter().map(|k| (p.clone(), *k)));
        } else {
            q.push((p, FileKind::Any));
        }
    }
    // Paths mutated where clean-up and matching meet odd bytes, each as one of the types in turn.
    for (i, p) in mutated(fc, tree, 20_000 / step).into_iter().enumerate() {
        q.push((p, FileKind::ALL[i % FileKind::ALL.len()]));
    }
    // The paths the test copy's .local and .subs are about, and path clean-up.
    for p in [
        "/usr/bin/ls",
        "/opt/local/x",
        "/opt/local/none/y",
        "/etc/localdir",
        "/web/index.html",
        "/web",
        "/webx",
        "/altroot/usr/bin/ls",
        "/usr//bin///ls",
        "/usr/bin/",
        "/",
        "//",
        "/etc/passwd\\",
        "/etc/passwd.",
        "/var/run/lock",
        "/run/lock",
        "/./etc/passwd",
        "etc/passwd",
        "",
    ] {
        q.extend(FileKind::ALL.iter().map(|k| (p.as_bytes().to_vec(), *k)));
    }
    q
}

#[test]
fn lookups_equal_libselinux_on_debian_file_contexts() {
    let Some(peer) = seaccess_testkit::label_peer() else {
        return;
    };
    let tree = real_tree();
    assert!(
        tree.len() > 1000,
        "the real tree has only {} paths",
        tree.len()
    );
    let mut total = 0;
    // The installed default set, as matchpathcon reads it: every path of the tree.
    let Some(fc_path) = seaccess_testkit::debian_file_contexts("default") else {
        return;
    };
    let fc = FileContexts::open(&fc_path).unwrap();
    total += compare(&peer, &fc_path, &queries(&fc, &tree, 1));
    for flavour in ["default", "mls"] {
        for with_bin in [false, true] {
            let Some((_dir, fc_path)) = test_copy(flavour, with_bin) else {
                return;
            };
            let fc = FileContexts::open(&fc_path).unwrap();
            let bin_used = fc.files()[0].extension().is_some_and(|e| e == "bin");
            assert_eq!(bin_used, with_bin, "{flavour}: read {:?}", fc.files());
            assert_eq!(
                fc.files().len(),
                3,
                "base, .homedirs and .local: {:?}",
                fc.files()
            );
            total += compare(&peer, &fc_path, &queries(&fc, &tree, 23));
        }
    }
    eprintln!("{total} lookups answered as libselinux answers them");
}

#[test]
fn best_match_and_partial_equal_libselinux() {
    let Some(peer) = seaccess_testkit::label_peer() else {
        return;
    };
    let Some(fc_path) = seaccess_testkit::debian_file_contexts("default") else {
        return;
    };
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
    // Partial match (restorecon's question for a directory): the tree's directories, paths cut
    // short inside a component, and the synthetic paths, sampled.
    let mut pasked: Vec<Vec<u8>> = Vec::new();
    for (p, k) in tree.iter().step_by(61) {
        if *k == FileKind::Dir {
            pasked.push(p.clone());
        }
        pasked.push(p[..(p.len() * 2 / 3).max(1)].to_vec());
    }
    pasked.extend(synthetic(&fc).into_iter().step_by(7));
    pasked.extend(
        [
            "/",
            "/usr",
            "/sys",
            "/sys/fs",
            "/proc",
            "/nonexistent",
            "/abc/efg",
        ]
        .iter()
        .map(|p| p.as_bytes().to_vec()),
    );
    let mut pq = Vec::new();
    for p in &pasked {
        pq.extend_from_slice(b"partial\t");
        pq.extend_from_slice(p);
        pq.push(b'\n');
    }
    let theirs = ask(&peer, &fc_path, &pq);
    assert_eq!(theirs.len(), pasked.len());
    let mut diffs = Vec::new();
    for (p, t) in pasked.iter().zip(&theirs) {
        let o = fc
            .partial_match(p)
            .unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(p)));
        let mut line = p.clone();
        line.extend_from_slice(format!("\t{}", u8::from(o)).as_bytes());
        if &line != t {
            diffs.push(String::from_utf8_lossy(t).into_owned());
        }
    }
    assert!(
        diffs.is_empty(),
        "{} partial-match differences of {}; libselinux said: {:#?}",
        diffs.len(),
        pasked.len(),
        &diffs[..diffs.len().min(10)]
    );
    eprintln!(
        "{} partial matches answered as libselinux answers them",
        pasked.len()
    );
}

/// Contexts taken from Debian's file_contexts and changed one field at a time (user, role, type,
/// level, range) into ones each policy accepts or refuses: setfiles -c and seaccess must say the
/// same of every one, and seaccess's error names the file and line.
fn setfiles_accepts(policy: &Path, fc: &Path) -> bool {
    let out = Command::new("setfiles")
        .arg("-c")
        .arg(policy)
        .arg(fc)
        .output()
        .expect("setfiles (policycoreutils, make deps)");
    out.status.success()
}

/// Variants of real contexts, each changing one field.
fn variants(flavour: &str) -> Vec<String> {
    let mls = flavour == "mls";
    let lvl = |l: &str| {
        if mls {
            l.to_string()
        } else {
            l.replace("s15:c0.c1023", "s0:c0.c1023")
                .replace("s15", "s1")
        }
    };
    let mut v = vec![
        "system_u:object_r:etc_t:s0".to_string(),
        "system_u:object_r:no_such_type_t:s0".to_string(),
        "no_such_u:object_r:etc_t:s0".to_string(),
        "system_u:no_such_r:etc_t:s0".to_string(),
        "system_u:system_r:etc_t:s0".to_string(),
        "system_u:staff_r:staff_t:s0".to_string(),
        "staff_u:staff_r:staff_t:s0".to_string(),
        "user_u:sysadm_r:sysadm_t:s0".to_string(),
        "system_u:object_r:etc_t".to_string(),
        "system_u:object_r:etc_t:s0:c0".to_string(),
        "system_u:object_r:etc_t:s0-s0:c0.c1023".to_string(),
        "system_u:object_r:etc_t:s0:c0.c1023".to_string(),
        "system_u:object_r:etc_t:s0:c1024".to_string(),
        "system_u:object_r:etc_t:s999".to_string(),
        "system_u:object_r:etc_t:s0-s0".to_string(),
        "system_u:object_r:etc_t:s0:c5-s0:c1".to_string(),
        "user_u:object_r:user_home_t:s0".to_string(),
        "unconfined_u:object_r:user_home_t:s0".to_string(),
        "system_u:object_r:bin_t:s0".to_string(),
        "system_u:object_r:domain:s0".to_string(),
    ];
    v.push(lvl("system_u:object_r:etc_t:s15"));
    v.push(lvl("user_u:object_r:etc_t:s15:c0.c1023"));
    v.push(lvl("system_u:object_r:etc_t:s0-s15:c0.c1023"));
    v
}

#[test]
fn validation_agrees_with_setfiles_c() {
    let mut compared = 0;
    for flavour in ["default", "mls"] {
        let Some(policy) = seaccess_testkit::debian_policy(flavour) else {
            return;
        };
        let server = seaccess_testkit::load(&policy);
        let g = server.snapshot();
        let check = |c: &str| g.context_to_sid(c).map(|_| ()).map_err(|e| e.to_string());
        let dir = std::env::temp_dir().join(format!(
            "seaccess-validate-{flavour}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let mut accepted = 0;
        for (i, ctx) in variants(flavour).iter().enumerate() {
            let fc = dir.join(format!("fc{i}"));
            std::fs::write(&fc, format!("# one spec\n/x(/.*)?\t{ctx}\n")).unwrap();
            let theirs = setfiles_accepts(&policy, &fc);
            let ours = FileContexts::open_with(
                &fc,
                &OpenOptions {
                    validate: Some(&check),
                    ..Default::default()
                },
            );
            match (&ours, theirs) {
                (Ok(_), true) => accepted += 1,
                (
                    Err(LabelError::Context {
                        line: 2, context, ..
                    }),
                    false,
                ) if context == ctx => {}
                _ => panic!(
                    "{flavour}: {ctx}: setfiles -c says {}, seaccess says {:?}",
                    if theirs { "valid" } else { "invalid" },
                    ours.err()
                ),
            }
            compared += 1;
        }
        assert!(
            accepted > 3 && accepted < variants(flavour).len() - 3,
            "{flavour}: {accepted} accepted: the variants must test both sides"
        );
        // The installed file_contexts validate as a whole, as setfiles -c says they do.
        let installed = seaccess_testkit::debian_file_contexts(flavour).unwrap();
        assert!(setfiles_accepts(&policy, &installed));
        FileContexts::open_with(
            &installed,
            &OpenOptions {
                validate: Some(&check),
                check_regexes: true,
                ..Default::default()
            },
        )
        .unwrap();
        let _ = std::fs::remove_dir_all(&dir);
    }
    eprintln!("{compared} contexts judged as setfiles -c judges them");
}

/// The shortcuts that decide without PCRE2 (a literal path, a path and everything under it, a
/// literal tail every match ends with, literals every match contains) against PCRE2 itself, compiled as libselinux compiles,
/// on every specification of Debian's default and MLS sets and paths made around each one,
/// newlines included (PCRE2's `$` also matches before a final newline).
#[test]
fn shortcuts_agree_with_pcre2() {
    use seaccess_label::spec::{
        inner_literals, literal_tail, shape, shape_matches, tail_allows, Shape,
    };
    let mut checked = 0;
    for flavour in ["default", "mls"] {
        let Some(path) = seaccess_testkit::debian_file_contexts(flavour) else {
            return;
        };
        let fc = FileContexts::open(&path).unwrap();
        for s in fc.specs() {
            let re = seaccess_label::compile_regex(&s.regex).unwrap();
            let sh = shape(s.regex.as_bytes());
            let tail = literal_tail(s.regex.as_bytes());
            let inner = inner_literals(s.regex.as_bytes());
            let lit = sh.prefix().to_vec();
            let mut keys: Vec<Vec<u8>> = Vec::new();
            for base in [
                lit.clone(),
                lit[..lit.len().saturating_sub(1)].to_vec(),
                s.regex.as_bytes().to_vec(),
            ] {
                for suffix in [
                    &b""[..],
                    b"\n",
                    b"/",
                    b"/x",
                    b"/x\n",
                    b"x",
                    b"\n\n",
                    b"/a/b.so.1",
                    b".so",
                    b"/bin/java",
                ] {
                    let mut k = base.clone();
                    k.extend_from_slice(suffix);
                    keys.push(k);
                }
            }
            for k in keys {
                let truth = re.is_match(&k).unwrap();
                if let Some(m) = shape_matches(&sh, &k) {
                    assert_eq!(m, truth, "{}: {:?}", s.regex, String::from_utf8_lossy(&k));
                }
                if truth {
                    assert!(
                        k.starts_with(&lit),
                        "{}: a match {:?} outside the prefix {:?}",
                        s.regex,
                        String::from_utf8_lossy(&k),
                        String::from_utf8_lossy(&lit)
                    );
                    assert!(
                        tail_allows(&tail, &k),
                        "{}: a match {:?} without the tail {:?}",
                        s.regex,
                        String::from_utf8_lossy(&k),
                        String::from_utf8_lossy(&tail)
                    );
                    for l in &inner {
                        assert!(
                            k[lit.len()..].windows(l.len()).any(|w| w == &l[..]),
                            "{}: a match {:?} without {:?}",
                            s.regex,
                            String::from_utf8_lossy(&k),
                            String::from_utf8_lossy(l)
                        );
                    }
                }
                checked += 1;
            }
            if matches!(sh, Shape::Exact(_) | Shape::Under(_)) {
                assert!(
                    re.is_match(&lit).unwrap(),
                    "{}: its own literal {:?} does not match",
                    s.regex,
                    String::from_utf8_lossy(&lit)
                );
            }
        }
    }
    eprintln!("{checked} paths decided by the shortcuts as PCRE2 decides them");
}
