//! The guest's smoke test of `seaccess enforce`'s kernel side (tests/kernel/enforce/guest.sh),
//! for what the commands cannot reach (a label the generation does not cover: a miss; a
//! generation that revokes a grant on an open descriptor; the remembered grant itself):
//! loads the BPF object, installs a generation built by tables::build for a handful of SIDs,
//! labels files by descriptor, confines an `initrc_t` task that execs an `httpd_exec_t` program, and checks what the kernel then allows and refuses against what the
//! engine says, never against a hard-coded answer. Prints one line per check and, last,
//! `kernel-enforce-bpf: N checks, F failed`; exits 1 if any failed.
//!
//! `enforce_smoke POLICY DIR BUSYBOX` runs the suite (as root, on a kernel booted with the
//! BPF LSM); `enforce_smoke --wait PROG ARGV0 ARGS...` is the confined child: it waits for a
//! line on stdin (the parent labels it meanwhile), then execs PROG.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, Write};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use seaccess_enforce::bpf::Enforcer;
use seaccess_enforce::event::{field, kind, render};
use seaccess_enforce::layout::{Av, Event, Key, Trans, EV_DENIED, EV_MISS};
use seaccess_enforce::tables::{self, Limits, Universe};
use seaccess_engine::Engine;
use seaccess_types::Sid;

const INITRC: &str = "system_u:system_r:initrc_t:s0";
const WEB: &str = "system_u:object_r:httpd_sys_content_t:s0";
const SHADOW: &str = "system_u:object_r:shadow_t:s0";
const HTTPD_EXEC: &str = "system_u:object_r:httpd_exec_t:s0";
const TMP: &str = "system_u:object_r:tmp_t:s0";
/// A label the generation holds no decision for: opening it must be a miss.
const NO_DECISIONS: &str = "system_u:object_r:etc_t:s0";

struct Suite {
    checks: u32,
    failed: u32,
}

impl Suite {
    fn check(&mut self, ok: bool, what: &str) {
        self.checks += 1;
        if ok {
            println!("ok - {what}");
        } else {
            self.failed += 1;
            println!("FAIL - {what}");
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--wait") {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).unwrap();
        let err = Command::new(&args[2])
            .arg0(&args[3])
            .args(&args[4..])
            .exec();
        eprintln!("exec {}: {err}", args[2]);
        std::process::exit(127);
    }
    let [_, policy, dir, busybox] = &args[..] else {
        eprintln!("usage: enforce_smoke POLICY DIR BUSYBOX");
        std::process::exit(2);
    };
    let mut s = Suite {
        checks: 0,
        failed: 0,
    };
    run(
        &mut s,
        Path::new(policy),
        Path::new(dir),
        Path::new(busybox),
    );
    println!(
        "kernel-enforce-bpf: {} checks, {} failed",
        s.checks, s.failed
    );
    std::process::exit(i32::from(s.failed != 0));
}

fn allowed(engine: &Engine, s: &str, t: &str, class: &str, perms: &[&str]) -> bool {
    engine.check(s, t, class, perms).unwrap().allowed()
}

/// Runs `prog` (as `argv0 args`) in a child confined in `sid`: spawned waiting, labeled through
/// its pidfd, then let go. Returns the child's pid, its status, stdout and stderr; `during` runs
/// with the child's pidfd after it was let go and before it is reaped.
/// Starts `prog` (as `argv0`, with `args`) through `--wait`, labeled `sid` when given (the
/// child waits for a line on stdin while it is labeled, then gets "go"): the child, with
/// stdin still open, and its pidfd.
fn spawn_confined(
    e: &mut Enforcer,
    sid: Option<Sid>,
    prog: &Path,
    argv0: &str,
    args: &[&str],
    stderr: Stdio,
) -> (std::process::Child, rustix::fd::OwnedFd) {
    let me = std::env::current_exe().unwrap();
    let mut child = Command::new(me)
        .arg("--wait")
        .arg(prog)
        .arg(argv0)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    let pidfd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).unwrap();
    if let Some(sid) = sid {
        e.set_task(pidfd.as_fd(), sid.0).unwrap();
    }
    child.stdin.as_mut().unwrap().write_all(b"go\n").unwrap();
    (child, pidfd)
}

