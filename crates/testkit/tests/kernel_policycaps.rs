//! Policy capabilities: named in the kernel's order, visible to object managers through the
//! cache's seam, and applied where they change the security server's answers (genfscon and
//! netifcon wildcards, genfs_wildcard.cil's table).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_security::SecurityServer;
use seaccess_testkit::*;
use seaccess_types::{AccessServer, ClassId, PolicyCap, PolicyCaps, PolicyNames, Sid};

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
    assert_eq!(
        PolicyCaps::from_bits([1, 63, 200])
            .iter()
            .collect::<Vec<_>>(),
        vec![PolicyCap::OpenPerms]
    );
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
    assert_eq!(PolicyNames::policy_caps(&*g), want);
    assert_eq!(AccessServer::names(&s).policy_caps(), want);
    assert!(!want.contains(PolicyCap::IoctlSkipCloexec));
    let g = load(&compile("genfs_wildcard", 33)).snapshot();
    assert_eq!(
        g.policy_caps().iter().collect::<Vec<_>>(),
        vec![PolicyCap::GenfsSeclabelSymlinks]
    );
}

/// genfs_wildcard.cil, with or without the two wildcard capabilities set.
fn wildcard_policy(v: u32, on: bool) -> SecurityServer {
    let mut p = seaccess_policy::read_policy(&std::fs::read(compile("genfs_wildcard", v)).unwrap())
        .unwrap();
    if on {
        p.add_policy_cap(PolicyCap::GenfsSeclabelWildcard.bit());
        p.add_policy_cap(PolicyCap::NetifWildcard.bit());
    }
    SecurityServer::new(p)
}

#[test]
fn genfs_paths_are_wildcards_under_the_capability() {
    for v in versions("genfs_wildcard") {
        for on in [true, false] {
            let s = wildcard_policy(v, on);
            let g = s.snapshot();
            assert_eq!(
                g.policy_caps().contains(PolicyCap::GenfsSeclabelWildcard),
                on
            );
            let file = g.class("file").unwrap();
            let ty = |path: &str, class: ClassId| {
                let sid = g.genfs_sid("sysfs", path, class).unwrap();
                g.sid_to_context(sid)
                    .unwrap()
                    .split(':')
                    .nth(2)
                    .unwrap()
                    .to_string()
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
                assert_eq!(
                    ty(path, file),
                    if on { with } else { without },
                    "{path}, capability {on}, version {v}"
                );
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
            let ty = |name: &str| {
                g.sid_to_context(g.netif_sid(name))
                    .unwrap()
                    .split(':')
                    .nth(2)
                    .unwrap()
                    .to_string()
            };
            assert_eq!(
                ty("eth0"),
                if on { "eth_t" } else { "netif_t" },
                "eth0, capability {on}, version {v}"
            );
            assert_eq!(ty("eth*"), "eth_t", "version {v}");
            assert_eq!(ty("lo"), "lo_t", "version {v}");
            assert_eq!(ty("lo0"), "netif_t", "version {v}");
        }
    }
}

/// The kernel's initial SID numbers (flask.h) of the two SIDs userspace_initial_context
/// concerns.
const SECINITSID_KERNEL: u32 = 1;
const SECINITSID_INIT: u32 = 7;

/// example.cil gives the `kernel` initial SID kernel_t and `init` init_t. Linux's
/// policydb_load_isids (policydb.c) skips `init`'s own context unless the policy declares
/// userspace_initial_context, and gives SECINITSID_INIT the `kernel` SID's context instead (so
/// processes started before the policy load keep the kernel's label, as before init existed);
/// `kernel`'s context still maps back to SID 1 (sidtab_set_initial hashes a context only for
/// the first initial SID holding it), and init_t's context, no initial SID's any more, gets a
/// SID of its own. secilc 3.4 does not know the capability, so the test sets its bit.
/// libsepol 3.4 differs, so this is checked against the kernel's code, not the oracle: its
/// policydb_load_isids gives every initial SID its own context whatever the capabilities
/// (sepol_sid_to_context(7) answers init_t on example.33 loaded that way), and its
/// sepol_load_policy, which the oracle uses, loads no initial SIDs at all.
#[test]
fn init_sid_takes_the_kernel_context_without_userspace_initial_context() {
    for v in versions("example") {
        for on in [false, true] {
            let mut p =
                seaccess_policy::read_policy(&std::fs::read(compile("example", v)).unwrap())
                    .unwrap();
            if on {
                p.add_policy_cap(PolicyCap::UserspaceInitialContext.bit());
            }
            let s = SecurityServer::new(p);
            let g = s.snapshot();
            assert_eq!(
                g.policy_caps().contains(PolicyCap::UserspaceInitialContext),
                on
            );
            let (kernel, init) = (Sid(SECINITSID_KERNEL), Sid(SECINITSID_INIT));
            assert_eq!(
                g.initial_sid(SECINITSID_INIT),
                Some(init),
                "capability {on}, version {v}"
            );
            let kernel_ctx = g.sid_to_context(kernel).unwrap();
            let init_ctx = g.sid_to_context(init).unwrap();
            assert_eq!(kernel_ctx.split(':').nth(2), Some("kernel_t"));
            let init_t = kernel_ctx.replacen("kernel_t", "init_t", 1);
            assert_eq!(
                &init_ctx,
                if on { &init_t } else { &kernel_ctx },
                "capability {on}, version {v}"
            );
            assert_eq!(
                g.context_to_sid(&kernel_ctx).unwrap(),
                kernel,
                "capability {on}, version {v}"
            );
            let init_t_sid = g.context_to_sid(&init_t).unwrap();
            if on {
                assert_eq!(init_t_sid, init, "version {v}");
            } else {
                assert!(
                    init_t_sid.0 > seaccess_policy::MAX_INITIAL_SID,
                    "init_t's context is no initial SID's, version {v}: {init_t_sid:?}"
                );
            }
        }
    }
}
