//! Test support, never shipped: finds and drives the libsepol oracle, compiles the project's CIL
//! test policies with secilc, and enumerates queries over a policy.
//!
//! Test helpers may panic: a test that cannot set itself up must fail loudly.

#![forbid(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use seaccess_policy::{PolicyTables, OBJECT_R};

pub mod enforcing;

/// The workspace root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Whether every differential input is required (`SEACCESS_REQUIRE_ORACLE=1`, as `make test`
/// always sets): then a missing oracle or policy fails the test instead of skipping it.
pub fn required() -> bool {
    std::env::var("SEACCESS_REQUIRE_ORACLE").as_deref() == Ok("1")
}

/// `path` if it exists; otherwise a skip (`None`), or a failure when [`required`].
fn present(path: PathBuf, what: &str, how: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    if required() {
        panic!(
            "{what} is required but {} does not exist ({how})",
            path.display()
        );
    }
    eprintln!("SKIP: no {what} at {} ({how})", path.display());
    None
}

/// The project's libsepol answering program (tools/sepol-oracle, built by `make oracle`), or
/// `SEACCESS_ORACLE` if set.
pub fn oracle() -> Option<PathBuf> {
    let p = std::env::var_os("SEACCESS_ORACLE")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("target/oracle/sepol-oracle"));
    present(p, "sepol oracle", "run `make oracle`")
}

/// Debian's installed policy of this flavour ("default" or "mls").
pub fn debian_policy(flavour: &str) -> Option<PathBuf> {
    present(
        PathBuf::from(format!("/etc/selinux/{flavour}/policy/policy.33")),
        "Debian policy",
        "run `make deps`",
    )
}

/// Debian's reference policy source built monolithic by checkpolicy as `kind` ("standard",
/// "mcs" or "mls"), by `make refpolicy` (scripts/build-refpolicy.sh).
pub fn refpolicy(kind: &str) -> Option<PathBuf> {
    present(
        root().join(format!("target/refpolicy/{kind}.bin")),
        "reference policy build",
        "run `make refpolicy`",
    )
}

/// libselinux 3.4's own selabel_lookup answering queries (tests/label/selabel_query.c, built by
/// `make label-peer`).
pub fn label_peer() -> Option<PathBuf> {
    present(
        root().join("target/label/selabel_query"),
        "libselinux selabel caller",
        "run `make label-peer`",
    )
}

/// Debian's installed file_contexts of this policy flavour ("default" or "mls").
pub fn debian_file_contexts(flavour: &str) -> Option<PathBuf> {
    present(
        PathBuf::from(format!(
            "/etc/selinux/{flavour}/contexts/files/file_contexts"
        )),
        "Debian file_contexts",
        "run `make deps`",
    )
}

/// The source of a test policy.
pub fn policy_source(name: &str) -> PathBuf {
    root().join("testdata/policies").join(format!("{name}.cil"))
}

/// Header directives of a CIL test policy (comment lines before the first statement):
/// `; mls: false`, `; min-version: N`, `; secilc-args: -N`, `; oracle: crashes ...`.
pub struct Header {
    pub mls: bool,
    pub min_version: u32,
    pub secilc_args: Vec<String>,
    /// libsepol cannot answer queries on this policy (it crashes); no differential test.
    pub no_oracle: bool,
}

pub fn header(name: &str) -> Header {
    let text = std::fs::read_to_string(policy_source(name)).unwrap();
    let mut h = Header {
        mls: true,
        min_version: 24,
        secilc_args: Vec::new(),
        no_oracle: false,
    };
    for line in text
        .lines()
        .take_while(|l| l.starts_with(';') || l.trim().is_empty())
    {
        let l = line.trim_start_matches(';').trim();
        let first = |v: &str| v.split_whitespace().next().unwrap_or("").to_string();
        if let Some(v) = l.strip_prefix("mls:") {
            h.mls = first(v) != "false";
        }
        if let Some(v) = l.strip_prefix("min-version:") {
            h.min_version = first(v).parse().unwrap();
        }
        if let Some(v) = l.strip_prefix("secilc-args:") {
            h.secilc_args = v.split_whitespace().map(String::from).collect();
        }
        if let Some(v) = l.strip_prefix("oracle:") {
            h.no_oracle = first(v) == "crashes";
        }
    }
    h
}

