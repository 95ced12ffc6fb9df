//! `seaccess`: SELinux access decisions from the shell, on any compiled policy, on any kernel.
//!
//! Batch modes read one query a line and print one answer a line, so output lines match input
//! lines one to one; a line that cannot be answered prints `error` and is explained on standard
//! error with its line number.

#![forbid(unsafe_code)]

mod allow;
mod background;
mod batch;
mod diff;
mod enforce;
mod explain;
mod generate;
mod info;
mod installed;
mod label;
mod label_apply;
mod mount;
mod notify;
mod output;
mod policytest;
mod run;
mod search;
mod selinuxfs;
mod session;
mod session_state;
mod tour;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use output::{CliError, Out};
use seaccess_engine::Engine;

#[derive(Parser)]
#[command(
    name = "seaccess",
    version,
    about = "SELinux access decisions on any compiled policy"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(clap::Args, Clone)]
struct PolicyArgs {
    /// A compiled policy (kernel binary format, e.g. /etc/selinux/default/policy/policy.33);
    /// default: the installed policy (/etc/selinux/config's SELINUXTYPE, highest policy.N).
    #[arg(long, short = 'p')]
    policy: Option<PathBuf>,
    /// Set a boolean before answering (repeatable), e.g. --bool httpd_enable_homedirs=1.
    #[arg(long = "bool", value_name = "NAME=VALUE")]
    bools: Vec<String>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Batch: access vectors, as the kernel's selinuxfs access file.
    ///
    /// "SCON TCON CLASS" lines in; "ALLOWED DECIDED AUDITALLOW AUDITDENY SEQNO FLAGS" out (hex,
    /// seqno decimal).
    #[command(
        after_help = "Example:\n  echo 'system_u:system_r:httpd_t:s0 system_u:object_r:etc_t:s0 file' | seaccess compute-av"
    )]
    ComputeAv(batch::BatchArgs),
    /// Batch: the context of a new object or process.
    ///
    /// "SCON TCON CLASS [NAME]" lines in; the new object's or process's context out
    /// (type_transition, filename transitions with NAME, role and range transitions).
    #[command(
        after_help = "Example:\n  echo 'system_u:system_r:httpd_t:s0 system_u:object_r:var_log_t:s0 file access.log' | seaccess compute-create"
    )]
    ComputeCreate(batch::BatchArgs),
    /// Batch: "SCON TCON CLASS" lines in; the relabel (type_change) context out.
    #[command(
        after_help = "Example:\n  echo 'user_u:user_r:user_t:s0 system_u:object_r:devpts_t:s0 chr_file' | seaccess compute-relabel"
    )]
    ComputeRelabel(batch::BatchArgs),
    /// Batch: "SCON TCON CLASS" lines in; the member (type_member) context out.
    #[command(
        after_help = "Example:\n  echo 'user_u:user_r:user_t:s0 system_u:object_r:tmp_t:s0 dir' | seaccess compute-member"
    )]
    ComputeMember(batch::BatchArgs),
    /// Is each permission allowed? One line per permission, with the reason for each denial.
    /// Exits 0 if all are allowed, 1 if any is denied, 2 on error.
    #[command(
        after_help = "Example:\n  seaccess check system_u:system_r:httpd_t:s0 system_u:object_r:shadow_t:s0 file read getattr"
    )]
    Check {
        #[command(flatten)]
        policy: PolicyArgs,
        /// One JSON object: the query, permissive, and per permission whether it is allowed,
        /// audited (auditallow) or silenced (dontaudit), with the reasons for a denial.
        #[arg(long)]
        json: bool,
        /// The source (subject) context, e.g. system_u:system_r:httpd_t:s0.
        scontext: String,
        /// The target (object) context, e.g. system_u:object_r:etc_t:s0.
        tcontext: String,
        /// The target's security class, e.g. file, dir, tcp_socket, process.
        class: String,
        /// The permissions to check, e.g. read write (each a permission of CLASS).
        #[arg(required = true)]
        perms: Vec<String>,
    },
    /// A summary of a policy: version, MLS, handle-unknown, symbol and rule counts.
    Info(info::InfoArgs),
    /// Why each AVC denial in a kernel log or audit.log happened, as audit2why says it.
    Explain(explain::ExplainArgs),
    /// Allow rules for the AVC denials in a kernel log or audit.log, as audit2allow writes them.
    Allow(allow::AllowArgs),
    /// The policy's rules, as sesearch finds them.
    Search(Box<search::SearchArgs>),
    /// What a policy update changes, as sediff, and the decisions that change with it.
    ///
    /// Rules added and removed, and the access decisions that change with the rule, boolean,
    /// constraint or bound responsible; --replay LOG judges a log's accesses by both policies.
    Diff(Box<diff::DiffArgs>),
    /// Policy unit tests from a TOML file: expected decisions, contexts and assertions.
    Test(policytest::TestArgs),
    /// A short guided tour of seaccess on a policy.
    ///
    /// Debian's default policy, or the bundled example policy where that is not installed.
    #[command(after_help = "Example:\n  seaccess tour")]
    Tour {
        #[arg(long, short = 'p')]
        policy: Option<PathBuf>,
    },
    /// File labels from file_contexts: look up, apply, check, plan.
    ///
    /// As matchpathcon prints them ("PATH<TAB>CONTEXT"); with --apply writes them
    /// (restorecon/setfiles without an SELinux kernel), --check lists mislabeled objects, --plan
    /// lists what a new file_contexts would relabel.
    #[command(
        after_help = "Examples:\n  seaccess label /usr/bin/ls /etc/shadow /home/u/.ssh\n  seaccess label --type dir /var/www/x           the label a new directory would get\n  seaccess label --apply -v --root /srv/image /srv/image\n  seaccess label --check --root /srv/image /srv/image   exits 0 when nothing is mislabeled"
    )]
    Label(Box<label::LabelArgs>),
    /// Enforce a policy on a directory tree for real processes, through FUSE.
    ///
    /// SOURCE mounted at MOUNTPOINT, every request checked by the kernel's hooks (EACCES and an
    /// AVC record on a denial). Labels: security.selinux (or user.selinux), else file_contexts,
    /// else the policy's file SID. Callers' contexts: --subjects. SIGHUP reloads every file.
    #[command(
        after_help = "Examples:\n  seaccess mount --policy /etc/selinux/default/policy/policy.33 --subjects /etc/seaccess/subjects \\\n      --audit-log /var/log/seaccess-audit.log /srv/site /srv/site\n  fusermount3 -u /srv/site                       unmount (or kill PID; kill -HUP PID reloads)\n\nFrom /etc/fstab (mount.fuse.seaccess(8)), options as the flags:\n  /srv/site /srv/site fuse.seaccess policy=/etc/selinux/default/policy/policy.33,subjects=/etc/seaccess/subjects 0 0\n\nAs a service (seaccess-mount@.service; SOURCE= and OPTIONS= in /etc/seaccess/mount-srv-site.conf):\n  systemctl start seaccess-mount@srv-site        reload re-reads the policy, stop unmounts\n\nThe subjects file gives callers their contexts, first match wins:\n  uid=65534   system_u:system_r:httpd_t:s0\n  default     unconfined_u:unconfined_r:unconfined_t:s0"
    )]
    Mount(Box<mount::MountArgs>),
    /// Enforce a policy with the kernel, through the BPF LSM, on a kernel without SELinux.
    ///
    /// A daemon loads the BPF programs, labels --root/--tree by file_contexts and keeps the
    /// decisions in maps; `enforce run --context CTX -- CMD` starts a confined program. SIGHUP
    /// reloads, SIGTERM stops (the machine runs unconfined again).
    #[command(
        after_help = "Example:\n  seaccess enforce --policy /etc/selinux/default/policy/policy.33 --file-contexts /etc/selinux/default/contexts/files/file_contexts --root /srv/site\n  seaccess enforce run --context system_u:system_r:initrc_t:s0 -- /usr/sbin/nginx"
    )]
    Enforce(Box<enforce::EnforceArgs>),
    /// Run a program built for libselinux on libseaccess, with a policy.
    ///
    /// The program loads seaccess's libselinux.so.1 drop-in (installed in LIBDIR/seaccess, or
    /// target/libselinux in a build tree) and runs in a session: one enforcing mode, booleans
    /// and policy for all its processes.
    #[command(
        after_help = "Examples:\n  seaccess run --policy /etc/selinux/default/policy/policy.33 -- getsebool -a\n  seaccess run --policy /etc/selinux/default/policy/policy.33 -- runcon system_u:system_r:httpd_t:s0 id -Z"
    )]
    Run(run::RunArgs),
    /// The man pages or a shell's completions, generated from this command's definition
    /// (`make install` runs it).
    #[command(hide = true)]
    Generate(generate::GenerateArgs),
}

