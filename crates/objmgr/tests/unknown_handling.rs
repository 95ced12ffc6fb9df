//! What the policy does not define, as the kernel's security server answers it
//! (security/selinux/ss/services.c: security_compute_av, map_decision; avc.c: avc_denied,
//! avc_audit_required), on variants of testdata's permissive.cil: handle_unknown deny (or
//! allow), permissive domains, a `file` class with four permissions, a `dir` class with only
//! `search` (a mount labels its root directory) and no `lnk_file` class at all.
//!
//! - A class the policy lacks: security_compute_av sets AVD_FLAGS_PERMISSIVE from the source's
//!   type before it looks the class up, so avc_denied lets a permissive domain through and the
//!   denial is audited with permissive=1 (avd_init's auditdeny is all ones).
//! - A permission the policy lacks, under handle_unknown deny: map_decision puts it in
//!   auditdeny, so its denial is audited; with any denial the record lists the denied
//!   permissions auditdeny keeps, never an auditallow'ed grant.
//!
//! Every expectation is derived from the policy through the security server (its classes,
//! permissions, decisions and permissive flags), never written down by hand.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fs_support;

use fs_support::*;
use seaccess_objmgr::classes::{common_file, file};
use seaccess_objmgr::hooks::fs::{MountOpts, MAY_ACCESS, MAY_APPEND, MAY_READ, MAY_WRITE};
use seaccess_objmgr::{errno, AuditData, Class, Hook};
use seaccess_types::{AccessServer, AvDecision, HandleUnknown};

const DATA: &str = "u:object_r:data_t:s0";
const DOMAINS: &[&str] = &[
    "u:r:perm_t:s0",
    "u:r:perm2_t:s0",
    "u:r:enf_t:s0",
    "u:r:child_t:s0",
];

/// Lines added to permissive.cil by the variants: what a mount needs (a `dir` class for its
/// root, the initial SIDs of filesystems and files, ext4 labeled by xattr); an auditallow'ed
/// grant and a dontaudit'ed denial, to see which a record with a permission the policy lacks
/// keeps.
const ADDED: &str = "
(class dir (search))
(classorder (file dir))
(sid fs)
(sid file)
(sidorder (unlabeled fs file))
(sidcontext fs (u object_r data_t ((s0) (s0))))
(sidcontext file (u object_r data_t ((s0) (s0))))
(fsuse xattr ext4 (u object_r data_t ((s0) (s0))))
(auditallow enf_t data_t (file (read)))
(dontaudit child_t data_t (file (write)))
";

fn permissive_env(handle: &str) -> Env {
    env_at(&seaccess_testkit::compile_variant(
        "permissive",
        &format!("permissive-unknown-{handle}"),
        33,
        |s| {
            assert!(s.contains("(handleunknown deny)"));
            format!(
                "{}{ADDED}",
                s.replace("(handleunknown deny)", &format!("(handleunknown {handle})"))
            )
        },
    ))
}

/// The policy's decision for `src` on data_t in its `file` class.
fn file_decision(e: &Env, src: &str) -> AvDecision {
    let file = e.server.names().class_id("file").unwrap();
    e.server.compute_av(e.sid(src), e.sid(DATA), file).unwrap()
}

/// Whether the policy makes `src` a permissive domain (the flag of any of its decisions: the
/// permissive map is indexed by the source's type alone).
fn permissive(e: &Env, src: &str) -> bool {
    file_decision(e, src).flags.permissive()
}

/// Our `file` permissions in `perms` the policy lacks.
fn lacking(e: &Env, perms: u32) -> u32 {
    let names = e.server.names();
    let c = names.class_id("file").unwrap();
    (0..file::NAMES.len())
        .filter(|&i| perms & (1 << i) != 0 && names.perm_bit(c, file::NAMES[i]).is_none())
        .fold(0, |a, i| a | 1 << i)
}

