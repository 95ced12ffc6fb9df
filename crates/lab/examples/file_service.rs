//! A file service guarded by the object manager's hooks, on Debian's default policy: a web
//! server's domain (httpd_t) reads and writes a real directory tree through the service, which
//! runs the kernel's SELinux hooks before each system call and prints each answer and audit
//! record as the kernel would give them.
//!
//! cargo run --release -p seaccess-lab --example file_service [-- POLICY]

use std::error::Error;
use std::path::PathBuf;

use seaccess_lab::file_service::{write_demo_tree, FileService, DEMO_LABELS};

fn main() -> Result<(), Box<dyn Error>> {
    let policy = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| "/etc/selinux/default/policy/policy.33".into());
    let dir = std::env::temp_dir().join(format!("seaccess-file-service-{}", std::process::id()));
    write_demo_tree(&dir)?;
    let result = run(&dir, &policy);
    std::fs::remove_dir_all(&dir)?;
    result
}

fn show(what: &str, r: Result<String, seaccess_lab::LabError>) {
    match r {
        Ok(s) => println!("{what}: allowed{s}"),
        Err(e) => println!("{what}: DENIED: {e}"),
    }
}

fn run(dir: &std::path::Path, policy: &std::path::Path) -> Result<(), Box<dyn Error>> {
    let svc = FileService::new(dir, policy, DEMO_LABELS)?;
    // The kernel's records go to the audit log; here to standard output, indented.
    svc.om()
        .avc()
        .set_audit_callback(|r| println!("    audit: {r}"));
    let httpd = svc.task(4242, "httpd", "system_u:system_r:httpd_t:s0")?;
    let admin = svc.task(
        1000,
        "chcon",
        "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023",
    )?;
    println!(
        "tree {} (dev={}), policy {}",
        dir.display(),
        seaccess_lab::file_service::device_name(dir),
        policy.display()
    );
    println!();

    show(
        "httpd_t reads www/index.html",
        svc.read(&httpd, "www/index.html")
            .map(|b| format!(" ({} bytes)", b.len())),
    );
    show(
        "httpd_t appends to www/index.html",
        svc.append(&httpd, "www/index.html", b"defaced\n")
            .map(|_| String::new()),
    );
    show(
        "httpd_t stats etc/shadow",
        svc.stat(&httpd, "etc/shadow")
            .map(|n| format!(" ({n} bytes)")),
    );
    show(
        "httpd_t reads etc/shadow",
        svc.read(&httpd, "etc/shadow")
            .map(|b| format!(" ({} bytes)", b.len())),
    );
    show(
        "httpd_t reads home/alice/notes.txt",
        svc.read(&httpd, "home/alice/notes.txt")
            .map(|b| format!(" ({} bytes)", b.len())),
    );

    println!();
    println!("setsebool httpd_read_user_content on (a boolean commit: a new policy seqno)");
    svc.server().set_boolean("httpd_read_user_content", true)?;
    svc.server().commit_booleans();
    show(
        "httpd_t reads home/alice/notes.txt",
        svc.read(&httpd, "home/alice/notes.txt")
            .map(|b| format!(" ({} bytes)", b.len())),
    );

    println!();
    println!("chcon: httpd_t relabels its content, unconfined_t relabels etc/shadow to httpd_sys_content_t");
    show(
        "httpd_t relabels www/index.html",
        svc.relabel(&httpd, "www/index.html", "system_u:object_r:user_home_t:s0")
            .map(|_| String::new()),
    );
    show(
        "unconfined_t relabels etc/shadow",
        svc.relabel(
            &admin,
            "etc/shadow",
            "system_u:object_r:httpd_sys_content_t:s0",
        )
        .map(|_| String::new()),
    );
    show(
        "httpd_t reads etc/shadow",
        svc.read(&httpd, "etc/shadow")
            .map(|b| format!(" ({} bytes)", b.len())),
    );

    let om = svc.om();
    let total = om.counters().total();
    println!();
    println!(
        "cache lookups made by the hooks: {total}; cache: {}",
        om.avc().cache_stats().to_text().trim()
    );
    Ok(())
}