/// The engine of the policy the arguments name (or the installed one), with their booleans
/// set and committed.
pub(crate) fn load(args: &PolicyArgs) -> Result<Engine, String> {
    let engine = open_path(&installed::policy_or_installed(args.policy.as_deref())?)?;
    let server = engine.server();
    for b in &args.bools {
        let (name, value) = b
            .split_once('=')
            .ok_or_else(|| format!("--bool {b}: expected NAME=VALUE"))?;
        let value = match value {
            "1" | "true" | "on" => true,
            "0" | "false" | "off" => false,
            _ => {
                return Err(format!(
                    "--bool {b}: value must be 1/0, true/false or on/off"
                ))
            }
        };
        server
            .set_boolean(name, value)
            .map_err(|e| format!("--bool {b}: {e}"))?;
    }
    if !args.bools.is_empty() {
        server.commit_booleans();
    }
    Ok(engine)
}

/// The policy with its rule tables, for the tools that read rules (search, info's listings,
/// diff): the security server keeps none to hand out.
pub(crate) fn read_policy(path: &Path) -> Result<seaccess_policy::Policy, String> {
    let data = seaccess_policy::read_file(path).map_err(|e| e.to_string())?;
    seaccess_policy::read_policy(&data).map_err(|e| format!("{}: {e}", path.display()))
}

