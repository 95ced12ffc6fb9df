//! The access vector table: one rule per record, kept sorted by source type, class and target
//! type, with the kernel's refusal of duplicate rules.

use super::{class_ok, type_ok, version};
use crate::error::Result;
use crate::model::*;
use crate::reader::Reader;
use crate::rules::*;

pub(super) fn avtab_item(
    r: &mut Reader<'_>,
    p: &PolicyTables,
    conditional: bool,
    xperms: &mut Vec<Xperms>,
) -> Result<AvtabEntry> {
    const ENABLED: u16 = 0x8000;
    let at = r.offset();
    let h = r.bytes(8)?;
    let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
    let (source_type, target_type, class, raw) = (u16_at(0), u16_at(2), u16_at(4), u16_at(6));
    if !type_ok(p, source_type.into())
        || !type_ok(p, target_type.into())
        || !class_ok(p, class.into())
    {
        return Err(r.invalid_at(
            at,
            format!(
                "rule names type {source_type}, {target_type} or class {class} not in the policy"
            ),
        ));
    }
    if raw & ENABLED != 0 && !conditional {
        return Err(r.invalid_at(at, "unconditional rule marked enabled"));
    }
    let Some(kind) = RuleKind::from_specified(raw & !ENABLED) else {
        return Err(r.invalid_at(
            at,
            format!("rule kind {raw:#x} is not exactly one known kind"),
        ));
    };
    if let RuleKind::Xperms(_) = kind {
        if p.version < version::XPERMS_IOCTL {
            return Err(r.invalid_at(
                at,
                format!(
                    "extended permissions need policy version 30, not {}",
                    p.version
                ),
            ));
        }
        if conditional && p.version < version::COND_XPERMS {
            return Err(r.invalid_at(
                at,
                format!(
                    "conditional extended permissions need policy version 34, not {}",
                    p.version
                ),
            ));
        }
        // Any kind byte loads: the kernel's avtab_read_item does not look at it.
        let xkind = XpermsKind::from_raw(r.u8()?);
        let driver = r.u8()?;
        let mut perms = [0u32; 8];
        for w in &mut perms {
            *w = r.u32()?;
        }
        let data = xperms.len() as u32;
        xperms.push(Xperms {
            kind: xkind,
            driver,
            perms,
        });
        return Ok(AvtabEntry {
            source_type,
            target_type,
            class,
            kind,
            data,
        });
    }
    let data = r.u32()?;
    if let RuleKind::Type(_) = kind {
        if !type_ok(p, data) {
            return Err(r.invalid_at(
                at,
                format!("type rule's new type {data} is not in the policy"),
            ));
        }
    }
    Ok(AvtabEntry {
        source_type,
        target_type,
        class,
        kind,
        data,
    })
}

