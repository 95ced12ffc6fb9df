//! selinux_check_access's memo of whole queries: from its four string arguments to what the
//! string cache ([`crate::lookup`]) answered for them last time (the two SIDs and the name
//! slot), so that a repeated query reads one slot instead of two contexts' and a name pair's.
//!
//! Two tables of the same slots. The first is keyed by the arguments' addresses: a program
//! passing the same buffers again pays one compare per string (no strlen, no hash of the
//! bytes). The second is keyed by the strings' bytes, for a program that asks through the same
//! buffers with other strings each time (as systemd does: `getpeercon` and `getfilecon` into
//! memory freed and allocated again), which the first misses at every call: a hash of the four
//! strings and one probe, where resolving them anew is two contexts' and a name pair's.
//!
//! A key only picks a slot; it proves nothing, since a caller may reuse a buffer for another
//! string and hashes collide. A hit is taken only when each argument equals the string
//! remembered for it: by address, up to and including its NUL, compared in place in one pass
//! that stops at the first difference ([`crate::ffi::same_c_string`]), so a shorter argument is
//! never read past its NUL; by content, whose hash measured each argument, by length first and
//! then bytes. Anything else falls back to the string cache, which refreshes both slots.
//!
//! Slots hold indexes, not pointers: a SID's (whose index may name another context after
//! avc_destroy, which a hit's string compare catches) and a name slot's (filled once, its
//! numbers carrying the seqno of the generation they were looked up in, see [`crate::lookup`]),
//! so a slot can be overwritten at any time by any thread and a policy load needs nothing here:
//! the numbers a hit gives come with their seqno, which the check compares with its decision's.
//!
//! This memo is an index into the engine's rule, not a rule of its own: what it leads to are
//! SIDs and names whose numbers are kept in `seaccess_engine::Kept` (used only with the
//! generation that found them). It stays in the C library because it compares C arguments in
//! place, an ABI-level fast path no other front end has.

use std::ffi::c_char;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};

use seaccess_types::{AccessVector, ClassId};

use crate::ffi::{self, Res};
use crate::kernel::Kernel;
use crate::lookup;
use crate::sid::{self, SecurityId};

/// Log2 of the number of buckets in each table.
const BITS: u32 = 11;
/// Which slot of a full bucket a miss takes next.
static VICTIM: AtomicU32 = AtomicU32::new(0);

/// A keyed hash of addresses (their values, never what they point to).
#[inline(always)]
fn mix(h: u64, w: usize) -> u64 {
    (h.rotate_left(26) ^ w as u64).wrapping_mul(0xf135_7aea_2e62_a9c5)
}

/// What one whole query's arguments resolve to: the two SIDs, the class and the permission,
/// the seqno of the generation that gave the class and permission their numbers, and the name
/// slot that holds the names (none for names too long for one).
pub(crate) type Query = (
    &'static SecurityId,
    &'static SecurityId,
    ClassId,
    AccessVector,
    u32,
    Option<usize>,
);

/// Slots a query may use: four in half a line, so that a program's queries, many more than its
/// strings, rarely find their slots full.
const QUERY_WAYS: usize = 4;
#[repr(align(32))]
struct Bucket([AtomicU64; QUERY_WAYS]);
type Table = [Bucket; 1 << BITS];
/// Per slot: tag (13 bits) | VALID | source SID index (20) | target SID index (20) | name
/// entry index (10); 0 is empty. A query with a SID past the first 2^20 is not remembered.
/// Keyed by the arguments' addresses.
static BY_ADDRESS: Table = [const { Bucket([const { AtomicU64::new(0) }; QUERY_WAYS]) }; 1 << BITS];
/// The same, keyed by the arguments' bytes.
static BY_CONTENT: Table = [const { Bucket([const { AtomicU64::new(0) }; QUERY_WAYS]) }; 1 << BITS];
const SID_BITS: u32 = 20;
const NAME_INDEX_BITS: u32 = 10;
const QUERY_VALID: u64 = 1 << 50;
const QUERY_TAG: u64 = !0 << 51;
const _: () =
    assert!(2 * SID_BITS + NAME_INDEX_BITS == 50 && lookup::NAME_SLOTS <= 1 << NAME_INDEX_BITS);

