//! selinux_check_access's first-level memo: from the addresses of its string arguments to what
//! the string cache ([`crate::lookup`]) answered for them last time, so that a program passing
//! the same buffers again pays one compare per string (no strlen, no hash of the bytes).
//!
//! An address only picks a slot; it proves nothing, since a caller may reuse a buffer for
//! another string. A hit is taken only when the argument equals the remembered string up to
//! and including its NUL, compared in place in one pass that stops at the first difference
//! ([`crate::ffi::same_c_string`]), so a shorter argument is never read past its NUL. Anything
//! else (another string at that address, two addresses sharing a slot, a class entry looked up
//! under an older policy) falls back to the string cache, which refreshes the slot.
//!
//! Slots hold indexes, not pointers: a SID's (whose index may name another context after
//! avc_destroy, which a hit's string compare catches) or a name slot's (filled once, its numbers
//! carrying the seqno of the generation they were looked up in, see [`crate::lookup`]), so a
//! slot can be overwritten at any time by any thread and a policy load needs nothing here: the
//! numbers a hit gives come with their seqno, which the check compares with its decision's.
//!
//! This memo is an index into the engine's rule, not a rule of its own: what it leads to are
//! SIDs and names whose numbers are kept in `seaccess_engine::Kept` (used only with the
//! generation that found them). It stays in the C library because its key is the C argument's
//! address, an ABI-level fast path no other front end has.

use std::ffi::c_char;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};

use seaccess_security::Generation;
use seaccess_types::{AccessVector, ClassId};

use crate::ffi::{self, Res};
use crate::kernel::Kernel;
use crate::lookup::{self, Numbers};
use crate::sid::{self, SecurityId};

/// Log2 of the number of pairs of slots in each table.
const BITS: u32 = 11;
/// Slots a key may use: a pair, so that two addresses hashing together do not evict each
/// other at every turn.
const WAYS: usize = 2;
type Pair = [AtomicU64; WAYS];

/// Per slot, a tag from the addresses' hash (high half) above the index + 1 (low half); 0 is
/// empty.
static CONTEXTS: [Pair; 1 << BITS] = [const { [const { AtomicU64::new(0) }; WAYS] }; 1 << BITS];
static NAMES: [Pair; 1 << BITS] = [const { [const { AtomicU64::new(0) }; WAYS] }; 1 << BITS];
/// Which slot of a full pair a miss takes next.
static VICTIM: AtomicU32 = AtomicU32::new(0);

/// A keyed hash of addresses (their values, never what they point to).
#[inline(always)]
fn mix(h: u64, w: usize) -> u64 {
    (h.rotate_left(26) ^ w as u64).wrapping_mul(0xf135_7aea_2e62_a9c5)
}

/// The pair of `h` in `table` (from its top bits) and its tag (its low half).
#[inline(always)]
fn place(table: &'static [Pair; 1 << BITS], h: u64) -> (Option<&'static Pair>, u64) {
    (table.get((h >> (64 - BITS)) as usize), h << 32)
}

/// The index slot `way` of `pair` holds, if its tag is `tag`.
#[inline(always)]
fn hinted(pair: Option<&Pair>, tag: u64, way: usize) -> Option<usize> {
    let v = pair?.get(way)?.load(Acquire);
    if v ^ tag < 1 << 32 {
        (v as u32 as usize).checked_sub(1)
    } else {
        None
    }
}

/// Remembers index `n` under `tag` in the pair's slot holding that tag, or an empty one, else
/// in the next victim's. A race loses a hint, never an answer: a hit compares the strings.
#[cold]
fn remember(pair: Option<&Pair>, tag: u64, n: usize) {
    if let (Some(pair), Ok(v)) = (pair, u32::try_from(n + 1)) {
        lookup::store_hint(pair, |w| w ^ tag < 1 << 32, tag | u64::from(v), &VICTIM);
    }
}

/// The SID of C string `ctx` (EINVAL if NULL or not UTF-8), interning it on a miss.
#[inline(always)]
pub(crate) fn context(seed: u64, ctx: *const c_char) -> Res<(usize, &'static SecurityId)> {
    let (pair, tag) = place(&CONTEXTS, mix(seed, ctx as usize));
    for way in 0..WAYS {
        if let Some(n) = hinted(pair, tag, way) {
            if let Some(s) = sid::by_index(n) {
                if ffi::same_c_string(ctx, s.c_text()) {
                    return Ok((n, s));
                }
            }
        }
    }
    context_miss(seed, ctx, pair, tag)
}

