//! The ports and nodes maps (sel_netport_sid, sel_netnode_sid on the BPF side) against setools'
//! own reading of Debian's default and MLS policies, in policy order (the kernel's
//! security_port_sid takes the first portcon entry that matches, as security_node_sid takes
//! the first nodecon); and port SIDs decided in the INET socket classes alone.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::process::Command;

use seaccess_enforce::layout::{Key, PORT_PROTOCOLS};
use seaccess_enforce::tables::{self, Limits, Universe};
use seaccess_engine::Engine;
use seaccess_objmgr::Class;
use seaccess_types::Sid;

/// setools' portcon and nodecon entries in policy order: ("port", protocol, low, high,
/// context) and ("node", network, context) lines, tab-separated.
const SETOOLS: &str = r#"
import sys, setools
p = setools.SELinuxPolicy(sys.argv[1])
for c in p.portcons():
    print("port", str(c.protocol), c.ports.low, c.ports.high, c.context, sep="\t")
for c in p.nodecons():
    print("node", c.network, c.context, sep="\t")
"#;

fn setools(policy: &std::path::Path) -> Option<Vec<Vec<String>>> {
    let out = Command::new("/usr/bin/python3")
        .args(["-c", SETOOLS])
        .arg(policy)
        .output()
        .ok()?;
    if !out.status.success() {
        println!(
            "SKIP: setools' Python module: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| l.split('\t').map(String::from).collect())
            .collect(),
    )
}

/// A context as setools prints it (an MLS range as "s0 - s15:c0.c1023"), as the server does.
fn context(c: &str) -> String {
    c.replace(" - ", "-")
}

fn compare(which: &str) {
    let Some(policy) = seaccess_testkit::debian_policy(which) else {
        println!("SKIP: Debian's {which} policy is not installed");
        return;
    };
    let Some(lines) = setools(&policy) else {
        return;
    };
    let e = Engine::builder()
        .object_manager(true)
        .open(&policy)
        .unwrap();
    let task = e.sid("system_u:system_r:initrc_t:s0").unwrap();
    let u = Universe {
        tasks: vec![task],
        ..Universe::default()
    };
    let g = tables::build(&e, &u, true, &Limits::default()).unwrap();
    let ctx = |s: u32| e.server().sid_to_context(Sid(s)).unwrap();
    let port_initial = ctx(g.config.port_sid);
    let ports: Vec<(&str, u32, u32, String)> = lines
        .iter()
        .filter(|l| l[0] == "port")
        .map(|l| {
            (
                l[1].as_str(),
                l[2].parse().unwrap(),
                l[3].parse().unwrap(),
                context(&l[4]),
            )
        })
        .collect();
    assert!(!ports.is_empty(), "{which}: setools found no portcon");
    let names = ["tcp", "udp", "sctp", "dccp"];
    assert_eq!(PORT_PROTOCOLS.len(), names.len());
    let mut named = 0;
    for (i, name) in names.iter().enumerate() {
        for port in 0..=u16::MAX as u32 {
            let want = ports
                .iter()
                .find(|(p, lo, hi, _)| p == name && *lo <= port && port <= *hi)
                .map_or(port_initial.clone(), |e| e.3.clone());
            named += usize::from(want != port_initial);
            let got = ctx(g.ports[i * 65536 + port as usize]);
            assert_eq!(got, want, "{which}: {name} port {port}");
        }
    }
    let nodes = lines.iter().filter(|l| l[0] == "node").count();
    assert_eq!(g.nodes.len(), nodes, "{which}: nodecon entries");
    assert_eq!(g.config.nodes as usize, nodes);
    // A port SID is decided in the five INET socket classes, and only there.
    let http = e.sid("system_u:object_r:http_port_t:s0").unwrap();
    let classes: Vec<u32> = g
        .decisions
        .iter()
        .filter(|(k, _)| k.ssid == task.0 && k.tsid == http.0)
        .map(|(k, _)| k.tclass)
        .collect();
    let inet = [
        Class::TCP_SOCKET,
        Class::UDP_SOCKET,
        Class::RAWIP_SOCKET,
        Class::ICMP_SOCKET,
        Class::SCTP_SOCKET,
    ];
    let want: Vec<u32> = {
        let mut v: Vec<u32> = inet.iter().map(|c| u32::from(c.0)).collect();
        v.sort_unstable();
        v
    };
    assert_eq!(classes, want, "{which}: http_port_t's classes");
    assert!(g.sids.net.contains(&http.0) && !g.sids.objects.contains(&http.0));
    let key = Key {
        ssid: task.0,
        tsid: http.0,
        tclass: u32::from(Class::FILE.0),
    };
    assert!(g.decisions.get(&key).is_none());
    println!(
        "{which}: {} ports of tcp, udp, sctp and dccp agree with setools ({named} named by a portcon), {nodes} nodecon entries",
        4 * 65536
    );
}

#[test]
fn the_default_policys_ports_agree_with_setools() {
    compare("default");
}

#[test]
fn the_mls_policys_ports_agree_with_setools() {
    compare("mls");
}
