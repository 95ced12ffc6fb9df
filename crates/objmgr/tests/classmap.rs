//! The class map across a reload to a policy that numbers the classes and permissions
//! differently (objmgr-files.cil and a variant with the class order, the common file
//! permissions and the dir permissions reversed): the answers and the records are right at
//! once after each reload, also for checks running in another thread during the reloads (no
//! decision is translated with the other policy's map).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod fs_support;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fs_support::*;
use seaccess_objmgr::hooks::fs::{oflags::*, MountOpts, MAY_READ, MAY_WRITE};
use seaccess_objmgr::{errno, InodeSec};

fn reversed(s: &str, head: &str) -> String {
    let line = s.lines().find(|l| l.starts_with(head)).unwrap();
    let inner = line
        .strip_prefix(head)
        .unwrap()
        .trim_end_matches(')')
        .trim_end_matches(')');
    let mut names: Vec<&str> = inner.split_whitespace().collect();
    names.reverse();
    s.replace(line, &format!("{head}{}))", names.join(" ")))
}

fn policies() -> [Vec<u8>; 2] {
    let renumbered =
        seaccess_testkit::compile_variant("objmgr-files", "objmgr-files-renumbered", 33, |s| {
            let s = reversed(s, "(classorder (");
            let s = reversed(&s, "(common file (");
            reversed(&s, "(class dir (")
        });
    [
        std::fs::read(files_policy()).unwrap(),
        std::fs::read(renumbered).unwrap(),
    ]
}

struct Tree {
    root: InodeSec,
    d: InodeSec,
    f: InodeSec,
}

fn tree(e: &Env) -> Tree {
    let sb = e.om.mount("sda1", "ext4", &MountOpts::default()).unwrap();
    Tree {
        root: e.om.inode_init(&sb, 2, DIR, "/", Some("u:object_r:a_t:s0")),
        d: e.om
            .inode_init(&sb, 3, DIR, "/d", Some("u:object_r:b_t:s0")),
        f: e.om
            .inode_init(&sb, 4, REG, "/d/f", Some("u:object_r:b_t:s0")),
    }
}

#[test]
fn the_renumbered_policy_really_numbers_differently() {
    let [a, b] = policies();
    let (ga, gb) = (
        seaccess_security::SecurityServer::from_bytes(&a).unwrap(),
        seaccess_security::SecurityServer::from_bytes(&b).unwrap(),
    );
    let (ga, gb) = (ga.snapshot(), gb.snapshot());
    for c in ["file", "dir", "filesystem", "fd"] {
        assert_ne!(ga.class(c).unwrap(), gb.class(c).unwrap(), "{c}");
    }
}

#[test]
fn answers_and_records_are_right_right_after_each_reload() {
    let policies = policies();
    let e = env();
    e.om.fast_paths().set_all(false);
    let t = e.task("u:r:quiet_t:s0");
    let Tree { root, d, f } = tree(&e);
    for i in 0..6 {
        e.server.reload(&policies[i % 2]).unwrap();
        // quiet_t: dir {search read getattr} on a_t, dir {search} on b_t, file {read write
        // append open getattr ioctl} on b_t (objmgr-files.cil).
        e.om.path_walk(&t, &[(&root, "/"), (&d, "d")]).unwrap();
        e.om.inode_permission(&t, &root, MAY_READ, Some("/"))
            .unwrap();
        let file = e.om.file_open(&t, &f, "/d/f", O_RDWR).unwrap();
        e.om.file_permission(&t, &file, &f, MAY_WRITE, "/d/f")
            .unwrap();
        let r = e.om.inode_permission(&t, &d, MAY_READ, Some("d"));
        assert_eq!(
            r.map_err(|e| e.errno()),
            Err(errno::EACCES),
            "policy {}",
            i % 2
        );
        let r = e.om.inode_create(&t, &d, "x", REG).map(|_| ());
        assert_eq!(
            r.map_err(|e| e.errno()),
            Err(errno::EACCES),
            "policy {}",
            i % 2
        );
        assert_eq!(
            e.asked(),
            ["denied dir {read}", "denied dir {add_name}"],
            "policy {}",
            i % 2
        );
    }
}

#[test]
fn checks_in_another_thread_during_reloads_are_translated_with_their_own_policys_map() {
    let policies = policies();
    let e = Arc::new(env());
    e.om.fast_paths().set_all(false);
    let stop = Arc::new(AtomicBool::new(false));
    let checker = {
        let (e, stop) = (e.clone(), stop.clone());
        std::thread::spawn(move || {
            let t = e.task("u:r:quiet_t:s0");
            let Tree { root, d, f } = tree(&e);
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) || n < 1000 {
                e.om.path_walk(&t, &[(&root, "/"), (&d, "d")]).unwrap();
                let file = e.om.file_open(&t, &f, "/d/f", O_RDWR | O_APPEND).unwrap();
                e.om.file_permission(&t, &file, &f, MAY_WRITE, "/d/f")
                    .unwrap();
                e.om.inode_getattr(&t, &f, "/d/f").unwrap();
                assert!(e.om.inode_permission(&t, &d, MAY_READ, Some("d")).is_err());
                assert!(e
                    .om
                    .inode_permission(&t, &root, MAY_WRITE, Some("/"))
                    .is_err());
                n += 1;
            }
            n
        })
    };
    for i in 0..300 {
        e.server.reload(&policies[(i + 1) % 2]).unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let n = checker.join().unwrap();
    assert!(n >= 1000);
    // Every record names the permission asked: a dir {read} or dir {write} denial, once per
    // policy (a reload empties the cache), never another permission of another numbering.
    let recs = e.asked();
    assert!(!recs.is_empty());
    for r in &recs {
        assert!(r == "denied dir {read}" || r == "denied dir {write}", "{r}");
    }
}
