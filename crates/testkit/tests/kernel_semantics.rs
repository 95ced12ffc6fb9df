//! Behaviour the libsepol oracle cannot check, against expectations derived from each test
//! policy's source (see the comments at the top of each .cil file): where libsepol and the
//! kernel differ, seaccess follows the kernel.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_security::{SecurityError, SecurityServer};
use seaccess_testkit::*;

fn each_version(name: &str, f: impl Fn(&SecurityServer, u32)) {
    for v in versions(name) {
        f(&load(&compile(name, v)), v);
    }
}

fn names(list: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = list.iter().map(|s| s.to_string()).collect();
    v.sort();
    v
}

/// libsepol has no permissive flag; the kernel sets it for permissive source types only.
#[test]
fn permissive_flag_follows_the_source_type() {
    each_version("permissive", |s, v| {
        let g = s.snapshot();
        let file = g.class("file").unwrap();
        let data = sid(&g, "u:object_r:data_t:s0");
        for (ty, flag) in [
            ("perm_t", true),
            ("perm2_t", true),
            ("enf_t", false),
            ("child_t", false),
        ] {
            let d = g.compute_av(subject(&g, ty), data, file).unwrap();
            assert_eq!(d.flags.permissive(), flag, "{ty} at version {v}");
        }
        // The target being permissive does not matter.
        let d = g
            .compute_av(
                subject(&g, "enf_t"),
                subject(&g, "perm_t"),
                g.class("process").unwrap(),
            )
            .unwrap();
        assert!(!d.flags.permissive(), "version {v}");
        let d = g.compute_av(subject(&g, "perm_t"), data, file).unwrap();
        assert_eq!(
            allowed_names(&g, &d, file),
            names(&["getattr", "read", "open"]),
            "version {v}"
        );
    });
}

/// Transitive bounds: the bound's own decision is itself bounded (libsepol 3.4 crashes here).
#[test]
fn transitive_type_bounds() {
    each_version("bounds_chain", |s, v| {
        let g = s.snapshot();
        let file = g.class("file").unwrap();
        let process = g.class("process").unwrap();
        let p = g.policy();
        let obj = (1..=p.users.len() as u32)
            .find_map(|u| {
                g.context_to_sid(&format!(
                    "{}:object_r:obj_t:s0",
                    p.user_names.name(u).unwrap()
                ))
                .ok()
            })
            .unwrap();
        for ty in ["p_t", "c_t", "g_t"] {
            let d = g.compute_av(subject(&g, ty), obj, file).unwrap();
            assert_eq!(
                allowed_names(&g, &d, file),
                names(&["read"]),
                "{ty} -> obj_t at version {v}"
            );
        }
        for ty in ["c_t", "g_t"] {
            let me = subject(&g, ty);
            let d = g.compute_av(me, me, process).unwrap();
            assert_eq!(
                allowed_names(&g, &d, process),
                names(&["fork"]),
                "{ty} -> self at version {v}"
            );
        }
        // The explanation names the bound.
        let ex = g.explain(subject(&g, "g_t"), obj, file).unwrap();
        let write = g.perms(file, &["write"]).unwrap().bits().next().unwrap();
        assert!(
            ex.reasons.iter().any(|(b, r)| *b == write
                && matches!(r, seaccess_security::DenialReason::TypeBounds { .. })),
            "{:?}",
            ex.reasons
        );
    });
}

/// Socket classes: the kernel labels a new socket like a process (source role, type and full
/// range); libsepol labels it like a file. Expected values from transitions.cil's socket table.
#[test]
fn socket_labels_follow_the_kernel() {
    each_version("transitions", |s, v| {
        let g = s.snapshot();
        let src = sid(&g, "app_u:app_r:app_t:s0-s1:c1");
        let tgt = sid(&g, "sys_u:sys_r:init_t:s1-s2");
        let cases = [
            (
                "create",
                "tcp_socket",
                src,
                "app_u:app_r:app_sock_t:s0-s1:c1",
            ),
            ("create", "udp_socket", tgt, "sys_u:app_r:init_t:s0-s1:c1"),
            ("create", "rawip_socket", tgt, "app_u:app_r:app_t:s1"),
            (
                "create",
                "unix_stream_socket",
                tgt,
                "app_u:app_r:app_t:s0-s1:c1",
            ),
            ("relabel", "tcp_socket", src, "app_u:app_r:app_t:s0-s1:c1"),
            ("relabel", "udp_socket", tgt, "sys_u:app_r:init_t:s0-s1:c1"),
            ("relabel", "rawip_socket", tgt, "app_u:app_r:app_t:s0-s1:c1"),
            ("member", "tcp_socket", src, "app_u:app_r:app_t:s0"),
            ("member", "udp_socket", tgt, "sys_u:app_r:init_t:s0"),
            ("member", "rawip_socket", tgt, "sys_u:app_r:app_t:s0"),
        ];
        for (mode, class, t, want) in cases {
            let c = g.class(class).unwrap();
            let r = match mode {
                "create" => g.compute_create(src, t, c, None),
                "relabel" => g.compute_relabel(src, t, c),
                _ => g.compute_member(src, t, c),
            };
            let got = g.sid_to_context(r.unwrap()).unwrap();
            assert_eq!(got, want, "{mode} {class} at version {v}");
        }
    });
}

