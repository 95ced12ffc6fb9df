//! The kernel as crates/objmgr's oracle (tests/kernel/oracle): reads what a real SELinux kernel
//! did in the guest (tests/kernel/oracle/guest.sh's output: the labels setfiles gave, each
//! operation's outcome in each domain, the kernel's AVC records), performs the same operations
//! on a copy of the guest's tree through the object manager's hooks (the lab's file service)
//! with the same labels and contexts, and compares them operation by operation: the outcome
//! (allowed, or the errno) and the AVC records each operation wrote. The families: files
//! (stat, read, append), names (create, mkdir, symlink, link, unlink, rmdir, rename, and the
//! labels the new objects got, read back at the end), exec (allowed or refused, and the context
//! it gives), signals and ptrace (tasks.rs), sockets and SysV IPC (net_ipc.rs). A coverage line
//! says how many operations of each family the kernel allowed and refused; a family without
//! both fails the run.
//!
//! Usage: kernel_oracle POLICY RESULTS [DOCUMENTED]
//!
//! Prints each difference, then the summary line tools read:
//! `kernel-oracle: N compared, D differ (E documented)`. DOCUMENTED is a file of known,
//! deliberate differences (one operation key a line, as the differences are printed); exits
//! 1 when a difference is not in it, or when the run itself is broken.

use std::collections::{BTreeMap, BTreeSet};
use std::error::Error;
use std::path::Path;
use std::sync::{Arc, Mutex};

use seaccess_lab::file_service::FileService;
use seaccess_lab::LabError;

mod net_ipc;
mod tasks;

type Res<T> = Result<T, Box<dyn Error>>;

/// What the guest printed.
#[derive(Default)]
struct Guest {
    facts: BTreeMap<String, String>,
    /// Path, kind, context, in the guest's order: the tree as setfiles labelled it.
    labels: Vec<(String, String, String)>,
    /// Path, kind, context: the labels read back after the workload (`L` lines after the
    /// first operation).
    readback: Vec<(String, String, String)>,
    /// Context, operation, path, outcome, in the order the probe ran them.
    ops: Vec<(String, String, String, String)>,
    /// The contexts the probe reported (`C` lines), in order.
    contexts: Vec<String>,
    records: Vec<String>,
    /// The targets of signals and ptrace: context by pid (`T` lines).
    targets: BTreeMap<u32, String>,
}

fn parse(text: &str) -> Res<Guest> {
    let mut g = Guest::default();
    for (n, line) in text.lines().enumerate() {
        let bad = || format!("results line {}: cannot read {line:?}", n + 1);
        let mut f = line.splitn(2, ' ');
        let (tag, rest) = (f.next().unwrap_or(""), f.next().unwrap_or(""));
        match tag {
            "S" => {
                let (k, v) = rest.split_once(' ').ok_or_else(bad)?;
                g.facts.insert(k.into(), v.into());
            }
            "L" => {
                let w: Vec<&str> = rest.splitn(3, ' ').collect();
                let [p, k, c] = w[..] else {
                    return Err(bad().into());
                };
                let l = (p.into(), k.into(), c.into());
                if g.ops.is_empty() {
                    g.labels.push(l);
                } else {
                    g.readback.push(l);
                }
            }
            "R" => {
                let w: Vec<&str> = rest.split(' ').collect();
                let [c, o, p, r] = w[..] else {
                    return Err(bad().into());
                };
                g.ops.push((c.into(), o.into(), p.into(), r.into()));
            }
            "C" => g.contexts.push(rest.into()),
            "T" => {
                let (pid, c) = rest.split_once(' ').ok_or_else(bad)?;
                g.targets
                    .insert(pid.parse().map_err(|_| bad())?, c.to_string());
            }
            "A" => g.records.push(rest.into()),
            "SUITE-END" => {}
            _ => return Err(format!("results line {}: unknown line {line:?}", n + 1).into()),
        }
    }
    Ok(g)
}