/// The engine of the policy file at `path` (a bounded regular file; errors name the path).
pub(crate) fn open_path(path: &Path) -> Result<Engine, String> {
    Engine::open(path).map_err(|e| e.to_string())
}

/// The check command's question.
struct CheckQuery<'a> {
    s: &'a str,
    t: &'a str,
    class: &'a str,
    perms: &'a [String],
    json: bool,
}

fn check(out: &mut Out, policy: &PolicyArgs, q: &CheckQuery<'_>) -> Result<bool, CliError> {
    let CheckQuery {
        s, t, class, perms, ..
    } = *q;
    let engine = load(policy)?;
    let g = engine.server().snapshot();
    let ssid = g.context_to_sid(s).map_err(|e| e.to_string())?;
    let tsid = g.context_to_sid(t).map_err(|e| e.to_string())?;
    let cl = g.class(class).map_err(|e| e.to_string())?;
    let mut bits = Vec::new();
    for p in perms {
        let v = g.perms(cl, &[p.as_str()]).map_err(|e| e.to_string())?;
        bits.push((p, v.bits().next().unwrap_or(0)));
    }
    let ex = g.explain(ssid, tsid, cl).map_err(|e| e.to_string())?;
    let permissive = ex.decision.flags.permissive();
    if q.json {
        return check_json(out, q, &ex, &bits);
    }
    let mut all = true;
    for (name, bit) in bits {
        if ex.decision.allowed.0 & (1 << bit) != 0 {
            let audit = if ex.decision.auditallow.0 & (1 << bit) != 0 {
                " (audited: auditallow)"
            } else {
                ""
            };
            writeln!(out, "{name}: allowed{audit}")?;
        } else {
            all = false;
            let why: Vec<String> = ex
                .reasons
                .iter()
                .filter(|(b, _)| *b == bit)
                .map(|(_, r)| r.to_string())
                .collect();
            let mut extra = String::new();
            if ex.decision.auditdeny.0 & (1 << bit) == 0 {
                extra.push_str(", not audited: dontaudit");
            }
            if permissive {
                extra.push_str(", but the source type is permissive: logged, not enforced");
            }
            writeln!(out, "{name}: denied: {}{extra}", why.join("; "))?;
        }
    }
    Ok(all)
}