/// The versions a test policy is compiled at: those of 24, 30, 31, 33 it supports (a policy
/// whose minimum is another version is compiled at that version too).
pub fn versions(name: &str) -> Vec<u32> {
    let min = header(name).min_version;
    let mut v: Vec<u32> = [24, 30, 31, 33].into_iter().filter(|v| *v >= min).collect();
    if !v.contains(&min) {
        v.insert(0, min);
    }
    v
}

/// Every test policy's name.
pub fn policy_names() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("testdata/policies"))
        .unwrap()
        .filter_map(|e| {
            let p = e.ok()?.path();
            (p.extension()? == "cil").then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    v.sort();
    v
}

/// Compiles test policy `name` at `version` with secilc (once; cached under target/policies).
pub fn compile(name: &str, version: u32) -> PathBuf {
    let src = policy_source(name);
    let h = header(name);
    let dir = root().join("target/policies");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{name}.{version}"));
    let fresh = out.metadata().and_then(|m| m.modified()).ok()
        > src.metadata().and_then(|m| m.modified()).ok();
    if fresh {
        return out;
    }
    secilc(&src, &out, version, &h);
    out
}

/// A name part no other process, nor another thread of this one, is using.
fn unique() -> String {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// Compiles CIL `src` at `version` with the options of header `h` into `out`, atomically (a
/// temporary file renamed, so concurrent tests never read half a policy).
fn secilc(src: &Path, out: &Path, version: u32, h: &Header) {
    let tmp = out.with_file_name(format!(
        ".{}.{}",
        out.file_name().unwrap().to_string_lossy(),
        unique()
    ));
    let st = Command::new("secilc")
        .args([
            "-c",
            &version.to_string(),
            "-M",
            if h.mls { "true" } else { "false" },
            "-f",
            "/dev/null",
        ])
        .args(&h.secilc_args)
        .arg("-o")
        .arg(&tmp)
        .arg(src)
        .status()
        .expect("secilc is not installed (run `make deps`)");
    assert!(st.success(), "secilc failed on {}", src.display());
    std::fs::rename(&tmp, out).unwrap();
}

/// Compiles a variant of test policy `name` at `version`: its source passed through `edit`,
/// compiled with the same header options, written as `target/policies/LABEL.VERSION`.
pub fn compile_variant(
    name: &str,
    label: &str,
    version: u32,
    edit: impl Fn(&str) -> String,
) -> PathBuf {
    let h = header(name);
    let dir = root().join("target/policies");
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join(format!(".{label}.{}.cil", unique()));
    std::fs::write(
        &src,
        edit(&std::fs::read_to_string(policy_source(name)).unwrap()),
    )
    .unwrap();
    let out = dir.join(format!("{label}.{version}"));
    secilc(&src, &out, version, &h);
    std::fs::remove_file(&src).unwrap();
    out
}

/// Runs the oracle in `mode` on `policy` with `input` lines; its output lines.
pub fn run_oracle(oracle: &Path, mode: &str, policy: &Path, input: &[String]) -> Vec<String> {
    let mut child = Command::new(oracle)
        .arg(mode)
        .arg(policy)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let data: String = input.iter().map(|l| format!("{l}\n")).collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(data.as_bytes()));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "oracle {mode} failed");
    let lines: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(
        lines.len(),
        input.len(),
        "oracle printed a different number of lines"
    );
    lines
}

