//! Policy capabilities: named in the kernel's order, visible to object managers through the
//! cache's seam, and applied where they change the security server's answers (genfscon and
//! netifcon wildcards, genfs_wildcard.cil's table).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_security::SecurityServer;
use seaccess_types::{AccessServer, ClassId, PolicyCap, PolicyCaps};
use seaccess_testkit::*;

/// The kernel's POLICYDB_CAP_* numbers (policycap.h) and selinuxfs names (policycap_names.h).
#[test]
fn capabilities_are_numbered_and_named_as_the_kernel_does() {
    let kernel = [
        "network_peer_controls",
        "open_perms",
        "extended_socket_class",
        "always_check_network",
        "cgroup_seclabel",
        "nnp_nosuid_transition",
        "genfs_seclabel_symlinks",
        "ioctl_skip_cloexec",
        "userspace_initial_context",
        "netlink_xperm",
        "netif_wildcard",
        "genfs_seclabel_wildcard",
        "functionfs_seclabel",
        "memfd_class",
    ];
    for (bit, name) in kernel.iter().enumerate() {
        let cap = PolicyCap::from_name(name).unwrap();
        assert_eq!((cap.bit(), cap.name()), (bit as u32, *name));
        assert_eq!(PolicyCap::from_bit(bit as u32), Some(cap));
    }
    assert_eq!(PolicyCap::from_bit(kernel.len() as u32), None);
    // An unknown bit is ignored, as the kernel ignores it.
    assert_eq!(PolicyCaps::from_bits([1, 63, 200]).iter().collect::<Vec<_>>(), vec![PolicyCap::OpenPerms]);
}

/// example.cil declares six capabilities; a generation, the server and the cache's seam all
/// report exactly those.
#[test]
fn declared_capabilities_reach_object_managers() {
    let s = load(&compile("example", 33));
    let want: PolicyCaps = [
        PolicyCap::NetworkPeerControls,
        PolicyCap::OpenPerms,
        PolicyCap::ExtendedSocketClass,
        PolicyCap::AlwaysCheckNetwork,
        PolicyCap::CgroupSeclabel,
        PolicyCap::NnpNosuidTransition,
    ]
    .into_iter()
    .collect();
    let g = s.snapshot();
    assert_eq!(g.policy_caps(), want);
    assert_eq!(AccessServer::policy_caps(&*g), want);
    assert_eq!(AccessServer::policy_caps(&s), want);
    assert!(!want.contains(PolicyCap::IoctlSkipCloexec));
    let g = load(&compile("genfs_wildcard", 33)).snapshot();
    assert_eq!(g.policy_caps().iter().collect::<Vec<_>>(), vec![PolicyCap::GenfsSeclabelSymlinks]);
}

/// genfs_wildcard.cil, with or without the two wildcard capabilities set.
fn wildcard_policy(v: u32, on: bool) -> SecurityServer {
    let mut p = seaccess_policy::read_policy(&std::fs::read(compile("genfs_wildcard", v)).unwrap()).unwrap();
    if on {
        p.policycaps.set(PolicyCap::GenfsSeclabelWildcard.bit());
        p.policycaps.set(PolicyCap::NetifWildcard.bit());
    }
    SecurityServer::new(p)
}

#[test]
fn genfs_paths_are_wildcards_under_the_capability() {
    for v in versions("genfs_wildcard") {
        for on in [true, false] {
            let s = wildcard_policy(v, on);
            let g = s.snapshot();
            assert_eq!(g.policy_caps().contains(PolicyCap::GenfsSeclabelWildcard), on);
            let file = g.class("file").unwrap();
            let ty = |path: &str, class: ClassId| {
                let sid = g.genfs_sid("sysfs", path, class).unwrap();
                g.sid_to_context(sid).unwrap().split(':').nth(2).unwrap().to_string()
            };
            for (path, with, without) in [
                ("/devices/pci0/power/state", "power_t", "sysfs_t"),
                ("/devices/*/power", "power_t", "power_t"),
                ("//devices/usb1/power", "power_t", "sysfs_t"),
                ("/devices/pci0/other", "sysfs_t", "sysfs_t"),
                ("/class/net1/x", "netq_t", "sysfs_t"),
                ("/class/net", "sysfs_t", "sysfs_t"),
                ("/class/net?", "netq_t", "netq_t"),
            ] {
                assert_eq!(ty(path, file), if on { with } else { without }, "{path}, capability {on}, version {v}");
            }
        }
    }
}

#[test]
fn netif_names_are_wildcards_under_the_capability() {
    for v in versions("genfs_wildcard") {
        for on in [true, false] {
            let s = wildcard_policy(v, on);
            let g = s.snapshot();
            let ty = |name: &str| g.sid_to_context(g.netif_sid(name)).unwrap().split(':').nth(2).unwrap().to_string();
            assert_eq!(ty("eth0"), if on { "eth_t" } else { "netif_t" }, "eth0, capability {on}, version {v}");
            assert_eq!(ty("eth*"), "eth_t", "version {v}");
            assert_eq!(ty("lo"), "lo_t", "version {v}");
            assert_eq!(ty("lo0"), "netif_t", "version {v}");
        }
    }
}
