//! selinux_check_access's string cache: from a context string to its SID, and from a class
//! and permission name to the class number and permission bit, so that a repeated query costs
//! two hashes, byte compares and no lock, no allocation and no policy lookup. It answers what
//! the query memo ([`crate::memo`]) did not, and gives the memo the indexes it remembers.
//!
//! Both tables are direct-mapped and lock-free. A slot is only a hint: a hit is taken only
//! after the bytes asked for compare equal to the bytes the slot's entry was made from, so a
//! collision (even one an attacker aims for: the hash is keyed per process) costs a miss, never
//! a wrong answer. Context slots hold the index of an interned SID, which lives for the
//! process, so a slot can be overwritten at any time. Name slots are filled once with their
//! names; their numbers are kept by the engine's rule ([`Kept`], `seaccess_engine`: a number
//! carries the seqno of the policy generation it was looked up in), and every answer hands that
//! seqno on with them: a check uses them only with a decision of that same generation
//! ([`crate::avc`]), and looks them up again in a newer one otherwise, as libselinux flushes its
//! class cache on a policy load. There is no clock of this cache's own to keep in step with the
//! server's. These tables are indexes into the engine's rule (contexts into the SIDs' own
//! [`Kept`], [`crate::sid`]), not a rule of their own; they stay here because they compare C
//! strings in place, which the engine's memo by `&str` cannot.

use std::ffi::c_char;
use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::*};

use once_cell::race::{OnceBox, OnceNonZeroUsize};

use seaccess_engine::{ClassBit, Kept};
use seaccess_security::Generation;
use seaccess_types::{AccessVector, ClassId};

use crate::ffi::{Res, EINVAL};
use crate::sid::{self, SecurityId};

const CONTEXT_BITS: u32 = 12;
const CONTEXT_SLOTS: usize = 1 << CONTEXT_BITS;
const NAME_BITS: u32 = 10;
pub(crate) const NAME_SLOTS: usize = 1 << NAME_BITS;
/// How many name slots a pair may use, from its hash's slot on.
const NAME_PROBES: usize = 4;

/// Slots a context may use: a bucket of consecutive ones (half a cache line).
const CONTEXT_WAYS: usize = 4;
/// Per slot, the hash's low half (a tag, so that most slots are passed over without reading a
/// SID) above the SID index + 1; 0 is empty.
static CONTEXTS: [AtomicU64; CONTEXT_SLOTS] = [const { AtomicU64::new(0) }; CONTEXT_SLOTS];
/// Which slot of a full bucket a miss takes next.
static VICTIM: AtomicU32 = AtomicU32::new(0);
/// Filled racing (`race::OnceBox`), as every lazily made table of the library: a slot being
/// filled by one thread never makes another wait, which a child forked at that moment would do
/// forever (see [`crate::fork`]).
static NAMES: [OnceBox<NameEntry>; NAME_SLOTS] = [const { OnceBox::new() }; NAME_SLOTS];

const CLASS_BYTES: usize = 34;
const PERM_BYTES: usize = 64 - 8 - CLASS_BYTES;

/// One cache line: the memo's hit reads the names and the numbers from the one line.
#[repr(C, align(64))]
struct NameEntry {
    /// The class number and permission bit, with the seqno of the generation that gave them
    /// (the engine's rule, [`Kept`]); nothing until first looked up.
    value: Kept<ClassBit>,
    /// NUL-padded, so that [`crate::memo`] compares a C argument with it in place. Names
    /// longer are not cached: Debian's longest are 32 and 19 bytes
    /// (obsolete_netlink_firewall_socket, paste_after_confirm).
    class: [u8; CLASS_BYTES],
    perm: [u8; PERM_BYTES],
}

/// `name` NUL-padded in `N` bytes, if it fits with its NUL and has none inside.
fn padded<const N: usize>(name: &[u8]) -> Option<[u8; N]> {
    if name.len() >= N || name.contains(&0) {
        return None;
    }
    let mut b = [0u8; N];
    b.get_mut(..name.len())?.copy_from_slice(name);
    Some(b)
}

/// The process's hash key: read once per query by the caller and passed to each lookup.
pub(crate) fn key() -> u64 {
    // Racing, not waiting (see [`NAMES`]): threads that find no key each make one, the first
    // stored is everyone's.
    static KEY: OnceNonZeroUsize = OnceNonZeroUsize::new();
    KEY.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u8(0);
        NonZeroUsize::MIN | h.finish() as usize
    })
    .get() as u64
}

