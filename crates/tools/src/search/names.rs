//! A policy's names as the searches and listings need them: lookups that suggest the nearest
//! name on a miss, attributes' member types, and aliases in the order libsepol keeps them.

use seaccess_policy::{Names, PolicyTables};

use crate::suggest::did_you_mean;
use crate::ToolsError;

/// The value `name` has in `names`, aliases included, or an error naming `what` it is not,
/// with the nearest names the table has.
pub(crate) fn lookup(names: &Names, what: &'static str, name: &str) -> Result<u32, ToolsError> {
    names
        .value(name)
        .filter(|v| names.is_defined(*v))
        .ok_or_else(|| unknown(names, what, name))
}

/// The error for a name `names` does not hold.
pub(crate) fn unknown(names: &Names, what: &'static str, name: &str) -> ToolsError {
    ToolsError::Unknown {
        what,
        name: name.to_string(),
        hint: did_you_mean(
            name,
            names
                .by_value
                .iter()
                .map(|s| &**s)
                .filter(|s| !s.is_empty()),
        ),
    }
}

/// The name of type or attribute `v`.
pub(crate) fn type_name(p: &PolicyTables, v: u32) -> &str {
    p.type_names.name(v).unwrap_or("?")
}

pub(crate) fn is_attribute(p: &PolicyTables, v: u32) -> bool {
    p.types
        .get((v as usize).wrapping_sub(1))
        .is_some_and(|t| t.attribute)
}

/// Whether `v` is a type (not an attribute, not a hole).
pub(crate) fn is_type(p: &PolicyTables, v: u32) -> bool {
    p.types
        .get((v as usize).wrapping_sub(1))
        .is_some_and(|t| !t.attribute && t.name.is_some())
}

/// For each type value (index = value; 0 unused), the types it stands for: an attribute's
/// member types in value order, a type itself (setools' `expand()`).
pub(crate) fn expansions(p: &PolicyTables) -> Vec<Vec<u32>> {
    let n = p.types.len();
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n + 1];
    for t in 1..=n as u32 {
        if !is_type(p, t) {
            continue;
        }
        if let Some(e) = out.get_mut(t as usize) {
            e.push(t);
        }
        for bit in p
            .type_attr_map
            .get(t as usize - 1)
            .map(|m| m.iter().collect::<Vec<_>>())
            .unwrap_or_default()
        {
            let a = bit + 1;
            if a != t && is_attribute(p, a) {
                if let Some(e) = out.get_mut(a as usize) {
                    e.push(t);
                }
            }
        }
    }
    out
}

/// The attributes of type `t`, in value order.
pub(crate) fn attributes_of(p: &PolicyTables, t: u32) -> Vec<u32> {
    let Some(m) = p.type_attr_map.get((t as usize).wrapping_sub(1)) else {
        return Vec::new();
    };
    m.iter()
        .map(|b| b + 1)
        .filter(|&a| a != t && is_attribute(p, a))
        .collect()
}

/// libsepol's symbol table hash (`symhash`): where a name falls in a table of `size` slots (a
/// power of two).
fn symhash(name: &str, size: usize) -> usize {
    let mut v: u32 = 0;
    for &c in name.as_bytes() {
        v = v.rotate_left(4) ^ u32::from(c);
    }
    v as usize & size.saturating_sub(1)
}

/// For each value (index = value), its aliases in the order setools lists them: libsepol's hash
/// table order (slot, then name within a slot). libsepol starts a table at `initial` slots (512
/// for types) and doubles it as names come, so a policy's table ends at the larger of that and
/// the next power of two of its number of names.
pub(crate) fn aliases(names: &Names, initial: usize) -> Vec<Vec<&str>> {
    let size = names.by_name.len().next_power_of_two().max(initial);
    let mut out: Vec<Vec<&str>> = vec![Vec::new(); names.len() + 1];
    let mut all: Vec<(usize, &str, u32)> = names
        .by_name
        .iter()
        .filter(|(n, v)| names.name(**v) != Some(&***n))
        .map(|(n, v)| (symhash(n, size), &**n, *v))
        .collect();
    all.sort_unstable();
    for (_, n, v) in all {
        if let Some(e) = out.get_mut(v as usize) {
            e.push(n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symhash_is_libsepols() {
        // Values libsepol's symhash gives (its rotate-and-xor over the bytes), masked.
        assert_eq!(symhash("a", 8192), 0x61);
        assert_eq!(symhash("ab", 8192), (0x61 << 4) ^ 0x62);
        assert_eq!(symhash("ab", 16), ((0x61 << 4) ^ 0x62) & 15);
    }
}