/// Filename transitions (libsepol's services API has none): exact last-component match, bound
/// to the class, falling back to the plain rule.
#[test]
fn filename_transitions() {
    each_version("transitions", |s, v| {
        let g = s.snapshot();
        let src = sid(&g, "app_u:app_r:app_t:s0-s1:c1");
        let tmp = sid(&g, "sys_u:object_r:tmp_t:s1");
        let home = sid(&g, "sys_u:object_r:home_t:s0");
        let file = g.class("file").unwrap();
        let dir = g.class("dir").unwrap();
        let cases = [
            (tmp, file, "special", "app_u:app_obj_r:app_special_t:s0"),
            (
                tmp,
                file,
                "special.conf",
                "app_u:app_obj_r:app_special_t:s0",
            ),
            (tmp, file, "specia", "app_u:app_obj_r:app_tmp_t:s0"),
            (tmp, dir, "cache", "sys_u:app_obj_r:app_cache_t:s1"),
            (tmp, dir, "special", "sys_u:app_obj_r:app_tmp_t:s1"),
            (home, file, ".profile", "app_u:object_r:app_tmp_t:s0"),
            (home, file, "x", "app_u:object_r:home_t:s0"),
        ];
        for (t, c, name, want) in cases {
            let got = g
                .sid_to_context(g.compute_create(src, t, c, Some(name)).unwrap())
                .unwrap();
            assert_eq!(got, want, "{name} at version {v}");
        }
    });
}

/// default_range glblub, including its failure cases (glblub.cil's expectations).
#[test]
fn glblub_ranges() {
    each_version("glblub", |s, v| {
        let g = s.snapshot();
        let p = g.policy();
        let class = g.class("db_table").unwrap();
        let user = p.users[0].name.to_string();
        let role = p
            .roles
            .iter()
            .find(|r| &*r.name != "object_r")
            .unwrap()
            .name
            .to_string();
        let ty = |ctx: &str| {
            // Any type the role holds will do: only the ranges matter here.
            let r = &p.roles[p.role_names.value(&role).unwrap() as usize - 1];
            let t = r.types.iter().next().unwrap();
            format!("{user}:{role}:{}:{ctx}", p.type_names.name(t + 1).unwrap())
        };
        let cases = [
            ("s0-s2:c0.c3", "s1-s3:c2.c5", Some("s1-s2:c2,c3")),
            (
                "s0:c0,c1-s3:c0.c5",
                "s1:c1-s2:c1,c2",
                Some("s1:c1-s2:c1,c2"),
            ),
            ("s0-s0:c0", "s2-s3", None),
        ];
        for (a, b, want) in cases {
            let (sa, sb) = (g.context_to_sid(&ty(a)), g.context_to_sid(&ty(b)));
            let (Ok(sa), Ok(sb)) = (sa, sb) else {
                panic!("contexts {a} / {b} invalid in glblub.cil")
            };
            let got = g
                .compute_create(sa, sb, class, None)
                .and_then(|s| g.sid_to_context(s));
            match want {
                Some(w) => assert!(
                    got.as_deref().is_ok_and(|c| c.ends_with(&format!(":{w}"))),
                    "{a} with {b}: {got:?} at {v}"
                ),
                None => assert!(
                    matches!(got, Err(SecurityError::InvalidComputedContext(_))),
                    "{a} with {b}: {got:?} at {v}"
                ),
            }
        }
    });
}

