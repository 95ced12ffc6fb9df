//! The audit data a hook hands to its check, rendered as the kernel's lsm_audit.c renders it
//! (dump_common_audit_data) between `for ` and `scontext=`: `pid=` and `comm=`, then the fields
//! of the data's type. It is rendered only when a record is written, so a check that is not
//! audited pays nothing for it.

use std::fmt::Write;

/// What an audit record says about the object of a check (the kernel's common_audit_data).
#[derive(Clone, Debug, Default)]
pub enum AuditData<'a> {
    /// Nothing beyond pid and comm.
    #[default]
    None,
    /// An inode reached through a directory entry or an alias (LSM_AUDIT_DATA_DENTRY and
    /// _INODE): `name= dev= ino=`.
    Inode {
        name: Option<&'a str>,
        dev: &'a str,
        ino: u64,
    },
    /// A directory entry (LSM_AUDIT_DATA_DENTRY): `name=`, then `dev= ino=` only when the entry
    /// has an inode (a name being created has none).
    Dentry {
        name: &'a str,
        inode: Option<(&'a str, u64)>,
    },
    /// An inode reached through a path or an open file (LSM_AUDIT_DATA_PATH and _FILE):
    /// `path= dev= ino=`.
    Path {
        path: &'a str,
        dev: &'a str,
        ino: u64,
    },
    /// An ioctl on an open file (LSM_AUDIT_DATA_IOCTL_OP): `path= dev= ino=`; the cache adds
    /// `ioctlcmd=`.
    Ioctl {
        path: &'a str,
        dev: &'a str,
        ino: u64,
    },
    /// A socket (LSM_AUDIT_DATA_NET): local and foreign addresses and ports where known, or an
    /// AF_UNIX socket's path.
    Net {
        laddr: Option<std::net::IpAddr>,
        lport: Option<u16>,
        faddr: Option<std::net::IpAddr>,
        fport: Option<u16>,
        path: Option<&'a str>,
    },
    /// A bind or connect address without a socket (LSM_AUDIT_DATA_NET with no sk, as
    /// name_bind, node_bind and name_connect give it): `saddr= src= daddr= dest=`, each
    /// where known.
    NetAddr {
        saddr: Option<std::net::IpAddr>,
        src: Option<u16>,
        daddr: Option<std::net::IpAddr>,
        dest: Option<u16>,
    },
    /// A capability (LSM_AUDIT_DATA_CAP): `capability=`.
    Cap(u32),
    /// A task acted on (LSM_AUDIT_DATA_TASK): `opid= ocomm=`.
    Task { pid: u32, comm: &'a str },
    /// A System V IPC object (LSM_AUDIT_DATA_IPC): its key, as `ipc_key=` (the field was
    /// `key=` until Linux 5.14 renamed it, as it clashed with the audit rule key).
    Ipc { key: i32 },
    /// A netlink message checked with an extended permission (LSM_AUDIT_DATA_NLMSGTYPE):
    /// `nl-msgtype=`.
    Nlmsg { ty: u16 },
}

/// Appends ` key=value` with the value as the kernel's audit_log_untrustedstring writes it:
/// quoted, or in upper-case hex when it holds a quote, a space, a control character or a byte
/// outside printable ASCII (so that a name cannot forge fields).
pub fn untrusted(out: &mut String, key: &str, value: &str) {
    let b = value.as_bytes();
    out.push(' ');
    out.push_str(key);
    out.push('=');
    if b.iter().any(|&c| c == b'"' || !(0x21..=0x7e).contains(&c)) {
        for c in b {
            let _ = write!(out, "{c:02X}");
        }
    } else {
        out.push('"');
        out.push_str(value);
        out.push('"');
    }
}

impl AuditData<'_> {
    /// The text between `for ` and ` scontext=`, for the task `pid`/`comm` (without the leading
    /// space the cache's record adds).
    pub fn render(&self, pid: u32, comm: &str) -> String {
        let mut s = format!("pid={pid}");
        untrusted(&mut s, "comm", comm);
        match self {
            AuditData::None => {}
            AuditData::Inode { name, dev, ino } => {
                if let Some(n) = name {
                    untrusted(&mut s, "name", n);
                }
                untrusted(&mut s, "dev", dev);
                let _ = write!(s, " ino={ino}");
            }
            AuditData::Dentry { name, inode } => {
                untrusted(&mut s, "name", name);
                if let Some((dev, ino)) = inode {
                    untrusted(&mut s, "dev", dev);
                    let _ = write!(s, " ino={ino}");
                }
            }
            AuditData::Path { path, dev, ino } | AuditData::Ioctl { path, dev, ino } => {
                untrusted(&mut s, "path", path);
                untrusted(&mut s, "dev", dev);
                let _ = write!(s, " ino={ino}");
            }
            AuditData::Net {
                laddr,
                lport,
                faddr,
                fport,
                path,
            } => {
                if let Some(p) = path {
                    untrusted(&mut s, "path", p);
                }
                if let Some(a) = laddr {
                    let _ = write!(s, " laddr={a}");
                }
                if let Some(p) = lport {
                    let _ = write!(s, " lport={p}");
                }
                if let Some(a) = faddr {
                    let _ = write!(s, " faddr={a}");
                }
                if let Some(p) = fport {
                    let _ = write!(s, " fport={p}");
                }
            }
            AuditData::NetAddr {
                saddr,
                src,
                daddr,
                dest,
            } => {
                for (k, v) in [
                    ("saddr", saddr.map(|a| a.to_string())),
                    ("src", src.map(|p| p.to_string())),
                    ("daddr", daddr.map(|a| a.to_string())),
                    ("dest", dest.map(|p| p.to_string())),
                ] {
                    if let Some(v) = v {
                        let _ = write!(s, " {k}={v}");
                    }
                }
            }
            AuditData::Cap(c) => {
                // The kernel's format ends with a space, so records have two before scontext=.
                let _ = write!(s, " capability={c} ");
            }
            AuditData::Task { pid, comm } => {
                let _ = write!(s, " opid={pid}");
                untrusted(&mut s, "ocomm", comm);
            }
            AuditData::Ipc { key } => {
                // As capability=, the kernel's format ends with a space.
                let _ = write!(s, " ipc_key={key} ");
            }
            AuditData::Nlmsg { ty } => {
                let _ = write!(s, " nl-msgtype={ty}");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untrusted_strings_are_quoted_or_hex_encoded_as_the_kernel_does() {
        let d = AuditData::Inode {
            name: Some("shadow"),
            dev: "sda1",
            ino: 42,
        };
        assert_eq!(
            d.render(7, "cat"),
            r#"pid=7 comm="cat" name="shadow" dev="sda1" ino=42"#
        );
        let d = AuditData::Inode {
            name: Some("a b"),
            dev: "sda1",
            ino: 1,
        };
        assert_eq!(
            d.render(7, "c\"t"),
            r#"pid=7 comm=632274 name=612062 dev="sda1" ino=1"#
        );
    }
}
