//! Which specification answers when several match: libselinux 3.4's order (label_file.c's
//! sort_specs and lookup_all, init's file order, selabel_sub's), on small sets written here, so
//! that no libselinux peer is needed to guard it (crates/label/tests/libselinux.rs compares
//! with libselinux itself where it is built). The rules:
//! - every specification with a regex meta character comes before every one without, across all
//!   the files of the set, each group in reading order; the last that matches wins: so an exact
//!   path wins over any expression, wherever each is written;
//! - of two matching expressions (or two exact paths), the later one wins, however specific the
//!   earlier one is;
//! - an escaped character (`\.`) is not a meta character for that sort;
//! - the files are read base, `.homedirs`, `.local`: a later file's specification comes later;
//! - a file-type qualifier is a filter, not a rank: a later specification of another type does
//!   not hide an earlier one that matches the type asked;
//! - `<<none>>` is an answer like any other: the later one wins, and it means "no label";
//! - `.subs` is applied before `.subs_dist`, and `.subs_dist` to `.subs`' result.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::PathBuf;

use seaccess_label::{FileContexts, FileKind, OpenOptions};

/// A set in a scratch directory: `file_contexts` and the named files beside it.
fn set(name: &str, base: &str, beside: &[(&str, &str)]) -> FileContexts {
    let d = std::env::temp_dir().join(format!("seaccess-ordering-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let fc: PathBuf = d.join("file_contexts");
    std::fs::write(&fc, base).unwrap();
    for (suffix, text) in beside {
        std::fs::write(d.join(format!("file_contexts.{suffix}")), text).unwrap();
    }
    // Some sets hold the same expression twice (which one wins is the point): opened as
    // libselinux opens without validating, which accepts that (a default open refuses it).
    let got = FileContexts::open_with(
        &fc,
        &OpenOptions {
            allow_duplicates: true,
            ..Default::default()
        },
    )
    .unwrap();
    std::fs::remove_dir_all(&d).unwrap();
    got
}

fn ctx<'a>(fc: &'a FileContexts, path: &str, kind: FileKind) -> Option<&'a str> {
    fc.context(path.as_bytes(), kind).unwrap()
}

#[test]
fn an_exact_path_listed_before_an_expression_still_wins() {
    let fc = set("exact", "/a/b\tu:r:exact_t:s0\n/a(/.*)?\tu:r:tree_t:s0\n/a/[bc]\tu:r:class_t:s0\n/a/.*\tu:r:any_t:s0\n", &[]);
    assert_eq!(ctx(&fc, "/a/b", FileKind::File), Some("u:r:exact_t:s0"));
    assert_eq!(ctx(&fc, "/a/c", FileKind::File), Some("u:r:any_t:s0"));
    assert_eq!(ctx(&fc, "/a", FileKind::Dir), Some("u:r:tree_t:s0"));
}

#[test]
fn of_two_matching_expressions_the_later_wins() {
    // The later one wins even where the earlier is the more specific.
    let fc = set(
        "later",
        "/a/b(/.*)?\tu:r:specific_t:s0\n/a(/.*)?\tu:r:general_t:s0\n",
        &[],
    );
    assert_eq!(ctx(&fc, "/a/b/x", FileKind::File), Some("u:r:general_t:s0"));
    let fc = set(
        "later2",
        "/a(/.*)?\tu:r:general_t:s0\n/a/b(/.*)?\tu:r:specific_t:s0\n/a/b/[xy]\tu:r:xy_t:s0\n",
        &[],
    );
    assert_eq!(ctx(&fc, "/a/b/x", FileKind::File), Some("u:r:xy_t:s0"));
    assert_eq!(
        ctx(&fc, "/a/b/z", FileKind::File),
        Some("u:r:specific_t:s0")
    );
    assert_eq!(ctx(&fc, "/a/c", FileKind::File), Some("u:r:general_t:s0"));
}

#[test]
fn of_two_exact_paths_the_later_wins() {
    let fc = set("exact2", "/a/b\tu:r:one_t:s0\n/a/b\tu:r:two_t:s0\n", &[]);
    assert_eq!(ctx(&fc, "/a/b", FileKind::File), Some("u:r:two_t:s0"));
}

#[test]
fn an_escaped_dot_sorts_as_an_exact_path() {
    let fc = set(
        "escaped",
        "/a/b\\.c\tu:r:escaped_t:s0\n/a/.*\tu:r:any_t:s0\n",
        &[],
    );
    assert_eq!(ctx(&fc, "/a/b.c", FileKind::File), Some("u:r:escaped_t:s0"));
    assert_eq!(ctx(&fc, "/a/bxc", FileKind::File), Some("u:r:any_t:s0"));
}