/// ioctl extended permissions (xperms.cil's expectations).
#[test]
fn ioctl_extended_permissions() {
    each_version("xperms", |s, v| {
        let g = s.snapshot();
        let chr = g.class("chr_file").unwrap();
        let dom = subject(&g, "dom_t");
        let p = g.policy();
        let obj = |t: &str| {
            (1..=p.users.len() as u32)
                .find_map(|u| {
                    g.context_to_sid(&format!(
                        "{}:object_r:{t}:s0",
                        p.user_names.name(u).unwrap()
                    ))
                    .ok()
                })
                .unwrap()
        };
        let dev = obj("dev_t");
        let allowed = |t, c: u16| g.check_ioctl(dom, t, chr, c).unwrap().0;
        for c in [
            0x5401, 0x5410, 0x541f, 0x8900, 0x8910, 0x89ff, 0x1000, 0x12ff, 0x2000, 0x20ff, 0x30fe,
            0x30ff, 0x3100, 0x3101, 0x4000, 0x40ff, 0x6600,
        ] {
            assert!(allowed(dev, c), "{c:#x} should be allowed at version {v}");
        }
        for c in [
            0x5402, 0x5420, 0x2042, 0x7700, 0x77ff, 0x0001, 0x3102, 0x6601, 0xffff,
        ] {
            assert!(!allowed(dev, c), "{c:#x} should be denied at version {v}");
        }
        // dontauditx silences a denial of one command; other denials are audited. (A grant is
        // audited only if the base ioctl permission is auditallow'ed too, which xperms.cil
        // does not do: auditallowx alone changes nothing in the kernel's avc.)
        assert!(
            !g.check_ioctl(dom, dev, chr, 0x7700).unwrap().1,
            "0x7700 not audited"
        );
        assert!(
            g.check_ioctl(dom, dev, chr, 0x5402).unwrap().1,
            "0x5402 denial audited"
        );
        assert!(
            !g.check_ioctl(dom, dev, chr, 0x5401).unwrap().1,
            "grants are not audited without auditallow ioctl"
        );
        // The per-command audit bits themselves.
        let x = g
            .compute_xperms(dom, dev, chr, seaccess_security::XpermKind::Ioctl, 0x54)
            .unwrap();
        assert!(x.audits_allow(0x01) && !x.audits_allow(0x02));
        let x = g
            .compute_xperms(dom, dev, chr, seaccess_security::XpermKind::Ioctl, 0x89)
            .unwrap();
        assert!(x.audits_allow(0x10) && x.allows(0x00) && x.allows(0xff));
        // No allowx rule: every command allowed by the base permission alone.
        assert!(allowed(obj("plain_t"), 0x1234));
        // allowx without the ioctl permission allows nothing.
        assert!(!allowed(obj("noperm_t"), 0x5401));
        // A dontauditx or auditallowx rule alone turns checking on (Linux 5.10 and later):
        // with no allowx, every command is denied, and dontauditx still silences its own.
        let (quiet, loud) = (obj("quiet_t"), obj("loud_t"));
        for c in [0x5401, 0x5402, 0x1234] {
            assert!(
                !allowed(quiet, c) && !allowed(loud, c),
                "{c:#x} should be denied at version {v}"
            );
        }
        assert!(
            !g.check_ioctl(dom, quiet, chr, 0x5401).unwrap().1,
            "dontauditx'ed denial audited"
        );
        assert!(g.check_ioctl(dom, quiet, chr, 0x5402).unwrap().1);
        assert!(g.check_ioctl(dom, loud, chr, 0x5401).unwrap().1);
        // Another class.
        let tcp = g.class("tcp_socket").unwrap();
        assert!(g.check_ioctl(dom, dom, tcp, 0x8933).unwrap().0);
        assert!(g.check_ioctl(dom, dom, tcp, 0x8946).unwrap().0);
        assert!(!g.check_ioctl(dom, dom, tcp, 0x8934).unwrap().0);
    });
}