fn check_json(
    out: &mut Out,
    q: &CheckQuery<'_>,
    ex: &seaccess_security::Explanation,
    bits: &[(&String, u32)],
) -> Result<bool, CliError> {
    let d = &ex.decision;
    let has = |v: u32, bit: u32| v & (1 << bit) != 0;
    let perms: Vec<serde_json::Value> = bits
        .iter()
        .map(|(name, bit)| {
            let reasons: Vec<serde_json::Value> = ex
                .reasons
                .iter()
                .filter(|(b, _)| b == bit)
                .map(|(_, r)| serde_json::json!({"kind": r.kind(), "text": r.to_string()}))
                .collect();
            serde_json::json!({
                "perm": name,
                "allowed": has(d.allowed.0, *bit),
                "auditallow": has(d.auditallow.0, *bit),
                "dontaudit": !has(d.auditdeny.0, *bit),
                "reasons": reasons,
            })
        })
        .collect();
    let all = bits.iter().all(|(_, b)| has(d.allowed.0, *b));
    let v = serde_json::json!({
        "scontext": q.s, "tcontext": q.t, "class": q.class, "allowed": all, "permissive": d.flags.permissive(), "seqno": d.seqno.0, "perms": perms,
    });
    writeln!(out, "{v}")?;
    Ok(all)
}

/// Runs one subcommand: Ok(true) when it succeeded, Ok(false) when it answered but something
/// was denied or could not be answered.
fn run(cmd: Cmd, out: &mut Out) -> Result<bool, CliError> {
    match cmd {
        Cmd::ComputeAv(p) => batch::run(out, &p, batch::Mode::Av),
        Cmd::ComputeCreate(p) => batch::run(out, &p, batch::Mode::Create),
        Cmd::ComputeRelabel(p) => batch::run(out, &p, batch::Mode::Relabel),
        Cmd::ComputeMember(p) => batch::run(out, &p, batch::Mode::Member),
        Cmd::Check {
            policy,
            json,
            scontext,
            tcontext,
            class,
            perms,
        } => check(
            out,
            &policy,
            &CheckQuery {
                s: &scontext,
                t: &tcontext,
                class: &class,
                perms: &perms,
                json,
            },
        ),
        Cmd::Info(a) => info::run(out, &a),
        Cmd::Explain(a) => explain::run(out, &a),
        Cmd::Allow(a) => allow::run(out, &a),
        Cmd::Search(a) => search::run(out, &a),
        Cmd::Test(a) => policytest::run(out, &a),
        Cmd::Diff(a) => diff::run(out, &a),
        Cmd::Tour { policy } => tour::run(out, policy).map(|_| true),
        Cmd::Label(a) => label::run(out, &a),
        Cmd::Mount(a) => mount::run(out, &a),
        Cmd::Run(a) => run::run(&a),
        Cmd::Generate(a) => generate::run(Cli::command(), &a),
        Cmd::Enforce(a) => enforce::run(out, &a),
    }
}

/// `seaccess bench` and `seaccess lab` are `seaccess-lab`'s now: clap's unknown-command error
/// for them carries one tip naming the program that has them.
fn moved_to_lab(mut e: clap::Error) -> clap::Error {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() == ErrorKind::InvalidSubcommand {
        if let Some(ContextValue::String(name)) = e.get(ContextKind::InvalidSubcommand) {
            if name == "bench" || name == "lab" {
                let tip =
                    format!("`{name}` is in the lab's own program now: seaccess-lab {name} ...");
                e.insert(
                    ContextKind::Suggested,
                    ContextValue::StyledStrs(vec![tip.into()]),
                );
            }
        }
    }
    e
}

fn main() -> ExitCode {
    let cli = Cli::try_parse().unwrap_or_else(|e| moved_to_lab(e).exit());
    let mut out = Out::new();
    // Output written before a failure still goes out, ahead of the failure's status.
    let r = run(cli.cmd, &mut out);
    let flushed = out.flush();
    match r.and_then(|ok| flushed.map(|_| ok)) {
        Ok(true) => ExitCode::SUCCESS,
        // `check`: some permission denied; batch modes: some line not answered.
        Ok(false) => ExitCode::from(1),
        Err(e) => e.exit(),
    }
}
