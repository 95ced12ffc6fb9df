//! Extended permissions as Linux 6.13 and later decide them, when ioctl and netlink-message
//! rules meet on one triple (xperms_kinds.cil's table), and the permissive flag on classes an
//! object manager maps but the policy lacks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_policy::XpermsKind;
use seaccess_security::{SecurityServer, XpermKind};
use seaccess_testkit::*;

/// xperms_kinds.cil with its driver-0x12 function rules turned into netlink-message rules (see
/// the policy's header for why).
fn nlmsg_policy(v: u32) -> SecurityServer {
    let data = std::fs::read(compile("xperms_kinds", v)).unwrap();
    let mut p = seaccess_policy::read_policy(&data).unwrap();
    let turned = p.change_xperms_kind(
        |x| x.kind == XpermsKind::IoctlFunction && x.driver == 0x12,
        XpermsKind::Nlmsg,
    );
    assert_eq!(turned, 2, "xperms_kinds.cil has two rules on driver 0x12");
    SecurityServer::new(p)
}

#[test]
fn any_extended_rule_turns_ioctl_checking_on() {
    for v in versions("xperms_kinds") {
        let s = nlmsg_policy(v);
        let g = s.snapshot();
        let nl = g.class("netlink_route_socket").unwrap();
        let dom = sid(&g, "u:r:dom_t");
        let (nl_only, both, plain) = (
            sid(&g, "u:object_r:nl_only_t"),
            sid(&g, "u:object_r:both_t"),
            sid(&g, "u:object_r:plain_t"),
        );
        let allowed = |t, cmd| g.check_ioctl(dom, t, nl, cmd).unwrap().0;
        for cmd in [0x1234, 0x5401, 0x0001] {
            assert!(!allowed(nl_only, cmd), "nl_only_t {cmd:#x} at version {v}");
            assert!(allowed(plain, cmd), "plain_t {cmd:#x} at version {v}");
        }
        assert!(allowed(both, 0x5401), "both_t 0x5401 at version {v}");
        assert!(!allowed(both, 0x1234), "both_t 0x1234 at version {v}");
        assert!(!allowed(both, 0x5402), "both_t 0x5402 at version {v}");
        // What the cache sees: checking on for nl_only_t, off for plain_t.
        assert!(
            g.ioctl_drivers(dom, nl_only, nl).unwrap().is_some(),
            "version {v}"
        );
        assert!(
            g.ioctl_drivers(dom, plain, nl).unwrap().is_none(),
            "version {v}"
        );
        let seam = |t| {
            seaccess_types::AccessServer::xperm_drivers(&*g, dom, t, nl)
                .unwrap()
                .0
        };
        assert!(
            seam(nl_only).is_some() && seam(plain).is_none(),
            "version {v}"
        );
        // The netlink-message rule itself answers for its own kind only.
        let x = g
            .compute_xperms(dom, nl_only, nl, XpermKind::Nlmsg, 0x12)
            .unwrap();
        assert!(x.allows(0x34) && !x.allows(0x35), "version {v}");
        let x = g
            .compute_xperms(dom, both, nl, XpermKind::Ioctl, 0x12)
            .unwrap();
        assert!(
            !x.allows(0x34),
            "an nlmsg rule allows no ioctl, version {v}"
        );
    }
}

/// security_compute_av sets AVD_FLAGS_PERMISSIVE from the source type before it looks at the
/// class, so a class the policy lacks keeps the flag (permissive.cil: perm_t is permissive,
/// enf_t is not; handleunknown deny).
#[test]
fn unknown_mapped_class_keeps_the_permissive_flag() {
    for v in versions("permissive") {
        let s = load(&compile("permissive", v));
        let g = s.snapshot();
        let map = g
            .map_classes(&[("no_such_class", &["x"]), ("file", &["read"])])
            .unwrap();
        let data = sid(&g, "u:object_r:data_t:s0");
        for (ty, flag) in [("perm_t", true), ("enf_t", false)] {
            let me = subject(&g, ty);
            let d = g.compute_av_mapped(me, data, &map, 0).unwrap();
            assert_eq!(
                d.flags.permissive(),
                flag,
                "unknown class, {ty} at version {v}"
            );
            assert_eq!(d.allowed.0, 0, "handleunknown deny, {ty} at version {v}");
            let d = g.compute_av_mapped(me, data, &map, 1).unwrap();
            assert_eq!(d.flags.permissive(), flag, "file, {ty} at version {v}");
        }
    }
}

