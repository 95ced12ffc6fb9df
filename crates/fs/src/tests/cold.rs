//! Cold nodes (see [`crate::hot`]): a node that gave up its descriptor opens its own inode
//! again by file handle, with its label blob and id unchanged, or fails ESTALE once that
//! inode is gone; never another file, whatever became of its names. An inode number reused
//! while its old node is cold gets a new node. The node descriptors stay within the budget
//! however many files are walked; on a file system without handles, nodes keep their
//! descriptors and the kernel is asked to forget them instead.

use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::sync::Arc;

use super::{ctx, errno, escape, req, set_attr, snapshot, Scratch, ETC, SHADOW};
use crate::core::attrs::SetAttr;

fn os(s: &str) -> &OsStr {
    OsStr::new(s)
}

// A cold node is opened again to its own inode, keeping its id and its label blob: a getattr
// answers for the same inode, the label is the one read when the node was made (the store
// attribute is not read again), and a lookup of its name finds the same node. A symbolic
// link comes back as the link itself (readlink works, and answers the link's text), and a
// cold directory still resolves its entries.
//
// Break tried: Node::adopt never adopting (a cold node's lookup makes a new node): the second
// lookup answered another id and blob.
#[test]
fn a_cold_node_is_reopened_to_its_inode_with_its_label() {
    let Some(pol) = super::ready("cold_reopen") else {
        return;
    };
    let s = Scratch::new("cold_reopen");
    let src = s.src();
    std::fs::write(src.join("f"), "f").unwrap();
    set_attr(&src.join("f"), "trusted.selinux", SHADOW);
    std::os::unix::fs::symlink(s.outside(), src.join("l")).unwrap();
    std::fs::create_dir(src.join("d")).unwrap();
    std::fs::write(src.join("d/inside"), "inside").unwrap();
    let (core, hot) = s.core_with(&pol, 1000);
    let r = req();
    let (n, st) = core.lookup(r, 1, os("f")).unwrap();
    let sec = n.sec.clone();
    n.cool(false);
    assert!(!n.is_hot(), "cooled");
    let held = hot.held();
    // The store changes around the mount: a cold node does not read its label again.
    set_attr(&src.join("f"), "trusted.selinux", ETC);
    assert_eq!(
        core.getattr(r, n.id, None).unwrap().stx_ino,
        st.stx_ino,
        "getattr answered for another inode"
    );
    assert!(n.is_hot() && hot.held() == held + 1, "reopened and counted");
    assert_eq!(
        core.getxattr(r, n.id, "security.selinux").unwrap(),
        ctx(SHADOW),
        "the label blob changed"
    );
    n.cool(false);
    let (again, _) = core.lookup(r, 1, os("f")).unwrap();
    assert!(
        Arc::ptr_eq(&again, &n) && Arc::ptr_eq(&again.sec, &sec),
        "the lookup of a cold node's name made another node ({} for {})",
        again.id,
        n.id
    );
    assert!(n.is_hot(), "the lookup's descriptor was taken");

    let (l, _) = core.lookup(r, 1, os("l")).unwrap();
    l.cool(false);
    assert_eq!(
        core.readlink(r, l.id).unwrap(),
        s.outside(),
        "the link itself"
    );
    assert_eq!(
        u32::from(core.getattr(r, l.id, None).unwrap().stx_mode) & libc::S_IFMT,
        libc::S_IFLNK
    );

    let (d, _) = core.lookup(r, 1, os("d")).unwrap();
    d.cool(false);
    let (i, st) = core.lookup(r, d.id, os("inside")).unwrap();
    assert_eq!(
        st.stx_ino,
        std::fs::metadata(src.join("d/inside")).unwrap().ino()
    );
    assert_ne!(i.id, d.id);
}