/// A keyed hash of `bytes`, eight at a time (FxHash's multiply and rotate, from the key). The
/// last word is the string's last eight bytes, overlapping the one before it, so that no tail
/// is read byte by byte; strings shorter than eight bytes are read as two overlapping halves
/// or three bytes. Every byte and the length reach the result.
#[inline(always)]
pub(crate) fn hash(seed: u64, bytes: &[u8]) -> u64 {
    const K: u64 = 0xf135_7aea_2e62_a9c5;
    let n = bytes.len();
    let mix = |h: u64, w: u64| (h.rotate_left(26) ^ w).wrapping_mul(K);
    let mut h = mix(seed, n as u64);
    if n > 8 {
        let mut rest = bytes;
        while let (Some(w), Some(tail)) = (rest.first_chunk::<8>(), rest.get(8..)) {
            if tail.is_empty() {
                break;
            }
            h = mix(h, u64::from_le_bytes(*w));
            rest = tail;
        }
        h = mix(h, bytes.get(n - 8..).map_or(0, word));
    } else if n == 8 {
        h = mix(h, word(bytes));
    } else if n >= 4 {
        let half = |i: usize| u64::from(half_word(bytes.get(i..).unwrap_or_default()));
        h = mix(h, half(0) << 32 | half(n - 4));
    } else if let (Some(&a), Some(&b), Some(&c)) = (bytes.first(), bytes.get(n / 2), bytes.last()) {
        h = mix(h, u64::from(a) << 16 | u64::from(b) << 8 | u64::from(c));
    }
    (h ^ (h >> 32)).wrapping_mul(K)
}

/// Whether two byte strings are equal; up to sixteen bytes (class and permission names)
/// compared in line as two overlapping words or halves, where a call to `bcmp` would cost
/// more than the comparison.
#[inline(always)]
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n > 16 {
        return a == b;
    }
    if n >= 8 {
        let at = |x: &[u8], i: usize| word(x.get(i..).unwrap_or_default());
        return at(a, 0) == at(b, 0) && at(a, n - 8) == at(b, n - 8);
    }
    if n >= 4 {
        let half = |x: &[u8], i: usize| half_word(x.get(i..).unwrap_or_default());
        return half(a, 0) == half(b, 0) && half(a, n - 4) == half(b, n - 4);
    }
    a == b
}

/// Four bytes as a half word (zero if fewer).
#[inline(always)]
fn half_word(b: &[u8]) -> u32 {
    b.get(..4)
        .and_then(|w| <[u8; 4]>::try_from(w).ok())
        .map_or(0, u32::from_le_bytes)
}

/// Eight bytes as a word (zero if fewer).
#[inline(always)]
fn word(b: &[u8]) -> u64 {
    b.get(..8)
        .and_then(|w| <[u8; 8]>::try_from(w).ok())
        .map_or(0, u64::from_le_bytes)
}

/// The slot of hash `h` in a table of `1 << bits` slots: its top bits, which every input bit
/// reaches through the multiplications (the low bits see only the low input bits).
#[inline]
fn slot_of(h: u64, bits: u32) -> usize {
    (h >> (64 - bits)) as usize
}

/// The SID of the context whose bytes (without the NUL) are `ctx`, interning it on a miss;
/// EINVAL if it is not UTF-8. A context may sit in any slot of its bucket, so that contexts a
/// program uses together do not evict each other. The SID's index comes along, for
/// [`crate::memo`] to remember ([`sid::by_index`]).
#[inline(always)]
pub(crate) fn context(seed: u64, ctx: &[u8]) -> Res<(usize, &'static SecurityId)> {
    let h = hash(seed, ctx);
    let first = slot_of(h, CONTEXT_BITS) & !(CONTEXT_WAYS - 1);
    let tag = h & 0xffff_ffff_0000_0000;
    if let Some(bucket) = CONTEXTS.get(first..first + CONTEXT_WAYS) {
        for slot in bucket {
            let v = slot.load(Acquire);
            if v & 0xffff_ffff_0000_0000 != tag {
                continue;
            }
            if let Some(n) = (v as u32 as usize).checked_sub(1) {
                if let Some(s) = sid::by_index(n) {
                    if same(s.bytes(), ctx) {
                        return Ok((n, s));
                    }
                }
            }
        }
    }
    context_miss(ctx, first, tag)
}

