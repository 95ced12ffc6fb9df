//! A generation's tables against the object manager's own check and the policy's own
//! transitions, on Debian's default policy and the permissive test policy.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::time::Instant;

use seaccess_enforce::layout::{Av, Key, AV_PERMISSIVE};
use seaccess_enforce::tables::{self, Generation, Limits, Role, Universe};
use seaccess_enforce::EnforceError;
use seaccess_engine::Engine;
use seaccess_objmgr::{Class, Hook, CLASSES};
use seaccess_types::Sid;

const INITRC: &str = "system_u:system_r:initrc_t:s0";
const HTTPD: &str = "system_u:system_r:httpd_t:s0";
const LABELS: &[&str] = &[
    "system_u:object_r:httpd_exec_t:s0",
    "system_u:object_r:var_log_t:s0",
    "system_u:object_r:httpd_sys_content_t:s0",
    "system_u:object_r:shadow_t:s0",
    "system_u:object_r:etc_t:s0",
    "system_u:object_r:bin_t:s0",
    "system_u:object_r:tmp_t:s0",
];

fn debian() -> Option<Engine> {
    let p = seaccess_testkit::debian_policy("default")?;
    Some(Engine::builder().object_manager(true).open(p).unwrap())
}

/// Tasks starting in `tasks`, with `labels` on directories and files alike.
fn universe(e: &Engine, tasks: &[&str], labels: &[&str]) -> Universe {
    let sids = |v: &[&str]| v.iter().map(|c| e.sid(c).unwrap()).collect::<Vec<_>>();
    Universe {
        tasks: sids(tasks),
        dirs: sids(labels),
        files: sids(labels),
    }
}

fn ctx(e: &Engine, s: u32) -> String {
    e.server().sid_to_context(Sid(s)).unwrap()
}

/// How many checks one comparison made, and of which kinds (to see that the cases met).
#[derive(Default, Debug)]
struct Compared {
    checks: usize,
    permissive_checked: usize,
    unknown_class_checked: usize,
    /// Permissions the policy lacks, of a class it defines, denied (handle_unknown deny).
    unknown_perm_denied: usize,
    /// Classes the policy lacks, denied to a permissive domain: the kernel's
    /// security_compute_av sets AVD_FLAGS_PERMISSIVE before it looks the class up, and
    /// avc_denied lets it through.
    unknown_class_permissive_denied: usize,
}

/// Every permission of every class for `key`, asked of the object manager and of the table:
/// the verdict, whether it is enforced, the permissive flag and whether it is audited all
/// agree, with no exception.
fn compare(e: &Engine, av: Av, key: Key, out: &mut Compared) {
    let om = e.object_manager().unwrap();
    let class = Class(key.tclass as u16);
    let nperms = CLASSES[key.tclass as usize].perms.len().min(32);
    let lacks_class = e
        .with_generation(|g| Ok(g.policy().class(class.name()).is_err()))
        .unwrap();
    for b in 0..nperms {
        let bit = 1u32 << b;
        let c = om
            .check_noaudit(Hook::FileOpen, Sid(key.ssid), Sid(key.tsid), class, bit)
            .unwrap();
        out.checks += 1;
        let what = format!(
            "{} on {} {} bit {b} ({}): {c:?} vs {av:?}",
            ctx(e, key.ssid),
            ctx(e, key.tsid),
            class.name(),
            CLASSES[key.tclass as usize].perms[b]
        );
        let granted = av.allowed & bit != 0;
        assert_eq!(c.denied.is_empty() && c.unknown == 0, granted, "{what}");
        assert_eq!(c.unknown_class, lacks_class, "{what}");
        let permissive = av.flags & AV_PERMISSIVE != 0;
        if permissive {
            out.permissive_checked += 1;
        }
        if lacks_class {
            out.unknown_class_checked += 1;
        }
        let enforced = !granted && !permissive;
        assert_eq!(c.enforced, enforced, "{what}");
        assert_eq!(c.decision.flags.permissive(), permissive, "{what}");
        let audited = if granted {
            av.auditallow & bit != 0
        } else {
            av.auditdeny & bit != 0
        };
        assert_eq!(c.audits(), audited, "{what}");
        if !granted && c.unknown != 0 && !c.unknown_class {
            out.unknown_perm_denied += 1;
        }
        if !granted && lacks_class && permissive {
            out.unknown_class_permissive_denied += 1;
        }
    }
}