/// `count` random valid queries from the oracle's generator.
pub fn gen(oracle: &Path, policy: &Path, seed: u64, count: usize) -> Vec<String> {
    let out = Command::new(oracle)
        .args(["gen"])
        .arg(policy)
        .args([seed.to_string(), count.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success(), "oracle gen failed");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}

/// Contexts covering a small policy: every user with every role it holds and every type of that
/// role, and every user with object_r and every type; each at the user's low level, high level
/// and full range (MLS policies).
pub fn contexts(p: &PolicyTables) -> Vec<String> {
    let levels_for_user = |u: usize| -> Vec<String> {
        if !p.mls {
            return vec![String::new()];
        }
        let r = &p.users[u].range;
        let lv = |l: &seaccess_policy::Level| {
            seaccess_security::range_to_string(
                p,
                &seaccess_policy::Range {
                    low: l.clone(),
                    high: l.clone(),
                },
            )
        };
        let mut v = vec![
            lv(&r.low),
            lv(&r.high),
            seaccess_security::range_to_string(p, r),
        ];
        v.dedup();
        v.into_iter().map(|s| format!(":{s}")).collect()
    };
    let mut out = Vec::new();
    for (ui, u) in p.users.iter().enumerate() {
        let levels = levels_for_user(ui);
        for r in u
            .roles
            .iter()
            .map(|b| b + 1)
            .chain(std::iter::once(OBJECT_R))
        {
            let role = &p.roles[r as usize - 1];
            for (ti, t) in p.types.iter().enumerate() {
                if t.attribute || (r != OBJECT_R && !role.types.get(ti as u32)) {
                    continue;
                }
                for l in &levels {
                    out.push(format!(
                        "{}:{}:{}{}",
                        u.name,
                        role.name,
                        t.name.as_deref().unwrap_or("?"),
                        l
                    ));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Every (source, target, class) triple over [`contexts`].
pub fn all_triples(p: &PolicyTables) -> Vec<String> {
    let ctx = contexts(p);
    let mut out = Vec::with_capacity(ctx.len() * ctx.len() * p.classes.len());
    for s in &ctx {
        for t in &ctx {
            for c in &p.classes {
                out.push(format!("{s} {t} {}", c.name));
            }
        }
    }
    out
}

/// A bare security server of the policy at `path`, for the tests of the server itself; what
/// needs a cache or an object manager gets them from the engine ([`server_with_avc`]).
pub fn load(path: &Path) -> seaccess_security::SecurityServer {
    seaccess_engine::load_server(path).unwrap()
}

/// Our answer to one oracle-format query in `mode` (av, create, relabel, member), printed as the
/// oracle prints it; `error` when the query cannot be answered.
pub fn answer(g: &seaccess_security::Generation, mode: &str, line: &str) -> String {
    let f: Vec<&str> = line.split_whitespace().collect();
    if f.len() != 3 {
        return "error".into();
    }
    let (Ok(s), Ok(t), Ok(c)) = (
        g.context_to_sid(f[0]),
        g.context_to_sid(f[1]),
        g.class(f[2]),
    ) else {
        return "error".into();
    };
    let r = match mode {
        "av" => {
            return match g.compute_av(s, t, c) {
                Ok(d) => format!(
                    "{:x} {:x} {:x} {:x} 0 0",
                    d.allowed, d.decided, d.auditallow, d.auditdeny
                ),
                Err(_) => "error".into(),
            }
        }
        "create" => g.compute_create(s, t, c, None),
        "relabel" => g.compute_relabel(s, t, c),
        _ => g.compute_member(s, t, c),
    };
    match r.and_then(|sid| g.sid_to_context(sid)) {
        Ok(ctx) => ctx,
        Err(_) => "error".into(),
    }
}

/// The fields compared with libsepol: av answers without DECIDED, SEQNO and FLAGS (libsepol has
/// no seqno or permissive flag); other answers whole.
pub fn comparable(mode: &str, answer: &str) -> String {
    if mode != "av" || answer == "error" {
        return answer.to_string();
    }
    let f: Vec<&str> = answer.split_whitespace().collect();
    format!("{} {} {}", f[0], f[2], f[3])
}

/// The outcome of comparing our answers with libsepol's.
pub struct Comparison {
    /// Queries answered differently (and, unless errors were expected, refused by both sides).
    pub differ: usize,
    /// Queries both sides refused.
    pub both_errors: usize,
    /// The first differing queries, each with both answers.
    pub shown: Vec<String>,
}

/// Compares our answers with the oracle's on `queries`; returns the number of mismatching lines
/// and the first `max` of them (query, oracle, ours). A query both sides refuse is a mismatch:
/// agreeing that a generated query is invalid says nothing about either engine (see
/// [`compare_expecting_errors`] for tests where refusals are part of the answer).
pub fn mismatches(
    g: &seaccess_security::Generation,
    oracle: &Path,
    policy: &Path,
    mode: &str,
    queries: &[String],
    max: usize,
) -> (usize, Vec<String>) {
    let c = compare(g, oracle, policy, mode, queries, max, false);
    (c.differ, c.shown)
}

/// As [`mismatches`], but a query both sides refuse counts as agreement (reported in
/// `both_errors`): for create/relabel/member, where the computed context may be invalid and both
/// the kernel and libsepol then fail the call.
pub fn compare_expecting_errors(
    g: &seaccess_security::Generation,
    oracle: &Path,
    policy: &Path,
    mode: &str,
    queries: &[String],
    max: usize,
) -> Comparison {
    compare(g, oracle, policy, mode, queries, max, true)
}

fn compare(
    g: &seaccess_security::Generation,
    oracle: &Path,
    policy: &Path,
    mode: &str,
    queries: &[String],
    max: usize,
    errors_agree: bool,
) -> Comparison {
    let theirs = run_oracle(oracle, mode, policy, queries);
    let mut c = Comparison {
        differ: 0,
        both_errors: 0,
        shown: Vec::new(),
    };
    for (q, o) in queries.iter().zip(&theirs) {
        let ours = answer(g, mode, q);
        let both_error = o == "error" && ours == "error";
        c.both_errors += usize::from(both_error);
        if (both_error && !errors_agree) || comparable(mode, o) != comparable(mode, &ours) {
            c.differ += 1;
            if c.shown.len() < max {
                c.shown
                    .push(format!("{q}\n   libsepol: {o}\n   seaccess: {ours}"));
            }
        }
    }
    c
}

/// A deterministic sample of at most `max` of `items` (all of them when there are no more),
/// spread over the whole list and kept in order; the same `seed` picks the same sample.
pub fn sample<T: Clone>(items: &[T], max: usize, seed: u64) -> Vec<T> {
    if items.len() <= max {
        return items.to_vec();
    }
    // A partial Fisher-Yates shuffle of the indices picks `max` distinct ones uniformly.
    let mut idx: Vec<usize> = (0..items.len()).collect();
    let mut state = (seed ^ 0x9e37_79b9_7f4a_7c15) | 1;
    for i in 0..max {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let j = i + (state % (items.len() - i) as u64) as usize;
        idx.swap(i, j);
    }
    let mut chosen = idx[..max].to_vec();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| items[i].clone()).collect()
}

/// compute_av on `count` random valid queries from the oracle's generator over `policy`: zero
/// differences from libsepol, and enough allowed answers that the queries exercise decisions.
pub fn differential_av(oracle: &Path, policy: &Path, seed: u64, count: usize) {
    let server = load(policy);
    let g = server.snapshot();
    let queries = gen(oracle, policy, seed, count);
    assert_eq!(queries.len(), count);
    let (n, shown) = mismatches(&g, oracle, policy, "av", &queries, 10);
    assert_eq!(
        n,
        0,
        "{}: {n} of {count} compute_av answers differ from libsepol:\n{}",
        policy.display(),
        shown.join("\n")
    );
    let allowed = queries
        .iter()
        .filter(|q| !answer(&g, "av", q).starts_with("0 "))
        .count();
    assert!(
        allowed > count / 10,
        "only {allowed} of {count} queries allow anything"
    );
    eprintln!(
        "{}: {count} compute_av answers agree ({allowed} allow something)",
        policy.display()
    );
}

/// compute_create / relabel / member against sepol_transition_sid / change_sid / member_sid on
/// `count` random non-socket queries over `policy`. Socket classes are left out: there libsepol
/// and the kernel differ (the kernel gives a new socket the creating process's role, type and full
/// range; libsepol treats it as a file), and kernel_semantics.rs checks the kernel's behaviour.
/// A computed context the policy does not allow is refused by both sides, and counted.
pub fn differential_sids(oracle: &Path, policy: &Path, seed: u64, count: usize) {
    let server = load(policy);
    let g = server.snapshot();
    let queries: Vec<String> = gen(oracle, policy, seed, count * 2)
        .into_iter()
        .filter(|q| !is_socket_class(q.rsplit(' ').next().unwrap_or("")))
        .take(count)
        .collect();
    assert_eq!(queries.len(), count);
    let mut refused = Vec::new();
    for mode in ["create", "relabel", "member"] {
        let c = compare_expecting_errors(&g, oracle, policy, mode, &queries, 10);
        assert_eq!(
            c.differ,
            0,
            "{} {mode}: {} of {count} answers differ from libsepol:\n{}",
            policy.display(),
            c.differ,
            c.shown.join("\n")
        );
        assert!(
            c.both_errors < count / 2,
            "{} {mode}: {} of {count} queries refused by both",
            policy.display(),
            c.both_errors
        );
        refused.push(format!("{mode} {}", c.both_errors));
    }
    // Some queries must actually hit type rules.
    let changed = queries
        .iter()
        .filter(|q| {
            let f: Vec<&str> = q.split(' ').collect();
            let a = answer(&g, "create", q);
            a != "error" && a.split(':').nth(2) != f[1].split(':').nth(2)
        })
        .count();
    assert!(changed > 0, "no query hit a type transition");
    eprintln!(
        "{}: {count} create/relabel/member answers agree ({changed} transitions; refused by both: {})",
        policy.display(),
        refused.join(", ")
    );
}

/// Whether a class is one the kernel labels as a socket (see the security server).
pub fn is_socket_class(name: &str) -> bool {
    seaccess_security::is_kernel_socket_class(name)
}

/// A valid subject context of type `ty` (the first user and role that may hold it, at the
/// user's low level), as a SID.
pub fn subject(g: &seaccess_security::Generation, ty: &str) -> seaccess_types::Sid {
    let p = g.policy();
    for u in &p.users {
        for r in u.roles.iter().map(|b| b + 1).filter(|r| *r != OBJECT_R) {
            let role = &p.roles[r as usize - 1];
            let lvl = if p.mls {
                let l = &u.range.low;
                format!(
                    ":{}",
                    seaccess_security::range_to_string(
                        p,
                        &seaccess_policy::Range {
                            low: l.clone(),
                            high: l.clone()
                        }
                    )
                )
            } else {
                String::new()
            };
            if let Ok(s) = g.context_to_sid(&format!("{}:{}:{ty}{lvl}", u.name, role.name)) {
                return s;
            }
        }
    }
    panic!("no valid subject context of type {ty}");
}

/// The SID of a context string that must be valid.
pub fn sid(g: &seaccess_security::Generation, ctx: &str) -> seaccess_types::Sid {
    g.context_to_sid(ctx)
        .unwrap_or_else(|e| panic!("{ctx}: {e}"))
}

/// The names of the permissions a decision allows for `class`.
pub fn allowed_names(
    g: &seaccess_security::Generation,
    d: &seaccess_types::AvDecision,
    class: seaccess_types::ClassId,
) -> Vec<String> {
    let mut v: Vec<String> = d
        .allowed
        .bits()
        .filter_map(|b| g.perm_name(class, b).map(String::from))
        .collect();
    v.sort();
    v
}

/// A server with an AVC in front of it, wired by the engine so that reloads and commits
/// refresh the cache before they are published and reset it when announced.
pub fn server_with_avc(
    path: &Path,
    capacity: usize,
) -> (
    std::sync::Arc<seaccess_security::SecurityServer>,
    std::sync::Arc<seaccess_avc::Avc>,
) {
    let parts = seaccess_engine::Engine::builder()
        .capacity(capacity)
        .open(path)
        .unwrap()
        .into_parts();
    (parts.server, parts.avc)
}

/// Whether the security server lets `s` do `perm` of `class` to `t`, or lets it go on because
/// the domain is permissive: the expected answer of one hook check on a real policy, derived at
/// test time from the server rather than written down.
pub fn passes(
    server: &seaccess_security::SecurityServer,
    s: seaccess_types::Sid,
    t: seaccess_types::Sid,
    class: &str,
    perm: &str,
) -> bool {
    use seaccess_types::PolicyNames;
    let g = server.snapshot();
    let c = g.class_id(class).unwrap();
    let bit = g.perm_bit(c, perm).unwrap();
    let d = g.compute_av(s, t, c).unwrap();
    d.allowed.0 & (1 << bit) != 0 || d.flags.permissive()
}

/// Every triple of [`all_triples`], as SIDs and class numbers of generation `g`.
pub fn sid_triples(
    g: &seaccess_security::Generation,
) -> Vec<(
    seaccess_types::Sid,
    seaccess_types::Sid,
    seaccess_types::ClassId,
)> {
    all_triples(g.policy())
        .iter()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (sid(g, f[0]), sid(g, f[1]), g.class(f[2]).unwrap())
        })
        .collect()
}

/// Collects the audit records `avc` emits, in order.
pub fn audit_recorder(avc: &seaccess_avc::Avc) -> std::sync::Arc<std::sync::Mutex<Vec<String>>> {
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let l = log.clone();
    avc.set_audit_callback(move |rec| l.lock().unwrap().push(rec.to_string()));
    log
}

/// Compiles checkpolicy test source `testdata/policies/NAME.conf` at `version` with
/// `checkpolicy -M` (MLS) into `target/policies/NAME-conf.VERSION` (once; cached like
/// [`compile`]), for the layouts only checkpolicy writes (symbol values with no entry).
pub fn compile_conf(name: &str, version: u32) -> PathBuf {
    let src = root()
        .join("testdata/policies")
        .join(format!("{name}.conf"));
    let dir = root().join("target/policies");
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join(format!("{name}-conf.{version}"));
    let fresh = out.metadata().and_then(|m| m.modified()).ok()
        > src.metadata().and_then(|m| m.modified()).ok();
    if fresh {
        return out;
    }
    let tmp = out.with_file_name(format!(
        ".{}.{}",
        out.file_name().unwrap().to_string_lossy(),
        unique()
    ));
    let st = Command::new("checkpolicy")
        .args(["-M", "-c", &version.to_string(), "-o"])
        .arg(&tmp)
        .arg(&src)
        .stdout(Stdio::null())
        .status()
        .expect("checkpolicy is not installed (run `make deps`)");
    assert!(st.success(), "checkpolicy failed on {}", src.display());
    std::fs::rename(&tmp, &out).unwrap();
    out
}

/// A concurrency test's deadline: unless the returned guard is dropped within `limit`, the
/// whole test process is ended with a message naming `what`, so that a test whose threads wait
/// forever (a lost wake-up, a lock never released) fails instead of hanging the suite.
#[must_use = "the deadline is disarmed when the guard is dropped"]
pub fn deadline(what: &str, limit: std::time::Duration) -> Deadline {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let what = what.to_string();
    std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = rx.recv_timeout(limit) {
            eprintln!("DEADLINE: {what} did not finish within {limit:?}: ending the test process");
            std::process::abort();
        }
    });
    Deadline { _done: tx }
}

/// Disarms its [`deadline`] when dropped (the channel's closing wakes the watchdog).
pub struct Deadline {
    _done: std::sync::mpsc::Sender<()>,
}