/// validatetrans and mlsvalidatetrans (old = 1, new = 2, task = 3), from constraints.cil:
///   cons: (u1 == u2 or u3 == ua), (r1 == r2 or r3 not in {rb rc}), (t1 == t2 or t3 in t_ab),
///         and the MLS rule (not (h1 incomp l2) or r3 == ra).
#[test]
fn validate_transition() {
    each_version("constraints", |s, v| {
        let g = s.snapshot();
        let cons = g.class("cons").unwrap();
        let ok = |old: &str, new: &str, task: &str| {
            g.validate_transition(sid(&g, old), sid(&g, new), sid(&g, task), cons)
                .is_ok()
        };
        let same = "ua:object_r:oa:s0";
        assert!(
            ok(same, same, "ub:rb:td:s0"),
            "an unchanged label passes at {v}"
        );
        assert!(
            !ok(same, "ub:object_r:oa:s0", "ub:rb:tb:s0"),
            "user change by a task other than ua at {v}"
        );
        assert!(
            ok(same, "ub:object_r:oa:s0", "ua:ra:ta:s0"),
            "user change by ua at {v}"
        );
        assert!(
            !ok(same, "ua:object_r:ob:s0", "ub:rb:td:s0"),
            "type change by td at {v}"
        );
        assert!(
            ok(same, "ua:object_r:ob:s0", "ub:rb:tb:s0"),
            "type change by tb (in t_ab) at {v}"
        );
        assert!(
            !ok(
                "ua:object_r:oa:s1:c0",
                "ua:object_r:oa:s1:c1",
                "ub:rb:tb:s0"
            ),
            "incomparable levels at {v}"
        );
        assert!(
            ok(
                "ua:object_r:oa:s1:c0",
                "ua:object_r:oa:s1:c1",
                "ua:ra:ta:s0"
            ),
            "incomparable levels by ra at {v}"
        );
        let e = g
            .validate_transition(
                sid(&g, same),
                sid(&g, "ub:object_r:oa:s0"),
                sid(&g, "ub:rb:tb:s0"),
                cons,
            )
            .unwrap_err();
        assert!(e.to_string().contains("validatetrans"), "{e}");
    });
}

/// Booleans: set is pending until commit; a commit is atomic and bumps the seqno; decisions
/// follow the committed values.
#[test]
fn boolean_commit() {
    let path = compile("example", 33);
    let s = load(&path);
    let before = s.snapshot();
    let seq0 = s.seqno();
    let name = before.booleans()[0].0.clone();
    let old = before.boolean(&name).unwrap();
    s.set_boolean(&name, !old).unwrap();
    assert_eq!(
        s.snapshot().boolean(&name).unwrap(),
        old,
        "set without commit changes nothing"
    );
    assert_eq!(s.pending_boolean(&name).unwrap(), !old);
    let seq1 = s.commit_booleans();
    assert_eq!(seq1.0, seq0.0 + 1);
    assert_eq!(s.snapshot().boolean(&name).unwrap(), !old);
    assert_eq!(
        before.boolean(&name).unwrap(),
        old,
        "an old snapshot keeps its values"
    );
    assert!(matches!(
        s.set_boolean("no_such_boolean", true),
        Err(SecurityError::UnknownBoolean(..))
    ));
}

/// Boolean-guarded rules follow the committed values, checked against the oracle's answers
/// for the policy compiled with the other default values.
#[test]
fn booleans_change_decisions_like_a_recompiled_policy() {
    let path = compile("booleans", 33);
    let s = load(&path);
    let g0 = s.snapshot();
    let queries = all_triples(g0.policy());
    let before: Vec<String> = queries.iter().map(|q| answer(&g0, "av", q)).collect();
    for (name, value) in g0.booleans() {
        s.set_boolean(&name, !value).unwrap();
    }
    s.commit_booleans();
    let g1 = s.snapshot();
    let after: Vec<String> = queries.iter().map(|q| answer(&g1, "av", q)).collect();
    assert_ne!(before, after, "flipping every boolean changed no decision");
    // Flipping back restores every decision.
    for (name, value) in g0.booleans() {
        s.set_boolean(&name, value).unwrap();
    }
    s.commit_booleans();
    let g2 = s.snapshot();
    let again: Vec<String> = queries.iter().map(|q| answer(&g2, "av", q)).collect();
    assert_eq!(before, again);
}

/// handleunknown is read from the header.
#[test]
fn handle_unknown_setting() {
    use seaccess_policy::HandleUnknown;
    for (name, want) in [
        ("unknown", HandleUnknown::Allow),
        ("unknown_deny", HandleUnknown::Deny),
        ("unknown_reject", HandleUnknown::Reject),
    ] {
        for v in versions(name) {
            let s = load(&compile(name, v));
            assert_eq!(s.snapshot().policy().handle_unknown, want, "{name}.{v}");
        }
    }
}

