//! A tree labeled by descriptor for the loader: the contexts `seaccess label` and libselinux's
//! matchpathcon give, each handed over with a descriptor of the very inode, links never
//! followed, mounts not crossed unless asked.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use seaccess_enforce::label::{self, Counts, TreeOptions};
use seaccess_engine::Engine;
use seaccess_label::{FileContexts, FileKind};

/// What the loader got for one object.
#[derive(Clone, Debug)]
struct Got {
    sid: seaccess_types::Sid,
    context: String,
    kind: FileKind,
    matched: bool,
    dev: u64,
    ino: u64,
}

struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(name: &str) -> Scratch {
    let p = std::env::temp_dir().join(format!("seaccess-enforce-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    Scratch(p)
}

fn setup() -> Option<(Engine, FileContexts, PathBuf)> {
    let policy = seaccess_testkit::debian_policy("default")?;
    let fc_path = seaccess_testkit::debian_file_contexts("default")?;
    let fc = FileContexts::open(&fc_path).unwrap();
    Some((Engine::open(policy).unwrap(), fc, fc_path))
}

/// Labels the tree at `root` as `key`, with `during` run on each object before it is kept.
fn label_tree(
    e: &Engine,
    fc: &FileContexts,
    root: &Path,
    key: &[u8],
    cross_mounts: bool,
    during: &mut dyn FnMut(&[u8]),
) -> (BTreeMap<Vec<u8>, Got>, Counts) {
    let fd = label::open_root(root).unwrap();
    let mut got = BTreeMap::new();
    let opts = TreeOptions {
        key: key.to_vec(),
        cross_mounts,
    };
    let counts = label::label_tree(e, fc, fd.as_fd(), root, &opts, &mut |l| {
        during(l.key);
        let st = rustix::fs::fstat(l.fd).unwrap();
        let context = e.server().sid_to_context(l.sid).unwrap();
        got.insert(
            l.key.to_vec(),
            Got {
                sid: l.sid,
                context,
                kind: l.kind,
                matched: l.matched,
                dev: st.st_dev,
                ino: st.st_ino,
            },
        );
        Ok(())
    })
    .unwrap();
    (got, counts)
}

/// matchpathcon's answer by libselinux 3.4 (tests/label/selabel_query.c) and by `seaccess
/// label -m`, for each key and kind; `<<none>>` where there is none.
fn oracles(fc_path: &Path, asked: &[(Vec<u8>, FileKind)]) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    if let Some(peer) = seaccess_testkit::label_peer() {
        let mut q = Vec::new();
        for (k, kind) in asked {
            q.extend_from_slice(format!("lookup\t{}\t", kind.name()).as_bytes());
            q.extend_from_slice(k);
            q.push(b'\n');
        }
        let mut child = Command::new(peer)
            .arg(fc_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&q).unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success());
        let lines = String::from_utf8(o.stdout).unwrap();
        out.push((
            "libselinux",
            lines
                .lines()
                .map(|l| l.rsplit('\t').next().unwrap().to_string())
                .collect(),
        ));
    }
    let cli = std::env::var_os("SEACCESS_BUILD")
        .map(PathBuf::from)
        .unwrap_or_else(|| seaccess_testkit::root().join("target/ci"))
        .join("seaccess");
    if cli.exists() {
        let mut v = Vec::new();
        for (k, kind) in asked {
            let o = Command::new(&cli)
                .args(["label", "-f"])
                .arg(fc_path)
                .args(["-m", kind.name()])
                .arg(std::ffi::OsStr::new(std::str::from_utf8(k).unwrap()))
                .output()
                .unwrap();
            let line = String::from_utf8(o.stdout).unwrap();
            v.push(line.trim_end().rsplit('\t').next().unwrap().to_string());
        }
        out.push(("seaccess label", v));
    } else {
        eprintln!("SKIP: no {} (build seaccess-cli)", cli.display());
    }
    out
}

