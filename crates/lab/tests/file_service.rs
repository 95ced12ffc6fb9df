//! The example file service on Debian's default policy gives the kernel's answers and audit
//! records: for each operation, the checks the kernel's hooks make for the same system calls
//! (hooks.c, cited below) are computed here directly with the security server, which
//! answers as the kernel's security_compute_av does, and the service's outcome and first
//! denial record must match.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use seaccess_lab::file_service::{device_name, write_demo_tree, FileService, DEMO_LABELS};
use seaccess_security::{Generation, SecurityServer};
use seaccess_types::PolicyCap;

const POLICY: &str = "/etc/selinux/default/policy/policy.33";
const HTTPD: &str = "system_u:system_r:httpd_t:s0";
const ADMIN: &str = "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023";

fn tree() -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("seaccess-file-service-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    write_demo_tree(&dir).unwrap();
    dir
}

fn label(rel: &str) -> &'static str {
    DEMO_LABELS
        .iter()
        .filter(|(p, _)| p.is_empty() || rel == *p || rel.starts_with(&format!("{p}/")))
        .max_by_key(|(p, _)| p.len())
        .unwrap()
        .1
}

/// One check a kernel hook makes: target, class, permissions, and the audit data text.
struct Check {
    target: String,
    class: &'static str,
    perms: Vec<&'static str>,
    audit: String,
}

/// The first check the kernel would deny, as the kernel's record, or None if every check is
/// allowed. Each check is one avc_has_perm: denied if any permission is not allowed; the
/// record lists the denied permissions the policy does not dontaudit.
fn kernel_answer(g: &Generation, scon: &str, checks: &[Check]) -> Option<Option<String>> {
    let s = g.context_to_sid(scon).unwrap();
    for c in checks {
        let t = g.context_to_sid(&c.target).unwrap();
        let class = g.class(c.class).unwrap();
        let req = g.perms(class, &c.perms).unwrap();
        let d = g.compute_av(s, t, class).unwrap();
        let denied = req & !d.allowed;
        if denied.is_empty() {
            continue;
        }
        let audited = denied & d.auditdeny;
        if audited.is_empty() {
            return Some(None);
        }
        let names: Vec<&str> = audited
            .bits()
            .map(|b| g.perm_name(class, b).unwrap())
            .collect();
        return Some(Some(format!(
            "avc:  denied  {{ {} }} for  pid=4242 comm=\"httpd\" {} scontext={scon} tcontext={} tclass={} permissive=0",
            names.join(" "),
            c.audit,
            c.target,
            c.class
        )));
    }
    None
}

struct Fixture {
    dir: PathBuf,
    dev: String,
}

impl Fixture {
    fn ino(&self, rel: &str) -> u64 {
        std::fs::metadata(self.dir.join(rel)).unwrap().ino()
    }

    /// The path walk's checks (may_lookup: inode_permission(dir, MAY_EXEC) on each directory,
    /// selinux_inode_permission: `dir { search }`, INODE audit data naming the directory).
    fn walk(&self, rel: &str) -> Vec<Check> {
        let mut out = Vec::new();
        let mut dir = String::new();
        for part in rel.split('/') {
            let name = if dir.is_empty() {
                "/".to_string()
            } else {
                dir.rsplit('/').next().unwrap().to_string()
            };
            out.push(Check {
                target: label(&dir).into(),
                class: "dir",
                perms: vec!["search"],
                audit: format!(
                    "name=\"{name}\" dev=\"{}\" ino={}",
                    self.dev,
                    self.ino(&dir)
                ),
            });
            dir = if dir.is_empty() {
                part.into()
            } else {
                format!("{dir}/{part}")
            };
        }
        out
    }

    fn dentry(&self, rel: &str) -> String {
        format!(
            "name=\"{}\" dev=\"{}\" ino={}",
            rel.rsplit('/').next().unwrap(),
            self.dev,
            self.ino(rel)
        )
    }

    fn path(&self, rel: &str) -> String {
        format!(
            "path=\"{}\" dev=\"{}\" ino={}",
            self.dir.join(rel).display(),
            self.dev,
            self.ino(rel)
        )
    }

    /// open(O_RDONLY) and read: the walk; may_open's inode_permission(MAY_READ) (`{ read }`,
    /// INODE data); selinux_file_open (`{ read open }` with open_perms, FILE data); then
    /// selinux_file_permission before each read (`{ read }`, skipped or allowed once open was).
    fn read(&self, rel: &str, open_perms: bool) -> Vec<Check> {
        let mut v = self.walk(rel);
        v.push(Check {
            target: label(rel).into(),
            class: "file",
            perms: vec!["read"],
            audit: self.dentry(rel),
        });
        let open = if open_perms {
            vec!["read", "open"]
        } else {
            vec!["read"]
        };
        v.push(Check {
            target: label(rel).into(),
            class: "file",
            perms: open,
            audit: self.path(rel),
        });
        v
    }