/// A stable counting sort on a small integer key, linear in the table and the key range, of
/// `src` into `dst` (a slice of the same length, overwritten): with two buffers passed back and
/// forth, a sort on several keys holds two copies of the table at once, never one per pass.
fn counting_sort_into<T: Copy>(
    src: &[T],
    dst: &mut [T],
    buckets: usize,
    key: impl Fn(&T) -> usize,
) {
    let mut start = vec![0usize; buckets + 1];
    for e in src {
        start[key(e).min(buckets - 1) + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    for e in src {
        let slot = &mut start[key(e).min(buckets - 1)];
        dst[*slot] = *e;
        *slot += 1;
    }
}

/// Sorts rules by source type, then class, then target type (three stable counting passes,
/// least significant first); rules equal in all three keep their file order.
pub fn sort_avtab(entries: &mut Vec<AvtabEntry>, ntypes: usize, nclasses: usize) {
    sort_by_source_class_target(entries, ntypes, nclasses, |e| {
        (e.source_type, e.class, e.target_type)
    });
}

/// Sorts `v` by the (source type, class, target type) `key` gives each element: three stable
/// counting passes, least significant first, between `v` and one copy of it (never one copy per
/// pass); elements equal in all three keep their order. Types are below `ntypes + 1`, classes
/// below `nclasses + 1`.
pub fn sort_by_source_class_target<T: Copy>(
    v: &mut Vec<T>,
    ntypes: usize,
    nclasses: usize,
    key: impl Fn(&T) -> (u16, u16, u16),
) {
    let mut other = v.clone();
    counting_sort_into(v, &mut other, ntypes + 1, |e| usize::from(key(e).2));
    counting_sort_into(&other, v, nclasses + 1, |e| usize::from(key(e).1));
    counting_sort_into(v, &mut other, ntypes + 1, |e| usize::from(key(e).0));
    *v = other;
}

/// The kernel refuses a table with two rules of one kind for one key (extended permissions
/// aside). The check runs on the sorted table; the offending rule (the later of the two in
/// the file, where the kernel's insertion fails) is found again by its key from `items_at`,
/// where the table's rules start, only when there is one.
pub(super) fn check_avtab_unique(
    r: &Reader<'_>,
    p: &PolicyTables,
    sorted: &[AvtabEntry],
    items_at: usize,
) -> Result<()> {
    let Some(dup) = find_duplicate(sorted) else {
        return Ok(());
    };
    let mut again = r.at(items_at);
    let mut scratch = Vec::new();
    let mut seen = false;
    let mut at = items_at;
    for _ in 0..sorted.len() {
        at = again.offset();
        let e = avtab_item(&mut again, p, false, &mut scratch)?;
        if e.sort_key() == dup.sort_key() && e.kind == dup.kind {
            if seen {
                break;
            }
            seen = true;
        }
    }
    let name = |n: &Names, v: u16| n.name(v.into()).unwrap_or("?").to_string();
    Err(r.invalid_at(
        at,
        format!(
            "second rule of kind {:#x} for source type {}, target type {}, class {}",
            dup.kind.specified(),
            name(&p.type_names, dup.source_type),
            name(&p.type_names, dup.target_type),
            name(&p.class_names, dup.class)
        ),
    ))
}

/// A rule whose kind and key another rule of the sorted table shares.
fn find_duplicate(sorted: &[AvtabEntry]) -> Option<AvtabEntry> {
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i + 1;
        while j < sorted.len() && sorted[j].sort_key() == sorted[i].sort_key() {
            j += 1;
        }
        // A handful of rules share a triple; compare their kinds pairwise.
        let group = &sorted[i..j];
        for (k, a) in group.iter().enumerate() {
            let xperms = matches!(a.kind, RuleKind::Xperms(_));
            if !xperms && group[k + 1..].iter().any(|b| b.kind == a.kind) {
                return Some(*a);
            }
        }
        i = j;
    }
    None
}

/// Whether the sorted table has a rule of `e`'s kind for `e`'s triple.
pub(super) fn has_rule(sorted: &[AvtabEntry], e: &AvtabEntry) -> bool {
    let triple = |x: &AvtabEntry| (x.source_type, x.class, x.target_type);
    let from = sorted.partition_point(|x| triple(x) < triple(e));
    sorted[from..]
        .iter()
        .take_while(|x| triple(x) == triple(e))
        .any(|x| x.kind == e.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The three passes between two buffers give what one stable sort on (source type, class,
    /// target type) gives: rules sharing all three stay in file order (told apart by `data`).
    #[test]
    fn sort_avtab_is_a_stable_sort_on_source_class_target() {
        let kinds = [
            RuleKind::Av(AvKind::Allowed),
            RuleKind::Av(AvKind::AuditDeny),
            RuleKind::Type(TypeRuleKind::Transition),
        ];
        // A small generator's rules, with many repeated triples.
        let mut x = 7u32;
        let mut next = |m: u32| {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (x >> 16) % m
        };
        let mut entries: Vec<AvtabEntry> = (0..500)
            .map(|i| AvtabEntry {
                source_type: 1 + next(5) as u16,
                target_type: 1 + next(5) as u16,
                class: 1 + next(3) as u16,
                kind: kinds[next(3) as usize],
                data: i,
            })
            .collect();
        let mut expected = entries.clone();
        expected.sort_by_key(|e| (e.source_type, e.class, e.target_type));
        sort_avtab(&mut entries, 5, 3);
        assert_eq!(entries, expected);
        assert_eq!(entries.capacity(), entries.len());
    }
}
