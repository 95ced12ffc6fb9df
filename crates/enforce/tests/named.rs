//! Filename type transitions in a generation (the named transitions map) against sesearch's
//! own list of them on Debian's default policy: each filename rule for syslogd_t creating in
//! var_log_t gives its type, from the named map where it differs from the unnamed answer.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use seaccess_enforce::layout::{Key, NamedKey};
use seaccess_enforce::tables::{self, Limits, Universe};
use seaccess_engine::Engine;
use seaccess_objmgr::CLASSES;
use seaccess_types::Sid;

#[test]
fn syslogds_filename_transitions_in_var_log_agree_with_sesearch() {
    let Some(policy) = seaccess_testkit::debian_policy("default") else {
        println!("SKIP: Debian's default policy is not installed");
        return;
    };
    let Ok(out) = Command::new("sesearch")
        .args(["-T", "-s", "syslogd_t", "-t", "var_log_t"])
        .arg(&policy)
        .output()
    else {
        println!("SKIP: sesearch (setools) is not installed");
        return;
    };
    assert!(out.status.success());
    // type_transition SOURCE TARGET:CLASS NEW NAME;
    let rules: Vec<(String, String, String)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.trim_end_matches(';').split_whitespace().collect();
            let (_, class) = w.get(2)?.split_once(':')?;
            let name = w.get(4)?;
            Some((class.to_string(), w.get(3)?.to_string(), name.to_string()))
        })
        .collect();
    assert!(
        rules.iter().any(|r| r.2 == "cron.log"),
        "sesearch lists syslogd_t's cron.log rule: {rules:?}"
    );
    let e = Engine::builder()
        .object_manager(true)
        .open(&policy)
        .unwrap();
    let syslogd = e.sid("system_u:system_r:syslogd_t:s0").unwrap();
    let var_log = e.sid("system_u:object_r:var_log_t:s0").unwrap();
    let u = Universe {
        tasks: vec![syslogd],
        dirs: vec![var_log],
        files: vec![],
    };
    let g = tables::build(&e, &u, true, &Limits::default()).unwrap();
    let ty = |s: u32| {
        let c = e.server().sid_to_context(Sid(s)).unwrap();
        c.split(':').nth(2).unwrap().to_string()
    };
    let mut from_named = 0;
    for (class, new, name) in &rules {
        let Some(i) = CLASSES.iter().position(|c| c.name == class.as_str()) else {
            continue;
        };
        let tclass = i as u32;
        let unnamed = g
            .transitions
            .get(&Key {
                ssid: syslogd.0,
                tsid: var_log.0,
                tclass,
            })
            .map(|t| t.newsid);
        let key = NamedKey::new(syslogd.0, var_log.0, tclass, name).unwrap();
        let named = g
            .named
            .binary_search_by_key(&key, |e| e.0)
            .ok()
            .map(|i| g.named[i].1.newsid);
        let got = named.or(unnamed).map(ty);
        assert_eq!(got.as_deref(), Some(new.as_str()), "{class} {name}");
        from_named += usize::from(named.is_some());
    }
    assert!(from_named > 0, "no rule came from the named map");
    println!(
        "{} filename rules of syslogd_t in var_log_t agree with sesearch ({from_named} from the named map)",
        rules.len()
    );
}