// The attack of item 1 on a cold victim: `pub/d/victim` unlinked, `pub/d` replaced by a link
// to `outside/`, and the victim's node cooled. Nothing else holds the inode, so it is freed:
// every operation on the node fails ESTALE, and `outside/victim` is untouched.
//
// Breaks tried: Node::fd reopening a cold node by its path text (following links) instead of
// its handle: Tree::reopen's (dev, ino) check still answered ESTALE; with that check removed
// too, chmod reached outside/victim and the snapshot differed.
#[test]
fn a_cold_freed_victim_is_stale_and_nothing_outside_changes() {
    let Some(a) = escape::attack("cold_freed") else {
        return;
    };
    let (core, v, r) = (&a.core, &a.victim, req());
    v.cool(false);
    let stale = |e: i32, what: &str| assert_eq!(e, libc::ESTALE, "{what}");
    stale(
        errno(core.setattr(
            r,
            v.id,
            &SetAttr {
                mode: Some(0o666),
                ..Default::default()
            },
        )),
        "chmod",
    );
    stale(
        errno(core.setattr(
            r,
            v.id,
            &SetAttr {
                uid: Some(4321),
                ..Default::default()
            },
        )),
        "chown",
    );
    stale(
        errno(core.setattr(
            r,
            v.id,
            &SetAttr {
                size: Some(0),
                ..Default::default()
            },
        )),
        "truncate",
    );
    stale(errno(core.open(r, v.id, libc::O_RDWR)), "open");
    stale(errno(core.getattr(r, v.id, None)), "getattr");
    stale(errno(core.setxattr(r, v.id, "user.x", b"1", 0)), "setxattr");
    stale(errno(core.getxattr(r, v.id, "user.o")), "getxattr");
    stale(errno(core.listxattr(r, v.id)), "listxattr");
    stale(
        errno(core.setxattr(r, v.id, "security.selinux", &ctx(super::TMP), 0)),
        "relabel",
    );
    assert_eq!(snapshot(&a.s.outside()), a.before, "outside/victim changed");
}

