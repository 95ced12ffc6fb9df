//! A class map of the object-manager mapping (`Generation::map_classes`) holds the numbers of
//! the policy it was made from; used with a generation of another policy load it must be
//! refused, not read with the other policy's numbering. classorder_a and classorder_b differ
//! only in the order of `file` and `process`: `file read` mapped under one is `process fork`
//! under the other, which both allow proc_t on itself.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seaccess_testkit::{compile, load, sid};

#[test]
fn a_class_map_answers_only_with_its_own_policy() {
    let server = load(&compile("classorder_a", 33));
    let a = server.snapshot();
    let p = sid(&a, "sys_u:sys_r:proc_t");
    let map = a.map_classes(&[("file", &["read"][..])]).unwrap();
    let d = a.compute_av_mapped(p, p, &map, 0).unwrap();
    assert_eq!(
        d.allowed.0 & 1,
        0,
        "classorder_a allows proc_t no file read"
    );
    // A boolean commit keeps the policy and its numbers: the map still answers.
    server.commit_booleans();
    assert_eq!(
        server
            .snapshot()
            .compute_av_mapped(p, p, &map, 0)
            .unwrap()
            .allowed
            .0
            & 1,
        0
    );
    server
        .reload(&std::fs::read(compile("classorder_b", 33)).unwrap())
        .unwrap();
    let b = server.snapshot();
    match b.compute_av_mapped(p, p, &map, 0) {
        Ok(d) => assert_eq!(
            d.allowed.0 & 1,
            0,
            "classorder_a's map read with classorder_b's numbers granted file read: {d:?}"
        ),
        Err(e) => assert!(e.to_string().contains("another policy"), "{e}"),
    }
    assert!(
        b.compute_av_mapped(p, p, &map, 0).is_err(),
        "a map of another policy load must be refused"
    );
}