/// xperms_kinds.cil at version `v` with the kind byte of its one rule on nl_only_t (an ioctl
/// function rule, driver 0x12, function 0x34) set to `kind` in the file itself.
fn nl_only_rule_of_kind(v: u32, kind: u8) -> Vec<u8> {
    let mut data = std::fs::read(compile("xperms_kinds", v)).unwrap();
    let p = seaccess_policy::read_policy(&data).unwrap();
    let ty = |n: &str| p.type_names.value(n).unwrap() as u16;
    let class = p.class_value("netlink_route_socket").unwrap() as u16;
    // The record as avtab_read_item reads it: source, target, class, specifier (allowx), then
    // the payload's kind, driver and eight words of functions.
    let mut rec = Vec::new();
    for h in [ty("dom_t"), ty("nl_only_t"), class, 0x0100] {
        rec.extend_from_slice(&h.to_le_bytes());
    }
    rec.extend_from_slice(&[1, 0x12]);
    let mut words = [0u32; 8];
    words[0x34 / 32] = 1 << (0x34 % 32);
    for w in words {
        rec.extend_from_slice(&w.to_le_bytes());
    }
    let at: Vec<usize> = data
        .windows(rec.len())
        .enumerate()
        .filter(|(_, w)| *w == rec.as_slice())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(at.len(), 1, "the nl_only_t rule at version {v}");
    data[at[0] + 8] = kind;
    data
}

/// A kind of extended permission the kernel does not know loads (avtab_read_item does not look
/// at it) and, since Linux 6.13 (900f83cf376b, "ignore unknown extended permissions", so that
/// new kinds do not break older kernels), is ignored where BUG() was:
/// services_compute_xperms_decision returns without using the rule, and
/// services_compute_xperms_drivers flags no driver and no base permission for it but still
/// sets `len`, so the triple's ioctl commands are checked and, no driver being flagged, all
/// denied. The other triples keep their answers.
#[test]
fn unknown_xperm_kinds_load_and_grant_nothing() {
    for v in versions("xperms_kinds") {
        for kind in [0u8, 4, 9, 255] {
            let p = seaccess_policy::read_policy(&nl_only_rule_of_kind(v, kind))
                .unwrap_or_else(|e| panic!("kind {kind} at version {v}: the kernel loads it: {e}"));
            let s = SecurityServer::new(p);
            let g = s.snapshot();
            let nl = g.class("netlink_route_socket").unwrap();
            let dom = sid(&g, "u:r:dom_t");
            let (nl_only, both, plain) = (
                sid(&g, "u:object_r:nl_only_t"),
                sid(&g, "u:object_r:both_t"),
                sid(&g, "u:object_r:plain_t"),
            );
            let allowed = |t, cmd| g.check_ioctl(dom, t, nl, cmd).unwrap().0;
            assert_eq!(
                g.ioctl_drivers(dom, nl_only, nl).unwrap(),
                Some([0; 8]),
                "kind {kind}, version {v}"
            );
            for k in [XpermKind::Ioctl, XpermKind::Nlmsg] {
                let x = g.compute_xperms(dom, nl_only, nl, k, 0x12).unwrap();
                assert_eq!(x.allowed, [0; 8], "kind {kind}, {k:?}, version {v}");
            }
            for cmd in [0x1234, 0x5401, 0x0001] {
                assert!(
                    !allowed(nl_only, cmd),
                    "nl_only_t {cmd:#x}, kind {kind}, version {v}"
                );
                assert!(
                    allowed(plain, cmd),
                    "plain_t {cmd:#x}, kind {kind}, version {v}"
                );
            }
            assert!(
                allowed(both, 0x5401) && allowed(both, 0x1234) && !allowed(both, 0x5402),
                "both_t, kind {kind}, version {v}"
            );
        }
    }
}