/// Misses of the context memo, for tests.
#[cfg(test)]
static CONTEXT_MISSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cold]
#[inline(never)]
fn context_miss(
    seed: u64,
    ctx: *const c_char,
    pair: Option<&Pair>,
    tag: u64,
) -> Res<(usize, &'static SecurityId)> {
    #[cfg(test)]
    CONTEXT_MISSES.fetch_add(1, Relaxed);
    let (n, s) = lookup::context(seed, ffi::bytes_arg(ctx)?)?;
    remember(pair, tag, n);
    Ok((n, s))
}

/// The class number and permission bit of C strings `class` and `perm` in generation `g`, with
/// the index of the name entry holding them (None if none does); None when either is NULL or
/// `g`'s policy has no such class or permission.
#[inline(always)]
pub(crate) fn class_perm(
    g: &Generation,
    seed: u64,
    class: *const c_char,
    perm: *const c_char,
) -> Option<(Numbers, Option<usize>)> {
    let (pair, tag) = place(&NAMES, mix(mix(seed, class as usize), perm as usize));
    for way in 0..WAYS {
        if let Some(i) = hinted(pair, tag, way) {
            if let Some(x) = lookup::class_perm_at(i, class, perm).filter(|x| x.2 == g.seqno().0) {
                return Some((x, Some(i)));
            }
        }
    }
    class_perm_miss(g, seed, class, perm, pair, tag)
}