/// What the kernel's record for `src` asking `perms` of data_t's `file` class lists, in our
/// (the kernel's) bit order, and whether it is a denial: the denied permissions auditdeny
/// keeps, a permission the policy lacks counting as denied and kept under handle_unknown deny
/// (map_decision); with no denial, the grants auditallow'ed.
fn expected_file_record(e: &Env, src: &str, perms: u32) -> (Vec<&'static str>, bool) {
    let names = e.server.names();
    let c = names.class_id("file").unwrap();
    let deny = names.handle_unknown() != HandleUnknown::Allow;
    let d = file_decision(e, src);
    let (mut denied, mut audited_denied, mut granted_audited) = (false, vec![], vec![]);
    for (i, name) in file::NAMES.iter().enumerate() {
        if perms & (1 << i) == 0 {
            continue;
        }
        match names.perm_bit(c, name) {
            None if deny => {
                denied = true;
                audited_denied.push(*name);
            }
            None => {}
            Some(b) if d.allowed.0 & (1 << b) == 0 => {
                denied = true;
                if d.auditdeny.0 & (1 << b) != 0 {
                    audited_denied.push(*name);
                }
            }
            Some(b) if d.auditallow.0 & (1 << b) != 0 => granted_audited.push(*name),
            Some(_) => {}
        }
    }
    if denied {
        (audited_denied, true)
    } else {
        (granted_audited, false)
    }
}

fn record_summary(list: &[&str], denied: bool, class: &str) -> Vec<String> {
    if list.is_empty() {
        return vec![];
    }
    let verdict = if denied { "denied" } else { "granted" };
    vec![format!("{verdict} {class} {{{}}}", list.join(" "))]
}

/// The ` permissive=` a denial's record ends with.
fn permissive_field(records: &[String]) -> Vec<&str> {
    records
        .iter()
        .map(|r| r.rsplit(' ').next().unwrap_or(""))
        .collect()
}

/// A class the policy lacks, under handle_unknown deny: a permissive domain goes through, every
/// time audited with permissive=1 and the decision flagged; any other domain is refused,
/// audited with permissive=0. Through the plain check and through inode_permission with every
/// fast path on, which must not remember the permissive grant: a remembered grant would pass
/// silently, and nothing else holds one for a class the policy lacks (the cache has no entry
/// for it), so each call is checked and audited again. (The kernel's avc_denied grants it in
/// its AVC node, so its later checks are silent until the node goes: a difference in how
/// often the denial is audited, not in the verdict.)
#[test]
fn a_permissive_domain_passes_a_class_the_policy_lacks_audited() {
    let e = permissive_env("deny");
    let names = e.server.names();
    assert!(
        names.class_id("lnk_file").is_none(),
        "the policy must lack lnk_file"
    );
    assert_eq!(names.handle_unknown(), HandleUnknown::Deny);
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    let d = e.om.inode_init(&sb, 12, LNK, "/d", Some(DATA));
    assert_eq!(d.class(), Class::LNK_FILE);
    e.om.fast_paths().set_all(true);
    let mut seen = (0, 0);
    for src in DOMAINS {
        let p = permissive(&e, src);
        if p {
            seen.0 += 1;
        } else {
            seen.1 += 1;
        }
        let t = e.task(src);
        let c =
            e.om.check_noaudit(
                Hook::InodePermission,
                e.sid(src),
                e.sid(DATA),
                Class::LNK_FILE,
                common_file::READ,
            )
            .unwrap();
        assert!(c.unknown_class, "{src}");
        assert_eq!(
            c.decision.flags.permissive(),
            p,
            "{src}: the decision's flag"
        );
        assert_eq!(
            (c.unknown, c.audited_unknown),
            (common_file::READ, common_file::READ),
            "{src}"
        );
        assert_eq!(c.allowed(), p, "{src}");
        assert!(!c.clean(), "{src}");
        e.take();
        let r = e.om.check(
            Hook::InodePermission,
            &t,
            e.sid(DATA),
            Class::LNK_FILE,
            common_file::READ,
            &AuditData::None,
        );
        assert_eq!(r.is_ok(), p, "{src}: {r:?}");
        let recs = e.take();
        assert_eq!(
            recs.iter().map(|r| summary(r)).collect::<Vec<_>>(),
            ["denied lnk_file {read}"],
            "{src}"
        );
        let want = if p { "permissive=1" } else { "permissive=0" };
        assert_eq!(permissive_field(&recs), [want], "{src}: {recs:?}");
        for round in 0..3 {
            let r = e.om.inode_permission(&t, &d, MAY_READ, Some("d"));
            assert_eq!(r.is_ok(), p, "{src} round {round}: {r:?}");
            if !p {
                assert_eq!(r.unwrap_err().errno(), errno::EACCES);
            }
            let recs = e.take();
            assert_eq!(
                recs.iter().map(|r| summary(r)).collect::<Vec<_>>(),
                ["denied lnk_file {read}"],
                "{src} round {round}: a permissive grant was remembered"
            );
            assert_eq!(permissive_field(&recs), [want], "{src}: {recs:?}");
        }
    }
    assert!(
        seen.0 > 0 && seen.1 > 0,
        "permissive and enforced domains: {seen:?}"
    );
    // In permissive mode every domain goes through, audited with permissive=1.
    e.avc.set_enforcing(false);
    for src in DOMAINS {
        let t = e.task(src);
        e.om.inode_permission(&t, &d, MAY_READ, Some("d")).unwrap();
        assert_eq!(permissive_field(&e.take()), ["permissive=1"], "{src}");
    }
}