/// Object contexts of the bundled example policy: initial SIDs, fs_use, genfs (longest prefix),
/// ports, nodes and interfaces, with the fallbacks the kernel uses.
#[test]
fn object_contexts() {
    let s = load(&compile("example", 33));
    let g = s.snapshot();
    let p = g.policy();
    let o = &p.ocontexts;
    assert!(
        !o.initial_sids.is_empty()
            && !o.fs_use.is_empty()
            && !p.genfs.is_empty()
            && !o.ports.is_empty()
    );
    // `init` (7) takes the kernel SID's context here: kernel_policycaps.rs tests that.
    for isid in o.initial_sids.iter().filter(|s| s.sid != 7) {
        let sid = g.initial_sid(isid.sid).unwrap();
        assert_eq!(
            g.sid_to_context(sid).unwrap(),
            g.context_string(&isid.context)
        );
    }
    let f = &o.fs_use[0];
    let (_, sid) = g.fs_use(&f.fstype).unwrap();
    assert_eq!(g.sid_to_context(sid).unwrap(), g.context_string(&f.context));
    assert!(g.fs_use("no-such-fs").is_none());
    // genfs: of every entry of a filesystem, the longest matching prefix wins.
    for gf in &p.genfs {
        for e in &gf.entries {
            let path = format!("{}/deeper", e.path.trim_end_matches('/'));
            let class = if e.class == 0 {
                seaccess_types::ClassId(1)
            } else {
                seaccess_types::ClassId(e.class as u16)
            };
            let want = gf
                .entries
                .iter()
                .filter(|x| {
                    (x.class == 0 || x.class == u32::from(class.0)) && path.starts_with(&*x.path)
                })
                .max_by_key(|x| x.path.len())
                .unwrap();
            let got = g.genfs_sid(&gf.fstype, &path, class).unwrap();
            assert_eq!(
                g.sid_to_context(got).unwrap(),
                g.context_string(&want.context),
                "{} {path}",
                gf.fstype
            );
        }
    }
    let port = &o.ports[0];
    let got = g.port_sid(port.protocol as u8, port.low as u16);
    assert_eq!(
        g.sid_to_context(got).unwrap(),
        g.context_string(&port.context)
    );
    // An unlabelled port falls back to the port initial SID.
    let unused = (1..=65535u16)
        .find(|x| {
            !o.ports
                .iter()
                .any(|c| c.low <= u32::from(*x) && u32::from(*x) <= c.high)
        })
        .unwrap();
    assert_eq!(
        g.port_sid(6, unused),
        g.initial_sid(9).unwrap_or(seaccess_types::Sid::NULL)
    );
    if let Some(n) = o.netifs.first() {
        assert_eq!(
            g.sid_to_context(g.netif_sid(&n.name)).unwrap(),
            g.context_string(&n.context)
        );
    }
    if let Some(n) = o.nodes.first() {
        let addr = std::net::IpAddr::from(n.addr);
        assert_eq!(
            g.sid_to_context(g.node_sid(addr)).unwrap(),
            g.context_string(&n.context)
        );
    }
}

