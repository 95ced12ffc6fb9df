//! Cross-checks that need more than one table: symbol references between the symbol tables, and
//! the kernel's bounds sanity check over users, roles and types.

use super::{bits_below, BOUNDS_MAXDEPTH};
use crate::error::{Result, Section};
use crate::model::*;
use crate::reader::Reader;

pub(super) fn check_symbol_refs(r: &Reader<'_>, p: &Policy) -> Result<()> {
    use crate::model::cexpr::*;
    let (nu, nr, nt, ns, nc) = (p.users.len(), p.roles.len(), p.types.len(), p.sens.len(), p.cat_names.len());
    let bad = |what: String| r.invalid(what);
    for c in &p.classes {
        for k in c.constraints.iter().chain(&c.validatetrans) {
            for e in &k.expr {
                if let ConstraintExpr::Names { attr, names, .. } = e {
                    let n = match attr & !(TARGET | XTARGET) {
                        USER => nu,
                        ROLE => nr,
                        _ => nt,
                    };
                    if !bits_below(names, n) {
                        return Err(bad(format!("class {}: constraint names a value beyond the symbol table", c.name)));
                    }
                }
            }
        }
    }
    for ro in &p.roles {
        if !bits_below(&ro.types, nt) || !bits_below(&ro.dominates, nr) || ro.bounds as usize > nr {
            return Err(bad(format!("role {}: types, dominance or bounds out of range", ro.name)));
        }
    }
    for ty in &p.types {
        if ty.bounds as usize > nt {
            return Err(bad(format!("type {}: bounds out of range", ty.name.as_deref().unwrap_or("?"))));
        }
    }
    for (i, s) in p.sens.iter().enumerate() {
        if !bits_below(&s.cats, nc) {
            return Err(bad(format!("sensitivity {}: category out of range", s.name)));
        }
        let _ = i;
    }
    for u in &p.users {
        if !bits_below(&u.roles, nr) || u.bounds as usize > nu {
            return Err(bad(format!("user {}: roles or bounds out of range", u.name)));
        }
        if p.mls && (!p.range_is_valid(&u.range) || !p.level_is_valid(&u.default_level)) {
            return Err(bad(format!("user {}: invalid MLS range or default level", u.name)));
        }
    }
    if !bits_below(&p.permissive, nt + 1) {
        return Err(bad("permissive map names a type beyond the type table".into()));
    }
    let _ = ns;
    Ok(())
}

/// The kernel's policydb_bounds_sanity_check: a bounded user, role or type has no more than its
/// bound, chains are short, and a type is never bounded by an attribute.
pub(super) fn bounds_check(r: &Reader<'_>, p: &Policy) -> Result<()> {
    let mut r2 = Reader::new(&[]);
    r2.section = Section::Trailer;
    let _ = r;
    let err = |what: String| r2.invalid_at(0, what);
    for u in &p.users {
        let mut depth = 0;
        let mut b = u.bounds;
        while b != 0 {
            depth += 1;
            if depth > BOUNDS_MAXDEPTH {
                return Err(err(format!("user {}: bounds chain too deep", u.name)));
            }
            let up = &p.users[b as usize - 1];
            if !up.roles.contains(&u.roles) {
                return Err(err(format!("user {}: roles exceed those of its bound {}", u.name, up.name)));
            }
            b = up.bounds;
        }
    }
    for ro in &p.roles {
        let mut depth = 0;
        let mut b = ro.bounds;
        while b != 0 {
            depth += 1;
            if depth > BOUNDS_MAXDEPTH {
                return Err(err(format!("role {}: bounds chain too deep", ro.name)));
            }
            let up = &p.roles[b as usize - 1];
            if !up.types.contains(&ro.types) {
                return Err(err(format!("role {}: types exceed those of its bound {}", ro.name, up.name)));
            }
            b = up.bounds;
        }
    }
    for t in &p.types {
        let mut depth = 0;
        let mut b = t.bounds;
        let name = t.name.as_deref().unwrap_or("?");
        while b != 0 {
            depth += 1;
            if depth > BOUNDS_MAXDEPTH {
                return Err(err(format!("type {name}: bounds chain too deep")));
            }
            let up = &p.types[b as usize - 1];
            if up.attribute {
                return Err(err(format!("type {name}: bounded by an attribute")));
            }
            b = up.bounds;
        }
    }
    Ok(())
}