/// The same class under handle_unknown allow: everything allowed, nothing audited, the
/// decision still flagged for a permissive domain (security_compute_av sets the flag first).
#[test]
fn a_class_the_policy_lacks_is_allowed_under_allow_unknown() {
    let e = permissive_env("allow");
    assert!(e.server.names().class_id("lnk_file").is_none());
    for src in DOMAINS {
        let t = e.task(src);
        let c =
            e.om.check(
                Hook::InodePermission,
                &t,
                e.sid(DATA),
                Class::LNK_FILE,
                common_file::READ | common_file::WRITE,
                &AuditData::None,
            )
            .unwrap();
        assert!(
            c.unknown_class && c.denied.is_empty() && c.unknown == 0 && !c.audits(),
            "{src}: {c:?}"
        );
        assert_eq!(c.decision.flags.permissive(), permissive(&e, src), "{src}");
        assert!(e.take().is_empty(), "{src}");
    }
}

/// Permissions the policy's `file` class lacks, asked with others of it, by every domain: the
/// verdict and the record are the kernel's (see [`expected_file_record`]), under deny and
/// under allow, and a permissive domain's grant of one is never remembered.
#[test]
fn a_denied_permission_the_policy_lacks_is_audited() {
    for handle in ["deny", "allow"] {
        let e = permissive_env(handle);
        let deny = handle == "deny";
        let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
        let f = e.om.inode_init(&sb, 13, REG, "/f", Some(DATA));
        e.om.fast_paths().set_all(true);
        assert_ne!(
            lacking(&e, file::APPEND),
            0,
            "the policy must lack file append"
        );
        assert_eq!(lacking(&e, file::READ | file::WRITE), 0);
        // read: auditallow'ed for enf_t; write: dontaudit'ed for child_t.
        let requests = [
            file::APPEND,
            file::READ | file::APPEND,
            file::WRITE | file::APPEND,
            file::READ | file::WRITE | file::APPEND,
            file::READ,
            file::WRITE,
        ];
        let mut met = [false; 3];
        for src in DOMAINS {
            let t = e.task(src);
            let p = permissive(&e, src);
            for &perms in &requests {
                let what = format!("{handle}: {src} asking {perms:#x}");
                let (list, denied) = expected_file_record(&e, src, perms);
                // A permissive domain's denial is granted in the cache once checked
                // (avc_denied's avc_update_node): each check here starts from an empty one.
                e.avc.flush();
                let c =
                    e.om.check_noaudit(
                        Hook::InodePermission,
                        e.sid(src),
                        e.sid(DATA),
                        Class::FILE,
                        perms,
                    )
                    .unwrap();
                let lacks = lacking(&e, perms);
                assert_eq!(c.unknown, if deny { lacks } else { 0 }, "{what}");
                assert_eq!(c.audited_unknown, c.unknown, "{what}");
                assert_eq!(c.allowed(), !denied || p, "{what}: {c:?}");
                assert_eq!(c.audits(), !list.is_empty(), "{what}: {c:?}");
                e.avc.flush();
                let r = e.om.check(
                    Hook::InodePermission,
                    &t,
                    e.sid(DATA),
                    Class::FILE,
                    perms,
                    &AuditData::None,
                );
                assert_eq!(r.is_ok(), !denied || p, "{what}: {r:?}");
                let recs = e.take();
                assert_eq!(
                    recs.iter().map(|r| summary(r)).collect::<Vec<_>>(),
                    record_summary(&list, denied, "file"),
                    "{what}: {recs:?}"
                );
                if denied && !list.is_empty() {
                    let want = if p { "permissive=1" } else { "permissive=0" };
                    assert_eq!(permissive_field(&recs), [want], "{what}");
                }
                if deny && lacks != 0 {
                    met[0] |= denied && list.len() == 1 && perms & file::READ != 0;
                    met[1] |= denied && perms & file::WRITE != 0 && !list.contains(&"write");
                    met[2] |= p;
                }
            }
            // Append through inode_permission (MAY_APPEND asks `append`), three times: a
            // permissive domain's grant of a permission the policy lacks is not remembered by
            // a fast path (which would pass it silently), so each is audited again (see the
            // first test for the kernel's AVC, which remembers it).
            let (list, denied) = expected_file_record(&e, src, file::APPEND);
            for round in 0..3 {
                let r = e.om.inode_permission(&t, &f, MAY_APPEND, Some("f"));
                assert_eq!(
                    r.is_ok(),
                    !denied || p,
                    "{handle}: {src} round {round}: {r:?}"
                );
                assert_eq!(
                    e.asked(),
                    record_summary(&list, denied, "file"),
                    "{handle}: {src} round {round}"
                );
            }
        }
        if deny {
            assert_eq!(
                met, [true; 3],
                "the requests met an auditallow'ed grant and a dontaudit'ed denial beside a \
                 permission the policy lacks, and a permissive domain"
            );
        }
    }
}

