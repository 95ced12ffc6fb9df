//! The ring buffer's events as the kernel's AVC records (avc_audit): `avc:  denied  { read }
//! for  pid= comm= name= dev= ino= scontext= tcontext= tclass= permissive=`, laid out by the
//! same code as the object manager's records (seaccess_avc::AvcRecord, objmgr's AuditData).
//!
//! One difference from the kernel's text: file_open and exec audit a path
//! (LSM_AUDIT_DATA_PATH / _FILE: `path="/etc/shadow"`), where the event carries the dentry's
//! name alone (`name="shadow"`, as LSM_AUDIT_DATA_DENTRY writes it): BPF's bpf_d_path would
//! give the path, at a cost on every audited check, and the record keeps its fixed size.

use seaccess_avc::AvcRecord;
use seaccess_objmgr::{AuditData, Class};
use seaccess_types::{PolicyNames, Sid};

use crate::layout::{Event, EV_DENIED, EV_GRANTED, EV_MISS};

/// The text of a NUL-terminated byte field.
pub fn field(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// The record of `e` in the kernel's format, the contexts named by `names` (the generation the
/// event was decided in; None writes them as numbers). A miss is written as a denial of
/// every requested permission, which is what it was.
pub fn render(e: &Event, names: Option<&dyn PolicyNames>) -> String {
    let class = Class(u16::try_from(e.tclass).unwrap_or(u16::MAX));
    let perms = class.def().map_or(&[][..], |d| d.perms);
    let mut named = Vec::new();
    let mut unknown = 0u32;
    for bit in 0..32 {
        if e.audited & (1 << bit) != 0 {
            match perms.get(bit) {
                Some(p) => named.push(*p),
                None => unknown |= 1 << bit,
            }
        }
    }
    let name = field(&e.name);
    let dev = field(&e.dev_name);
    let data = if e.ino != 0 {
        AuditData::Inode {
            name: (!name.is_empty()).then_some(name.as_str()),
            dev: &dev,
            ino: e.ino,
        }
    } else {
        AuditData::None
    };
    let aux = data.render(e.pid, &field(&e.comm));
    AvcRecord {
        denied: e.kind == EV_DENIED || e.kind == EV_MISS,
        permissive: e.permissive != 0,
        aux: Some(&aux),
        names,
        ssid: Sid(e.ssid),
        tsid: Sid(e.tsid),
        tclass: class.name(),
    }
    .render(named, unknown)
}

/// What kind of event `e` is, in a word.
pub fn kind(e: &Event) -> &'static str {
    match e.kind {
        EV_DENIED => "denied",
        EV_GRANTED => "granted",
        EV_MISS => "miss",
        _ => "?",
    }
}