/// An AVC record without what differs between any two runs (the pid, the inode number, the
/// filesystem's name), so that the kernel's and the object manager's can be compared.
fn normalized(record: &str) -> String {
    record
        .split(' ')
        .filter(|w| !(w.starts_with("pid=") || w.starts_with("ino=") || w.starts_with("dev=")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// How far the kernel's records may run ahead of the object manager's before a record of ours
/// counts as one the kernel did not write.
const RESYNC: usize = 8;

/// Takes `w` as the kernel's next record at `cursor`. Where the kernel wrote others before it
/// (within [`RESYNC`]), they are skipped and returned; where it wrote no such record nearby,
/// nothing is consumed and the list is empty.
fn next_record(kernel: &[String], cursor: &mut usize, w: &str) -> Result<(), Vec<String>> {
    let ahead = kernel.iter().skip(*cursor).take(RESYNC);
    match ahead.clone().position(|k| k == w) {
        Some(0) => {
            *cursor += 1;
            Ok(())
        }
        Some(j) => {
            let skipped = ahead.take(j).cloned().collect();
            *cursor += j + 1;
            Err(skipped)
        }
        None => Err(Vec::new()),
    }
}

/// The family of the workload an operation belongs to, for the coverage line.
fn family(op: &str) -> &'static str {
    match op {
        "stat" | "read" | "write" => "files",
        "create" | "mkdir" | "unlink" | "rmdir" | "rename" | "link" | "symlink" => "names",
        "exec" => "exec",
        "kill" | "ptrace" => "signals",
        "socket" | "bind" | "connect" => "sockets",
        "shm" | "sem" | "msg" => "ipc",
        _ => "other",
    }
}

/// The errno name the probe prints for an errno.
fn errno_name(e: i32) -> String {
    match e {
        libc::EACCES => "EACCES".into(),
        libc::EPERM => "EPERM".into(),
        libc::ENOENT => "ENOENT".into(),
        libc::EINVAL => "EINVAL".into(),
        libc::EEXIST => "EEXIST".into(),
        libc::ENOTEMPTY => "ENOTEMPTY".into(),
        libc::ENOTDIR => "ENOTDIR".into(),
        libc::EISDIR => "EISDIR".into(),
        libc::EXDEV => "EXDEV".into(),
        libc::ESRCH => "ESRCH".into(),
        libc::EADDRINUSE => "EADDRINUSE".into(),
        libc::EADDRNOTAVAIL => "EADDRNOTAVAIL".into(),
        e => format!("errno{e}"),
    }
}

/// The program name the kernel puts in `comm=` for a probe started as `path`.
fn comm_of(path: &str) -> String {
    let base = path.rsplit('/').next().unwrap_or(path);
    base.chars().take(15).collect()
}

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(e) => {
            eprintln!("kernel_oracle: {e}");
            std::process::exit(2);
        }
    }
}

