//! AVC records as the kernel and userspace object managers write them, read from a kernel log
//! (`dmesg`, `journalctl -k`) or an audit.log, as audit2why and audit2allow read them
//! (sepolgen's audit.py): an AVC message is the text after `avc:`, `granted` or `denied`, the
//! permissions in braces, then `key=value` fields (values bare or in double quotes) of which
//! scontext, tcontext and tclass are required. The record types read are AVC (`type=AVC` or
//! the kernel's `type=1400`) and USER_AVC (`type=USER_AVC`, `type=1107`), whose AVC message is
//! inside `msg='...'`; a line without `avc:` is not an AVC record and is skipped. A line that
//! is an AVC record but cannot be read is an error naming the line, and reading goes on.

use crate::ToolsError;

/// Which kind of record the line held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The kernel's AVC message (`type=AVC`, `type=1400`, or a bare `avc:` line of a kernel log).
    Avc,
    /// A userspace object manager's (`type=USER_AVC`, `type=1107`).
    UserAvc,
}

/// One AVC record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AvcRecord {
    /// The line it was read from, 1-based.
    pub line: usize,
    pub kind: Kind,
    /// `denied` (true) or `granted` (false).
    pub denied: bool,
    /// The permissions in braces, in the record's order.
    pub perms: Vec<String>,
    pub scontext: String,
    pub tcontext: String,
    pub tclass: String,
    /// `permissive=1` or `permissive=0`, where the record says.
    pub permissive: Option<bool>,
    /// The record's `audit(TIME:SERIAL)` stamp, where it has one.
    pub stamp: Option<String>,
    /// Every other field, as written (quotes removed), in the record's order.
    pub fields: Vec<(String, String)>,
}

/// The type field of a record's context (`user:role:type[:range]`), as sepolgen reads it: what
/// audit2allow's rules and a replay's allow rules are written with.
pub fn context_type(context: &str) -> &str {
    context.split(':').nth(2).unwrap_or(context)
}

/// Every AVC record of `text`, in order: each read, or the error for its line. Lines that
/// hold no AVC message are skipped.
pub fn read(text: &str) -> Vec<Result<AvcRecord, ToolsError>> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| read_line(i + 1, l))
        .collect()
}

/// The AVC record of one line, if it holds one.
pub fn read_line(line: usize, text: &str) -> Option<Result<AvcRecord, ToolsError>> {
    let kind = if has_type(text, &["USER_AVC", "1107"]) {
        Kind::UserAvc
    } else {
        Kind::Avc
    };
    let at = find_avc(text)?;
    let body = &text[at + "avc:".len()..];
    let body = match kind {
        // The AVC message ends where the msg='...' it sits in does.
        Kind::UserAvc => body.find('\'').map_or(body, |end| &body[..end]),
        Kind::Avc => body,
    };
    Some(parse(line, kind, stamp(text), body))
}

/// Whether the line says it is an audit record of one of `types` (`type=NAME`, the name or
/// number, as auditd and the kernel write them).
fn has_type(text: &str, types: &[&str]) -> bool {
    text.split_whitespace()
        .any(|w| w.strip_prefix("type=").is_some_and(|t| types.contains(&t)))
}

/// Where the AVC message starts: the first `avc:` that begins a word (so that a path or
/// command line containing "avc:" inside a word does not count).
fn find_avc(text: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = text[from..].find("avc:") {
        let at = from + i;
        let before = text[..at].chars().next_back();
        if before.is_none_or(|c| c.is_whitespace() || c == '\'' || c == ':') {
            return Some(at);
        }
        from = at + "avc:".len();
    }
    None
}

/// The `audit(TIME:SERIAL)` stamp of a record.
fn stamp(text: &str) -> Option<String> {
    let i = text.find("audit(")?;
    let rest = &text[i + "audit(".len()..];
    let end = rest.find(')')?;
    Some(rest[..end].to_string())
}

