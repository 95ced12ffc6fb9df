//! The socket hooks on Debian's default policy: each answer compared with what the security
//! server says of the same triples, in the kernel's order of checks (hooks.c
//! selinux_socket_create, __selinux_socket_bind, selinux_socket_connect_helper). Nothing is
//! hard-coded: the expected answers are derived at test time.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::sync::Arc;

use seaccess_objmgr::hooks::socket::{family, sock_type, PortRanges, SockAddr};
use seaccess_objmgr::{Cred, ObjectManager, Task};
use seaccess_types::{LabelServer, PolicyNames};

#[test]
fn debian_bind_and_connect_agree_with_the_security_server() {
    let Some(path) = seaccess_testkit::debian_policy("default") else {
        return;
    };
    let (server, avc) = seaccess_testkit::server_with_avc(&path, 4096);
    let om = ObjectManager::new(server.clone(), &*server, avc.clone());
    let log = seaccess_testkit::audit_recorder(&avc);
    let g = server.snapshot();
    let tcp = g.class_id("tcp_socket").unwrap();
    let ranges = PortRanges::default();
    let (mut allowed, mut refused, mut labelled) = (0, 0, 0);
    for dom in [
        "httpd_t",
        "sshd_t",
        "user_t",
        "unconfined_t",
        "init_t",
        "ntpd_t",
    ] {
        let Ok(tsid) = std::panic::catch_unwind(|| seaccess_testkit::subject(&g, dom)) else {
            continue;
        };
        let t = Task::new(100, "d", Cred::new(tsid));
        for port in [22u16, 80, 443, 8080, 5432, 40000, 61000] {
            let ssid = LabelServer::transition_sid(&*server, tsid, tsid, tcp, None).unwrap();
            let psid = server.snapshot().port_sid(6, port);
            if psid != g.initial_sid(9).unwrap() {
                labelled += 1;
            }
            let nsid = server.snapshot().node_sid("0.0.0.0".parse().unwrap());
            let expect_create =
                seaccess_testkit::passes(&server, tsid, ssid, "tcp_socket", "create");
            let sock = om.socket_create(&t, family::INET, sock_type::STREAM, 0, false);
            assert_eq!(sock.is_ok(), expect_create, "{dom} create");
            let Ok(sock) = sock else { continue };
            assert_eq!(sock.sid(), ssid);
            let expect_bind = seaccess_testkit::passes(&server, tsid, ssid, "tcp_socket", "bind")
                && (!ranges.asks_name_bind(port)
                    || seaccess_testkit::passes(&server, ssid, psid, "tcp_socket", "name_bind"))
                && seaccess_testkit::passes(&server, ssid, nsid, "tcp_socket", "node_bind");
            let got = om.socket_bind(
                &t,
                &sock,
                &SockAddr::Inet(format!("0.0.0.0:{port}").parse().unwrap()),
            );
            assert_eq!(got.is_ok(), expect_bind, "{dom} bind {port}");
            let expect_connect =
                seaccess_testkit::passes(&server, tsid, ssid, "tcp_socket", "connect")
                    && seaccess_testkit::passes(&server, ssid, psid, "tcp_socket", "name_connect");
            let s2 = om
                .socket_create(&t, family::INET, sock_type::STREAM, 0, false)
                .unwrap();
            let got = om.socket_connect(
                &t,
                &s2,
                &SockAddr::Inet(format!("10.0.0.1:{port}").parse().unwrap()),
            );
            assert_eq!(got.is_ok(), expect_connect, "{dom} connect {port}");
            for ok in [expect_bind, expect_connect] {
                if ok {
                    allowed += 1
                } else {
                    refused += 1
                }
            }
        }
    }
    assert!(
        allowed > 0 && refused > 0 && labelled > 0,
        "{allowed} allowed, {refused} refused, {labelled} labelled ports"
    );
    // Every refusal was audited in the kernel's format, naming the socket's class.
    let records = log.lock().unwrap();
    assert!(
        records
            .iter()
            .filter(|r| r.starts_with("avc:  denied  {"))
            .count()
            >= 1
    );
    assert!(records
        .iter()
        .filter(|r| r.starts_with("avc:  denied  {"))
        .all(|r| r.contains(" tclass=tcp_socket permissive=")));
    let _ = Arc::clone(&avc);
}
