//! Policies the kernel refuses at load (policydb_read and its sanity checks), and where the
//! reader says the damage is.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_policy::read_policy;
use seaccess_testkit::*;

/// bounds_chain.cil plus `extra`, compiled at version 33 (secilc -N, as its header says).
fn chain(label: &str, extra: &str) -> Vec<u8> {
    let extra = extra.to_string();
    let path = compile_variant("bounds_chain", label, 33, move |s| {
        format!("{s}\n{extra}\n")
    });
    std::fs::read(path).unwrap()
}

// bounds_chain.cil has g_t -> c_t -> p_t (two hops). The kernel's walk refuses a chain when
// `++depth == POLICYDB_BOUNDS_MAXDEPTH` (4): at its fourth hop. Three hops load.
const TYPE3: &str = "(type h_t) (roletype r h_t) (typebounds g_t h_t)";
const TYPE4: &str = "(type h_t) (roletype r h_t) (typebounds g_t h_t) (type i_t) (roletype r i_t) (typebounds h_t i_t)";

fn roles(n: usize) -> String {
    // r0 <- r1 <- ... <- rn, each holding the same types: n hops from rn.
    let mut s = String::new();
    for i in 0..=n {
        s += &format!("(role r{i}) (roletype r{i} obj_t) (userrole u r{i})\n");
        if i > 0 {
            s += &format!("(rolebounds r{} r{i})\n", i - 1);
        }
    }
    s
}

fn users(n: usize) -> String {
    let mut s = String::new();
    for i in 0..=n {
        s += &format!(
            "(user u{i}) (userrole u{i} r) (userlevel u{i} (s0)) (userrange u{i} ((s0) (s0)))\n"
        );
        if i > 0 {
            s += &format!("(userbounds u{} u{i})\n", i - 1);
        }
    }
    s
}

fn refused(bytes: &[u8], section: &str, symbol: &str) {
    let Err(e) = read_policy(bytes) else {
        panic!("a four-hop bounds chain loads")
    };
    let msg = e.to_string();
    assert!(msg.starts_with(&format!("{section}, byte ")), "{msg}");
    assert!(msg.contains(symbol) && msg.contains("bounds"), "{msg}");
    // The offset is the entry of the symbol at fault: its name follows a few header words.
    let entry = &bytes[e.offset()..(e.offset() + 32).min(bytes.len())];
    assert!(
        entry.windows(symbol.len()).any(|w| w == symbol.as_bytes()),
        "{msg}: not at {symbol}'s entry"
    );
}

#[test]
fn type_bounds_chain_of_the_kernel_limit_is_refused() {
    read_policy(&chain("bounds3t", TYPE3)).expect("a three-hop type chain loads");
    refused(&chain("bounds4t", TYPE4), "types", "i_t");
}

#[test]
fn role_bounds_chain_of_the_kernel_limit_is_refused() {
    read_policy(&chain("bounds3r", &roles(3))).expect("a three-hop role chain loads");
    refused(&chain("bounds4r", &roles(4)), "roles", "r4");
}

#[test]
fn user_bounds_chain_of_the_kernel_limit_is_refused() {
    read_policy(&chain("bounds3u", &users(3))).expect("a three-hop user chain loads");
    refused(&chain("bounds4u", &users(4)), "users", "u4");
}

/// permissive.cil with its process class's permissions replaced by `perms`.
fn process_perms(label: &str, perms: &'static str) -> Vec<u8> {
    let path = compile_variant("permissive", label, 33, move |s| {
        let class = "(class process (fork transition signal getattr dyntransition))";
        assert!(s.contains(class));
        s.replace(class, &format!("(class process ({perms}))"))
    });
    std::fs::read(path).unwrap()
}

// policydb_read (Linux 5.9+): "process transition permission is required" and "process
// dyntransition permission is required", each on its own.
#[test]
fn process_class_needs_transition_and_dyntransition() {
    read_policy(&process_perms(
        "proc_both",
        "fork transition signal getattr dyntransition",
    ))
    .expect("both present loads");
    for (label, perms, missing) in [
        (
            "proc_no_dyn",
            "fork transition signal getattr",
            "dyntransition",
        ),
        (
            "proc_no_trans",
            "fork signal getattr dyntransition",
            "transition",
        ),
    ] {
        let bytes = process_perms(label, perms);
        let Err(e) = read_policy(&bytes) else {
            panic!("{label}: a process class without {missing} loads")
        };
        let msg = e.to_string();
        assert!(
            msg.starts_with("classes, byte ") && msg.contains(missing),
            "{label}: {msg}"
        );
        let entry = &bytes[e.offset()..(e.offset() + 40).min(bytes.len())];
        assert!(
            entry.windows(7).any(|w| w == b"process"),
            "{label}: {msg}: not at the process class's entry"
        );
    }
}