#[test]
fn debian_decisions_equal_the_object_managers_check() {
    let Some(e) = debian() else { return };
    let u = universe(&e, &[INITRC], LABELS);
    let t = Instant::now();
    let g = tables::build(&e, &u, true, &Limits::default()).unwrap();
    eprintln!(
        "debian default, start {INITRC}, {} labels: {} task SIDs, {} object SIDs, {} decisions, {} transitions, {} entries, built in {:?}",
        LABELS.len(),
        g.sids.tasks.len(),
        g.sids.objects.len(),
        g.decisions.len(),
        g.transitions.len(),
        g.entries(),
        t.elapsed()
    );
    assert_eq!(g.seqno, e.seqno().0);
    let mut out = Compared::default();
    // Every permission of every decision.
    for (key, av) in g.decisions.iter() {
        compare(&e, av, key, &mut out);
    }
    eprintln!("{out:?}");
    assert!(out.checks > 10_000, "{out:?}");
    // Debian's policy allows unknown classes: the ones it lacks are allowed, as the object
    // manager allows them.
    assert!(out.unknown_class_checked > 0, "{out:?}");
}

/// The permissive test policy: permissive domains, handle_unknown deny, a `file` class with
/// four permissions and no `dir` at all.
#[test]
fn permissive_and_unknown_decisions_equal_the_object_managers_check() {
    let p = seaccess_testkit::compile("permissive", 33);
    let e = Engine::builder().object_manager(true).open(&p).unwrap();
    let u = universe(
        &e,
        &["u:r:perm_t:s0", "u:r:enf_t:s0"],
        &["u:object_r:data_t:s0"],
    );
    let g = tables::build(&e, &u, true, &Limits::default()).unwrap();
    let mut out = Compared::default();
    for (key, av) in g.decisions.iter() {
        compare(&e, av, key, &mut out);
    }
    eprintln!("{out:?}");
    // The cases where the object manager departed from the kernel once, met (and, by
    // compare, decided and audited as the kernel does).
    assert!(
        out.permissive_checked > 0 && out.unknown_class_checked > 0,
        "{out:?}"
    );
    assert!(out.unknown_class_permissive_denied > 0, "{out:?}");
    assert!(out.unknown_perm_denied > 0, "{out:?}");
    // A permissive domain's decision on a class the policy lacks carries the flag.
    let perm = e.sid("u:r:perm_t:s0").unwrap().0;
    let data = e.sid("u:object_r:data_t:s0").unwrap().0;
    let av = g
        .decisions
        .get(&Key {
            ssid: perm,
            tsid: data,
            tclass: u32::from(Class::DIR.0),
        })
        .unwrap();
    assert_eq!((av.allowed, av.flags), (0, AV_PERMISSIVE));
}

#[test]
fn initrc_exec_of_httpd_exec_reaches_httpd_and_its_log_files() {
    let Some(e) = debian() else { return };
    let g = tables::build(
        &e,
        &universe(&e, &[INITRC], LABELS),
        true,
        &Limits::default(),
    )
    .unwrap();
    let initrc = e.sid(INITRC).unwrap();
    let exec = e.sid(LABELS[0]).unwrap();
    let httpd = e.sid(HTTPD).unwrap();
    let key = Key {
        ssid: initrc.0,
        tsid: exec.0,
        tclass: u32::from(Class::PROCESS.0),
    };
    assert_eq!(g.transitions.get(&key).unwrap().newsid, httpd.0);
    assert!(g.sids.tasks.contains(&httpd.0), "{:?}", g.sids.tasks);
    // httpd_t creating a file in a var_log_t directory: whatever the policy says.
    let log = e.sid("system_u:object_r:var_log_t:s0").unwrap();
    let (pfile, expected) = e
        .with_generation(|g| {
            let c = g.policy().class("file")?;
            Ok((c, g.policy().compute_create(httpd, log, c, None)?))
        })
        .unwrap();
    let _ = pfile;
    let key = Key {
        ssid: httpd.0,
        tsid: log.0,
        tclass: u32::from(Class::FILE.0),
    };
    let got = g.transitions.get(&key).unwrap().newsid;
    eprintln!("httpd_t creates in var_log_t: {}", ctx(&e, got));
    assert_eq!(got, expected.0);
    // The new file's SID is in the closure: decided for every task.
    assert!(g.sids.objects.contains(&got));
    for t in &g.sids.tasks {
        for c in 0..CLASSES.len() as u32 {
            let k = Key {
                ssid: *t,
                tsid: got,
                tclass: c,
            };
            assert!(g.decisions.get(&k).is_some(), "{k:?}");
        }
    }
}