/// The tests that load policies (and so change the names' numbers) run one at a time.
#[cfg(test)]
pub(crate) static POLICY_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The domain of the test policies the front and retry tests load (renumber_a/b, front_a/b).
#[cfg(test)]
pub(crate) const TEST_DOM: &std::ffi::CStr = c"u:r:dom_t:s0";

/// `selinux_check_access` of the test domain on itself, `file read`: the query whose class
/// number the two test policies of each pair give to another class (see the retry and front
/// tests).
#[cfg(test)]
pub(crate) fn test_dom_file_read() -> std::ffi::c_int {
    crate::avc::selinux_check_access(
        TEST_DOM.as_ptr(),
        TEST_DOM.as_ptr(),
        c"file".as_ptr(),
        c"read".as_ptr(),
        std::ptr::null_mut(),
    )
}

/// The calling thread's errno, as a C caller reads it after a call.
#[cfg(test)]
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// Loads (or reloads) the compiled test policy `name` from target/policies (`make policies`),
/// for tests that need a kernel; they hold [`POLICY_TESTS`] while they use it.
#[cfg(test)]
#[allow(clippy::panic)]
pub(crate) fn load_test_policy(name: &str) -> &'static crate::kernel::Kernel {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/policies")
        .join(name);
    assert_eq!(
        crate::kernel::load(&path.to_string_lossy()),
        Ok(()),
        "{} (make policies)",
        path.display()
    );
    crate::state::kernel().unwrap_or_else(|e| panic!("no kernel: {e:?}"))
}

/// The loaded policy's own numbers for a class and permission name: what a lookup must answer.
#[cfg(test)]
pub(crate) fn server_numbers(
    k: &crate::kernel::Kernel,
    class: &str,
    perm: &str,
) -> Option<(ClassId, AccessVector)> {
    let g = k.server.snapshot();
    let c = g.class(class).ok()?;
    Some((c, g.perms(c, &[perm]).ok()?))
}

/// Stores hint `v` in the slot of `slots` that `ours` says holds the same key already, else in
/// an empty one, else in the one `victim` (a table's turn counter) picks next. A race loses a
/// hint, never an answer: every hit compares the strings. Shared by this cache's contexts and
/// the query memo's tables ([`crate::memo`]).
pub(crate) fn store_hint(
    slots: &[AtomicU64],
    ours: impl Fn(u64) -> bool,
    v: u64,
    victim: &AtomicU32,
) {
    let slot = slots.iter().find(|x| {
        let w = x.load(Relaxed);
        w == 0 || ours(w)
    });
    if let Some(slot) =
        slot.or_else(|| slots.get(victim.fetch_add(1, Relaxed) as usize % slots.len().max(1)))
    {
        slot.store(v, Release);
    }
}

/// Misses of the context cache, for tests.
#[cfg(test)]
static CONTEXT_MISSES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Interns the context and records it in an empty slot of its bucket, else in the next
/// victim's.
#[cold]
fn context_miss(ctx: &[u8], first: usize, tag: u64) -> Res<(usize, &'static SecurityId)> {
    #[cfg(test)]
    CONTEXT_MISSES.fetch_add(1, Relaxed);
    let text = std::str::from_utf8(ctx).map_err(|_| EINVAL)?;
    let (n, s) = sid::intern_indexed(text)?;
    if let (Some(bucket), Ok(v)) = (
        CONTEXTS.get(first..first + CONTEXT_WAYS),
        u32::try_from(n + 1),
    ) {
        store_hint(bucket, |_| false, tag | u64::from(v), &VICTIM);
    }
    Ok((n, s))
}

/// A class number and permission bit, with the seqno of the policy generation that gave them.
pub(crate) type Numbers = (ClassId, AccessVector, u32);

