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
//!
//! libselinux's userspace AVC writes the same fields in its own order and spacing (avc.c
//! avc_audit, avc_dump_av, avc_dump_query), and the C library (crates/capi) must write exactly
//! that: [`LibselinuxRecord`], whose permission list and `permissive=` are laid out by the
//! same code as the kernel's.

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
        let mut line = head(self.denied, perms, unknown);
        if let Some(a) = self.aux {
            line.push(' ');
            line.push_str(a);
        }
        let (ids, raw) = audit_contexts(self.names, self.ssid, self.tsid);
        line.push_str(&ids);
        line.push_str(" tclass=");
        line.push_str(self.tclass);
        push_permissive(&mut line, self.denied, self.permissive);
        line.push_str(&raw);
        line
    }
}

/// What both formats open with: `avc:  denied  { read write 0x8 } for `, the permissions
/// named in the order given and the bits no name was found for as one hexadecimal number (the
/// kernel's and libselinux's avc_dump_av agree on this much).
fn head<S: AsRef<str>>(denied: bool, perms: impl IntoIterator<Item = S>, unknown: u32) -> String {
    let mut line = String::with_capacity(160);
    line.push_str(if denied {
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
    line
}

/// A denial's ` permissive=0|1` (whether it went through anyway); a grant has none, in both
/// formats.
fn push_permissive(line: &mut String, denied: bool, permissive: bool) {
    if denied {
        line.push_str(if permissive {
            " permissive=1"
        } else {
            " permissive=0"
        });
    }
}

/// libselinux's audit buffer (avc_internal.h AVC_AUDIT_BUFSIZE): a record is cut to one byte
/// less, its terminating NUL taking the last.
pub const LIBSELINUX_AUDIT_BUFSIZE: usize = 1024;

/// One AVC record in libselinux's text (avc.c avc_audit), as its log callback receives it:
///
/// ```text
/// avc:  denied  { read } for <supplement> scontext=S tcontext=T tclass=file permissive=0
/// ```
///
/// followed by a newline. Unlike the kernel's, the supplement (what the program's audit
/// callback writes) follows `for ` with no space of its own, the contexts are the SIDs' text
/// as the program gave them, an unknown class is `(null)` (glibc's `%s` of NULL), and the whole
/// is cut at [`LIBSELINUX_AUDIT_BUFSIZE`] - 1 bytes as its snprintf calls cut it.
#[derive(Clone, Copy)]
pub struct LibselinuxRecord<'a> {
    /// A denial (`denied`, followed by `permissive=`) or an audited grant (`granted`):
    /// libselinux's `denied || !requested`.
    pub denied: bool,
    /// For a denial: whether the access went through anyway (libselinux writes `permissive=1`
    /// when the check returned 0).
    pub permissive: bool,
    /// The subject's context text.
    pub scontext: &'a str,
    /// The object's context text.
    pub tcontext: &'a str,
    /// The class's name, None when the policy (or the program's class map) has none.
    pub tclass: Option<&'a str>,
}

impl LibselinuxRecord<'_> {
    /// The record's text, listing `perms` then the `unknown` bits as [`AvcRecord::render`]
    /// does (libselinux's avc_dump_av stops naming at the first bit without a name: the caller
    /// passes the names up to it and the rest as `unknown`). `supplement` is the audit
    /// callback, given the room left in the buffer after `for ` (avc_suppl_audit's `len`) and
    /// returning what it wrote.
    pub fn render<S: AsRef<str>>(
        &self,
        perms: impl IntoIterator<Item = S>,
        unknown: u32,
        supplement: impl FnOnce(usize) -> String,
    ) -> String {
        let mut line = head(self.denied, perms, unknown);
        let room = LIBSELINUX_AUDIT_BUFSIZE.saturating_sub(line.len());
        line.push_str(&supplement(room));
        line.push_str(" scontext=");
        line.push_str(self.scontext);
        line.push_str(" tcontext=");
        line.push_str(self.tcontext);
        line.push_str(" tclass=");
        line.push_str(self.tclass.unwrap_or("(null)"));
        push_permissive(&mut line, self.denied, self.permissive);
        line.push('\n');
        if line.len() >= LIBSELINUX_AUDIT_BUFSIZE {
            let mut end = LIBSELINUX_AUDIT_BUFSIZE - 1;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
        }
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

    // libselinux 3.4's avc_audit text: the supplement right after `for `, one space before
    // scontext=, a newline; `(null)` for an unknown class; no permissive= on a grant.
    #[test]
    fn libselinuxs_shape() {
        let r = LibselinuxRecord {
            denied: true,
            permissive: false,
            scontext: "u:r:s:s0",
            tcontext: "u:r:t:s0",
            tclass: Some("file"),
        };
        let mut asked = None;
        let line = r.render(["read", "write"], 0x40, |room| {
            asked = Some(room);
            "pid=7".to_string()
        });
        assert_eq!(
            line,
            "avc:  denied  { read write 0x40 } for pid=7 scontext=u:r:s:s0 tcontext=u:r:t:s0 tclass=file permissive=0\n"
        );
        let head = "avc:  denied  { read write 0x40 } for ";
        assert_eq!(asked, Some(LIBSELINUX_AUDIT_BUFSIZE - head.len()));
        let granted = LibselinuxRecord {
            denied: false,
            tclass: None,
            ..r
        };
        assert_eq!(
            granted.render(["read"], 0, |_| String::new()),
            "avc:  granted  { read } for  scontext=u:r:s:s0 tcontext=u:r:t:s0 tclass=(null)\n"
        );
        let permissive = LibselinuxRecord {
            permissive: true,
            ..r
        };
        assert!(permissive
            .render(["read"], 0, |_| String::new())
            .ends_with(" tclass=file permissive=1\n"));
    }

    // A record past libselinux's buffer is cut to AUDIT_BUFSIZE - 1 bytes (snprintf's cut,
    // its NUL taking the last byte), newline included in what is cut; on a character boundary.
    #[test]
    fn libselinuxs_record_is_cut_at_its_buffer() {
        let long = "x".repeat(2000);
        let r = LibselinuxRecord {
            denied: true,
            permissive: false,
            scontext: &long,
            tcontext: "u:r:t:s0",
            tclass: Some("file"),
        };
        let line = r.render(["read"], 0, |_| String::new());
        assert_eq!(line.len(), LIBSELINUX_AUDIT_BUFSIZE - 1);
        assert!(line.starts_with("avc:  denied  { read } for  scontext=xxx"));
        assert!(!line.ends_with('\n'));
        // Everything but the subject's context, to size one that ends exactly at the cut.
        let rest = LibselinuxRecord { scontext: "", ..r }
            .render(["read"], 0, |_| String::new())
            .len();
        let fits = "y".repeat(LIBSELINUX_AUDIT_BUFSIZE - 1 - rest);
        let line = LibselinuxRecord {
            scontext: &fits,
            ..r
        }
        .render(["read"], 0, |_| String::new());
        assert_eq!(line.len(), LIBSELINUX_AUDIT_BUFSIZE - 1, "{line}");
        assert!(
            line.ends_with("permissive=0\n"),
            "the last byte that fits is kept"
        );
        // A two-byte character across the cut goes whole.
        let at = "avc:  denied  { read } for  scontext=".len();
        let wide = format!("{}é", "z".repeat(LIBSELINUX_AUDIT_BUFSIZE - 2 - at));
        let line = LibselinuxRecord {
            scontext: &wide,
            ..r
        }
        .render(["read"], 0, |_| String::new());
        assert_eq!(line.len(), LIBSELINUX_AUDIT_BUFSIZE - 2);
        assert!(line.ends_with('z'));
    }
}