#[test]
fn the_closure_is_bounded() {
    let Some(e) = debian() else { return };
    let u = universe(&e, &[INITRC], LABELS);
    let small = Limits {
        max_sids: 20,
        ..Limits::default()
    };
    match tables::build(&e, &u, true, &small) {
        Err(EnforceError::TooLarge { what: "SIDs", .. }) => {}
        other => panic!("{:?}", other.map(|g| g.sids)),
    }
    let few = Limits {
        max_decisions: 1000,
        ..Limits::default()
    };
    match tables::build(&e, &u, true, &few) {
        Err(EnforceError::TooLarge {
            what: "decisions", ..
        }) => {}
        other => panic!("{:?}", other.map(|g| g.sids)),
    }
}

#[test]
fn building_twice_gives_the_same_generation() {
    let Some(e) = debian() else { return };
    let u = universe(&e, &[INITRC], LABELS);
    let a = tables::build(&e, &u, true, &Limits::default()).unwrap();
    let b = tables::build(&e, &u, true, &Limits::default()).unwrap();
    assert!(a == b);
    assert!(a.decisions.keys.windows(2).all(|w| w[0] < w[1]));
    assert!(a.transitions.keys.windows(2).all(|w| w[0] < w[1]));
}

/// A SID added later gives the entries a generation built with it from the start has.
#[test]
fn add_sid_fills_what_a_build_with_it_has() {
    let Some(e) = debian() else { return };
    let limits = Limits::default();
    let without = &LABELS[1..];
    let mut g = tables::build(&e, &universe(&e, &[INITRC], without), true, &limits).unwrap();
    let exec = e.sid(LABELS[0]).unwrap();
    let mut u = universe(&e, &[INITRC], without);
    u.files.push(exec);
    let full = tables::build(&e, &u, true, &limits).unwrap();
    let added = g.add_sid(&e, exec, Role::File, &limits).unwrap();
    eprintln!(
        "add_sid of httpd_exec_t: {} decisions, {} transitions, SIDs {:?}",
        added.decisions.len(),
        added.transitions.len(),
        added.sids
    );
    assert!(added.sids.contains(&(e.sid(HTTPD).unwrap().0, Role::Task)));
    // Every entry of the full build is in the extended one, with the same value; the extended
    // one has besides only the new SID's row back against the tasks.
    for (k, v) in full.decisions.iter() {
        assert_eq!(g.decisions.get(&k), Some(v), "{k:?}");
    }
    for (k, v) in full.transitions.iter() {
        assert_eq!(g.transitions.get(&k), Some(v), "{k:?}");
    }
    for (k, _) in g.decisions.iter() {
        if full.decisions.get(&k).is_none() {
            assert_eq!(k.ssid, exec.0, "{k:?}");
            assert!(g.sids.tasks.contains(&k.tsid), "{k:?}");
        }
    }
    assert_eq!(g.transitions.len(), full.transitions.len());
    assert_eq!(g.sids, full.sids);
    // Under another policy generation, nothing is added.
    e.reload_file(seaccess_testkit::debian_policy("default").unwrap())
        .unwrap();
    let shadow = e.sid("system_u:object_r:shadow_t:s0").unwrap();
    let before = g.clone();
    match g.add_sid(&e, shadow, Role::Object, &limits) {
        Err(EnforceError::Stale { .. }) => {}
        other => panic!("{:?}", other.map(|a| a.sids)),
    }
    assert!(g == before);
}