fn parse(
    line: usize,
    kind: Kind,
    stamp: Option<String>,
    body: &str,
) -> Result<AvcRecord, ToolsError> {
    let err = |what: String| ToolsError::Record { line, what };
    let rest = body.trim_start();
    let (denied, rest) = if let Some(r) = rest.strip_prefix("denied") {
        (true, r)
    } else if let Some(r) = rest.strip_prefix("granted") {
        (false, r)
    } else {
        return Err(err(format!(
            "an avc message must say denied or granted, not {:?}",
            first_word(rest)
        )));
    };
    let rest = rest.trim_start();
    let rest = rest.strip_prefix('{').ok_or_else(|| {
        err("an avc message's permissions must be in braces after denied or granted".into())
    })?;
    let close = rest
        .find('}')
        .ok_or_else(|| err("the permissions' braces are not closed".into()))?;
    let perms: Vec<String> = rest[..close]
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if perms.is_empty() {
        return Err(err("no permission between the braces".into()));
    }
    let mut rest = rest[close + 1..].trim_start();
    rest = rest.strip_prefix("for").map_or(rest, str::trim_start);
    let fields = fields(rest).map_err(err)?;
    let take = |k: &str| fields.iter().rfind(|(n, _)| n == k).map(|(_, v)| v.clone());
    let need = |k: &str| {
        take(k)
            .filter(|v| !v.is_empty())
            .ok_or_else(|| err(format!("the avc message has no {k}")))
    };
    let (scontext, tcontext, tclass) = (need("scontext")?, need("tcontext")?, need("tclass")?);
    let permissive = match take("permissive").as_deref() {
        None => None,
        Some("0") => Some(false),
        Some("1") => Some(true),
        Some(v) => return Err(err(format!("permissive={v}: expected 0 or 1"))),
    };
    let fields = fields
        .into_iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "scontext" | "tcontext" | "tclass" | "permissive"
            )
        })
        .collect();
    Ok(AvcRecord {
        line,
        kind,
        denied,
        perms,
        scontext,
        tcontext,
        tclass,
        permissive,
        stamp,
        fields,
    })
}

fn first_word(s: &str) -> &str {
    s.split_whitespace().next().unwrap_or("")
}

/// The `key=value` fields of an AVC message: values bare (up to white space) or in double
/// quotes; words without `=` (as the kernel's "for") are skipped.
fn fields(mut s: &str) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    loop {
        s = s.trim_start();
        if s.is_empty() {
            return Ok(out);
        }
        let word_end = s
            .find(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or(s.len());
        let key = &s[..word_end];
        s = &s[word_end..];
        let Some(v) = s.strip_prefix('=') else {
            continue;
        };
        let (value, rest) = match v.strip_prefix('"') {
            Some(q) => {
                let end = q
                    .find('"')
                    .ok_or_else(|| format!("{key}'s quoted value is not closed"))?;
                (&q[..end], &q[end + 1..])
            }
            None => {
                let end = v.find(char::is_whitespace).unwrap_or(v.len());
                (&v[..end], &v[end..])
            }
        };
        if key.is_empty() {
            return Err(format!("a value {value:?} without a name"));
        }
        out.push((key.to_string(), value.to_string()));
        s = rest;
    }
}

#[cfg(test)]
#[allow(clippy::panic)]
mod tests {
    use super::*;