#[test]
fn a_file_type_filters_and_does_not_rank() {
    let fc = set(
        "types",
        "/a(/.*)?\tu:r:any_t:s0\n/a/.* -d\tu:r:dir_t:s0\n/a/.* --\tu:r:file_t:s0\n",
        &[],
    );
    assert_eq!(ctx(&fc, "/a/x", FileKind::File), Some("u:r:file_t:s0"));
    assert_eq!(ctx(&fc, "/a/x", FileKind::Dir), Some("u:r:dir_t:s0"));
    assert_eq!(ctx(&fc, "/a/x", FileKind::Lnk), Some("u:r:any_t:s0"));
    // A lookup of no particular type (matchpathcon without a mode) takes the last match.
    assert_eq!(ctx(&fc, "/a/x", FileKind::Any), Some("u:r:file_t:s0"));
}

#[test]
fn a_later_none_wins_and_means_no_label() {
    let fc = set(
        "none",
        "/a(/.*)?\tu:r:a_t:s0\n/a/none(/.*)?\t<<none>>\n/a/none/back\tu:r:back_t:s0\n",
        &[],
    );
    assert_eq!(ctx(&fc, "/a/none/x", FileKind::File), None);
    assert_eq!(
        ctx(&fc, "/a/none/back", FileKind::File),
        Some("u:r:back_t:s0")
    );
    assert_eq!(ctx(&fc, "/a/y", FileKind::File), Some("u:r:a_t:s0"));
}

#[test]
fn homedirs_then_local_come_after_the_base_file() {
    let base = "/a(/.*)?\tu:r:base_t:s0\n/a/b\tu:r:base_exact_t:s0\n";
    let fc = set(
        "files",
        base,
        &[
            ("homedirs", "/a(/.*)?\tu:r:home_t:s0\n"),
            ("local", "/a(/.*)?\tu:r:local_t:s0\n"),
        ],
    );
    assert_eq!(ctx(&fc, "/a/x", FileKind::File), Some("u:r:local_t:s0"));
    // An exact path of the base file still wins over an expression of .local.
    assert_eq!(
        ctx(&fc, "/a/b", FileKind::File),
        Some("u:r:base_exact_t:s0")
    );
    let fc = set("files2", base, &[("homedirs", "/a(/.*)?\tu:r:home_t:s0\n")]);
    assert_eq!(ctx(&fc, "/a/x", FileKind::File), Some("u:r:home_t:s0"));
    let fc = set(
        "files3",
        base,
        &[
            ("local", "/a/b\tu:r:local_exact_t:s0\n"),
            ("homedirs", "/a/b\tu:r:home_exact_t:s0\n"),
        ],
    );
    assert_eq!(
        ctx(&fc, "/a/b", FileKind::File),
        Some("u:r:local_exact_t:s0")
    );
}

#[test]
fn subs_then_subs_dist_on_its_result() {
    let base = "/srv(/.*)?\tu:r:srv_t:s0\n/var/www(/.*)?\tu:r:www_t:s0\n/web(/.*)?\tu:r:web_t:s0\n";
    let fc = set(
        "subs",
        base,
        &[("subs", "/web /srv/www\n"), ("subs_dist", "/srv /var\n")],
    );
    assert_eq!(ctx(&fc, "/web/x", FileKind::File), Some("u:r:www_t:s0"));
    // .subs_dist alone where .subs has no line for the path.
    assert_eq!(ctx(&fc, "/srv/y", FileKind::File), None);
    assert_eq!(ctx(&fc, "/srv/www/y", FileKind::File), Some("u:r:www_t:s0"));
}

// seaccess's compiled form (`label --compile`) keeps the order: every answer above, the same.
#[test]
fn the_compiled_form_keeps_the_order() {
    let base = "/a/b\tu:r:exact_t:s0\n/a(/.*)?\tu:r:tree_t:s0\n/a/b(/.*)?\tu:r:specific_t:s0\n/a(/.*)?\tu:r:general_t:s0\n/a/b\\.c\tu:r:escaped_t:s0\n/a/.* -d\tu:r:dir_t:s0\n/a/none(/.*)?\t<<none>>\n";
    let fc = set(
        "compiled",
        base,
        &[
            ("local", "/a/l(/.*)?\tu:r:local_t:s0\n"),
            ("subs", "/w /a\n"),
        ],
    );
    let back = seaccess_label::compiled::from_bytes(
        std::path::Path::new("x.sea"),
        &seaccess_label::compiled::to_bytes(&fc),
    )
    .unwrap();
    for p in [
        "/a/b",
        "/a/b/x",
        "/a/c",
        "/a/b.c",
        "/a/none/x",
        "/a/l/q",
        "/w/b",
        "/w/l/z",
    ] {
        for k in [FileKind::File, FileKind::Dir, FileKind::Any] {
            assert_eq!(ctx(&back, p, k), ctx(&fc, p, k), "{p} as {}", k.name());
        }
    }
    assert_eq!(ctx(&back, "/w/b", FileKind::File), Some("u:r:exact_t:s0"));
}
