//! One check answered from a warm cache, at every layer, for callgrind to count
//! (`seaccess-lab bench hit-path`): seaccess's cache (`Avc::decide`, `Avc::check_at`,
//! `Avc::has_perm_noaudit`), each comparison design of [`crate::designs`] asked the same, the
//! object manager's hooks on warm objects, and a loop that checks nothing, whose cost every
//! other row has subtracted from it.
//!
//! Every row runs the same loop over the same working set (the triples `bench avc` uses, each
//! asking the lowest permission its decision allows), so that the loop's own instructions are
//! the same in each and the `loop` row measures them. The hooks ask of one object each (a
//! socket, a pipe's inode and its open file), whatever the triple; they still walk the working
//! set so that their loop is the others'.

use std::hint::black_box;
use std::sync::Arc;

use seaccess_objmgr::hooks::fs::MAY_READ;
use seaccess_security::SecurityServer;
use seaccess_types::{AccessServer, AccessVector, ClassId, Sid};

use crate::designs::*;
use crate::mediate::{objects, pick_domain, DOMAINS};
use crate::LabError;

/// The rows, in the table's order: name and what is counted.
pub const ROWS: &[(&str, &str)] = &[
    ("loop", "the loop alone: a check answered from its arguments (subtracted from every other row)"),
    ("avc_decide", "seaccess's cache: Avc::decide, the decision of a cached triple"),
    ("avc_check_at", "seaccess's cache: Avc::check_at, the object manager's check (decision, verdict, policy seqno)"),
    ("avc_noaudit", "seaccess's cache: Avc::has_perm_noaudit (the kernel's avc_has_perm_noaudit)"),
    ("global_mutex", "design: one global mutex (libselinux, the kernel before 2001)"),
    ("global_rwlock", "design: one global reader-writer lock"),
    ("bucket_mutex", "design: a mutex per bucket"),
    ("bucket_rwlock", "design: a reader-writer lock per bucket"),
    ("block_mutex", "design: a mutex per block of 16 buckets"),
    ("hook_socket", "object manager: selinux_socket_sendmsg on a Unix stream socket (through the cache)"),
    ("hook_socket_grant", "object manager: selinux_socket_sendmsg on a warm Unix stream socket (its remembered grant)"),
    ("hook_inode", "object manager: selinux_inode_permission MAY_READ on a warm pipe inode (its remembered grant)"),
    ("hook_file", "object manager: selinux_file_permission MAY_READ on an open pipe (the revalidation skip)"),
];

/// (source, target, class, the requested permission).
type Ask = (Sid, Sid, ClassId, AccessVector);

/// `count` checks of row `what`; returns how many passed (every one should).
pub fn run(server: Arc<SecurityServer>, what: &str, count: u64) -> Result<u64, LabError> {
    let work = asks(&server)?;
    let dynserver: Arc<dyn AccessServer> = server.clone();
    match what {
        "loop" => Ok(drive(&work, count, |s, t, _, p| s.0 ^ t.0 != p.0)),
        "avc_decide" | "avc_check_at" | "avc_noaudit" => {
            let avc = seaccess_avc::Avc::new(dynserver, seaccess_avc::DEFAULT_CAPACITY);
            warm(&avc, &work);
            let at = avc.seqno();
            Ok(match what {
                "avc_decide" => decided(&avc, &work, count),
                "avc_check_at" => drive(
                    &work,
                    count,
                    |s, t, c, p| matches!(avc.check_at(s, t, c, p, at), Ok(Ok(v)) if v.allowed()),
                ),
                _ => drive(&work, count, |s, t, c, p| {
                    avc.has_perm_noaudit(s, t, c, p).is_ok()
                }),
            })
        }
        "global_mutex" => Ok(design(&GlobalMutex::new(dynserver), &work, count)),
        "global_rwlock" => Ok(design(&GlobalRwLock::new(dynserver), &work, count)),
        "bucket_mutex" => Ok(design(&BucketMutex::new(dynserver), &work, count)),
        "bucket_rwlock" => Ok(design(&BucketRwLock::new(dynserver), &work, count)),
        "block_mutex" => Ok(design(&BlockMutex::new(dynserver), &work, count)),
        "hook_socket" | "hook_socket_grant" | "hook_inode" | "hook_file" => {
            hooks(server, &work, what, count)
        }
        _ => Err(LabError::Setup {
            what: format!(
                "no row {what}: expected one of {}",
                ROWS.iter().map(|r| r.0).collect::<Vec<_>>().join(", ")
            ),
        }),
    }
}