// The same attack with the victim kept open by its caller (so its inode lives on, unlinked):
// the cold node opens exactly that inode again, and chmod, write and truncate land on it,
// never on `outside/victim`.
//
// Break tried: as above (reopen by path, the (dev, ino) check removed): the writes reached
// outside/victim.
#[test]
fn a_cold_open_victim_acts_on_its_own_inode() {
    let Some(a) = escape::attack("cold_open") else {
        return;
    };
    let (core, v, r) = (&a.core, &a.victim, req());
    // Reopened while still hot: the caller's open file holds the inode from here on.
    let held = core.open(r, v.id, libc::O_RDWR).unwrap();
    v.cool(false);
    let st = core
        .setattr(
            r,
            v.id,
            &SetAttr {
                mode: Some(0o666),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(u32::from(st.stx_mode) & 0o7777, 0o666);
    assert_eq!(
        core.getattr(r, v.id, Some(held)).unwrap().stx_mode,
        st.stx_mode,
        "chmod reached another inode than the open file's"
    );
    v.cool(false);
    let fh = core.open(r, v.id, libc::O_WRONLY).unwrap();
    core.write(r, fh, 0, b"pwned!!!").unwrap();
    core.release(fh);
    v.cool(false);
    core.setattr(
        r,
        v.id,
        &SetAttr {
            size: Some(5),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(
        core.read(r, held, 0, 100).unwrap(),
        b"pwned",
        "the victim's own bytes"
    );
    let outside = std::fs::symlink_metadata(a.s.outside().join("victim")).unwrap();
    assert_eq!(outside.permissions().mode() & 0o7777, 0o600);
    assert_eq!(snapshot(&a.s.outside()), a.before, "outside/victim changed");
    core.release(held);
}

// An inode freed while its node is cold, its number given to a new file: a lookup of the new
// file makes a new node with the new file's own label (the handles differ), the old node
// answers ESTALE, and the kernel forgetting the old node does not take the key from the new.
//
// Break tried: Node::adopt taking a cold node's key match as the same inode without comparing
// handles: the new file's lookup answered the old node, with the old file's label.
#[test]
fn an_inode_number_reused_while_cold_gets_a_new_node() {
    let Some(pol) = super::ready("cold_reuse") else {
        return;
    };
    let s = Scratch::new("cold_reuse");
    let src = s.src();
    std::fs::write(src.join("old"), "old").unwrap();
    set_attr(&src.join("old"), "trusted.selinux", SHADOW);
    let (core, _hot) = s.core_with(&pol, 1000);
    let r = req();
    let (old, st) = core.lookup(r, 1, os("old")).unwrap();
    assert_eq!(
        core.getxattr(r, old.id, "security.selinux").unwrap(),
        ctx(SHADOW)
    );
    old.cool(false);
    std::fs::remove_file(src.join("old")).unwrap();
    // ext4 gives a freed inode number to the next file made in its group; other files made
    // on the machine meanwhile may take it first.
    let Some(name) = (0..200).map(|i| format!("new{i}")).find(|n| {
        std::fs::write(src.join(n), "new").unwrap();
        std::fs::metadata(src.join(n)).unwrap().ino() == st.stx_ino
    }) else {
        eprintln!("SKIP: an_inode_number_reused_while_cold_gets_a_new_node: the file system gave inode {} to no new file", st.stx_ino);
        return;
    };
    set_attr(&src.join(&name), "trusted.selinux", ETC);
    let (new, nst) = core.lookup(r, 1, os(&name)).unwrap();
    assert_eq!(
        (nst.stx_ino, nst.stx_dev_major, nst.stx_dev_minor),
        (st.stx_ino, st.stx_dev_major, st.stx_dev_minor),
        "the same key"
    );
    assert_ne!(new.id, old.id, "the new file was given the old file's node");
    assert_eq!(
        core.getxattr(r, new.id, "security.selinux").unwrap(),
        ctx(ETC),
        "the new file's own label"
    );
    assert_eq!(
        errno(core.getattr(r, old.id, None)),
        libc::ESTALE,
        "the old node answers for its freed inode"
    );
    core.forget(old.id, 1);
    let (again, _) = core.lookup(r, 1, os(&name)).unwrap();
    assert!(
        Arc::ptr_eq(&again, &new),
        "forgetting the old node took the key from the new one"
    );
}

// A walk of twenty times more files than the budget: node descriptors never exceed it (the
// pool's count, and the nodes actually holding one), every node is kept (ids and label blobs
// unchanged at the second walk), and every file answers.
//
// Break tried: Hot::heated never cooling: 301 descriptors held against a budget of 16.
#[test]
fn the_hot_budget_holds_under_a_long_walk() {
    let Some(pol) = super::ready("cold_budget") else {
        return;
    };
    let s = Scratch::new("cold_budget");
    let names: Vec<String> = (0..300).map(|i| format!("f{i}")).collect();
    for n in &names {
        std::fs::write(s.src().join(n), n).unwrap();
    }
    const BUDGET: usize = 16;
    let (core, hot) = s.core_with(&pol, BUDGET);
    let r = req();
    let mut first = Vec::new();
    for n in &names {
        let (node, st) = core.lookup(r, 1, os(n)).unwrap();
        assert_eq!(core.getattr(r, node.id, None).unwrap().stx_ino, st.stx_ino);
        assert!(
            hot.held() <= BUDGET,
            "{} node descriptors held, budget {BUDGET}",
            hot.held()
        );
        first.push((node.id, node.sec.clone()));
    }
    let all = core.nodes().all();
    assert_eq!(all.len(), names.len() + 1, "nodes were dropped, not cooled");
    let really = all.iter().filter(|n| n.is_hot()).count();
    assert!(
        really <= BUDGET && really == hot.held(),
        "{really} nodes hold a descriptor, {} counted",
        hot.held()
    );
    for (n, (id, sec)) in names.iter().zip(&first) {
        let (node, _) = core.lookup(r, 1, os(n)).unwrap();
        assert!(
            node.id == *id && Arc::ptr_eq(&node.sec, sec),
            "{n}: made again"
        );
        let fh = core.open(r, node.id, libc::O_RDONLY).unwrap();
        assert_eq!(core.read(r, fh, 0, 10).unwrap(), n.as_bytes());
        core.release(fh);
    }
    assert!(hot.held() <= BUDGET);
    drop(all);
    drop(first);
    drop(core);
    assert_eq!(
        hot.held(),
        0,
        "descriptors counted after their nodes were gone"
    );
}

// Cooling never closes a descriptor an operation holds: threads stat nodes while another cools
// them all, over and over; every stat answers for its own inode.
//
// Break tried: Node::fd handing out a dup of the slot's descriptor made after the node's lock
// was released (the descriptor may be closed, and its number reused, in between): a stat
// answered for another inode (EBADF with a yield in that window).
#[test]
fn cooling_never_closes_a_descriptor_in_use() {
    let Some(pol) = super::ready("cold_race") else {
        return;
    };
    let s = Scratch::new("cold_race");
    let names: Vec<String> = (0..8).map(|i| format!("f{i}")).collect();
    for n in &names {
        std::fs::write(s.src().join(n), n).unwrap();
    }
    let (core, _hot) = s.core_with(&pol, 3);
    let core = Arc::new(core);
    let r = req();
    let nodes: Vec<_> = names
        .iter()
        .map(|n| core.lookup(r, 1, os(n)).unwrap())
        .map(|(n, st)| (n, st.stx_ino))
        .collect();
    let nodes = Arc::new(nodes);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cooler = {
        let (nodes, stop) = (nodes.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                nodes.iter().for_each(|(n, _)| drop(n.cool(false)));
            }
        })
    };
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let (core, nodes) = (core.clone(), nodes.clone());
            std::thread::spawn(move || {
                for i in 0..20_000 {
                    let (n, ino) = &nodes[(i * 3 + w) % nodes.len()];
                    let fd = n.fd().unwrap();
                    // Other descriptors opened meanwhile may take a closed descriptor's number.
                    let _noise = rustix::fs::open(
                        "/dev/null",
                        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
                        rustix::fs::Mode::empty(),
                    )
                    .unwrap();
                    let st = crate::backing::stat(fd.as_fd()).unwrap();
                    assert_eq!(st.stx_ino, *ino, "another inode");
                    let _ = core.getattr(req(), n.id, None).unwrap();
                }
            })
        })
        .collect();
    let results: Vec<_> = workers.into_iter().map(|w| w.join()).collect();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    cooler.join().unwrap();
    assert!(results.iter().all(|r| r.is_ok()), "a worker failed");
}