/// The class number and permission bit of `perm` in `class` in generation `g`, with `g`'s
/// seqno; None when `g`'s policy has no such class or permission (nothing is cached then). The
/// index of the name slot holding the pair (None if none does) comes along, for
/// [`crate::memo`] to remember ([`class_perm_at`]).
#[inline]
pub(crate) fn class_perm(
    g: &Generation,
    seed: u64,
    class: &[u8],
    perm: &[u8],
) -> Option<(Numbers, Option<usize>)> {
    let h = slot_of(hash(hash(seed, class), perm), NAME_BITS);
    let seqno = g.seqno().0;
    for n in 0..NAME_PROBES {
        let i = (h + n) % NAME_SLOTS;
        let Some(slot) = NAMES.get(i) else { break };
        let Some(e) = slot.get() else {
            return name_miss(g, class, perm, Some((i, slot)));
        };
        if !padded_is(&e.class, class) || !padded_is(&e.perm, perm) {
            continue;
        }
        if let Some(cb) = e.value.get(g.seqno()) {
            return Some(((cb.class, cb.perm(), seqno), Some(i)));
        }
        return name_miss(g, class, perm, Some((i, slot)));
    }
    name_miss(g, class, perm, None)
}

/// The numbers of name slot `i`, with the seqno of the generation they were looked up in, if
/// the slot holds C strings `class` and `perm` (compared in place, neither read past its NUL).
/// Whatever that generation: the caller pairs them only with a decision of the same seqno.
#[inline(always)]
pub(crate) fn class_perm_at(
    i: usize,
    class: *const c_char,
    perm: *const c_char,
) -> Option<Numbers> {
    let e = NAMES.get(i)?.get()?;
    if !crate::ffi::same_c_string(perm, e.perm.as_ptr() as *const c_char)
        || !crate::ffi::same_c_string(class, e.class.as_ptr() as *const c_char)
    {
        return None;
    }
    numbers(e)
}

/// [`class_perm_at`] for names whose bytes (without the NUL) are known: each compared by
/// length (the slot's NUL right after it) and in line.
#[inline(always)]
pub(crate) fn class_perm_bytes_at(i: usize, class: &[u8], perm: &[u8]) -> Option<Numbers> {
    let e = NAMES.get(i)?.get()?;
    if !padded_is(&e.perm, perm) || !padded_is(&e.class, class) {
        return None;
    }
    numbers(e)
}

/// Whether NUL-padded name `padded` is `name` (a C string's bytes: no NUL among them): its
/// bytes, then the padding's first NUL.
#[inline(always)]
fn padded_is(padded: &[u8], name: &[u8]) -> bool {
    padded.get(name.len()) == Some(&0) && padded.get(..name.len()).is_some_and(|p| same(p, name))
}

/// Name slot `i`'s class and permission names, NUL-terminated, if it is filled: they live for
/// the process (a slot is filled once and never freed).
pub(crate) fn names_at(i: usize) -> Option<(*const c_char, *const c_char)> {
    let e = NAMES.get(i)?.get()?;
    Some((
        e.class.as_ptr() as *const c_char,
        e.perm.as_ptr() as *const c_char,
    ))
}

/// The entry's numbers and the seqno they were looked up under, once looked up.
#[inline(always)]
fn numbers(e: &NameEntry) -> Option<Numbers> {
    let (cb, seqno) = e.value.load()?;
    Some((cb.class, cb.perm(), seqno.0))
}