/// access(2) (MAY_ACCESS) silences a denial when the decision's auditdeny lacks `audit_access`
/// (avc_audit_required's auditdeny argument). The policy's `file` class lacks audit_access:
/// map_decision puts it in auditdeny under handle_unknown deny (the denial is audited) and
/// leaves it out under allow (silenced).
#[test]
fn access_audit_follows_handle_unknown_when_audit_access_is_lacking() {
    for handle in ["deny", "allow"] {
        let e = permissive_env(handle);
        assert_ne!(lacking(&e, file::AUDIT_ACCESS), 0);
        let deny = e.server.names().handle_unknown() == HandleUnknown::Deny;
        let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
        let f = e.om.inode_init(&sb, 13, REG, "/f", Some(DATA));
        // The domains the policy refuses write, audited.
        let mut checked = 0;
        for src in DOMAINS {
            let (list, denied) = expected_file_record(&e, src, file::WRITE);
            if !denied || list.is_empty() {
                continue;
            }
            checked += 1;
            let t = e.task(src);
            e.avc.flush();
            let _ =
                e.om.inode_permission(&t, &f, MAY_ACCESS | MAY_WRITE, Some("f"));
            let want = if deny {
                record_summary(&list, true, "file")
            } else {
                vec![]
            };
            assert_eq!(e.asked(), want, "{handle}: {src}");
            // Without MAY_ACCESS the denial is audited either way.
            e.avc.flush();
            let _ = e.om.inode_permission(&t, &f, MAY_WRITE, Some("f"));
            assert_eq!(
                e.asked(),
                record_summary(&list, true, "file"),
                "{handle}: {src}"
            );
        }
        assert!(
            checked > 0,
            "{handle}: no domain is refused an audited write"
        );
        // A denial of a permission the policy lacks, under deny, is silenced or not the same
        // way: audit_access is in auditdeny, so it is audited.
        if deny {
            let t = e.task("u:r:enf_t:s0");
            let (list, denied) = expected_file_record(&e, "u:r:enf_t:s0", file::APPEND);
            assert!(denied);
            let _ =
                e.om.inode_permission(&t, &f, MAY_ACCESS | MAY_APPEND, Some("f"));
            assert_eq!(e.asked(), record_summary(&list, true, "file"));
        }
    }
}
