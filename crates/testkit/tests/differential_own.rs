//! seaccess against libsepol on the project's own test policies, at every policy version each
//! supports: every (source, target, class) triple over contexts covering every user, role, type
//! and each user's levels.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_testkit::*;

#[test]
fn own_policies_every_triple() {
    let Some(oracle) = oracle() else { return };
    let mut total = 0;
    for name in policy_names() {
        if header(&name).no_oracle {
            eprintln!("{name}: libsepol 3.4 cannot answer on it; checked against its source in kernel_semantics.rs");
            continue;
        }
        for v in versions(&name) {
            let path = compile(&name, v);
            let server = load(&path);
            let g = server.snapshot();
            let triples = all_triples(g.policy());
            assert!(!triples.is_empty(), "{name}.{v}: no triples");
            let (n, shown) = mismatches(&g, &oracle, &path, "av", &triples, 10);
            assert_eq!(n, 0, "{name}.{v}: {n} of {} compute_av answers differ:\n{}", triples.len(), shown.join("\n"));
            // Type rules too, where libsepol and the kernel agree (sockets differ: see
            // kernel_differences.rs).
            let non_socket: Vec<String> =
                triples.iter().filter(|q| !is_socket_class(q.rsplit(' ').next().unwrap_or(""))).cloned().collect();
            for mode in ["create", "relabel", "member"] {
                let (n, shown) = mismatches(&g, &oracle, &path, mode, &non_socket, 10);
                assert_eq!(n, 0, "{name}.{v} {mode}: {n} answers differ:\n{}", shown.join("\n"));
            }
            total += triples.len();
            eprintln!("{name}.{v}: {} triples agree", triples.len());
        }
    }
    assert!(total > 0);
}
