use std::os::unix::net::UnixDatagram;
use std::time::Duration;

use super::*;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("seaccess-audit-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `<PRI>TAG[PID]: MSG` split: (PRI, TAG, PID, MSG).
fn parse(dgram: &str) -> (u8, &str, u32, &str) {
    let rest = dgram.strip_prefix('<').unwrap();
    let (pri, rest) = rest.split_once('>').unwrap();
    let (tag, rest) = rest.split_once('[').unwrap();
    let (pid, msg) = rest.split_once("]: ").unwrap();
    (pri.parse().unwrap(), tag, pid.parse().unwrap(), msg)
}

const DENIAL: &str = "avc:  denied  { read } for  pid=1 comm=\"cat\" scontext=a_u:r:a_t:s0 \
                      tcontext=b_u:object_r:b_t:s0 tclass=file permissive=0";

#[test]
fn syslog_and_audit_are_special_values_and_anything_else_a_file() {
    assert_eq!(AuditTarget::parse("syslog"), AuditTarget::Syslog);
    assert_eq!(AuditTarget::parse("audit"), AuditTarget::Kernel);
    assert_eq!(
        AuditTarget::parse("./syslog"),
        AuditTarget::File("./syslog".into())
    );
    assert_eq!(
        AuditTarget::parse("/var/log/syslog"),
        AuditTarget::File("/var/log/syslog".into())
    );
    // Passed down in the environment, each reads back as itself; a file named syslog as
    // ./syslog, the same file.
    for t in [
        AuditTarget::Syslog,
        AuditTarget::Kernel,
        AuditTarget::File("/tmp/a.log".into()),
    ] {
        assert_eq!(AuditTarget::parse(t.value().unwrap()), t);
    }
    for name in ["syslog", "audit"] {
        let v = AuditTarget::File(name.into()).value().unwrap();
        assert_eq!(v, format!("./{name}").as_str());
        assert_eq!(
            AuditTarget::parse(v),
            AuditTarget::File(format!("./{name}").into())
        );
    }
    assert_eq!(AuditTarget::Stderr.value(), None);
}

/// A denial reaches a listener as one datagram: auth.notice, the tag and this process's pid,
/// then the whole audit.log line with the record's text unchanged.
#[test]
fn a_record_is_one_syslog_datagram() {
    let d = scratch("dgram");
    let listener = UnixDatagram::bind(d.join("log")).unwrap();
    listener
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let sink = AuditSink::syslog_at(d.join("log")).unwrap();
    sink.avc(DENIAL);
    sink.avc("op=security_compute_sid invalid_context=x");
    let mut buf = vec![0u8; 4096];
    let n = listener.recv(&mut buf).unwrap();
    let dgram = std::str::from_utf8(&buf[..n]).unwrap();
    let (pri, tag, pid, msg) = parse(dgram);
    assert_eq!(pri, 4 * 8 + 5, "auth.notice: {dgram}");
    assert_eq!(tag, "seaccess");
    assert_eq!(pid, std::process::id());
    let (head, text) = msg.split_once("): ").unwrap();
    assert!(head.starts_with("type=AVC msg=audit("), "{msg}");
    assert!(head.ends_with(":1"), "the first record's serial: {msg}");
    assert_eq!(text, DENIAL);
    let n = listener.recv(&mut buf).unwrap();
    let (_, _, _, msg) = parse(std::str::from_utf8(&buf[..n]).unwrap());
    assert!(msg.starts_with("type=SELINUX_ERR msg=audit("), "{msg}");
    assert!(msg.contains(":2): op=security_compute_sid"), "{msg}");
    assert_eq!(sink.lost(), 0);
    let _ = std::fs::remove_dir_all(&d);
}

/// No listener: every record is lost and counted, none panics or waits.
#[test]
fn records_no_log_takes_are_counted_lost() {
    let d = scratch("missing");
    let sink = AuditSink::syslog_at(d.join("log")).unwrap();
    for _ in 0..3 {
        sink.avc(DENIAL);
    }
    assert_eq!(sink.lost(), 3);
    assert_eq!(
        sink.lost_note().as_deref(),
        Some("3 audit records were lost (not taken by --audit-log's destination)")
    );
    assert_eq!(AuditSink::stderr().lost_note(), None);
    // A socket nobody reads any more (the daemon gone, its socket file left).
    drop(UnixDatagram::bind(d.join("gone")).unwrap());
    let sink = AuditSink::syslog_at(d.join("gone")).unwrap();
    sink.avc(DENIAL);
    assert_eq!(sink.lost(), 1);
    let _ = std::fs::remove_dir_all(&d);
}

/// A listener that never reads: its queue fills, and the records past it are lost instead of
/// blocking the writer (a blocking send would hang this test); every record is either
/// received or counted.
#[test]
fn a_full_log_queue_loses_records_without_blocking() {
    let d = scratch("full");
    let listener = UnixDatagram::bind(d.join("log")).unwrap();
    let sink = AuditSink::syslog_at(d.join("log")).unwrap();
    const N: u64 = 5000;
    for _ in 0..N {
        sink.avc(DENIAL);
    }
    listener.set_nonblocking(true).unwrap();
    let mut got = 0;
    let mut buf = vec![0u8; 4096];
    while listener.recv(&mut buf).is_ok() {
        got += 1;
    }
    assert!(sink.lost() > 0, "the queue never filled ({got} received)");
    assert_eq!(got + sink.lost(), N);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_unopenable_file_is_an_error_naming_it() {
    let d = scratch("file");
    let p = d.join("no/such/dir/audit.log");
    let e = AuditSink::open(&AuditTarget::File(p.clone()))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains(&p.display().to_string()), "{e}");
    let p = d.join("audit.log");
    let sink = AuditSink::open(&AuditTarget::File(p.clone())).unwrap();
    sink.avc(DENIAL);
    sink.record("MAC_STATUS", "enforcing=0 old_enforcing=1\n");
    let text = std::fs::read_to_string(&p).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("type=AVC msg=audit(") && lines[0].ends_with(DENIAL));
    assert!(lines[1].starts_with("type=MAC_STATUS msg=audit(") && lines[1].contains(":2): "));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn the_executable_is_quoted_or_hex_as_libaudit_writes_it() {
    assert_eq!(kernel::encode(b"/usr/bin/cat"), "\"/usr/bin/cat\"");
    assert_eq!(kernel::encode(b"/tmp/a b"), "2F746D702F612062");
    assert_eq!(kernel::encode(b"/x\"y"), "2F782279");
}

/// The kernel audit, read back from its multicast group (what journald reads): a USER_AVC
/// record holding the denial and libaudit's suffix. Needs CAP_AUDIT_WRITE and CAP_AUDIT_READ
/// in the initial user namespace, and a kernel with audit; else it says SKIP.
#[test]
fn a_record_reaches_the_kernel_audit_as_user_avc() {
    use rustix::net::netlink::{self, SocketAddrNetlink};
    use rustix::net::{AddressFamily, RecvFlags, SocketFlags, SocketType};
    let listener = match rustix::net::socket_with(
        AddressFamily::NETLINK,
        SocketType::RAW,
        SocketFlags::CLOEXEC,
        Some(netlink::AUDIT),
    )
    .and_then(|s| rustix::net::bind(&s, &SocketAddrNetlink::new(0, 1)).map(|()| s))
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("SKIP: no audit multicast group to listen to here ({e})");
            return;
        }
    };
    let sink = match AuditSink::open(&AuditTarget::Kernel) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("SKIP: the kernel audit refuses this process: {e}");
            return;
        }
    };
    rustix::net::sockopt::set_socket_timeout(
        &listener,
        rustix::net::sockopt::Timeout::Recv,
        Some(Duration::from_secs(5)),
    )
    .unwrap();
    let marker = format!("comm=\"seaccess-test-{}\"", std::process::id());
    let text = DENIAL.replace("comm=\"cat\"", &marker);
    sink.avc(&text);
    assert_eq!(sink.lost(), 0);
    let mut buf = vec![0u8; 9000];
    loop {
        let (_, n) = rustix::net::recv(&listener, &mut buf[..], RecvFlags::empty())
            .expect("the USER_AVC record within 5 s");
        let kind = u16::from_ne_bytes([buf[4], buf[5]]);
        let body = String::from_utf8_lossy(&buf[16..n]).into_owned();
        if !body.contains(&marker) {
            continue;
        }
        assert_eq!(kind, 1107, "USER_AVC: {body}");
        let exe = std::fs::read_link("/proc/self/exe").unwrap();
        let want = format!(
            "msg='{text} exe={} sauid={} hostname=? addr=? terminal=",
            kernel::encode(std::os::unix::ffi::OsStrExt::as_bytes(exe.as_os_str())),
            rustix::process::getuid().as_raw()
        );
        assert!(body.contains(&want), "{body}\nwants {want}");
        break;
    }
}