/// Where conditional type_transitions for (source, target, class) start in `bytes`: where
/// their key (three u16 values and the TRANSITION kind, enabled bit either way) occurs.
fn cond_rules_at(bytes: &[u8], key: [u16; 3]) -> Vec<usize> {
    let mut hits = Vec::new();
    for (i, w) in bytes.windows(8).enumerate() {
        let f = |k: usize| u16::from_le_bytes([w[2 * k], w[2 * k + 1]]);
        if [f(0), f(1), f(2)] == key && f(3) & 0x7fff == 0x0010 {
            hits.push(i);
        }
    }
    hits
}

// conditional.c cond_insertf: a type rule's key may appear in the conditional rules once, or
// twice as one conditional's true-list rule and its false-list rule; anything else is refused
// ("conflicting type rules").
#[test]
fn duplicate_conditional_type_rules_are_refused() {
    let bytes = std::fs::read(compile_conf("cond_rules", 33)).unwrap();
    let p = read_policy(&bytes).expect("one rule per key in a true and a false list loads");
    let v = |n: &seaccess_policy::Names, s: &str| n.value(s).unwrap() as u16;
    let (init, doc) = (v(&p.type_names, "init_t"), v(&p.type_names, "doc_t"));
    let (file, dir, process) = (
        v(&p.class_names, "file"),
        v(&p.class_names, "dir"),
        v(&p.class_names, "process"),
    );
    for (label, from, to) in [
        // b2's (init_t, doc_t, dir) rule becomes a second rule for b1's (init_t, doc_t, file).
        ("across conditionals", dir, file),
        // b2's (init_t, doc_t, process) rule becomes a second (init_t, doc_t, dir) in its list.
        ("within one list", process, dir),
    ] {
        let mut bad = bytes.clone();
        let [at] = cond_rules_at(&bad, [init, doc, from])[..] else {
            panic!("{label}: rule not found once")
        };
        bad[at + 4..at + 6].copy_from_slice(&to.to_le_bytes());
        let Err(e) = read_policy(&bad) else {
            panic!("{label}: duplicate conditional type rules load")
        };
        let msg = e.to_string();
        // Reported at whichever of the rules for the key comes later in the file.
        let rules = cond_rules_at(&bad, [init, doc, to]);
        assert!(
            msg.starts_with("conditional rules, byte ") && rules.contains(&e.offset()),
            "{label}: {msg}; rules at {rules:?}"
        );
    }
}

/// Where unconditional rules with key (source, target, class) and exactly kind `spec` start.
fn rules_at(bytes: &[u8], key: [u16; 3], spec: u16) -> Vec<usize> {
    let mut hits = Vec::new();
    for (i, w) in bytes.windows(8).enumerate() {
        let f = |k: usize| u16::from_le_bytes([w[2 * k], w[2 * k + 1]]);
        if [f(0), f(1), f(2), f(3)] == [key[0], key[1], key[2], spec] {
            hits.push(i);
        }
    }
    hits
}

// avtab_insert refuses a second rule of one kind for one key; the error points at the second.
#[test]
fn duplicate_unconditional_rule_is_reported_at_the_second() {
    let bytes = std::fs::read(compile_conf("holes", 33)).unwrap();
    let p = read_policy(&bytes).unwrap();
    let v = |n: &seaccess_policy::Names, s: &str| n.value(s).unwrap() as u16;
    let (kernel, init, doc) = (
        v(&p.type_names, "kernel_t"),
        v(&p.type_names, "init_t"),
        v(&p.type_names, "doc_t"),
    );
    let (file, process) = (v(&p.class_names, "file"), v(&p.class_names, "process"));
    // holes.conf: type_transition kernel_t doc_t : file and kernel_t init_t : process.
    let [a] = rules_at(&bytes, [kernel, doc, file], 0x10)[..] else {
        panic!("kernel_t doc_t file rule not found once")
    };
    let [b] = rules_at(&bytes, [kernel, init, process], 0x10)[..] else {
        panic!("kernel_t init_t process rule not found once")
    };
    let mut bad = bytes.clone();
    bad[b + 2..b + 4].copy_from_slice(&doc.to_le_bytes());
    bad[b + 4..b + 6].copy_from_slice(&file.to_le_bytes());
    let Err(e) = read_policy(&bad) else {
        panic!("two type_transitions for one key load")
    };
    let msg = e.to_string();
    assert!(
        msg.starts_with(&format!("access vector table, byte {}:", a.max(b))),
        "{msg} (rules at {a} and {b})"
    );
    assert!(
        msg.contains("kernel_t") && msg.contains("doc_t") && msg.contains("file"),
        "{msg}"
    );
}