/// Looks the names up in generation `g` and records them in `slot` (empty, or holding these
/// names) with `g`'s seqno, all in one store, so that a reader gets numbers and seqno of one
/// generation.
#[cold]
fn name_miss(
    g: &Generation,
    class: &[u8],
    perm: &[u8],
    slot: Option<(usize, &OnceBox<NameEntry>)>,
) -> Option<(Numbers, Option<usize>)> {
    let seqno = g.seqno().0;
    let c = g.class(std::str::from_utf8(class).ok()?).ok()?;
    let av = g.perms(c, &[std::str::from_utf8(perm).ok()?]).ok()?;
    let bit = u8::try_from(av.bits().next()?).ok()?;
    if let (Some((i, slot)), Some(cb), Some(pb)) = (
        slot,
        padded::<CLASS_BYTES>(class),
        padded::<PERM_BYTES>(perm),
    ) {
        let e = slot.get_or_init(|| {
            Box::new(NameEntry {
                class: cb,
                perm: pb,
                value: Kept::new(),
            })
        });
        if e.class == cb && e.perm == pb {
            e.value.keep(g.seqno(), ClassBit { class: c, bit });
            return Some(((c, av, seqno), Some(i)));
        }
    }
    Some(((c, av, seqno), None))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::panic)]
    use super::*;
    use crate::kernel::Kernel;

    /// The context tests share the one cache: one at a time, so that one's contexts do not
    /// evict the other's.
    static CONTEXT_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn sid_of(c: &[u8]) -> Res<&'static SecurityId> {
        context(key(), c).map(|(_, s)| s)
    }

    fn cp(k: &Kernel, class: &[u8], perm: &[u8]) -> Option<(ClassId, AccessVector)> {
        let g = k.server.snapshot();
        let ((c, av, seqno), _) = class_perm(&g, key(), class, perm)?;
        assert_eq!(seqno, g.seqno().0, "numbers of another generation");
        Some((c, av))
    }

    // The hash depends on every byte and on the length, so strings that differ only past the
    // first word, or only by trailing NULs, land apart (a collision would still be correct,
    // only slower: these guard the cache's use, not its answers).
    #[test]
    fn the_hash_sees_every_byte_and_the_length() {
        let k = key();
        let a = b"system_u:system_r:init_t:s0";
        let b = b"system_u:system_r:init_t:s1";
        assert_ne!(hash(k, a), hash(k, b));
        assert_ne!(hash(k, b"abc"), hash(k, b"abc\0"));
        assert_ne!(hash(k, b""), hash(k, b"\0"));
        assert_eq!(hash(k, a), hash(k, a));
        assert_ne!(hash(k, a), hash(k ^ 2, a));
    }

    // A class and permission name's numbers follow a reload that renumbers the class: `file`
    // is class 6 in example.cil and class 2 in sockets.cil (their class statements' order, as
    // sepol-oracle perms lists them), and each answer is the loaded server's own.
    #[test]
    fn class_and_permission_numbers_follow_a_reload() {
        let _p = seaccess_types::lock(&POLICY_TESTS);
        let k = load_test_policy("example.33");
        let server = |class: &str, perm: &str| server_numbers(k, class, perm);
        let before = cp(k, b"file", b"read");
        assert_eq!(before.map(|(c, _)| c), Some(ClassId(6)));
        assert_eq!(before, server("file", "read"));
        assert_eq!(cp(k, b"file", b"read"), before);
        load_test_policy("sockets.33");
        let after = cp(k, b"file", b"read");
        assert_eq!(after.map(|(c, _)| c), Some(ClassId(2)));
        assert_eq!(after, server("file", "read"));
        assert_eq!(cp(k, b"file", b"no_such_perm"), None);
        assert_eq!(cp(k, b"no_such_class", b"read"), None);
    }

    // Three contexts whose hashes pick the same pair of slots, used in turn, stay cached: after
    // the first round none of them misses (with one slot per context and a pair per hash,
    // the third would evict one of the others at every turn).
    #[test]
    fn contexts_sharing_slots_stay_cached() {
        let _g = seaccess_types::lock(&CONTEXT_TESTS);
        let k = key();
        let mut group: Vec<String> = Vec::new();
        let want = slot_of(hash(k, b"u:r:share_0_t:s0"), CONTEXT_BITS) >> 1;
        for n in 0..1_000_000 {
            let ctx = format!("u:r:share_{n}_t:s0");
            if slot_of(hash(k, ctx.as_bytes()), CONTEXT_BITS) >> 1 == want {
                group.push(ctx);
                if group.len() == 3 {
                    break;
                }
            }
        }
        assert_eq!(group.len(), 3, "no three contexts share a pair of slots");
        for c in &group {
            assert!(sid_of(c.as_bytes()).is_ok());
        }
        let before = CONTEXT_MISSES.load(Relaxed);
        for _ in 0..10 {
            for c in &group {
                assert_eq!(sid_of(c.as_bytes()).map(|s| s.text()), Ok(c.as_str()));
            }
        }
        assert_eq!(
            CONTEXT_MISSES.load(Relaxed) - before,
            0,
            "contexts sharing slots evict each other"
        );
    }

    // Equal strings are the same, of every length up to three words; a string differing in
    // any one byte, or in length, is not.
    #[test]
    fn same_compares_every_byte_and_the_length() {
        let base: Vec<u8> = (0..24u8).map(|b| b'a' + b).collect();
        for n in 0..=base.len() {
            let a = &base[..n];
            let copy = a.to_vec();
            assert!(same(a, a) && same(a, &copy), "{n}");
            for i in 0..n {
                let mut b = a.to_vec();
                b[i] ^= 1;
                assert!(!same(a, &b), "length {n}, byte {i}");
            }
            if n > 0 {
                assert!(!same(a, &a[..n - 1]), "{n}");
            }
        }
    }

    // A name slot holds its names inside its entry, one cache line with the numbers, so that
    // the memo's two compares read the line the numbers are on; names too long for it are
    // answered all the same, uncached.
    #[test]
    fn a_name_entry_is_one_line_with_its_names() {
        let _p = seaccess_types::lock(&POLICY_TESTS);
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/policies");
        let path = dir.join("example.33");
        assert_eq!(
            crate::kernel::load(&path.to_string_lossy()),
            Ok(()),
            "{} (make policies)",
            path.display()
        );
        let k = crate::state::kernel().unwrap_or_else(|e| panic!("no kernel: {e:?}"));
        let g = k.server.snapshot();
        let Some((_, Some(i))) = class_perm(&g, key(), b"file", b"read") else {
            panic!("file read not cached")
        };
        let e = NAMES[i].get().unwrap_or_else(|| panic!("slot {i} empty"));
        let start = e as *const NameEntry as usize;
        for p in [e.class.as_ptr() as usize, e.perm.as_ptr() as usize] {
            assert!(
                p >= start && p < start + 64,
                "name at {p:#x}, entry at {start:#x}"
            );
        }
        assert_eq!(start % 64, 0);
        assert_eq!(std::mem::size_of::<NameEntry>(), 64);
        let long = [b'x'; 40];
        assert_eq!(class_perm(&g, key(), b"file", &long), None);
        assert_eq!(class_perm(&g, key(), &long, b"read"), None);
    }

    // The longest class and permission names of Debian's policies (netlink_scsitransport_socket
    // is asked for by the C bench; the oracle's perms listing gives 32 and 19 bytes as the
    // longest of each in the mls policy) are cached: an uncached pair is looked up in the
    // policy at every call, and the memo cannot remember it.
    #[test]
    fn debian_policies_longest_names_are_cached() {
        let _p = seaccess_types::lock(&POLICY_TESTS);
        for pol in [
            "/etc/selinux/default/policy/policy.33",
            "/etc/selinux/mls/policy/policy.33",
        ] {
            assert_eq!(crate::kernel::load(pol), Ok(()), "{pol}");
            let k = crate::state::kernel().unwrap_or_else(|e| panic!("no kernel: {e:?}"));
            for (class, perm) in [
                ("netlink_scsitransport_socket", "ioctl"),
                ("netlink_kobject_uevent_socket", "ioctl"),
                ("obsolete_netlink_firewall_socket", "ioctl"),
                ("x_application_data", "paste_after_confirm"),
            ] {
                let g = k.server.snapshot();
                if g.class(class).is_err() {
                    continue;
                }
                let cached = class_perm(&g, key(), class.as_bytes(), perm.as_bytes())
                    .map(|(_, i)| i.is_some());
                assert_eq!(cached, Some(true), "{pol}: {class} {perm}");
            }
        }
        load_test_policy("example.33");
    }

    // Context strings that share a slot both come back as their own SID.
    #[test]
    fn a_context_is_its_own_sid_even_when_slots_collide() {
        let _g = seaccess_types::lock(&CONTEXT_TESTS);
        let mut seen: Vec<(Vec<u8>, *const SecurityId)> = Vec::new();
        for n in 0..3 * CONTEXT_SLOTS {
            let ctx = format!("u:r:t{n}:s0");
            let s = sid_of(ctx.as_bytes()).map(|s| s as *const SecurityId);
            assert_eq!(s, sid::intern(&ctx).map(|s| s as *const SecurityId));
            if let Ok(p) = s {
                seen.push((ctx.into_bytes(), p));
            }
        }
        for (ctx, p) in &seen {
            assert_eq!(sid_of(ctx).map(|s| s as *const SecurityId), Ok(*p));
        }
        assert_eq!(sid_of(b"\xff\xfe").map(|_| ()), Err(EINVAL));
    }
}
