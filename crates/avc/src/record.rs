//! The kernel-format AVC audit record, built in one place for every writer: the cache
//! ([`crate::Avc::audit_record`]), the object manager's records of its own classes, and the
//! engine above them. The kernel writes it in avc.c (avc_audit_pre_callback, then the
//! lsm_audit.c data, then avc_audit_post_callback):
//!
//! ```text
//! avc:  denied  { read write } for  pid=7 comm="cat" name="shadow" dev="sda1" ino=42 scontext=S tcontext=T tclass=file permissive=0
//! ```
//!
//! audit2allow and audit2why read this text, and tests compare it byte for byte, so its shape
//! (the doubled spaces included) lives here only.

use seaccess_types::{PolicyNames, Sid};

/// One AVC record but its permissions (see [`AvcRecord::render`]). The names it is given must
/// be those of the generation that made the decision: a record names what was decided.
#[derive(Clone, Copy)]
pub struct AvcRecord<'a> {
    /// A denial (`denied`, followed by `permissive=`) or an audited grant (`granted`).
    pub denied: bool,
    /// For a denial: whether the access went through anyway (`permissive=1`: permissive mode
    /// or a permissive domain). Not written for a grant, as the kernel does not.
    pub permissive: bool,
    /// What the kernel's lsm_audit.c writes between `for ` and `scontext=` (`pid= comm=` and
    /// the object's fields), if anything.
    pub aux: Option<&'a str>,
    /// The names of the decision's generation, None when none are left: the contexts are then
    /// written as numbers (`ssid=N tsid=N`).
    pub names: Option<&'a dyn PolicyNames>,
    /// The subject.
    pub ssid: Sid,
    /// The object.
    pub tsid: Sid,
    /// The class's name as `tclass=` writes it (`class=N` when the generation cannot name it).
    pub tclass: &'a str,
}

impl AvcRecord<'_> {
    /// The record's text, listing `perms` (names, in the order given), then the bits of
    /// `unknown` no name was found for as one hexadecimal number (`{ read 0x8 }`), as the
    /// kernel's avc_dump_av writes an unnamed remainder.
    pub fn render<S: AsRef<str>>(
        &self,
        perms: impl IntoIterator<Item = S>,
        unknown: u32,
    ) -> String {
        let mut line = String::with_capacity(160);
        line.push_str(if self.denied {
            "avc:  denied  {"
        } else {
            "avc:  granted  {"
        });
        for p in perms {
            line.push(' ');
            line.push_str(p.as_ref());
        }
        if unknown != 0 {
            line.push_str(&format!(" {unknown:#x}"));
        }
        line.push_str(" } for ");
        if let Some(a) = self.aux {
            line.push(' ');
            line.push_str(a);
        }
        let (ids, raw) = audit_contexts(self.names, self.ssid, self.tsid);
        line.push_str(&ids);
        line.push_str(" tclass=");
        line.push_str(self.tclass);
        if self.denied {
            line.push_str(if self.permissive {
                " permissive=1"
            } else {
                " permissive=0"
            });
        }
        line.push_str(&raw);
        line
    }
}

/// The subject and target of an audit record as the kernel's avc_audit_post_callback writes
/// them, with `names` (None: no names left for the decision's policy): ` scontext=S
/// tcontext=T`, a SID security_sid_to_context cannot name written ` ssid=N` / ` tsid=N`; and,
/// to go after `tclass=` and `permissive=`, ` srawcon=` / ` trawcon=` with the text of a SID
/// kept for a context the policy does not define (security_sid_to_context_inval, as
/// audit_log_n_untrustedstring writes it), or nothing.
pub fn audit_contexts(names: Option<&dyn PolicyNames>, ssid: Sid, tsid: Sid) -> (String, String) {
    let mut ids = String::new();
    let mut raw = String::new();
    for (sid, ctx_key, sid_key, raw_key) in [
        (ssid, "scontext", "ssid", "srawcon"),
        (tsid, "tcontext", "tsid", "trawcon"),
    ] {
        match names.and_then(|n| n.sid_to_context(sid)) {
            Some(c) => ids.push_str(&format!(" {ctx_key}={c}")),
            None => ids.push_str(&format!(" {sid_key}={}", sid.0)),
        }
        if let Some(text) = names.and_then(|n| n.sid_to_context_inval(sid)) {
            raw.push_str(&format!(" {raw_key}="));
            let b = text.as_bytes();
            if b.iter().any(|&c| c == b'"' || !(0x21..=0x7e).contains(&c)) {
                for c in b {
                    raw.push_str(&format!("{c:02X}"));
                }
            } else {
                raw.push('"');
                raw.push_str(&text);
                raw.push('"');
            }
        }
    }
    (ids, raw)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
    use super::*;
    use seaccess_types::{ClassId, Seqno};

    struct Names;
    impl PolicyNames for Names {
        fn seqno(&self) -> Seqno {
            Seqno(1)
        }
        fn class_id(&self, _: &str) -> Option<ClassId> {
            None
        }
        fn perm_bit(&self, _: ClassId, _: &str) -> Option<u32> {
            None
        }
        fn class_name(&self, _: ClassId) -> Option<String> {
            None
        }
        fn perm_name(&self, _: ClassId, _: u32) -> Option<String> {
            None
        }
        fn sid_to_context(&self, sid: Sid) -> Option<String> {
            (sid.0 == 1).then(|| "u:r:t:s0".to_string())
        }
        fn sid_to_context_inval(&self, sid: Sid) -> Option<String> {
            (sid.0 == 2).then(|| "bad ctx".to_string())
        }
    }

    // The kernel's text, as the records the cache and the object manager wrote before this
    // builder existed (crates/testkit/tests/avc.rs and the objmgr tests compare whole lines).
    #[test]
    fn the_kernels_shape_with_and_without_audit_data() {
        let r = AvcRecord {
            denied: true,
            permissive: false,
            aux: Some("pid=7 comm=\"cat\""),
            names: Some(&Names),
            ssid: Sid(1),
            tsid: Sid(1),
            tclass: "file",
        };
        assert_eq!(
            r.render(["read", "write"], 0),
            "avc:  denied  { read write } for  pid=7 comm=\"cat\" scontext=u:r:t:s0 tcontext=u:r:t:s0 tclass=file permissive=0"
        );
        let g = AvcRecord {
            denied: false,
            aux: None,
            ..r
        };
        assert_eq!(
            g.render(["read"], 0x8),
            "avc:  granted  { read 0x8 } for  scontext=u:r:t:s0 tcontext=u:r:t:s0 tclass=file"
        );
        let raw = AvcRecord {
            permissive: true,
            tsid: Sid(2),
            aux: None,
            ..r
        };
        assert_eq!(
            raw.render(["read"], 0),
            "avc:  denied  { read } for  scontext=u:r:t:s0 tsid=2 tclass=file permissive=1 trawcon=62616420637478"
        );
        let none = AvcRecord {
            names: None,
            aux: None,
            ..r
        };
        assert_eq!(
            none.render(Vec::<String>::new(), 0x1),
            "avc:  denied  { 0x1 } for  ssid=1 tsid=1 tclass=file permissive=0"
        );
    }
}