fn confined(
    e: &mut Enforcer,
    sid: Option<Sid>,
    prog: &Path,
    argv0: &str,
    args: &[&str],
    during: impl FnOnce(&mut Enforcer, &rustix::fd::OwnedFd),
) -> (bool, String, String) {
    let (mut child, pidfd) = spawn_confined(e, sid, prog, argv0, args, Stdio::piped());
    drop(child.stdin.take());
    during(e, &pidfd);
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// As `confined`, for a child that stops half way: `between` runs once the child has printed
/// its first line and before it reads a line on stdin, so what `between` changes is ordered
/// after the child's first step and before its second by the child itself, not by a sleep.
fn confined_paused(
    e: &mut Enforcer,
    sid: Sid,
    prog: &Path,
    argv0: &str,
    args: &[&str],
    between: impl FnOnce(&mut Enforcer, &rustix::fd::OwnedFd),
) -> String {
    let (mut child, pidfd) = spawn_confined(e, Some(sid), prog, argv0, args, Stdio::null());
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut out = String::new();
    stdout.read_line(&mut out).unwrap();
    between(e, &pidfd);
    // The child may have ended already (its first step refused): the write then fails.
    let _ = stdin.write_all(b"next\n");
    drop(stdin);
    std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
    let _ = child.wait();
    out
}

fn run(s: &mut Suite, policy: &Path, dir: &Path, busybox: &Path) {
    let engine = Engine::open(policy).unwrap();
    let sid = |c: &str| engine.sid(c).unwrap();
    let (initrc, web, shadow, hexec, nodec) = (
        sid(INITRC),
        sid(WEB),
        sid(SHADOW),
        sid(HTTPD_EXEC),
        sid(NO_DECISIONS),
    );
    let tmp = sid(TMP);
    let (httpd, httpd_tmp) = engine
        .with_generation(|g| {
            let p = g.policy();
            let process = p.class("process").unwrap();
            let httpd = p.compute_create(initrc, hexec, process, None).unwrap();
            Ok((
                httpd,
                p.compute_create(httpd, tmp, p.class("file").unwrap(), None)
                    .unwrap(),
            ))
        })
        .unwrap();
    let httpd_ctx = engine.server().sid_to_context(httpd).unwrap();
    println!("# the policy: exec of {HTTPD_EXEC} from {INITRC} enters {httpd_ctx}");
    let names = engine.with_generation(|g| Ok(g.policy().clone())).unwrap();

    // The files, labeled by descriptor.
    std::fs::create_dir_all(dir).unwrap();
    let webf = dir.join("index.html");
    let shadowf = dir.join("shadow");
    let nodecf = dir.join("hosts");
    let prog = dir.join("httpd");
    std::fs::write(&webf, "hello from httpd_sys_content_t\nsecond line\n").unwrap();
    std::fs::write(&shadowf, "root:secret\n").unwrap();
    std::fs::write(&nodecf, "127.0.0.1 localhost\n").unwrap();
    std::fs::copy(busybox, &prog).unwrap();
    let tmpd = dir.join("tmp");
    let webd = dir.join("www");
    std::fs::create_dir_all(&tmpd).unwrap();
    std::fs::create_dir_all(&webd).unwrap();

    let mut e = Enforcer::load(Path::new(seaccess_enforce::bpf::PIN_DIR)).unwrap();
    println!(
        "# loaded and attached; maps pinned under {}",
        seaccess_enforce::bpf::PIN_DIR
    );
    // The generation the daemon would build for these labels and initrc_t (its closure adds
    // httpd_t, reached by exec, and what creates make), without the label the miss is about.
    let universe = Universe {
        tasks: vec![initrc],
        dirs: vec![tmp, web],
        files: vec![web, shadow, hexec],
    };
    let gen = tables::build(&engine, &universe, true, &Limits::default()).unwrap();
    let covered = |s: Sid| gen.sids.tasks.contains(&s.0) || gen.sids.objects.contains(&s.0);
    assert!(
        covered(httpd) && covered(httpd_tmp) && !covered(nodec),
        "the closure covers httpd_t and httpd_tmp_t, not {NO_DECISIONS}"
    );
    let dec: Vec<(Key, Av)> = gen.decisions.iter().collect();
    let tr: Vec<(Key, Trans)> = gen.transitions.iter().collect();
    let mut config = gen.config;
    let seq = e
        .install(
            &dec,
            &tr,
            &gen.named,
            &gen.filesystems,
            (&gen.ports, &gen.nodes),
            &config,
        )
        .unwrap();
    println!(
        "# generation {seq}: {} decisions, {} transitions",
        dec.len(),
        tr.len()
    );
    let open = |p: &PathBuf| std::fs::File::open(p).unwrap();
    let files = [
        (&webf, web),
        (&shadowf, shadow),
        (&nodecf, nodec),
        (&prog, hexec),
        (&tmpd, tmp),
        (&webd, web),
    ];
    for (p, sid) in files {
        e.set_inode(open(p).as_fd(), sid.0).unwrap();
    }
    let _ = e.events(Duration::ZERO).unwrap();

    // The exec transition: the confined child's label after exec is the policy's.
    // Polled until the exec has happened (a loaded machine may take seconds), not slept on.
    let (ok, _, err) = confined(&mut e, Some(initrc), &prog, "sleep", &["3"], |e, pidfd| {
        let mut t = None;
        for _ in 0..60 {
            t = e.task(pidfd.as_fd()).unwrap();
            if t.map(|t| t.sid) == Some(httpd.0) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        s.check(
            t.map(|t| t.sid) == Some(httpd.0),
            &format!("exec of httpd_exec_t from initrc_t: the task is now {httpd_ctx} (task storage: {t:?})"),
        );
    });
    s.check(
        ok,
        &format!("the confined sleep ran and exited 0 ({})", err.trim()),
    );

    // The allowed read, decided by the engine first.
    let want = allowed(&engine, &httpd_ctx, WEB, "file", &["read", "open"]);
    s.check(want, "the policy lets httpd_t {read open} httpd_sys_content_t files (the case this test is about)");
    let (ok, out, err) = confined(
        &mut e,
        Some(initrc),
        &prog,
        "cat",
        &[webf.to_str().unwrap()],
        |_, _| {},
    );
    s.check(
        ok == want && out.contains("hello from httpd_sys_content_t"),
        &format!(
            "confined cat of the web page: allowed, read back ({:?} {})",
            out.trim(),
            err.trim()
        ),
    );
    // The revalidation skip's grant, in the reading task's own decision cache while it still
    // holds the file open: the page's label, class file, read among the bits, this generation.
    // The shell reads its second line only after a line on stdin, sent once `between` is done.
    let two_reads = format!(
        "exec 3< {}; read a <&3; echo \"1:$a\"; read go; read b <&3 && echo \"2:$b\"",
        webf.display()
    );
    let mut cached = None;
    let _ = confined_paused(
        &mut e,
        initrc,
        &prog,
        "sh",
        &["-c", &two_reads],
        |e, pidfd| {
            cached = e.task(pidfd.as_fd()).unwrap();
        },
    );
    let read = seaccess_objmgr::classes::file::READ;
    s.check(
        cached.is_some_and(|t| {
            t.avd_seqno == seq
                && t.avd_ssid == httpd.0
                && t.avd
                    .iter()
                    .any(|a| a.tsid == web.0 && a.tclass == 0 && a.perms & read == read)
        }),
        &format!(
            "the grant is kept in the task's decision cache for the revalidation skip: {cached:?}"
        ),
    );

    // The denied open, with its record (comm is the program file's name, as exec sets it).
    let want = allowed(&engine, &httpd_ctx, SHADOW, "file", &["read", "open"]);
    s.check(
        !want,
        "the policy refuses httpd_t {read open} on shadow_t (the case this test is about)",
    );
    let (ok, out, err) = confined(
        &mut e,
        Some(initrc),
        &prog,
        "cat",
        &[shadowf.to_str().unwrap()],
        |_, _| {},
    );
    s.check(
        !ok && !out.contains("secret") && err.contains("Permission denied"),
        &format!("confined cat of shadow: EACCES ({})", err.trim()),
    );
    let evs = e.events(Duration::from_millis(200)).unwrap();
    let denial = evs
        .iter()
        .find(|v| v.kind == EV_DENIED && v.ssid == httpd.0 && v.tsid == shadow.0 && v.tclass == 0);
    for v in &evs {
        println!("# {} {}", kind(v), render(v, Some(&*names)));
    }
    let rec = denial.map(|v| render(v, Some(&*names))).unwrap_or_default();
    s.check(
        denial
            .is_some_and(|v| field(&v.comm) == "httpd" && field(&v.name) == "shadow" && v.ino != 0)
            // The open is refused at inode_permission (may_open's MAY_READ: `{ read }`),
            // before file_open would ask `{ read open }`, as on the SELinux kernel.
            && rec.starts_with("avc:  denied  { read } for  pid=")
            && rec.contains(&format!(
                "scontext={httpd_ctx} tcontext={SHADOW} tclass=file permissive=0"
            )),
        &format!("the denial's record: {rec}"),
    );

    // An unconfined task is not checked.
    let (ok, out, _) = confined(
        &mut e,
        None,
        &prog,
        "cat",
        &[shadowf.to_str().unwrap()],
        |_, _| {},
    );
    s.check(
        ok && out.contains("secret"),
        "an unconfined task reads shadow",
    );

    // A confined task's child is confined too (task_alloc): a background cat forked by the
    // confined shell is refused shadow as its parent would be.
    let want = allowed(&engine, &httpd_ctx, &httpd_ctx, "process", &["fork"]);
    s.check(
        want,
        "the policy lets httpd_t fork (the case this test is about)",
    );
    let script = format!("cat {} & wait $!", shadowf.display());
    let (ok, out, err) = confined(
        &mut e,
        Some(initrc),
        &prog,
        "sh",
        &["-c", &script],
        |_, _| {},
    );
    s.check(
        !ok && !out.contains("secret") && err.contains("Permission denied"),
        &format!(
            "the confined shell's forked cat is refused shadow ({})",
            err.trim()
        ),
    );

    // Creation: the new file's label is the policy's type transition, kept in inode storage
    // by inode_init_security; a create the policy refuses fails with EACCES. The parent is
    // asked `dir {write search}` (inode_permission, may_create_in_dir) and `{add_name search}`
    // (may_create).
    let httpd_tmp_ctx = engine.server().sid_to_context(httpd_tmp).unwrap();
    let want = allowed(
        &engine,
        &httpd_ctx,
        TMP,
        "dir",
        &["write", "add_name", "search"],
    ) && allowed(&engine, &httpd_ctx, &httpd_tmp_ctx, "file", &["create"]);
    s.check(want, &format!("the policy lets httpd_t create in tmp_t, as {httpd_tmp_ctx} (the case this test is about)"));
    let newf = tmpd.join("new");
    let (ok, _, err) = confined(
        &mut e,
        Some(initrc),
        &prog,
        "touch",
        &[newf.to_str().unwrap()],
        |_, _| {},
    );
    for v in e.events(Duration::from_millis(100)).unwrap() {
        println!("# {} {}", kind(&v), render(&v, Some(&*names)));
    }
    let label = std::fs::File::open(&newf)
        .ok()
        .and_then(|f| e.inode(f.as_fd()).unwrap());
    s.check(
        ok && label.is_some_and(|l| l.sid == httpd_tmp.0),
        &format!(
            "confined touch in tmp_t: created, labeled {httpd_tmp_ctx} ({label:?} {})",
            err.trim()
        ),
    );
    let want = allowed(&engine, &httpd_ctx, WEB, "dir", &["add_name"]);
    s.check(!want, "the policy refuses httpd_t {add_name} in httpd_sys_content_t (the case this test is about)");
    let newf = webd.join("new");
    let (ok, _, err) = confined(
        &mut e,
        Some(initrc),
        &prog,
        "touch",
        &[newf.to_str().unwrap()],
        |_, _| {},
    );
    s.check(
        !ok && !newf.exists() && err.contains("Permission denied"),
        &format!(
            "confined touch in httpd_sys_content_t: EACCES ({})",
            err.trim()
        ),
    );

    // A new generation ends the grants of the old: a confined shell reads the page's first
    // line, the next generation (in which httpd_t may no longer read it) is installed, and its
    // second read on the same descriptor is refused, not skipped on the old grant.
    let mut revoked = dec.clone();
    for (k, v) in revoked.iter_mut() {
        if (k.ssid, k.tsid, k.tclass) == (httpd.0, web.0, 0) {
            v.allowed &= !read;
        }
    }
    let out = confined_paused(&mut e, initrc, &prog, "sh", &["-c", &two_reads], |_, _| {});
    s.check(
        out.contains("1:hello") && out.contains("2:second"),
        &format!(
            "without a reload, the same shell reads both lines ({:?})",
            out.trim()
        ),
    );
    let _ = e.events(Duration::ZERO).unwrap();
    let mut reloaded = 0;
    let out = confined_paused(&mut e, initrc, &prog, "sh", &["-c", &two_reads], |e, _| {
        reloaded = e
            .install(
                &revoked,
                &tr,
                &gen.named,
                &gen.filesystems,
                (&gen.ports, &gen.nodes),
                &config,
            )
            .unwrap();
    });
    let evs = e.events(Duration::from_millis(200)).unwrap();
    let rec = evs
        .iter()
        .find(|v| v.kind == EV_DENIED && v.tsid == web.0 && v.seqno == reloaded)
        .map(|v| render(v, Some(&*names)))
        .unwrap_or_default();
    s.check(
        out.contains("1:hello") && !out.contains("2:second") && rec.starts_with("avc:  denied  { read }"),
        &format!("generation {reloaded} revokes read: the open descriptor's next read is refused ({:?}): {rec}", out.trim()),
    );
    let _ = e
        .install(
            &dec,
            &tr,
            &gen.named,
            &gen.filesystems,
            (&gen.ports, &gen.nodes),
            &config,
        )
        .unwrap();

    // A label with no decisions: a miss, denied and reported.
    let (ok, _, err) = confined(
        &mut e,
        Some(initrc),
        &prog,
        "cat",
        &[nodecf.to_str().unwrap()],
        |_, _| {},
    );
    let evs = e.events(Duration::from_millis(200)).unwrap();
    s.check(
        !ok && evs
            .iter()
            .any(|v: &Event| v.kind == EV_MISS && v.tsid == nodec.0),
        &format!(
            "a label with no decision is a miss, denied ({}) and reported",
            err.trim()
        ),
    );

    // Permissive: the same open logged and let through.
    config.enforcing = 0;
    let seq2 = e
        .install(
            &dec,
            &tr,
            &gen.named,
            &gen.filesystems,
            (&gen.ports, &gen.nodes),
            &config,
        )
        .unwrap();
    let (ok, out, _) = confined(
        &mut e,
        Some(initrc),
        &prog,
        "cat",
        &[shadowf.to_str().unwrap()],
        |_, _| {},
    );
    let evs = e.events(Duration::from_millis(200)).unwrap();
    let rec = evs
        .iter()
        .find(|v| v.kind == EV_DENIED && v.tsid == shadow.0 && v.seqno == seq2)
        .map(|v| render(v, Some(&*names)))
        .unwrap_or_default();
    s.check(
        ok && out.contains("secret") && rec.ends_with("permissive=1"),
        &format!("generation {seq2}, permissive: shadow read and logged: {rec}"),
    );
}
