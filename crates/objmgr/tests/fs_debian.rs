//! The file-side hooks on Debian's default policy: for each (domain, file type) pair, a
//! directory search (selinux_inode_permission), an open for reading (selinux_file_open, with
//! `open` under the policy's open_perms capability) and a stat (selinux_inode_getattr) are
//! allowed or refused, and recorded, exactly as the security server's compute_av for the same
//! triple says (allowed, auditallow, auditdeny, the permissive flag), worked out at test time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_objmgr::hooks::fs::{oflags::O_RDONLY, MountOpts, MAY_EXEC};
use seaccess_objmgr::{Cred, ObjectManager, Task};
use seaccess_security::Generation;
use seaccess_types::{ClassId, PolicyCap};

const DOMAINS: &[&str] = &[
    "system_u:system_r:httpd_t:s0",
    "system_u:system_r:sshd_t:s0",
    "system_u:system_r:init_t:s0",
    "user_u:user_r:user_t:s0",
    "system_u:system_r:syslogd_t:s0",
    "system_u:system_r:crond_t:s0",
];
const TYPES: &[&str] = &[
    "etc_t",
    "shadow_t",
    "httpd_sys_content_t",
    "user_home_t",
    "tmp_t",
    "var_log_t",
    "bin_t",
    "usr_t",
];

fn bit(g: &Generation, class: ClassId, name: &str) -> u32 {
    (0..32)
        .find(|&b| g.perm_name(class, b) == Some(name))
        .map(|b| 1 << b)
        .unwrap_or_else(|| panic!("no permission {name}"))
}

/// The record the kernel writes for `requested` (names) of `class` from `s` to `t`, if any:
/// derived from compute_av as avc_audit_required does (§1 of hooks-verified.md).
#[allow(clippy::too_many_arguments)]
fn expected(
    g: &Generation,
    s: &str,
    t: &str,
    class: &str,
    requested: &[&str],
    enforcing: bool,
    aux: &str,
) -> (bool, Option<String>) {
    let c = g.class(class).unwrap();
    let d = g
        .compute_av(
            g.context_to_sid(s).unwrap(),
            g.context_to_sid(t).unwrap(),
            c,
        )
        .unwrap();
    let req = requested.iter().fold(0, |a, n| a | bit(g, c, n));
    let denied = req & !d.allowed.0;
    let allowed = denied == 0 || !enforcing || d.flags.permissive();
    let audited = if denied != 0 {
        denied & d.auditdeny.0
    } else {
        req & d.auditallow.0
    };
    if audited == 0 {
        return (allowed, None);
    }
    let names: String = (0..32)
        .filter(|b| audited & (1 << b) != 0)
        .map(|b| format!(" {}", g.perm_name(c, b).unwrap()))
        .collect();
    let mut rec = format!(
        "avc:  {}  {{{names} }} for  {aux} scontext={s} tcontext={t} tclass={class}",
        if denied != 0 { "denied" } else { "granted" }
    );
    if denied != 0 {
        rec.push_str(&format!(" permissive={}", u8::from(allowed)));
    }
    (allowed, Some(rec))
}

#[test]
fn search_open_and_stat_on_debians_policy_answer_and_record_as_compute_av_says() {
    let Some(path) = seaccess_testkit::debian_policy("default") else {
        eprintln!("Debian's default policy is not installed: skipped");
        return;
    };
    let (server, avc) = seaccess_testkit::server_with_avc(&path, 4096);
    let om = ObjectManager::new(server.clone(), &*server, avc.clone());
    let log = seaccess_testkit::audit_recorder(&avc);
    let g = server.snapshot();
    let open_perms = g.policy_caps().contains(PolicyCap::OpenPerms);
    let sb = om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let (mut allowed, mut refused, mut pairs) = (0, 0, 0);
    for (i, dom) in DOMAINS.iter().enumerate() {
        if g.context_to_sid(dom).is_err() {
            continue;
        }
        let task = Task::new(42, "svc", Cred::new(server.context_to_sid(dom).unwrap()));
        for (j, ty) in TYPES.iter().enumerate() {
            let tctx = format!("system_u:object_r:{ty}:s0");
            if g.context_to_sid(&tctx).is_err() {
                continue;
            }
            pairs += 1;
            let ino = (i * 100 + j * 2 + 10) as u64;
            let dir = om.inode_init(&sb, ino, 0o040755, "/x", Some(&tctx));
            let file = om.inode_init(&sb, ino + 1, 0o100644, "/x/f", Some(&tctx));
            let mut cases: Vec<(String, bool, Option<String>)> = Vec::new();
            let aux = format!(r#"pid=42 comm="svc" name="x" dev="sda1" ino={ino}"#);
            let (ok, rec) = expected(&g, dom, &tctx, "dir", &["search"], true, &aux);
            let r = om.inode_permission(&task, &dir, MAY_EXEC, Some("x"));
            cases.push((format!("search {dom} {ty}: {r:?}"), r.is_ok() == ok, rec));
            let aux = format!(
                r#"pid=42 comm="svc" path="/x/f" dev="sda1" ino={}"#,
                ino + 1
            );
            let perms: &[&str] = if open_perms {
                &["read", "open"]
            } else {
                &["read"]
            };
            let (ok, rec) = expected(&g, dom, &tctx, "file", perms, true, &aux);
            let r = om.file_open(&task, &file, "/x/f", O_RDONLY).map(|_| ());
            cases.push((format!("open {dom} {ty}: {r:?}"), r.is_ok() == ok, rec));
            let (ok, rec) = expected(&g, dom, &tctx, "file", &["getattr"], true, &aux);
            let r = om.inode_getattr(&task, &file, "/x/f");
            cases.push((format!("stat {dom} {ty}: {r:?}"), r.is_ok() == ok, rec));
            let got = std::mem::take(&mut *log.lock().unwrap());
            let want: Vec<String> = cases.iter().filter_map(|c| c.2.clone()).collect();
            for (what, right, _) in &cases {
                assert!(right, "{what}: not what compute_av says");
                if what.contains(": Ok") {
                    allowed += 1;
                } else {
                    refused += 1;
                }
            }
            assert_eq!(got, want, "{dom} {ty}");
        }
    }
    assert!(
        pairs >= 20,
        "only {pairs} (domain, type) pairs exist in this policy"
    );
    assert!(
        allowed >= 10 && refused >= 10,
        "{allowed} allowed, {refused} refused: both kinds checked"
    );
}