/// A context keeps its SID across a reload that renumbers the policy's classes, and the
/// tables, in the object manager's numbering, do not change with the renumbering.
#[test]
fn sids_and_tables_survive_a_reload_that_renumbers_classes() {
    let a = seaccess_testkit::compile("renumber_a", 33);
    let b = seaccess_testkit::compile("renumber_b", 33);
    let e = Engine::builder().object_manager(true).open(&a).unwrap();
    let dom = "u:r:dom_t:s0";
    let text = std::fs::read_to_string(seaccess_testkit::policy_source("renumber_a")).unwrap();
    assert!(text.contains("(type dom_t)"), "renumber_a.cil changed");
    let before = e.sid(dom).unwrap();
    let u = Universe {
        tasks: vec![before],
        ..Universe::default()
    };
    let ga = tables::build(&e, &u, true, &Limits::default()).unwrap();
    e.reload_file(&b).unwrap();
    let after = e.sid(dom).unwrap();
    assert_eq!(before, after, "the context's SID changed across the reload");
    let gb = tables::build(&e, &u, true, &Limits::default()).unwrap();
    assert_ne!(ga.seqno, gb.seqno);
    assert!(ga.decisions == gb.decisions);
    assert!(ga.transitions == gb.transitions);
    // And the policy's own numbers did change: process and file swapped.
    let n = |p: &Path| {
        let e = Engine::open(p).unwrap();
        e.with_generation(|g| g.policy().class("process").map_err(Into::into))
            .unwrap()
    };
    assert_ne!(n(&a), n(&b));
}

/// A generation's contexts are the engine's SIDs (no lookup of its own): every SID it holds
/// names a context of the policy.
#[test]
fn every_sid_names_a_context() {
    let Some(e) = debian() else { return };
    let g: Generation = tables::build(
        &e,
        &universe(&e, &[INITRC], LABELS),
        false,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(g.config.enforcing, 0);
    for s in g.sids.tasks.iter().chain(&g.sids.objects) {
        ctx(&e, *s);
    }
    // Debian's policy gives `sid file` the context of unlabeled_t (refpolicy made file_t an
    // alias of it): the initial SIDs are given by the policy, never by name here.
    assert_ne!(g.config.file_sid, 0);
    assert_ne!(g.config.unlabeled_sid, 0);
    assert_ne!(g.config.kernel_sid, 0);
}

/// An exec whose computed domain the policy does not define (sysadm_t in role system_r
/// running dbus-daemon: type_transition to sysadm_dbusd_t, which system_r lacks) is refused by
/// the kernel; the table says so with SID 0, and the generation is still built.
#[test]
fn a_transition_to_an_undefined_context_is_refused_not_an_error() {
    let Some(e) = debian() else { return };
    let task = "system_u:system_r:sysadm_t:s0";
    let exec = "system_u:object_r:dbusd_exec_t:s0";
    let (t, x) = (e.sid(task).unwrap(), e.sid(exec).unwrap());
    let computed = e
        .with_generation(|g| {
            let c = g.policy().class("process")?;
            Ok(g.policy()
                .compute_create(t, x, c, None)
                .map_err(|e| e.to_string()))
        })
        .unwrap();
    eprintln!("{task} exec {exec}: {computed:?}");
    assert!(
        computed.is_err(),
        "the policy now defines it: pick another case"
    );
    let g = tables::build(
        &e,
        &universe(&e, &[task], &[exec]),
        true,
        &Limits::default(),
    )
    .unwrap();
    let key = Key {
        ssid: t.0,
        tsid: x.0,
        tclass: u32::from(Class::PROCESS.0),
    };
    assert_eq!(g.transitions.get(&key).unwrap().newsid, 0);
    assert!(!g.sids.tasks.contains(&0) && !g.sids.objects.contains(&0));
}
