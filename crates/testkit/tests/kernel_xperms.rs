//! Extended permissions as Linux 6.13 and later decide them, when ioctl and netlink-message
//! rules meet on one triple (xperms_kinds.cil's table), and the permissive flag on classes an
//! object manager maps but the policy lacks.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_policy::avtab;
use seaccess_security::{SecurityServer, XpermKind};
use seaccess_testkit::*;

/// xperms_kinds.cil with its driver-0x12 function rules turned into netlink-message rules (see
/// the policy's header for why).
fn nlmsg_policy(v: u32) -> SecurityServer {
    let data = std::fs::read(compile("xperms_kinds", v)).unwrap();
    let mut p = seaccess_policy::read_policy(&data).unwrap();
    let mut turned = 0;
    for x in p.xperms.iter_mut().filter(|x| x.specified == avtab::XPERMS_IOCTLFUNCTION && x.driver == 0x12) {
        x.specified = avtab::XPERMS_NLMSG;
        turned += 1;
    }
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
        let (nl_only, both, plain) = (sid(&g, "u:object_r:nl_only_t"), sid(&g, "u:object_r:both_t"), sid(&g, "u:object_r:plain_t"));
        let allowed = |t, cmd| g.check_ioctl(dom, t, nl, cmd).unwrap().0;
        for cmd in [0x1234, 0x5401, 0x0001] {
            assert!(!allowed(nl_only, cmd), "nl_only_t {cmd:#x} at version {v}");
            assert!(allowed(plain, cmd), "plain_t {cmd:#x} at version {v}");
        }
        assert!(allowed(both, 0x5401), "both_t 0x5401 at version {v}");
        assert!(!allowed(both, 0x1234), "both_t 0x1234 at version {v}");
        assert!(!allowed(both, 0x5402), "both_t 0x5402 at version {v}");
        // What the cache sees: checking on for nl_only_t, off for plain_t.
        assert!(g.ioctl_drivers(dom, nl_only, nl).unwrap().is_some(), "version {v}");
        assert!(g.ioctl_drivers(dom, plain, nl).unwrap().is_none(), "version {v}");
        let seam = |t| seaccess_types::AccessServer::xperm_drivers(&*g, dom, t, nl).unwrap().0;
        assert!(seam(nl_only).is_some() && seam(plain).is_none(), "version {v}");
        // The netlink-message rule itself answers for its own kind only.
        let x = g.compute_xperms(dom, nl_only, nl, XpermKind::Nlmsg, 0x12).unwrap();
        assert!(x.allows(0x34) && !x.allows(0x35), "version {v}");
        let x = g.compute_xperms(dom, both, nl, XpermKind::Ioctl, 0x12).unwrap();
        assert!(!x.allows(0x34), "an nlmsg rule allows no ioctl, version {v}");
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
        let map = g.map_classes(&[("no_such_class", &["x"]), ("file", &["read"])]).unwrap();
        let data = sid(&g, "u:object_r:data_t:s0");
        for (ty, flag) in [("perm_t", true), ("enf_t", false)] {
            let me = subject(&g, ty);
            let d = g.compute_av_mapped(me, data, &map, 0).unwrap();
            assert_eq!(d.flags.permissive(), flag, "unknown class, {ty} at version {v}");
            assert_eq!(d.allowed.0, 0, "handleunknown deny, {ty} at version {v}");
            let d = g.compute_av_mapped(me, data, &map, 1).unwrap();
            assert_eq!(d.flags.permissive(), flag, "file, {ty} at version {v}");
        }
    }
}
