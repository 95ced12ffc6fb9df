//! `seaccess tour`: the main features on a real policy, in a few screens.

use std::path::{Path, PathBuf};

use seaccess_security::Generation;

use crate::output::{CliError, Out};

const DEBIAN_DEFAULT: &str = "/etc/selinux/default/policy/policy.33";

/// Queries shown by the tour; those whose contexts the loaded policy does not have are skipped.
const CHECKS: &[(&str, &str, &str, &[&str], &str)] = &[
    (
        "system_u:system_r:httpd_t:s0",
        "system_u:object_r:httpd_sys_content_t:s0",
        "file",
        &["read", "getattr", "open", "write"],
        "a web server reads its content but may not write it",
    ),
    (
        "system_u:system_r:httpd_t:s0",
        "system_u:object_r:shadow_t:s0",
        "file",
        &["read"],
        "a web server may not read the password file",
    ),
    (
        "system_u:system_r:httpd_t:s0",
        "user_u:object_r:user_home_t:s0",
        "file",
        &["read"],
        "home directories are off limits unless a boolean says otherwise",
    ),
    (
        "user_u:user_r:user_t:s0",
        "staff_u:object_r:user_home_t:s0",
        "file",
        &["getattr", "read"],
        "user-based access control: one user's process may not read another user's files",
    ),
    (
        "system_u:system_r:svirt_t:s0:c1",
        "system_u:object_r:svirt_image_t:s0:c2",
        "file",
        &["getattr", "read"],
        "MCS: a virtual machine at category c1 may not read a disk image at c2",
    ),
];

fn find_bundled() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    // target/<profile>/seaccess -> the repository's compiled example policy.
    let root = exe.parent()?.parent()?.parent()?;
    let p = root.join("target/policies/example.33");
    p.exists().then_some(p)
}

/// Debian's default policy where installed, else the bundled example policy if built.
fn default_policy() -> Option<PathBuf> {
    if Path::new(DEBIAN_DEFAULT).exists() {
        return Some(PathBuf::from(DEBIAN_DEFAULT));
    }
    find_bundled()
}

pub(crate) fn run(out: &mut Out, policy: Option<PathBuf>) -> Result<(), CliError> {
    let path = match policy {
        Some(p) => p,
        None => default_policy().ok_or("no policy given, Debian's default policy is not installed, and the bundled example policy is not built (run `make demo`)")?,
    };
    let t0 = std::time::Instant::now();
    let engine = crate::open_path(&path)?;
    let server = engine.server();
    let load = t0.elapsed();
    let g = server.snapshot();
    let p = g.policy();
    writeln!(
        out,
        "== Loaded {} in {:.1} ms",
        path.display(),
        load.as_secs_f64() * 1e3
    )?;
    writeln!(
        out,
        "   policy version {}, {}, {} classes, {} types, {} booleans, {} rules ({} conditional)\n",
        p.version,
        if p.mls { "MLS" } else { "non-MLS" },
        p.classes.len(),
        p.types.len(),
        p.bools.len(),
        g.rule_counts().0 + g.rule_counts().1,
        g.rule_counts().1
    )?;
    for (s, t, c, perms, what) in CHECKS {
        show_check(out, &g, s, t, c, perms, what)?;
    }
    // Booleans: a commit is one atomic step to a new policy generation.
    if g.boolean("httpd_read_user_content").is_ok() {
        writeln!(
            out,
            "== Booleans: setting httpd_read_user_content=1 and committing"
        )?;
        let _ = server.set_boolean("httpd_read_user_content", true);
        let seq = server.commit_booleans();
        writeln!(out, "   new policy seqno {seq}")?;
        let g2 = server.snapshot();
        show_check(
            out,
            &g2,
            CHECKS[2].0,
            CHECKS[2].1,
            CHECKS[2].2,
            &["read", "getattr"],
            "the same query after the commit",
        )?;
    }
    // New object labels.
    let create = [
        (
            "system_u:system_r:httpd_t:s0",
            "system_u:object_r:tmp_t:s0",
            "file",
            None,
            "a file the web server creates in /tmp",
        ),
        (
            "system_u:system_r:init_t:s0",
            "system_u:object_r:httpd_exec_t:s0",
            "process",
            None,
            "init executing the web server",
        ),
        (
            "sysadm_u:sysadm_r:sysadm_t:s0",
            "sysadm_u:object_r:user_home_dir_t:s0",
            "dir",
            None,
            "an administrator creating a directory in their home",
        ),
        (
            "sysadm_u:sysadm_r:sysadm_t:s0",
            "sysadm_u:object_r:user_home_dir_t:s0",
            "dir",
            Some(".mplayer"),
            "the same, named .mplayer (a filename transition)",
        ),
    ];
    for (s, t, c, name, what) in create {
        let (Ok(ss), Ok(ts), Ok(cl)) = (g.context_to_sid(s), g.context_to_sid(t), g.class(c))
        else {
            continue;
        };
        writeln!(out, "== New context: {what}")?;
        writeln!(
            out,
            "   seaccess compute-create: {s} {t} {c}{}",
            name.map(|n| format!(" {n}")).unwrap_or_default()
        )?;
        match g
            .compute_create(ss, ts, cl, name)
            .and_then(|sid| g.sid_to_context(sid))
        {
            Ok(ctx) => writeln!(out, "   -> {ctx}\n")?,
            Err(e) => writeln!(out, "   -> error: {e}\n")?,
        }
    }
    writeln!(out, "Try it yourself:")?;
    writeln!(
        out,
        "   seaccess check -p {} SCON TCON CLASS PERM...",
        path.display()
    )?;
    writeln!(
        out,
        "   seaccess compute-av -p {} < queries   (lines: SCON TCON CLASS)",
        path.display()
    )?;
    Ok(())
}

fn show_check(
    out: &mut Out,
    g: &Generation,
    s: &str,
    t: &str,
    c: &str,
    perms: &[&str],
    what: &str,
) -> Result<(), CliError> {
    let (Ok(ss), Ok(ts), Ok(cl)) = (g.context_to_sid(s), g.context_to_sid(t), g.class(c)) else {
        return Ok(());
    };
    let Ok(ex) = g.explain(ss, ts, cl) else {
        return Ok(());
    };
    writeln!(out, "== {what}")?;
    writeln!(out, "   seaccess check {s} {t} {c} {}", perms.join(" "))?;
    for perm in perms {
        let Ok(v) = g.perms(cl, &[perm]) else {
            continue;
        };
        let bit = v.bits().next().unwrap_or(0);
        if ex.decision.allowed.contains(v) {
            writeln!(out, "   {perm}: allowed")?;
        } else {
            let why: Vec<String> = ex
                .reasons
                .iter()
                .filter(|(b, _)| *b == bit)
                .map(|(_, r)| r.to_string())
                .collect();
            writeln!(out, "   {perm}: denied: {}", why.join("; "))?;
        }
    }
    writeln!(out)
}