    /// open(O_WRONLY|O_APPEND) and write: the walk; inode_permission(MAY_WRITE|MAY_APPEND), for
    /// which file_mask_to_av asks `{ append }`; selinux_file_open (`{ append open }`).
    fn append(&self, rel: &str, open_perms: bool) -> Vec<Check> {
        let mut v = self.walk(rel);
        v.push(Check {
            target: label(rel).into(),
            class: "file",
            perms: vec!["append"],
            audit: self.dentry(rel),
        });
        let open = if open_perms {
            vec!["append", "open"]
        } else {
            vec!["append"]
        };
        v.push(Check {
            target: label(rel).into(),
            class: "file",
            perms: open,
            audit: self.path(rel),
        });
        v
    }

    /// stat: the walk, then selinux_inode_getattr (`{ getattr }`, PATH data).
    fn stat(&self, rel: &str) -> Vec<Check> {
        let mut v = self.walk(rel);
        v.push(Check {
            target: label(rel).into(),
            class: "file",
            perms: vec!["getattr"],
            audit: self.path(rel),
        });
        v
    }
}

#[test]
fn the_file_service_gives_the_kernels_answers_and_records_on_debians_policy() {
    assert!(
        Path::new(POLICY).exists(),
        "{POLICY} is missing: run the project's install script (make test does)"
    );
    let dir = tree();
    let fx = Fixture {
        dev: device_name(&dir),
        dir: dir.clone(),
    };
    let svc = FileService::new(&dir, Path::new(POLICY), DEMO_LABELS).unwrap();
    let records = Arc::new(Mutex::new(Vec::<String>::new()));
    let r = records.clone();
    svc.om()
        .avc()
        .set_audit_callback(move |l| r.lock().unwrap().push(l.to_string()));
    let httpd = svc.task(4242, "httpd", HTTPD).unwrap();
    let server: &Arc<SecurityServer> = svc.server();
    let open_perms = server
        .snapshot()
        .policy_caps()
        .contains(PolicyCap::OpenPerms);

    type Op<'a> = (&'a str, Box<dyn Fn() -> bool + 'a>, Vec<Check>);
    let run = |ops: Vec<Op>| {
        for (what, op, checks) in ops {
            records.lock().unwrap().clear();
            let expect = kernel_answer(&server.snapshot(), HTTPD, &checks);
            let allowed = op();
            assert_eq!(
                allowed,
                expect.is_none(),
                "{what}: the service and the kernel's checks disagree"
            );
            let got = records.lock().unwrap().clone();
            match expect {
                None => assert!(got.iter().all(|l| !l.contains("denied")), "{what}: {got:?}"),
                Some(None) => assert!(
                    got.is_empty(),
                    "{what}: a dontaudit'ed denial was audited: {got:?}"
                ),
                Some(Some(line)) => assert_eq!(got, vec![line], "{what}"),
            }
        }
    };
    let ops: Vec<Op> = vec![
        (
            "read www/index.html",
            Box::new(|| svc.read(&httpd, "www/index.html").is_ok()),
            fx.read("www/index.html", open_perms),
        ),
        (
            "append to www/index.html",
            Box::new(|| svc.append(&httpd, "www/index.html", b"x").is_ok()),
            fx.append("www/index.html", open_perms),
        ),
        (
            "stat etc/shadow",
            Box::new(|| svc.stat(&httpd, "etc/shadow").is_ok()),
            fx.stat("etc/shadow"),
        ),
        (
            "read etc/shadow",
            Box::new(|| svc.read(&httpd, "etc/shadow").is_ok()),
            fx.read("etc/shadow", open_perms),
        ),
        (
            "read home/alice/notes.txt",
            Box::new(|| svc.read(&httpd, "home/alice/notes.txt").is_ok()),
            fx.read("home/alice/notes.txt", open_perms),
        ),
    ];
    run(ops);
    // The denials above are not all the same answer: the scenario shows both.
    let g = server.snapshot();
    assert!(kernel_answer(&g, HTTPD, &fx.read("www/index.html", open_perms)).is_none());
    assert!(kernel_answer(&g, HTTPD, &fx.read("etc/shadow", open_perms)).is_some());

    // A boolean commit is seen by the very next operation.
    server.set_boolean("httpd_read_user_content", true).unwrap();
    server.commit_booleans();
    let ops: Vec<Op> = vec![(
        "read home/alice/notes.txt after the boolean",
        Box::new(|| svc.read(&httpd, "home/alice/notes.txt").is_ok()),
        fx.read("home/alice/notes.txt", open_perms),
    )];
    run(ops);

    // A relabel by an allowed domain is seen by the very next read.
    let admin = svc.task(1000, "chcon", ADMIN).unwrap();
    svc.relabel(
        &admin,
        "etc/shadow",
        "system_u:object_r:httpd_sys_content_t:s0",
    )
    .unwrap();
    assert_eq!(
        svc.label("etc/shadow").unwrap(),
        "system_u:object_r:httpd_sys_content_t:s0"
    );
    let g = server.snapshot();
    let s = g.context_to_sid(HTTPD).unwrap();
    let t = g
        .context_to_sid("system_u:object_r:httpd_sys_content_t:s0")
        .unwrap();
    let file = g.class("file").unwrap();
    let readable = g
        .compute_av(s, t, file)
        .unwrap()
        .allowed
        .contains(g.perms(file, &["read"]).unwrap());
    assert_eq!(svc.read(&httpd, "etc/shadow").is_ok(), readable);
    std::fs::remove_dir_all(&dir).unwrap();
}