#[cold]
#[inline(never)]
fn class_perm_miss(
    g: &Generation,
    seed: u64,
    class: *const c_char,
    perm: *const c_char,
    pair: Option<&Pair>,
    tag: u64,
) -> Option<(Numbers, Option<usize>)> {
    let (x, i) = lookup::class_perm(
        g,
        seed,
        ffi::bytes_arg(class).ok()?,
        ffi::bytes_arg(perm).ok()?,
    )?;
    if let Some(i) = i {
        remember(pair, tag, i);
    }
    Some((x, i))
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
/// Per slot: tag (13 bits) | VALID | source SID index (20) | target SID index (20) | name
/// entry index (10); 0 is empty. A query with a SID past the first 2^20 is not remembered here.
static QUERIES: [Bucket; 1 << BITS] =
    [const { Bucket([const { AtomicU64::new(0) }; QUERY_WAYS]) }; 1 << BITS];
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

/// selinux_check_access's arguments resolved: from one slot keyed by the four addresses when
/// each argument still equals the string remembered for it (compared in place, up to its
/// NUL), so that a repeated query reads one slot line instead of three; else through the memos
/// by address above, refreshing the slot, the names looked up in the current generation. The
/// numbers may be of an older generation than the current one: they come with its seqno.
/// Ok(None) when the policy has no such class or permission (or either is NULL); an error when
/// a context is NULL or not UTF-8.
#[inline(always)]
pub(crate) fn query(
    k: &Kernel,
    seed: u64,
    scon: *const c_char,
    tcon: *const c_char,
    class: *const c_char,
    perm: *const c_char,
) -> Res<Option<Query>> {
    let h = mix(
        mix(mix(mix(seed, scon as usize), tcon as usize), class as usize),
        perm as usize,
    );
    let pair = QUERIES.get((h >> (64 - BITS)) as usize).map(|b| &b.0);
    // The bits below the slot's: the slot's own bits would tell slots' keys apart no further.
    let tag = (h << BITS) & QUERY_TAG;
    for way in 0..QUERY_WAYS {
        let Some(v) = pair.and_then(|p| p.get(way)).map(|x| x.load(Acquire)) else {
            break;
        };
        if v & (QUERY_TAG | QUERY_VALID) != tag | QUERY_VALID {
            continue;
        }
        let (Some(s), Some(t)) = (
            sid::by_index(field(v, 30, SID_BITS)),
            sid::by_index(field(v, 10, SID_BITS)),
        ) else {
            continue;
        };
        if !ffi::same_c_string(scon, s.c_text()) || !ffi::same_c_string(tcon, t.c_text()) {
            continue;
        }
        let ni = field(v, 0, NAME_INDEX_BITS);
        if let Some((c, av, seqno)) = lookup::class_perm_at(ni, class, perm) {
            return Ok(Some((s, t, c, av, seqno, Some(ni))));
        }
    }
    query_miss(k, seed, [scon, tcon, class, perm], pair, tag)
}

/// Misses of the query memo, for tests.
#[cfg(test)]
static QUERY_MISSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

#[cold]
#[inline(never)]
fn query_miss(
    k: &Kernel,
    seed: u64,
    [scon, tcon, class, perm]: [*const c_char; 4],
    pair: Option<&[AtomicU64; QUERY_WAYS]>,
    tag: u64,
) -> Res<Option<Query>> {
    #[cfg(test)]
    QUERY_MISSES.fetch_add(1, Relaxed);
    let (si, s) = context(seed, scon)?;
    let (ti, t) = context(seed, tcon)?;
    let g = k.server.snapshot();
    let Some(((c, av, seqno), ni)) = class_perm(&g, seed, class, perm) else {
        return Ok(None);
    };
    if let (Some(pair), Some(ni), true) = (pair, ni, si.max(ti) < 1 << SID_BITS) {
        let v = tag | QUERY_VALID | (si as u64) << 30 | (ti as u64) << 10 | ni as u64;
        lookup::store_hint(
            pair,
            |w| w & (QUERY_TAG | QUERY_VALID) == tag | QUERY_VALID,
            v,
            &VICTIM,
        );
    }
    Ok(Some((s, t, c, av, seqno, ni)))
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

    fn text(r: Res<(usize, &'static SecurityId)>) -> Res<&'static str> {
        r.map(|(_, s)| s.text())
    }

    // One buffer reused for other contexts: each answer is the buffer's current string, never
    // the one remembered for the address: a longer one of which the first is a prefix, the
    // prefix again, one of the same length differing in the last byte, and one differing in
    // the first.
    #[test]
    fn a_reused_buffer_is_answered_for_its_new_string() {
        let _g = seaccess_types::lock(&MEMO_TESTS);
        let mut buf = vec![0u8; 64];
        let p = buf.as_ptr() as *const c_char;
        for ctx in [
            "u:r:memo_a_t:s0",
            "u:r:memo_a_t:s0:c1",
            "u:r:memo_a_t:s0",
            "u:r:memo_a_t:s1",
            "v:r:memo_a_t:s1",
        ] {
            put(&mut buf, ctx);
            assert_eq!(text(context(lookup::key(), p)), Ok(ctx));
            assert_eq!(text(context(lookup::key(), p)), Ok(ctx), "asked again");
        }
    }

    // The same address asked again is a memo hit (no miss counted); a reused buffer is a miss.
    #[test]
    fn the_same_string_at_the_same_address_hits() {
        let _g = seaccess_types::lock(&MEMO_TESTS);
        let ctx = CString::new("u:r:memo_hit_t:s0").unwrap_or_default();
        let other = CString::new("u:r:memo_other_t:s0").unwrap_or_default();
        assert_eq!(
            text(context(lookup::key(), ctx.as_ptr())),
            Ok("u:r:memo_hit_t:s0")
        );
        assert_eq!(
            text(context(lookup::key(), other.as_ptr())),
            Ok("u:r:memo_other_t:s0")
        );
        let before = CONTEXT_MISSES.load(Relaxed);
        for _ in 0..10 {
            assert_eq!(
                text(context(lookup::key(), ctx.as_ptr())),
                Ok("u:r:memo_hit_t:s0")
            );
            assert_eq!(
                text(context(lookup::key(), other.as_ptr())),
                Ok("u:r:memo_other_t:s0")
            );
        }
        assert_eq!(CONTEXT_MISSES.load(Relaxed) - before, 0);
        assert_eq!(
            context(lookup::key(), std::ptr::null()).map(|_| ()),
            Err(crate::ffi::EINVAL)
        );
        let bad = [0xffu8, 0xfe, 0];
        assert_eq!(
            context(lookup::key(), bad.as_ptr() as *const c_char).map(|_| ()),
            Err(crate::ffi::EINVAL)
        );
    }

    // Class and permission buffers reused, and a reload that renumbers the class: each answer
    // is the loaded server's own for the buffers' current names (`file` is class 6 in
    // example.cil and 2 in sockets.cil, as sepol-oracle perms lists them).
    #[test]
    fn names_follow_a_reused_buffer_and_a_reload() {
        let _g = seaccess_types::lock(&MEMO_TESTS);
        let _p = seaccess_types::lock(&lookup::POLICY_TESTS);
        let k = lookup::load_test_policy("example.33");
        let server = |class: &str, perm: &str| lookup::server_numbers(k, class, perm);
        let (mut cb, mut pb) = (vec![0u8; 32], vec![0u8; 32]);
        let (c, p) = (cb.as_ptr() as *const c_char, pb.as_ptr() as *const c_char);
        let ask = |cb: &mut Vec<u8>, pb: &mut Vec<u8>, class: &str, perm: &str| {
            put(cb, class);
            put(pb, perm);
            class_perm(&k.server.snapshot(), lookup::key(), c, p).map(|((c, av, _), _)| (c, av))
        };
        let file_read = ask(&mut cb, &mut pb, "file", "read");
        assert_eq!(file_read.map(|(c, _)| c), Some(ClassId(6)));
        assert_eq!(file_read, server("file", "read"));
        assert_eq!(ask(&mut cb, &mut pb, "file", "read"), file_read);
        let file_write = ask(&mut cb, &mut pb, "file", "write");
        assert_eq!(file_write, server("file", "write"));
        assert_ne!(file_write, file_read);
        assert_eq!(ask(&mut cb, &mut pb, "dir", "read"), server("dir", "read"));
        assert_eq!(ask(&mut cb, &mut pb, "file", "rea"), None);
        assert_eq!(ask(&mut cb, &mut pb, "file", "read"), file_read);
        lookup::load_test_policy("sockets.33");
        let after = ask(&mut cb, &mut pb, "file", "read");
        assert_eq!(after.map(|(c, _)| c), Some(ClassId(2)));
        assert_eq!(after, server("file", "read"));
        assert_eq!(
            class_perm(&k.server.snapshot(), lookup::key(), std::ptr::null(), p),
            None
        );
    }

    /// The query's answer as texts and numbers, to compare with what each part resolves to.
    type Answer = Res<Option<(&'static str, &'static str, ClassId, AccessVector)>>;

    /// The query's answer for the current generation: a remembered answer of an older one (it
    /// says so by its seqno) is looked up again in the current one, as selinux_check_access
    /// does ([`crate::avc`]), and asked again.
    fn ask_query(k: &Kernel, bufs: &[Vec<u8>; 4]) -> Answer {
        let [s, t, c, p] = bufs.each_ref().map(|b| b.as_ptr() as *const c_char);
        let g = k.server.snapshot();
        let mut r = query(k, lookup::key(), s, t, c, p);
        if let Ok(Some((.., at, _))) = r {
            if at != g.seqno().0 {
                let bytes =
                    |b: &Vec<u8>| b[..b.iter().position(|&x| x == 0).unwrap_or(b.len())].to_vec();
                assert!(
                    lookup::class_perm(&g, lookup::key(), &bytes(&bufs[2]), &bytes(&bufs[3]))
                        .is_some()
                );
                r = query(k, lookup::key(), s, t, c, p);
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
        let stale = query(k, lookup::key(), s, t, c, p).map(|x| x.map(|(.., c, _, at, _)| (c, at)));
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
        let [s, t, c, p] = bufs.each_ref().map(|b| b.as_ptr() as *const c_char);
        let null = std::ptr::null();
        assert_eq!(
            query(k, lookup::key(), null, t, c, p).map(|_| ()),
            Err(crate::ffi::EINVAL)
        );
        assert_eq!(
            query(k, lookup::key(), s, null, c, p).map(|_| ()),
            Err(crate::ffi::EINVAL)
        );
        assert_eq!(
            query(k, lookup::key(), s, t, null, p).map(|x| x.is_none()),
            Ok(true)
        );
        assert_eq!(
            query(k, lookup::key(), s, t, c, null).map(|x| x.is_none()),
            Ok(true)
        );
    }

    // A query asked again with the same buffers is answered from its slot: no miss counted,
    // for many queries in turn (as many as the bench's).
    #[test]
    fn a_repeated_query_hits() {
        let _g = seaccess_types::lock(&MEMO_TESTS);
        let _p = seaccess_types::lock(&lookup::POLICY_TESTS);
        let k = lookup::load_test_policy("example.33");
        let names = [("file", "read"), ("file", "write"), ("dir", "read")];
        let qs: Vec<[CString; 4]> = (0..300)
            .map(|n| {
                let (c, p) = names[n % names.len()];
                [
                    format!("u:r:qs_{n}_t:s0"),
                    format!("u:r:qt_{}_t:s0", n % 7),
                    c.to_string(),
                    p.to_string(),
                ]
                .map(|x| CString::new(x).unwrap_or_default())
            })
            .collect();
        let ask = |q: &[CString; 4]| {
            query(
                k,
                lookup::key(),
                q[0].as_ptr(),
                q[1].as_ptr(),
                q[2].as_ptr(),
                q[3].as_ptr(),
            )
            .map(|x| x.map(|(s, ..)| s.text()))
        };
        for q in &qs {
            assert!(matches!(ask(q), Ok(Some(_))));
        }
        let before = QUERY_MISSES.load(Relaxed);
        for q in &qs {
            assert_eq!(ask(q), Ok(Some(q[0].to_str().unwrap_or_default())));
        }
        assert_eq!(QUERY_MISSES.load(Relaxed) - before, 0);
    }
}