/// The field of `v` at bit `at`, `bits` wide.
#[inline(always)]
fn field(v: u64, at: u32, bits: u32) -> usize {
    ((v >> at) & ((1 << bits) - 1)) as usize
}

/// A key's bucket in a table (None only if the table had none) and its tag.
type Place = (Option<&'static [AtomicU64; QUERY_WAYS]>, u64);

/// Hash `h`'s bucket in `table` and its tag (the bits below the bucket's: the bucket's own
/// would tell its keys apart no further).
#[inline(always)]
fn place(table: &'static Table, h: u64) -> Place {
    (
        table.get((h >> (64 - BITS)) as usize).map(|b| &b.0),
        (h << BITS) & QUERY_TAG,
    )
}

/// The slot of the table by address for these four arguments.
#[inline(always)]
fn address_place(seed: u64, args: [*const c_char; 4]) -> Place {
    place(
        &BY_ADDRESS,
        args.iter().fold(seed, |h, &a| mix(h, a as usize)),
    )
}

/// The slot of the table by content for these four strings' bytes.
#[inline(always)]
fn content_place(seed: u64, bytes: [&[u8]; 4]) -> Place {
    place(&BY_CONTENT, bytes.into_iter().fold(seed, lookup::hash))
}

/// A slot's payload below its tag: SID indexes `si` and `ti` and name slot `ni` (None when a
/// SID index does not fit).
#[inline(always)]
fn payload(si: usize, ti: usize, ni: usize) -> Option<u64> {
    (si.max(ti) < 1 << SID_BITS && ni < 1 << NAME_INDEX_BITS)
        .then_some(QUERY_VALID | (si as u64) << 30 | (ti as u64) << 10 | ni as u64)
}

/// The query a slot of `place` remembers, if `same` finds its SIDs' and name slot's strings
/// equal to the four arguments (and gives the slot's numbers), with the slot's payload.
#[inline(always)]
fn probe(
    (bucket, tag): Place,
    same: impl Fn(&SecurityId, &SecurityId, usize) -> Option<lookup::Numbers>,
) -> Option<(Query, u64)> {
    for way in 0..QUERY_WAYS {
        let v = bucket?.get(way)?.load(Acquire);
        if v & (QUERY_TAG | QUERY_VALID) != tag | QUERY_VALID {
            continue;
        }
        let (Some(s), Some(t)) = (
            sid::by_index(field(v, 30, SID_BITS)),
            sid::by_index(field(v, 10, SID_BITS)),
        ) else {
            continue;
        };
        let ni = field(v, 0, NAME_INDEX_BITS);
        if let Some((c, av, seqno)) = same(s, t, ni) {
            return Some(((s, t, c, av, seqno, Some(ni)), v & !QUERY_TAG));
        }
    }
    None
}

/// [`probe`] for four C strings, compared in place (no length known).
#[inline(always)]
fn probe_args(place: Place, [scon, tcon, class, perm]: [*const c_char; 4]) -> Option<(Query, u64)> {
    probe(place, |s, t, ni| {
        if !ffi::same_c_string(scon, s.c_text()) || !ffi::same_c_string(tcon, t.c_text()) {
            return None;
        }
        lookup::class_perm_at(ni, class, perm)
    })
}

/// [`probe`] for four strings whose bytes are known (their lengths measured): each compared
/// by length first, the names in line.
#[inline(always)]
fn probe_bytes(place: Place, [sb, tb, cb, pb]: [&[u8]; 4]) -> Option<(Query, u64)> {
    probe(place, |s, t, ni| {
        if s.bytes() != sb || t.bytes() != tb {
            return None;
        }
        lookup::class_perm_bytes_at(ni, cb, pb)
    })
}

/// Remembers `payload` at `place`: in the slot holding its tag already, else an empty one,
/// else the next victim's.
#[inline(always)]
fn remember((bucket, tag): Place, payload: u64) {
    if let Some(bucket) = bucket {
        lookup::store_hint(
            bucket,
            |w| w & (QUERY_TAG | QUERY_VALID) == tag | QUERY_VALID,
            tag | payload,
            &VICTIM,
        );
    }
}

/// selinux_check_access's arguments (source and target contexts, class, permission)
/// resolved: from the slot keyed by the four addresses when each argument still equals the
/// string remembered for it, so that a repeated query reads one slot line; else from the slot
/// keyed by the four strings' bytes; else through the string cache, the names looked up in the
/// current generation; a slot that missed is refreshed. `rewritten` (the thread's front found
/// other strings at these addresses than it had granted) skips the slot by address, which then
/// nearly always holds those other strings too, and leaves it as it is. The numbers may be of
/// an older generation than the current one: they come with its seqno. An error when a context
/// is NULL, or, both names given, not UTF-8; Ok(None) when a name is NULL or the policy has no
/// such class or permission.
#[inline(always)]
pub(crate) fn query(
    k: &Kernel,
    seed: u64,
    args: [*const c_char; 4],
    rewritten: bool,
) -> Res<Option<Query>> {
    // Refreshed for a program that rewrites its buffers, the slot would serve it only until
    // its next rewrite (callgrind: 30 instructions a call of such a program, with the
    // comparisons by length of the table by content).
    let by_address = if rewritten {
        (None, 0)
    } else {
        let by_address = address_place(seed, args);
        if let Some((q, _)) = probe_args(by_address, args) {
            return Ok(Some(q));
        }
        by_address
    };
    by_content(k, seed, args, by_address)
}

/// Misses of the memo by address, and of both tables, for tests.
#[cfg(test)]
static ADDRESS_MISSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
#[cfg(test)]
static QUERY_MISSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The query by its strings' bytes, past a miss of the memo by address (whose slot,
/// `by_address`, is refreshed here, unless it is none).
#[cold]
#[inline(never)]
fn by_content(
    k: &Kernel,
    seed: u64,
    args: [*const c_char; 4],
    by_address: Place,
) -> Res<Option<Query>> {
    #[cfg(test)]
    ADDRESS_MISSES.fetch_add(1, Relaxed);
    let [scon, tcon, class, perm] = args;
    let (sb, tb) = (ffi::bytes_arg(scon)?, ffi::bytes_arg(tcon)?);
    // A NULL name is the full way's to answer, in libselinux's order with the rest.
    let (Ok(cb), Ok(pb)) = (ffi::bytes_arg(class), ffi::bytes_arg(perm)) else {
        return Ok(None);
    };
    let content = content_place(seed, [sb, tb, cb, pb]);
    let found = match probe_bytes(content, [sb, tb, cb, pb]) {
        Some((q, p)) => Some((q, Some(p))),
        None => query_miss(k, seed, [sb, tb, cb, pb], content)?,
    };
    let Some((q, p)) = found else { return Ok(None) };
    if let Some(p) = p {
        remember(by_address, p);
    }
    Ok(Some(q))
}

/// The query resolved through the string cache, past both tables (the one by content, whose
/// slot is `content`, is refreshed here), with the payload both remember for it (None when the
/// names have no name slot or a SID index does not fit).
#[cold]
#[inline(never)]
fn query_miss(
    k: &Kernel,
    seed: u64,
    [sb, tb, cb, pb]: [&[u8]; 4],
    content: Place,
) -> Res<Option<(Query, Option<u64>)>> {
    #[cfg(test)]
    QUERY_MISSES.fetch_add(1, Relaxed);
    let (si, s) = lookup::context(seed, sb)?;
    let (ti, t) = lookup::context(seed, tb)?;
    let g = k.server.snapshot();
    let Some(((c, av, seqno), ni)) = lookup::class_perm(&g, seed, cb, pb) else {
        return Ok(None);
    };
    let p = ni.and_then(|ni| payload(si, ti, ni));
    if let Some(p) = p {
        remember(content, p);
    }
    Ok(Some(((s, t, c, av, seqno, ni), p)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]
    use super::*;
    use std::ffi::CString;

    /// The tests that count misses share the one memo: one at a time.
    static MEMO_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// Overwrites the C string in `buf` with `s` in place (same address), NUL-terminated.
    fn put(buf: &mut [u8], s: &str) {
        buf.fill(0xaa);
        buf[..s.len()].copy_from_slice(s.as_bytes());
        buf[s.len()] = 0;
    }

    /// The query's answer as texts and numbers, to compare with what each part resolves to.
    type Answer = Res<Option<(&'static str, &'static str, ClassId, AccessVector)>>;

    /// The query's answer for the current generation: a remembered answer of an older one (it
    /// says so by its seqno) is looked up again in the current one, as selinux_check_access
    /// does ([`crate::avc`]), and asked again.
    fn ask_query(k: &Kernel, bufs: &[Vec<u8>; 4]) -> Answer {
        let [s, t, c, p] = bufs.each_ref().map(|b| b.as_ptr() as *const c_char);
        let g = k.server.snapshot();
        let mut r = query(k, lookup::key(), [s, t, c, p], false);
        if let Ok(Some((.., at, _))) = r {
            if at != g.seqno().0 {
                let bytes =
                    |b: &Vec<u8>| b[..b.iter().position(|&x| x == 0).unwrap_or(b.len())].to_vec();
                assert!(
                    lookup::class_perm(&g, lookup::key(), &bytes(&bufs[2]), &bytes(&bufs[3]))
                        .is_some()
                );
                r = query(k, lookup::key(), [s, t, c, p], false);
            }
        }
        r.map(|x| {
            x.map(|(s, t, c, av, at, _)| {
                assert_eq!(
                    at,
                    g.seqno().0,
                    "numbers of another generation after looking them up again"
                );
                (s.text(), t.text(), c, av)
            })
        })
    }

    /// What the four strings resolve to one by one: the contexts' texts and the loaded
    /// server's own numbers for the names.
    fn expected(k: &Kernel, args: [&'static str; 4]) -> Answer {
        Ok(lookup::server_numbers(k, args[2], args[3]).map(|(c, av)| (args[0], args[1], c, av)))
    }

    // Four buffers reused in place, one argument at a time (each a prefix, an extension, or
    // the same length differing in one byte of what was asked before), then a reload that
    // renumbers `file` (class 6 in example.cil, 2 in sockets.cil): each answer is what the
    // buffers' current strings resolve to, never what was remembered for the addresses.
    #[test]
    fn a_query_follows_each_reused_buffer_and_a_reload() {
        let _g = seaccess_types::lock(&MEMO_TESTS);
        let _p = seaccess_types::lock(&lookup::POLICY_TESTS);
        let k = lookup::load_test_policy("example.33");
        let mut bufs: [Vec<u8>; 4] = std::array::from_fn(|_| vec![0u8; 64]);
        let steps: [[&'static str; 4]; 9] = [
            ["u:r:q_a_t:s0", "u:r:q_b_t:s0", "file", "read"],
            ["u:r:q_a_t:s0:c1", "u:r:q_b_t:s0", "file", "read"],
            ["u:r:q_a_t:s0:c1", "u:r:q_b_t:s1", "file", "read"],
            ["u:r:q_a_t:s0:c1", "u:r:q_b_t:s", "file", "read"],
            ["u:r:q_a_t:s0:c1", "u:r:q_b_t:s", "dir", "read"],
            ["u:r:q_a_t:s0:c1", "u:r:q_b_t:s", "dir", "write"],
            ["u:r:q_a_t:s0:c1", "u:r:q_b_t:s", "file", "write"],
            ["u:r:q_a_t:s0:c1", "u:r:q_b_t:s", "file", "rea"],
            ["u:r:q_a_t:s0", "u:r:q_b_t:s0", "file", "read"],
        ];
        for args in steps {
            for (b, a) in bufs.iter_mut().zip(args) {
                put(b, a);
            }
            let want = expected(k, args);
            assert_eq!(ask_query(k, &bufs), want, "{args:?}");
            assert_eq!(ask_query(k, &bufs), want, "{args:?} asked again");
        }
        let read = ask_query(k, &bufs);
        assert_eq!(read.map(|x| x.map(|(_, _, c, _)| c)), Ok(Some(ClassId(6))));
        let before = k.server.seqno().0;
        lookup::load_test_policy("sockets.33");
        // Before anything is looked up again, the remembered numbers come with the seqno of
        // the generation that gave them, never with the new one's.
        let [s, t, c, p] = bufs.each_ref().map(|b| b.as_ptr() as *const c_char);
        let stale = query(k, lookup::key(), [s, t, c, p], false)
            .map(|x| x.map(|(.., c, _, at, _)| (c, at)));
        assert_eq!(stale, Ok(Some((ClassId(6), before))));
        let after = ask_query(k, &bufs);
        assert_eq!(after.map(|x| x.map(|(_, _, c, _)| c)), Ok(Some(ClassId(2))));
        assert_eq!(
            after,
            expected(k, ["u:r:q_a_t:s0", "u:r:q_b_t:s0", "file", "read"])
        );
        put(&mut bufs[0], "");
        assert_eq!(
            ask_query(k, &bufs).map(|x| x.map(|(s, ..)| s)),
            Ok(Some(""))
        );
        let bad = [0xffu8, 0xfe, 0];
        let bad = bad.as_ptr() as *const c_char;
        let [s, t, c, p] = bufs.each_ref().map(|b| b.as_ptr() as *const c_char);
        for (s, t) in [(bad, t), (s, bad)] {
            assert_eq!(
                query(k, lookup::key(), [s, t, c, p], false).map(|_| ()),
                Err(crate::ffi::EINVAL),
                "a context not UTF-8"
            );
        }
        let null = std::ptr::null();
        assert_eq!(
            query(k, lookup::key(), [null, t, c, p], false).map(|_| ()),
            Err(crate::ffi::EINVAL)
        );
        assert_eq!(
            query(k, lookup::key(), [s, null, c, p], false).map(|_| ()),
            Err(crate::ffi::EINVAL)
        );
        assert_eq!(
            query(k, lookup::key(), [s, t, null, p], false).map(|x| x.is_none()),
            Ok(true)
        );
        assert_eq!(
            query(k, lookup::key(), [s, t, c, null], false).map(|x| x.is_none()),
            Ok(true)
        );
    }

    /// 300 queries (as many as the bench's) that example.cil's names resolve: 300 source
    /// contexts, 7 targets, three class and permission pairs; `tag` keeps one test's contexts
    /// apart from another's.
    fn many_queries(tag: &str) -> Vec<[String; 4]> {
        let names = [("file", "read"), ("file", "write"), ("dir", "read")];
        (0..300)
            .map(|n| {
                let (c, p) = names[n % names.len()];
                [
                    format!("u:r:{tag}s_{n}_t:s0"),
                    format!("u:r:{tag}t_{}_t:s0", n % 7),
                    c.to_string(),
                    p.to_string(),
                ]
            })
            .collect()
    }

    // A query asked again with the same buffers is answered from its slot: no miss counted,
    // for many queries in turn (as many as the bench's).
    #[test]
    fn a_repeated_query_hits() {
        let _g = seaccess_types::lock(&MEMO_TESTS);
        let _p = seaccess_types::lock(&lookup::POLICY_TESTS);
        let k = lookup::load_test_policy("example.33");
        let qs: Vec<[CString; 4]> = many_queries("q")
            .into_iter()
            .map(|q| q.map(|x| CString::new(x).unwrap_or_default()))
            .collect();
        let ask = |q: &[CString; 4]| {
            query(k, lookup::key(), q.each_ref().map(|x| x.as_ptr()), false)
                .map(|x| x.map(|(s, ..)| s.text()))
        };
        for q in &qs {
            assert!(matches!(ask(q), Ok(Some(_))));
        }
        let before = ADDRESS_MISSES.load(Relaxed);
        for q in &qs {
            assert_eq!(ask(q), Ok(Some(q[0].to_str().unwrap_or_default())));
        }
        assert_eq!(ADDRESS_MISSES.load(Relaxed) - before, 0);
    }

    // Many queries asked in turn through one set of four buffers (systemd's way: the same
    // addresses, other strings): the first round resolves each, and from the second on each
    // is answered by its strings' slot (every call misses the slot of the addresses, none
    // misses both), as what the strings resolve to one by one. The same buffers asked twice
    // running hit the slot of the addresses.
    #[test]
    fn reused_buffers_are_answered_by_their_strings() {
        let _g = seaccess_types::lock(&MEMO_TESTS);
        let _p = seaccess_types::lock(&lookup::POLICY_TESTS);
        let k = lookup::load_test_policy("example.33");
        let qs = many_queries("r");
        let mut bufs: [Vec<u8>; 4] = std::array::from_fn(|_| vec![0u8; 64]);
        let mut ask = |q: &[String; 4]| {
            for (b, a) in bufs.iter_mut().zip(q) {
                put(b, a);
            }
            let [s, t, c, p] = bufs.each_ref().map(|b| b.as_ptr() as *const c_char);
            query(k, lookup::key(), [s, t, c, p], false)
                .map(|x| x.map(|(s, t, c, av, ..)| (s.text(), t.text(), c, av)))
        };
        for q in &qs {
            assert!(matches!(ask(q), Ok(Some(_))));
        }
        let (address, both) = (ADDRESS_MISSES.load(Relaxed), QUERY_MISSES.load(Relaxed));
        for q in &qs {
            let want = lookup::server_numbers(k, &q[2], &q[3])
                .map(|(c, av)| (q[0].as_str(), q[1].as_str(), c, av));
            assert_eq!(ask(q), Ok(want), "{q:?}");
        }
        assert_eq!(ADDRESS_MISSES.load(Relaxed) - address, qs.len());
        assert_eq!(
            QUERY_MISSES.load(Relaxed) - both,
            0,
            "missed by their strings"
        );
        let address = ADDRESS_MISSES.load(Relaxed);
        for q in &qs[..10] {
            assert!(matches!(ask(q), Ok(Some(_))));
            assert!(matches!(ask(q), Ok(Some(_))));
        }
        assert_eq!(
            ADDRESS_MISSES.load(Relaxed) - address,
            10,
            "asked twice running"
        );
    }

    // A key only picks a slot: a slot holding another query's payload, planted under this
    // query's key (as a collision of the hash of the strings, or of the addresses, would leave
    // it), is taken only if its strings are this query's. The two queries differ in one string:
    // a prefix or an extension of it, or one byte; each is planted under the other's key
    // (when the policy has its names, which a slot needs).
    #[test]
    fn a_slot_under_this_querys_key_with_another_querys_strings_is_not_taken() {
        let _g = seaccess_types::lock(&MEMO_TESTS);
        let _p = seaccess_types::lock(&lookup::POLICY_TESTS);
        let k = lookup::load_test_policy("example.33");
        let seed = lookup::key();
        let base = ["u:r:pl_a_t:s0", "u:r:pl_b_t:s0", "file", "read"];
        let variants: [[&'static str; 4]; 8] = [
            ["u:r:pl_a_t:s0:c1", "u:r:pl_b_t:s0", "file", "read"],
            ["u:r:pl_a_t:s", "u:r:pl_b_t:s0", "file", "read"],
            ["u:r:pl_a_t:s0", "u:r:pl_b_t:s1", "file", "read"],
            ["u:r:pl_a_t:s0", "u:r:pl_b_t:s0", "files", "read"],
            ["u:r:pl_a_t:s0", "u:r:pl_b_t:s0", "fil", "read"],
            ["u:r:pl_a_t:s0", "u:r:pl_b_t:s0", "file", "reads"],
            ["u:r:pl_a_t:s0", "u:r:pl_b_t:s0", "file", "rea"],
            ["u:r:pl_a_t:s0", "u:r:pl_b_t:s0", "dir", "read"],
        ];
        let owned = |q: [&str; 4]| q.map(|s| CString::new(s).unwrap_or_default());
        let ptrs = |q: &[CString; 4]| q.each_ref().map(|s| s.as_ptr());
        fn bytes(q: &[CString; 4]) -> [&[u8]; 4] {
            q.each_ref().map(|s| s.to_bytes())
        }
        let by_content = |q: &[CString; 4]| content_place(seed, bytes(q));
        let by_address = |q: &[CString; 4]| address_place(seed, ptrs(q));
        let answer = |q: &[CString; 4], rewritten: bool| {
            query(k, seed, ptrs(q), rewritten)
                .map(|x| x.map(|(s, t, c, av, ..)| (s.text(), t.text(), c, av)))
        };
        let mut planted = 0;
        for v in variants {
            for (from, asked) in [(base, v), (v, base)] {
                let (from_q, asked_q) = (owned(from), owned(asked));
                // The planted query's payload, as its slot by content holds it once asked.
                assert!(answer(&from_q, true).is_ok());
                let Some((_, payload)) = probe_bytes(by_content(&from_q), bytes(&from_q)) else {
                    continue;
                };
                planted += 1;
                remember(by_content(&asked_q), payload);
                assert_eq!(
                    answer(&asked_q, true),
                    expected(k, asked),
                    "by content, {from:?} planted"
                );
                remember(by_address(&asked_q), payload);
                assert_eq!(
                    answer(&asked_q, false),
                    expected(k, asked),
                    "by address, {from:?} planted"
                );
            }
        }
        assert_eq!(
            planted,
            8 + 4,
            "every query the policy has names for planted"
        );
    }

    // Four buffers rewritten at random, one argument at a time, from a pool of strings that are
    // prefixes, extensions and one-byte variants of each other (names the policy lacks among
    // them), asked with and without the front's word that a string changed, by two threads at
    // once (each its own buffers, the tables shared, so that each evicts the other's slots):
    // every answer is what the buffers' current strings resolve to one by one.
    #[test]
    fn random_rewrites_are_answered_for_the_current_strings() {
        let _g = seaccess_types::lock(&MEMO_TESTS);
        let _p = seaccess_types::lock(&lookup::POLICY_TESTS);
        let k = lookup::load_test_policy("example.33");
        let pool: [&[&'static str]; 4] = [
            &[
                "u:r:rr_a_t:s0",
                "u:r:rr_a_t:s0:c1",
                "u:r:rr_a_t:s1",
                "u:r:rr_a_t:s",
                "v:r:rr_a_t:s0",
                "",
            ],
            &[
                "u:r:rr_b_t:s0",
                "u:r:rr_b_t:s0:c1",
                "u:r:rr_a_t:s0",
                "u:r:rr_b_t:s",
            ],
            &["file", "dir", "process", "fil", "files", "dis"],
            &["read", "write", "fork", "rea", "reads", "signal"],
        ];
        std::thread::scope(|scope| {
            for seed in [0x9e37_79b9_7f4a_7c15u64, 0x2545_f491_4f6c_dd1d] {
                scope.spawn(move || {
                    let mut x = seed;
                    let mut next = move |n: usize| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        (x % n as u64) as usize
                    };
                    let mut bufs: [Vec<u8>; 4] = std::array::from_fn(|_| vec![0u8; 64]);
                    let mut now: [&'static str; 4] = std::array::from_fn(|i| pool[i][0]);
                    for (b, a) in bufs.iter_mut().zip(now) {
                        put(b, a);
                    }
                    let ptrs = bufs.each_ref().map(|b| b.as_ptr() as *const c_char);
                    for step in 0..20_000 {
                        let i = next(4);
                        now[i] = pool[i][next(pool[i].len())];
                        put(&mut bufs[i], now[i]);
                        let got = query(k, lookup::key(), ptrs, next(2) == 1)
                            .map(|x| x.map(|(s, t, c, av, ..)| (s.text(), t.text(), c, av)));
                        assert_eq!(got, expected(k, now), "step {step}: {now:?}");
                    }
                });
            }
        });
    }
}