// Where the file system gives no file handles (ramfs), nodes keep their descriptors beyond
// the budget (none can be reopened), and the kernel is asked to forget the least used of them
// (Core::to_forget); where it gives handles, it is never asked (nodes are cooled instead).
//
// Break tried: Nodes::least_used offering nodes with a handle too: the ext4 tree's nodes were
// offered to be forgotten.
#[test]
fn without_handles_nodes_are_pinned_and_forgotten() {
    let Some(pol) = super::ready("cold_pinned") else {
        return;
    };
    let s = Scratch::new("cold_pinned");
    for f in ["a", "b", "c", "d", "e", "f"] {
        std::fs::write(s.src().join(f), f).unwrap();
    }
    let r = req();
    let (core, hot) = s.core_with(&pol, 3);
    assert!(!core.pins_nodes());
    for f in ["a", "b", "c", "d", "e", "f"] {
        core.lookup(r, 1, os(f)).unwrap();
    }
    assert!(
        hot.held() <= 3 && core.nodes().least_used(usize::MAX, 0, 0).is_empty(),
        "a node with a handle offered to be forgotten"
    );
    drop(core);
    if !s.mount(&["-t", "ramfs", "none"], &s.src()) {
        eprintln!("SKIP: without_handles_nodes_are_pinned_and_forgotten: cannot mount ramfs");
        return;
    }
    let names = ["a", "b", "c", "d", "e", "f"];
    for f in names {
        std::fs::write(s.src().join(f), f).unwrap();
    }
    let (core, hot) = s.core_with(&pol, 3);
    assert!(core.pins_nodes(), "ramfs gives no handles");
    let ids: Vec<u64> = names
        .iter()
        .map(|f| core.lookup(r, 1, os(f)).unwrap().0.id)
        .collect();
    assert_eq!(
        hot.held(),
        names.len() + 1,
        "pinned nodes keep their descriptors"
    );
    for id in &ids {
        core.getattr(r, *id, None).unwrap();
    }
    let mut forget = core.to_forget();
    forget.sort_unstable();
    assert!(
        !forget.is_empty() && forget.iter().all(|id| ids.contains(id)),
        "{forget:?} of {ids:?}"
    );
}