#[test]
fn a_scratch_tree_gets_the_contexts_matchpathcon_gives() {
    let Some((e, fc, fc_path)) = setup() else {
        return;
    };
    let s = scratch("tree");
    let r = &s.0;
    std::fs::create_dir_all(r.join("html/icons")).unwrap();
    std::fs::create_dir_all(r.join("site/cgi-bin")).unwrap();
    std::fs::create_dir_all(r.join("site/logs")).unwrap();
    std::fs::write(r.join("html/index.html"), "x").unwrap();
    std::fs::write(r.join("site/cgi-bin/run"), "x").unwrap();
    std::fs::write(r.join("site/logs/access_log"), "x").unwrap();
    std::os::unix::fs::symlink("index.html", r.join("html/link")).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        r.join("site/fifo"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let mut total = 0;
    // As /var/www (everything matched), and as /tmp (the root matched, `/tmp/.*` <<none>>).
    for key in [&b"/var/www"[..], b"/tmp"] {
        let (got, counts) = label_tree(&e, &fc, r, key, false, &mut |_| {});
        eprintln!("{}: {counts:?}", String::from_utf8_lossy(key));
        assert_eq!(got.len(), 11, "{got:?}");
        assert!(counts.errors.is_empty(), "{counts:?}");
        assert_eq!(
            (counts.labeled + counts.unmatched) as usize,
            got.len(),
            "{counts:?}"
        );
        let file_sid = e
            .with_generation(|g| Ok(g.policy().initial_sid(5).unwrap()))
            .unwrap();
        let file_ctx = e.server().sid_to_context(file_sid).unwrap();
        // Each descriptor is of the inode at that path (lstat: the link itself).
        for (k, g) in &got {
            let rel = &k[key.len()..];
            let p = PathBuf::from(format!(
                "{}{}",
                r.display(),
                std::str::from_utf8(rel).unwrap()
            ));
            let m = std::fs::symlink_metadata(&p).unwrap();
            assert_eq!((g.dev, g.ino), (m.dev(), m.ino()), "{p:?}");
            assert_eq!(g.kind, FileKind::from_mode(m.mode()), "{p:?}");
        }
        let asked: Vec<(Vec<u8>, FileKind)> =
            got.iter().map(|(k, g)| (k.clone(), g.kind)).collect();
        let answers = oracles(&fc_path, &asked);
        assert!(!answers.is_empty(), "no oracle at all");
        for (who, theirs) in answers {
            assert_eq!(theirs.len(), asked.len(), "{who}");
            for ((k, g), t) in got.iter().zip(&theirs) {
                let want = if t == "<<none>>" {
                    // The `file` initial SID itself (Debian gives `unlabeled` the same
                    // context, so the number is what tells them apart).
                    assert_eq!(g.sid, file_sid, "{}", String::from_utf8_lossy(k));
                    &file_ctx
                } else {
                    t
                };
                assert_eq!(&g.context, want, "{} by {who}", String::from_utf8_lossy(k));
                assert_eq!(g.matched, t != "<<none>>", "{}", String::from_utf8_lossy(k));
                total += 1;
            }
        }
        if key == b"/tmp" {
            assert_eq!(counts.unmatched, 10, "{counts:?}");
        }
    }
    assert!(total >= 22);
}

/// An unprivileged owner of a directory in the tree swaps a file and a directory for links
/// (to /etc/shadow and to a directory outside the tree) after the walk listed them and before
/// it reaches them: the walk hands over the links themselves and goes into neither.
#[test]
fn a_link_swapped_in_during_the_walk_is_not_followed() {
    let Some((e, fc, _)) = setup() else { return };
    if Command::new("runuser").arg("--help").output().is_err() {
        eprintln!("SKIP: no runuser");
        return;
    }
    let s = scratch("swap");
    let r = s.0.join("tree");
    let outside = s.0.join("outside");
    std::fs::create_dir_all(outside.join("deep")).unwrap();
    std::fs::write(outside.join("deep/secret"), "x").unwrap();
    let boxed = r.join("box");
    std::fs::create_dir_all(boxed.join("sub")).unwrap();
    std::fs::write(boxed.join("a_first"), "x").unwrap();
    std::fs::write(boxed.join("sub/inner"), "x").unwrap();
    std::fs::write(boxed.join("victim"), "x").unwrap();
    for p in [&s.0, &r, &outside] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let st = Command::new("chown")
        .args(["-R", "nobody"])
        .arg(&boxed)
        .status()
        .unwrap();
    assert!(st.success());
    let shadow = std::fs::symlink_metadata("/etc/shadow").unwrap();
    let forbidden = [
        (shadow.dev(), shadow.ino()),
        {
            let m = std::fs::metadata(outside.join("deep")).unwrap();
            (m.dev(), m.ino())
        },
        {
            let m = std::fs::metadata(&outside).unwrap();
            (m.dev(), m.ino())
        },
    ];
    let mut swapped = false;
    let swap = format!(
        "cd {b} && mv sub sub.old && ln -s {o} sub && rm victim && ln -s /etc/shadow victim",
        b = boxed.display(),
        o = outside.display()
    );
    let (got, counts) = label_tree(&e, &fc, &r, b"/var/www", false, &mut |k| {
        // box's entries are listed (sorted) before a_first is visited: swap the next two.
        if k == b"/var/www/box/a_first" {
            let st = Command::new("timeout")
                .args(["10", "runuser", "-u", "nobody", "--", "sh", "-c", &swap])
                .status()
                .unwrap();
            assert!(st.success(), "the attacker's swap failed");
            swapped = true;
        }
    });
    assert!(swapped);
    eprintln!("{counts:?}");
    for (k, g) in &got {
        assert!(
            !forbidden.contains(&(g.dev, g.ino)),
            "{} is outside the tree: {g:?}",
            String::from_utf8_lossy(k)
        );
        assert!(
            !k.starts_with(b"/var/www/box/sub/"),
            "went into the swapped link: {}",
            String::from_utf8_lossy(k)
        );
    }
    for name in ["sub", "victim"] {
        let k = format!("/var/www/box/{name}").into_bytes();
        let g = got.get(&k).unwrap();
        let m = std::fs::symlink_metadata(boxed.join(name)).unwrap();
        assert_eq!(g.kind, FileKind::Lnk, "{name}: {g:?}");
        assert_eq!((g.dev, g.ino), (m.dev(), m.ino()), "{name}");
    }
}

/// A file system mounted inside the tree is neither labeled nor entered unless asked; a bind
/// mount of the same file system (same st_dev) too.
#[test]
fn mounts_are_not_crossed_unless_asked() {
    let Some((e, fc, _)) = setup() else { return };
    let s = scratch("mounts");
    let r = &s.0;
    std::fs::create_dir_all(r.join("tmpfs")).unwrap();
    std::fs::create_dir_all(r.join("bind")).unwrap();
    std::fs::create_dir_all(r.join("plain/below")).unwrap();
    std::fs::write(r.join("plain/below/f"), "x").unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "none"])
        .arg(r.join("tmpfs"))
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIP: cannot mount a tmpfs here");
        return;
    }
    let bound = Command::new("mount")
        .arg("--bind")
        .arg(r.join("plain"))
        .arg(r.join("bind"))
        .status()
        .is_ok_and(|s| s.success());
    std::fs::write(r.join("tmpfs/in"), "x").unwrap();
    let run = |cross| label_tree(&e, &fc, r, b"/var/www", cross, &mut |_| {});
    let (kept, counts) = run(false);
    let (crossed, counts_x) = run(true);
    let _ = Command::new("umount").arg(r.join("tmpfs")).status();
    if bound {
        let _ = Command::new("umount").arg(r.join("bind")).status();
    }
    assert!(bound, "bind mount failed");
    eprintln!("{counts:?} / crossing: {counts_x:?}");
    for k in [
        "/var/www/tmpfs",
        "/var/www/tmpfs/in",
        "/var/www/bind",
        "/var/www/bind/below",
    ] {
        assert!(!kept.contains_key(k.as_bytes()), "{k} labeled: {kept:?}");
        assert!(
            crossed.contains_key(k.as_bytes()),
            "{k} not labeled when crossing"
        );
    }
    assert!(kept.contains_key(&b"/var/www/plain/below/f"[..]));
    assert_eq!(counts.mounts_skipped, 2);
    assert_eq!(counts_x.mounts_skipped, 0);
}