/// The working set: `bench avc`'s triples whose decision allows something, each asking the
/// lowest permission allowed.
fn asks(server: &SecurityServer) -> Result<Vec<Ask>, LabError> {
    let g = server.snapshot();
    let work: Vec<Ask> = crate::avc_bench::working_set(server, 400, 1)
        .into_iter()
        .filter_map(|(s, t, c)| {
            let a = g.compute_av(s, t, c).ok()?.allowed.0;
            (a != 0).then(|| (s, t, c, AccessVector(a & a.wrapping_neg())))
        })
        .collect();
    if work.is_empty() {
        return Err(LabError::Setup {
            what: "the policy allows none of the working set's triples anything".into(),
        });
    }
    Ok(work)
}

/// A design warmed with every triple, then `count` checks.
fn design<C: DecisionCache>(cache: &C, work: &[Ask], count: u64) -> u64 {
    warm(cache, work);
    decided(cache, work, count)
}

/// Every triple asked once, so that each is cached.
fn warm<C: DecisionCache>(cache: &C, work: &[Ask]) {
    for &(s, t, c, _) in work {
        let _ = cache.decide(s, t, c);
    }
}

/// `count` checks through `decide` and a test of the requested permission.
fn decided<C: DecisionCache>(cache: &C, work: &[Ask], count: u64) -> u64 {
    drive(work, count, |s, t, c, p| {
        cache
            .decide(s, t, c)
            .is_ok_and(|d| (p & !d.allowed).is_empty())
    })
}

/// The loop every row shares: `count` checks, walking the working set. Out of line, one copy
/// per row: each row's check is inlined into a loop of its own, so that how the compiler lays
/// out one row's code does not move another's count.
#[inline(never)]
fn drive(work: &[Ask], count: u64, check: impl Fn(Sid, Sid, ClassId, AccessVector) -> bool) -> u64 {
    let mut passed = 0u64;
    let mut i = 0;
    for _ in 0..count {
        if let Some(&(s, t, c, p)) = work.get(i) {
            passed += u64::from(check(s, t, c, p));
        }
        i += 1;
        if i == work.len() {
            i = 0;
        }
    }
    black_box(passed)
}

/// The object manager's hooks on warm objects of the first domain of [`DOMAINS`] the policy
/// lets use them.
fn hooks(
    server: Arc<SecurityServer>,
    work: &[Ask],
    what: &str,
    count: u64,
) -> Result<u64, LabError> {
    let (_, sid) = pick_domain(&server, DOMAINS)?;
    let o = objects(&server, sid)?;
    let (om, task, sock, inode, file) = (&o.om, &o.task, &o.sock, &o.inode, &o.file);
    // `objects` leaves the socket's remembered grant off (every send through the cache).
    om.fast_paths().set_sockets(what == "hook_socket_grant");
    // Warm: the first of each fills the cache and the objects' remembered grants.
    let _ = om.socket_sendmsg(task, sock);
    let _ = om.inode_permission(task, inode, MAY_READ, None);
    let _ = om.file_permission(task, file, inode, MAY_READ, "pipe:");
    Ok(match what {
        "hook_socket" | "hook_socket_grant" => drive(work, count, |_, _, _, _| {
            om.socket_sendmsg(task, sock).is_ok()
        }),
        "hook_inode" => drive(work, count, |_, _, _, _| {
            om.inode_permission(task, inode, MAY_READ, None).is_ok()
        }),
        _ => drive(work, count, |_, _, _, _| {
            om.file_permission(task, file, inode, MAY_READ, "pipe:")
                .is_ok()
        }),
    })
}