/// Contexts: canonical printing (category runs), aliases, and clear errors for bad input.
#[test]
fn context_parsing_and_printing() {
    let s = load(&compile("mls", 33));
    let g = s.snapshot();
    let p = g.policy();
    // Find a user whose clearance spans several categories, and print its full range.
    let u = p
        .users
        .iter()
        .max_by_key(|u| u.range.high.cats.len())
        .unwrap();
    let r = p.roles[(u.roles.iter().find(|r| *r + 1 != 1).unwrap()) as usize].clone();
    let t = r.types.iter().next().unwrap() + 1;
    let base = format!("{}:{}:{}", u.name, r.name, p.type_names.name(t).unwrap());
    let full = seaccess_security::range_to_string(p, &u.range);
    let sid_full = sid(&g, &format!("{base}:{full}"));
    assert_eq!(
        g.sid_to_context(sid_full).unwrap(),
        format!("{base}:{full}")
    );
    // Low only: "s-s" prints once.
    let low = seaccess_security::range_to_string(
        p,
        &seaccess_policy::Range {
            low: u.range.low.clone(),
            high: u.range.low.clone(),
        },
    );
    let sid_low = sid(&g, &format!("{base}:{low}-{low}"));
    assert_eq!(g.sid_to_context(sid_low).unwrap(), format!("{base}:{low}"));
    // Category runs: c0,c1 stays a list, three or more become a range.
    let cats: Vec<u32> = u.range.high.cats.iter().collect();
    if cats.len() >= 3 && cats[2] == cats[0] + 2 {
        let sens = p.sens_names.name(u.range.high.sens).unwrap();
        let c = |i: usize| p.cat_names.name(cats[i] + 1).unwrap();
        let two = format!(
            "{}:object_r:{}:{sens}:{},{}",
            u.name,
            p.type_names.name(t).unwrap(),
            c(0),
            c(1)
        );
        assert_eq!(g.sid_to_context(sid(&g, &two)).unwrap(), two);
        let three_list = format!(
            "{}:object_r:{}:{sens}:{},{},{}",
            u.name,
            p.type_names.name(t).unwrap(),
            c(0),
            c(1),
            c(2)
        );
        let three_range = format!(
            "{}:object_r:{}:{sens}:{}.{}",
            u.name,
            p.type_names.name(t).unwrap(),
            c(0),
            c(2)
        );
        assert_eq!(g.sid_to_context(sid(&g, &three_list)).unwrap(), three_range);
        assert_eq!(sid(&g, &three_list), sid(&g, &three_range));
        let backwards = format!(
            "{}:object_r:{}:{sens}:{}.{}",
            u.name,
            p.type_names.name(t).unwrap(),
            c(2),
            c(0)
        );
        assert!(g.context_to_sid(&backwards).is_err());
    }
    for bad in [
        "",
        "a:b",
        "nouser:object_r:x:s0",
        &base,
        &format!("{base}:s99"),
        &format!("{base}:{low}:c9999"),
    ] {
        let e = g.context_to_sid(bad).unwrap_err();
        assert!(
            matches!(e, SecurityError::InvalidContext { .. }),
            "{bad}: {e}"
        );
        assert!(
            e.to_string().contains(bad),
            "the error quotes the context: {e}"
        );
    }
}

/// An object manager's class map: unknown classes and permissions follow handleunknown, known
/// ones follow the policy, bits come back in the caller's order.
#[test]
fn class_maps_follow_handle_unknown() {
    for (name, allow, reject) in [
        ("unknown", true, false),
        ("unknown_deny", false, false),
        ("unknown_reject", false, true),
    ] {
        for v in versions(name) {
            let s = load(&compile(name, v));
            let g = s.snapshot();
            let spec: &[(&str, &[&str])] = &[
                ("file", &["getattr", "no_such_perm", "read", "write"]),
                ("no_such_class", &["x", "y"]),
            ];
            let map = g.map_classes(spec);
            if reject {
                assert!(matches!(map, Err(SecurityError::Mapping(..))), "{name}.{v}");
                // Known classes and permissions map fine under reject.
                assert!(g.map_classes(&[("file", &["read"])]).is_ok());
                continue;
            }
            let map = map.unwrap();
            let file = g.class("file").unwrap();
            let q = all_triples(g.policy());
            let mut checked = 0;
            for line in q.iter().filter(|l| l.ends_with(" file")).take(300) {
                let f: Vec<&str> = line.split(' ').collect();
                let (a, b) = (sid(&g, f[0]), sid(&g, f[1]));
                let raw = g.compute_av(a, b, file).unwrap();
                let m = g.compute_av_mapped(a, b, &map, 0).unwrap();
                let has = |d: &seaccess_types::AvDecision, perm| {
                    g.perms(file, &[perm])
                        .map(|v| d.allowed.contains(v))
                        .unwrap()
                };
                assert_eq!(m.allowed.0 & 1 != 0, has(&raw, "getattr"));
                assert_eq!(
                    m.allowed.0 & 2 != 0,
                    allow,
                    "unknown permission, {name}.{v}"
                );
                assert_eq!(m.allowed.0 & 4 != 0, has(&raw, "read"));
                assert_eq!(m.allowed.0 & 8 != 0, has(&raw, "write"));
                assert_eq!(m.allowed.0 >> 4, 0, "no bits past the caller's permissions");
                let unknown_class = g.compute_av_mapped(a, b, &map, 1).unwrap();
                assert_eq!(
                    unknown_class.allowed.0 != 0,
                    allow,
                    "unknown class, {name}.{v}"
                );
                checked += 1;
            }
            assert!(checked > 0);
        }
    }
}
