//! Which classes the kernel labels as sockets: only those of its own class map
//! (security/selinux/include/classmap.h) whose name ends in "socket", as genheaders writes
//! security_is_socket_class. Policy classes the kernel no longer has, such as Debian's
//! netlink_firewall_socket, map to no kernel class and are labelled as ordinary objects.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_testkit::*;

/// Classes Debian's default policy declares that are not in the kernel's class map.
const NOT_SOCKETS: [&str; 4] = [
    "netlink_firewall_socket",
    "netlink_ip6fw_socket",
    "obsolete_netlink_firewall_socket",
    "obsolete_netlink_ip6fw_socket",
];

/// security_compute_sid with no type rule: an object takes role object_r and the target's type,
/// a socket (like a process) the creator's role and type.
#[test]
fn retired_netlink_classes_take_object_defaults() {
    let Some(policy) = debian_policy("default") else {
        return;
    };
    let server = load(&policy);
    let g = server.snapshot();
    let src = subject(&g, "sysadm_t");
    let tgt = sid(&g, "system_u:object_r:etc_t:s0");
    let creator = g.sid_to_context(src).unwrap();
    let creator: Vec<&str> = creator.split(':').collect();
    let mut checked = 0;
    for class in NOT_SOCKETS {
        let Ok(c) = g.class(class) else { continue };
        let got = g
            .sid_to_context(g.compute_create(src, tgt, c, None).unwrap())
            .unwrap();
        let f: Vec<&str> = got.split(':').collect();
        assert_eq!((f[1], f[2]), ("object_r", "etc_t"), "{class}: {got}");
        checked += 1;
    }
    // Debian declares the two obsolete_ ones; sockets.cil covers the other two.
    assert!(
        checked >= 2,
        "Debian's default policy declares only {checked} retired classes"
    );
    assert!(
        !NOT_SOCKETS.iter().any(|c| is_socket_class(c)),
        "the testkit's socket test agrees"
    );
    let tcp = g.class("tcp_socket").unwrap();
    let got = g
        .sid_to_context(g.compute_create(src, tgt, tcp, None).unwrap())
        .unwrap();
    let f: Vec<&str> = got.split(':').collect();
    assert_eq!((f[1], f[2]), (creator[1], creator[2]), "tcp_socket: {got}");
    assert!(
        is_socket_class("tcp_socket") && is_socket_class("socket") && !is_socket_class("sock_file")
    );
}

/// For the retired classes the kernel and libsepol agree (both label them as files), so the
/// oracle's answers must match ours exactly.
#[test]
fn retired_netlink_classes_agree_with_libsepol() {
    let (Some(oracle), Some(policy)) = (oracle(), debian_policy("default")) else {
        return;
    };
    let server = load(&policy);
    let g = server.snapshot();
    let queries: Vec<String> = gen(&oracle, &policy, 11, 200_000)
        .into_iter()
        .filter(|q| NOT_SOCKETS.contains(&q.rsplit(' ').next().unwrap_or("")))
        .collect();
    assert!(
        queries.len() > 200,
        "only {} queries on the retired classes",
        queries.len()
    );
    for mode in ["create", "relabel", "member"] {
        let (n, shown) = mismatches(&g, &oracle, &policy, mode, &queries, 10);
        assert_eq!(
            n,
            0,
            "{mode}: {n} of {} answers differ from libsepol:\n{}",
            queries.len(),
            shown.join("\n")
        );
    }
}

/// sockets.cil's table: the four retired classes and a vendor class named like a socket are
/// labelled as objects, tcp_socket as a socket; create, relabel and member alike.
#[test]
fn socket_table_of_the_test_policy() {
    for v in versions("sockets") {
        let s = load(&compile("sockets", v));
        let g = s.snapshot();
        let src = sid(&g, "u:app_r:app_t:s0-s0:c0");
        let tgt = sid(&g, "u:object_r:data_t:s0");
        for (class, want) in [
            // A socket gets the creator's full range, an object the creator's low level.
            ("tcp_socket", "u:app_r:app_t:s0-s0:c0"),
            ("netlink_firewall_socket", "u:object_r:data_t:s0"),
            ("netlink_ip6fw_socket", "u:object_r:data_t:s0"),
            ("obsolete_netlink_firewall_socket", "u:object_r:data_t:s0"),
            ("obsolete_netlink_ip6fw_socket", "u:object_r:data_t:s0"),
            ("vendor_socket", "u:object_r:data_t:s0"),
            ("file", "u:object_r:data_t:s0"),
        ] {
            let c = g.class(class).unwrap();
            let got = g
                .sid_to_context(g.compute_create(src, tgt, c, None).unwrap())
                .unwrap();
            assert_eq!(got, want, "create {class} at version {v}");
            let got = g
                .sid_to_context(g.compute_relabel(src, tgt, c).unwrap())
                .unwrap();
            let (role, ty) = if class == "tcp_socket" {
                ("app_r", "app_t")
            } else {
                ("object_r", "data_t")
            };
            assert!(
                got.starts_with(&format!("u:{role}:{ty}:")),
                "relabel {class} at version {v}: {got}"
            );
        }
    }
}