    fn one(text: &str) -> AvcRecord {
        match read(text).as_slice() {
            [Ok(r)] => r.clone(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_audit_log_avc_record() {
        let r = one(
            r#"type=AVC msg=audit(1700000000.123:456): avc:  denied  { read write } for  pid=1234 comm="httpd" name="shadow" dev="sda1" ino=42 scontext=system_u:system_r:httpd_t:s0 tcontext=system_u:object_r:shadow_t:s0 tclass=file permissive=0"#,
        );
        assert_eq!(
            (r.kind, r.denied, r.perms.clone()),
            (
                Kind::Avc,
                true,
                vec!["read".to_string(), "write".to_string()]
            )
        );
        assert_eq!(
            (r.scontext.as_str(), r.tcontext.as_str(), r.tclass.as_str()),
            (
                "system_u:system_r:httpd_t:s0",
                "system_u:object_r:shadow_t:s0",
                "file"
            )
        );
        assert_eq!(
            (r.permissive, r.stamp.as_deref(), r.line),
            (Some(false), Some("1700000000.123:456"), 1)
        );
        assert!(
            r.fields.contains(&("comm".into(), "httpd".into()))
                && r.fields.contains(&("ino".into(), "42".into()))
        );
    }

    #[test]
    fn a_kernel_log_line_and_a_granted_record() {
        let r = one("[ 12.345678] audit: type=1400 audit(1700000000.1:7): avc:  granted  { setenforce } for  pid=1 comm=\"load\" scontext=u:r:t:s0 tcontext=u:r:t:s0 tclass=security");
        assert_eq!((r.kind, r.denied, r.permissive), (Kind::Avc, false, None));
        let r = one("avc:  denied  { search } for  pid=9 comm=\"a b\" scontext=u:r:t:s0 tcontext=u:object_r:x_t:s0 tclass=dir permissive=1");
        assert_eq!((r.permissive, r.fields[1].1.as_str()), (Some(true), "a b"));
    }

    #[test]
    fn a_user_avc_record() {
        let r = one("type=USER_AVC msg=audit(1700000000.5:9): pid=1 uid=0 auid=4294967295 ses=4294967295 subj=system_u:system_r:init_t:s0 msg='avc:  denied  { status } for auid=0 uid=0 gid=0 path=\"/lib/systemd/system/x.service\" cmdline=\"systemctl status x\" scontext=unconfined_u:unconfined_r:unconfined_t:s0 tcontext=system_u:object_r:systemd_unit_file_t:s0 tclass=service exe=\"/usr/lib/systemd/systemd\" sauid=0 hostname=? addr=? terminal=?'");
        assert_eq!(
            (r.kind, r.tclass.as_str(), r.perms.clone()),
            (Kind::UserAvc, "service", vec!["status".to_string()])
        );
        assert!(
            !r.fields.iter().any(|(k, _)| k == "subj"),
            "the outer record's fields are not the avc message's"
        );
    }

    #[test]
    fn other_records_are_skipped_and_bad_ones_named_by_line() {
        let text = "type=SYSCALL msg=audit(1.2:3): arch=c000003e syscall=2 success=no\n\
                    type=AVC msg=audit(1.2:3): avc:  denied  { read } for pid=1 tcontext=a:b:c:s0 tclass=file\n\
                    type=AVC msg=audit(1.2:4): avc:  denied  { read } for pid=1 scontext=a:b:c:s0 tcontext=a:b:c:s0 tclass=file\n\
                    type=AVC msg=audit(1.2:5): avc:  refused  { read } for scontext=a tcontext=b tclass=file\n\
                    type=AVC msg=audit(1.2:6): avc:  denied  read for scontext=a tcontext=b tclass=file\n\
                    type=AVC msg=audit(1.2:7): avc:  denied  { } for scontext=a tcontext=b tclass=file\n\
                    type=AVC msg=audit(1.2:8): avc:  denied  { read } for comm=\"x scontext=a tcontext=b tclass=file\n\
                    type=AVC msg=audit(1.2:9): avc:  denied  { read } for scontext=a tcontext=b tclass=file permissive=2\n\
                    path=/srv/avc:x is not a record";
        let got: Vec<Result<usize, String>> = read(text)
            .into_iter()
            .map(|r| r.map(|r| r.line).map_err(|e| e.to_string()))
            .collect();
        assert_eq!(
            got,
            vec![
                Err("line 2: the avc message has no scontext".into()),
                Ok(3),
                Err("line 4: an avc message must say denied or granted, not \"refused\"".into()),
                Err("line 5: an avc message's permissions must be in braces after denied or granted".into()),
                Err("line 6: no permission between the braces".into()),
                Err("line 7: comm's quoted value is not closed".into()),
                Err("line 8: permissive=2: expected 0 or 1".into()),
            ]
        );
    }
}