fn run() -> Res<bool> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(policy), Some(results)) = (args.get(1), args.get(2)) else {
        return Err("usage: kernel_oracle POLICY RESULTS [DOCUMENTED]".into());
    };
    let documented: BTreeSet<String> = match args.get(3) {
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| format!("{p}: {e}"))?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect(),
        None => BTreeSet::new(),
    };
    let text = std::fs::read_to_string(results).map_err(|e| format!("{results}: {e}"))?;
    let g = parse(&text)?;
    if g.facts.get("enforce").map(String::as_str) != Some("1") {
        return Err("the guest was not enforcing (no `S enforce 1` line)".into());
    }
    if g.ops.is_empty() {
        return Err("the guest ran no operation".into());
    }

    // The guest's tree, rebuilt here: the same paths under a scratch root, "/" standing for
    // the guest's root; the labels exactly as setfiles left them.
    let scratch = std::env::temp_dir().join(format!("kernel-oracle-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let mut labels: Vec<(String, String)> = Vec::new();
    for (p, kind, c) in &g.labels {
        let rel = p.trim_start_matches('/');
        let at = scratch.join(rel);
        match kind.as_str() {
            "dir" => std::fs::create_dir_all(&at)?,
            "file" => {
                if let Some(d) = at.parent() {
                    std::fs::create_dir_all(d)?;
                }
                std::fs::write(&at, b"x\n")?;
            }
            _ => return Err(format!("{p}: only directories and files are rebuilt").into()),
        }
        labels.push((rel.to_string(), c.clone()));
    }
    let pairs: Vec<(&str, &str)> = labels
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    // The guest's tree is a tmpfs (labelled by setfiles: setxattr over tmpfs's own labels).
    let svc = FileService::on(&scratch, Path::new(policy), "tmpfs", &pairs)?;
    let sink: Arc<Mutex<Vec<String>>> = Arc::default();
    let s2 = sink.clone();
    svc.om()
        .avc()
        .set_audit_callback(move |r| s2.lock().unwrap_or_else(|e| e.into_inner()).push(r.into()));

    let kernel_records: Vec<String> = g
        .records
        .iter()
        // The kernel's records of the workload: those about the tree's files and directories
        // (an exec also checks the descriptors it hands on, which the object manager does not
        // model here).
        .filter(|r| {
            [
                "file",
                "dir",
                "lnk_file",
                "filesystem",
                "process",
                "tcp_socket",
                "udp_socket",
                "unix_stream_socket",
                "shm",
                "sem",
                "msgq",
                "capability",
            ]
            .iter()
            .any(|c| r.contains(&format!("tclass={c} ")))
        })
        .map(|r| normalized(r))
        .collect();
    let mut cursor = 0usize;
    let targets = tasks::Targets::new(&svc, g.targets.clone());

    let (mut compared, mut differ, mut known) = (0usize, 0usize, 0usize);
    let mut undocumented = 0usize;
    let mut program = "probe".to_string();
    let mut report = |key: String, what: String| {
        differ += 1;
        if documented.contains(&key) {
            known += 1;
            println!("documented: {key}: {what}");
        } else {
            undocumented += 1;
            println!("DIFFERS: {key}: {what}");
        }
    };
    let mut current: Option<String> = None;
    // Per family: operations, how many the kernel allowed, how many the policy refused.
    let mut coverage: BTreeMap<&str, (usize, usize, usize)> = BTreeMap::new();
    for (ctx, op, path, outcome) in &g.ops {
        compared += 1;
        let c = coverage.entry(family(op)).or_default();
        c.0 += 1;
        match outcome.as_str() {
            "ok" => c.1 += 1,
            "EACCES" | "EPERM" => c.2 += 1,
            _ => {}
        }
        let key = format!("{ctx} {op} {path}");
        // An exec runs in the context before it (the previous operation's); the probe reports
        // a successful one from the new program, in the context the exec gave it.
        let actor = if op == "exec" {
            current
                .clone()
                .ok_or_else(|| format!("{key}: an exec before any other operation"))?
        } else {
            ctx.clone()
        };
        current = Some(ctx.clone());
        let task = svc.task(1, &program, &actor)?;
        let rel = path.trim_start_matches('/');
        // OLD,NEW of the two-name operations (a symbolic link's target is no path).
        let (old, new) = rel.split_once(',').unwrap_or((rel, ""));
        let new = new.trim_start_matches('/');
        sink.lock().unwrap_or_else(|e| e.into_inner()).clear();
        let r = match op.as_str() {
            "stat" => svc.stat(&task, rel).map(|_| ()),
            "read" => svc.read(&task, rel).map(|_| ()),
            "write" => svc.append(&task, rel, b"x"),
            "create" => svc.create(&task, rel),
            "mkdir" => svc.mkdir(&task, rel),
            "unlink" => svc.unlink(&task, rel),
            "rmdir" => svc.rmdir(&task, rel),
            "rename" => svc.rename(&task, old, new),
            "link" => svc.link(&task, old, new),
            "symlink" => svc.symlink(&task, old, new),
            "kill" => targets
                .kill(&task, path)
                .map_err(|e| format!("{key}: {e}"))?,
            "ptrace" => targets
                .ptrace(&task, path)
                .map_err(|e| format!("{key}: {e}"))?,
            "socket" => {
                net_ipc::socket(svc.om(), &task, path).map_err(|e| format!("{key}: {e}"))?
            }
            "bind" => net_ipc::bind(svc.om(), &task, path).map_err(|e| format!("{key}: {e}"))?,
            "connect" => {
                net_ipc::connect(svc.om(), &task, path).map_err(|e| format!("{key}: {e}"))?
            }
            "shm" | "sem" | "msg" => net_ipc::ipc(svc.om(), &task, op, path.ends_with("/rmid"))
                .map_err(|e| format!("{key}: {e}"))?,
            // Into the context the exec gives; the kernel's must be the same.
            "exec" => svc.exec(&task, rel).and_then(|into| {
                if into == *ctx {
                    Ok(())
                } else {
                    Err(LabError::Objmgr {
                        what: format!("exec into {into}, not {ctx}"),
                    })
                }
            }),
            other => return Err(format!("{key}: no object-manager counterpart for {other}").into()),
        };
        let ours = match r {
            Ok(()) => "ok".to_string(),
            Err(LabError::Refused { errno, .. }) => errno_name(errno),
            Err(LabError::Objmgr { what }) if op == "exec" => what,
            Err(e) => return Err(format!("{key}: {e}").into()),
        };
        let mut problems = Vec::new();
        if ours != *outcome {
            problems.push(format!("kernel: {outcome}; objmgr: {ours}"));
        }
        // Each record the object manager wrote must be the kernel's next one for the tree.
        let written: Vec<String> = sink
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            // Our tree stands at the scratch directory; the guest's at its root.
            .map(|r| normalized(&r.replace(&format!("path=\"{}/", scratch.display()), "path=\"/")))
            .collect();
        for w in written {
            match next_record(&kernel_records, &mut cursor, &w) {
                Ok(()) => {}
                Err(skipped) if skipped.is_empty() => {
                    problems.push(format!("a record the kernel did not write: {w}"))
                }
                Err(skipped) => {
                    for k in skipped {
                        problems.push(format!("a record the object manager did not write: {k}"));
                    }
                }
            }
        }
        if !problems.is_empty() {
            report(key, problems.join("\n  "));
        }
        // The records of an exec are the old program's; what follows, the new one's.
        if op == "exec" && outcome == "ok" {
            program = comm_of(path);
        }
    }
    // The labels the kernel gave the workload's new objects (and kept on the others), read
    // back after it: the object manager's must be the same (determine_inode_label's type
    // transition with the name, inode_post_create).
    for (p, _, c) in &g.readback {
        compared += 1;
        let rel = p.trim_start_matches('/');
        let ours = svc.label(rel).unwrap_or_else(|e| format!("none ({e})"));
        if ours != *c {
            report(format!("label {p}"), format!("kernel: {c}; objmgr: {ours}"));
        }
    }
    for k in kernel_records.iter().skip(cursor) {
        report(
            "record".into(),
            format!("the kernel wrote one the object manager did not: {k}"),
        );
        compared += 1;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    // Each family must show the policy both allowing and refusing, or it tests half a hook.
    let mut lopsided = Vec::new();
    let line: Vec<String> = coverage
        .iter()
        .map(|(f, (n, ok, no))| {
            if *ok == 0 || *no == 0 {
                lopsided.push(*f);
            }
            format!("{f} {n} ({ok} allowed, {no} denied)")
        })
        .collect();
    println!("coverage: {} families: {}", coverage.len(), line.join(", "));
    println!("kernel-oracle: {compared} compared, {differ} differ ({known} documented)");
    if !lopsided.is_empty() {
        println!("coverage: no allowed or no denied operation in {lopsided:?}");
    }
    Ok(undocumented == 0 && lopsided.is_empty())
}
