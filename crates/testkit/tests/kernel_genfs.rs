//! genfs labelling as the kernel's __security_genfs_sid does it: leading slashes collapsed,
//! then the longest prefix (or, under the genfs_seclabel_wildcard capability, the first
//! matching wildcard pattern, longest first) for the class.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_testkit::*;

/// example.cil labels proc "/" proc_t and "/sys" sysctl_t. The kernel skips a leading '/'
/// while the next character is '/' too, so "//sys" is "/sys".
#[test]
fn leading_double_slashes_collapse() {
    let s = load(&compile("example", 33));
    let g = s.snapshot();
    let file = g.class("file").unwrap();
    let ty = |path: &str| {
        let sid = g.genfs_sid("proc", path, file).unwrap();
        g.sid_to_context(sid)
            .unwrap()
            .split(':')
            .nth(2)
            .unwrap()
            .to_string()
    };
    for (path, want) in [
        ("/sys", "sysctl_t"),
        ("//sys", "sysctl_t"),
        ("///sys/kernel", "sysctl_t"),
        ("/", "proc_t"),
        ("//", "proc_t"),
        ("//self", "proc_t"),
        // Only leading slashes collapse.
        ("/s//ys", "proc_t"),
    ] {
        assert_eq!(ty(path), want, "proc {path}");
    }
}