/// What file_contexts says nothing about gets the label the kernel gives an unlabeled inode of
/// its file system (inode_doinit_with_dentry): on a tmpfs (fs_use_trans) the file system's
/// SID, on ext4 (fs_use_xattr) the initial SID `file`; both read from the policy.
#[test]
fn an_object_file_contexts_leaves_alone_gets_its_file_systems_default() {
    let Some((e, fc, _)) = setup() else { return };
    let s = scratch("fsdefault");
    let r = &s.0;
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "none"])
        .arg(r)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("SKIP: cannot mount a tmpfs here");
        return;
    }
    std::fs::write(r.join("scratch"), "x").unwrap();
    // Debian's file_contexts: "/tmp/.*  <<none>>".
    let (got, _) = label_tree(&e, &fc, r, b"/tmp", false, &mut |_| {});
    let _ = Command::new("umount").arg(r).status();
    let (behaviour, tmpfs_sid) = e.server().snapshot().fs_use("tmpfs").expect("fs_use tmpfs");
    assert!(
        !matches!(behaviour, seaccess_security::FsUseBehavior::Xattr),
        "Debian's policy labels tmpfs by transition"
    );
    let obj = &got[&b"/tmp/scratch"[..]];
    assert!(!obj.matched, "{obj:?}");
    assert_eq!(obj.sid, tmpfs_sid, "{} is not tmpfs's", obj.context);
    // On this machine's ext4 (fs_use_xattr) the same lookup gives the initial SID file.
    let s2 = scratch("fsdefault-ext4");
    std::fs::write(s2.0.join("scratch"), "x").unwrap();
    let on_disk = Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(&s2.0)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    if on_disk != "ext2/ext3" {
        eprintln!("SKIP: the temporary directory is on {on_disk}, not ext4");
        return;
    }
    let (got, _) = label_tree(&e, &fc, &s2.0, b"/tmp", false, &mut |_| {});
    let file_sid = e
        .server()
        .snapshot()
        .initial_sid(5)
        .expect("initial SID file");
    assert_eq!(got[&b"/tmp/scratch"[..]].sid, file_sid);
}
