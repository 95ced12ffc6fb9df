//! Cross-checks that need more than one table: symbol references between the symbol tables, and
//! the kernel's bounds sanity check over users, roles and types. Each error names the table and
//! the entry (its name and where it starts in the file) at fault.

use super::{bits_below, BOUNDS_MAXDEPTH};
use crate::error::{PolicyError, Result, Section};
use crate::model::*;

/// Where each symbol's entry starts in the file, by table and value (index = value - 1), for
/// the checks that need every table before they can run.
pub(super) struct EntryOffsets {
    pub(super) classes: Vec<usize>,
    pub(super) roles: Vec<usize>,
    pub(super) types: Vec<usize>,
    pub(super) users: Vec<usize>,
    pub(super) sens: Vec<usize>,
    /// Where the permissive-types bitmap starts (read in the header).
    pub(super) permissive: usize,
}

fn invalid(section: Section, offsets: &[usize], index: usize, what: String) -> PolicyError {
    PolicyError::Invalid {
        section,
        offset: offsets.get(index).copied().unwrap_or(0),
        what,
    }
}

pub(super) fn check_symbol_refs(p: &PolicyTables, o: &EntryOffsets) -> Result<()> {
    let (nu, nr, nt, nc) = (
        p.users.len(),
        p.roles.len(),
        p.types.len(),
        p.cat_names.len(),
    );
    for (i, c) in p.classes.iter().enumerate() {
        for k in c.constraints.iter().chain(&c.validatetrans) {
            for e in &k.expr {
                if let ConstraintExpr::Names { field, names, .. } = e {
                    let n = match field {
                        NameField::User => nu,
                        NameField::Role => nr,
                        NameField::Type => nt,
                    };
                    if !bits_below(names, n) {
                        let what = format!(
                            "class {}: constraint names a value beyond the symbol table",
                            c.name
                        );
                        return Err(invalid(Section::Classes, &o.classes, i, what));
                    }
                }
            }
        }
    }
    for (i, ro) in p.roles.iter().enumerate() {
        if !bits_below(&ro.types, nt) || !bits_below(&ro.dominates, nr) {
            return Err(invalid(
                Section::Roles,
                &o.roles,
                i,
                format!("role {}: types or dominance out of range", ro.name),
            ));
        }
    }
    for (i, s) in p.sens.iter().enumerate() {
        if !bits_below(&s.cats, nc) {
            return Err(invalid(
                Section::Sensitivities,
                &o.sens,
                i,
                format!("sensitivity {}: category out of range", s.name),
            ));
        }
    }
    for (i, u) in p.users.iter().enumerate() {
        if !bits_below(&u.roles, nr) {
            return Err(invalid(
                Section::Users,
                &o.users,
                i,
                format!("user {}: role out of range", u.name),
            ));
        }
        if p.mls
            && p.user_names.is_defined(i as u32 + 1)
            && (!p.range_is_valid(&u.range) || !p.level_is_valid(&u.default_level))
        {
            return Err(invalid(
                Section::Users,
                &o.users,
                i,
                format!("user {}: invalid MLS range or default level", u.name),
            ));
        }
    }
    if !bits_below(&p.permissive, nt + 1) {
        let what = "permissive map names a type beyond the type table".to_string();
        return Err(PolicyError::Invalid {
            section: Section::PermissiveTypes,
            offset: o.permissive,
            what,
        });
    }
    Ok(())
}

/// The kernel's policydb_bounds_sanity_check, for users, roles and types: one walk.
pub(super) fn check_bounds(p: &PolicyTables, o: &EntryOffsets) -> Result<()> {
    walk_bounds(
        Section::Users,
        "user",
        &p.users,
        &p.user_names,
        &o.users,
        |u| u.bounds,
        |u, up| {
            (!up.roles.contains(&u.roles)).then(|| "roles exceed those of its bound".to_string())
        },
    )?;
    walk_bounds(
        Section::Roles,
        "role",
        &p.roles,
        &p.role_names,
        &o.roles,
        |r| r.bounds,
        |r, up| {
            (!up.types.contains(&r.types)).then(|| "types exceed those of its bound".to_string())
        },
    )?;
    walk_bounds(
        Section::Types,
        "type",
        &p.types,
        &p.type_names,
        &o.types,
        |t| t.bounds,
        |_, up| up.attribute.then(|| "bounded by an attribute".to_string()),
    )
}

/// From every entry, follows its bounds up the chain as the kernel does: the walk is refused at
/// its `BOUNDS_MAXDEPTH`th hop (`++depth == POLICYDB_BOUNDS_MAXDEPTH`), so a chain of three
/// hops is the longest accepted (and a loop is caught as a chain too deep); at each hop the
/// entry must fit within the bound reached (`exceeds` says how it does not). A bound outside
/// the table or on a hole is refused (the kernel would dereference a missing entry).
fn walk_bounds<T>(
    section: Section,
    what: &str,
    items: &[T],
    names: &Names,
    offsets: &[usize],
    bounds: impl Fn(&T) -> u32,
    exceeds: impl Fn(&T, &T) -> Option<String>,
) -> Result<()> {
    for (i, item) in items.iter().enumerate() {
        let name = names.name(i as u32 + 1).unwrap_or("(unnamed)");
        let err = |why: String| invalid(section, offsets, i, format!("{what} {name}: {why}"));
        let mut upper = item;
        let mut depth = 0;
        while bounds(upper) != 0 {
            depth += 1;
            if depth == BOUNDS_MAXDEPTH {
                return Err(err(format!(
                    "bounds chain too deep or looped ({BOUNDS_MAXDEPTH} hops)"
                )));
            }
            let b = bounds(upper);
            upper = match items.get(b as usize - 1) {
                Some(up) if names.is_defined(b) => up,
                _ => return Err(err(format!("bounded by value {b}, which names no {what}"))),
            };
            if let Some(why) = exceeds(item, upper) {
                return Err(err(format!("{why} {}", names.name(b).unwrap_or("?"))));
            }
        }
    }
    Ok(())
}
