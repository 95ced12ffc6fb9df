//! The eight symbol tables (commons, classes, roles, types, users, booleans, sensitivities,
//! categories) and the permissions of commons and classes.

use super::checks::{check_bounds, check_symbol_refs, EntryOffsets};
use super::constraints::constraints;
use super::mls::{level, range};
use super::version;
use crate::ebitmap::Ebitmap;
use crate::error::{PolicyError, Result, Section};
use crate::model::*;
use crate::reader::Reader;

/// Collects one symbol table's entries by value, checking every value is in 1..=nprim and unique.
///
/// The kernel indexes each table by value and lets values go unnamed: checkpolicy gives role
/// attributes, and sensitivity and category aliases, values of their own but writes no primary
/// entry for them. Such holes are kept as placeholders with no name (see [`Names::name`]), so
/// every table stays indexable by `value - 1` up to its declared count and nothing can name one.
struct Table<T> {
    what: &'static str,
    slots: Vec<Option<T>>,
    names: Names,
    /// The placeholder for a value with no entry; `None` for a table whose values must all have
    /// one (the kernel would dereference a hole in it).
    hole: Option<fn() -> T>,
    /// Where each value's entry starts in the file (a hole: where the table's entries start),
    /// for errors found once the table is complete.
    at: Vec<usize>,
}

impl<T> Table<T> {
    fn new(
        r: &Reader<'_>,
        what: &'static str,
        nprim: u32,
        nel: usize,
        hole: Option<fn() -> T>,
    ) -> Result<Self> {
        let dense = hole.is_none();
        // A dense table needs an entry per value. Holes have no entry, so a table with holes is
        // bounded instead by the bytes left: at most one hole per 8 of them. A placeholder costs
        // a few dozen bytes, so the memory a hostile file can claim stays a small multiple of
        // its size; real policies have far fewer (Debian's refpol: 157 role attributes in 2 MB;
        // aliases are entries, so only role attributes make holes beyond the entry count).
        let limit = if dense {
            nel
        } else {
            nel.saturating_add(r.remaining() / 8)
        };
        if nprim as usize > limit {
            // Reported at the declared count: the table's header (nprim, then nel) was just read.
            return Err(r.invalid_at(r.offset().saturating_sub(8), if dense {
                format!("{what} table declares {nprim} values but has {nel} entries")
            } else {
                format!("{what} table declares {nprim} values; more than its {nel} entries and the {} bytes left allow", r.remaining())
            }));
        }
        let mut slots = Vec::with_capacity(nprim as usize);
        slots.resize_with(nprim as usize, || None);
        Ok(Table {
            what,
            slots,
            names: Names::default(),
            hole,
            at: vec![r.offset(); nprim as usize],
        })
    }

    fn insert(
        &mut self,
        r: &Reader<'_>,
        at: usize,
        name: Box<str>,
        value: u32,
        item: Option<T>,
    ) -> Result<()> {
        let nprim = self.slots.len();
        if value == 0 || value as usize > nprim {
            return Err(r.invalid_at(
                at,
                format!("{} {name}: value {value} outside 1..={nprim}", self.what),
            ));
        }
        if self.names.by_name.contains_key(&name) {
            return Err(r.invalid_at(at, format!("{} {name} defined twice", self.what)));
        }
        if let Some(item) = item {
            let slot = &mut self.slots[value as usize - 1];
            if slot.is_some() {
                return Err(r.invalid_at(
                    at,
                    format!("{} {name}: value {value} used twice", self.what),
                ));
            }
            *slot = Some(item);
            self.at[value as usize - 1] = at;
        }
        self.names.by_name.insert(name, value);
        Ok(())
    }

    /// The entries by value, holes filled with placeholders, and the names. An alias whose value is
    /// a hole is dropped from the names: the kernel would resolve it to the hole, and no
    /// context naming a hole is valid, so the name can never be used.
    fn finish(
        self,
        r: &Reader<'_>,
        name_of: impl Fn(&T) -> Box<str>,
    ) -> Result<(Vec<T>, Names, Vec<usize>)> {
        let mut items = Vec::with_capacity(self.slots.len());
        let mut names = self.names;
        for (i, s) in self.slots.into_iter().enumerate() {
            match s {
                Some(t) => {
                    names.by_value.push(name_of(&t));
                    items.push(t);
                }
                None => match self.hole {
                    Some(hole) => {
                        names.by_value.push(Box::from(""));
                        items.push(hole());
                    }
                    None => {
                        return Err(r.invalid(format!(
                            "{} value {} has no definition",
                            self.what,
                            i + 1
                        )))
                    }
                },
            }
        }
        let by_value = &names.by_value;
        names
            .by_name
            .retain(|_, v| by_value.get(*v as usize - 1).is_some_and(|n| !n.is_empty()));
        Ok((items, names, self.at))
    }
}

pub(super) fn symbols(
    r: &mut Reader<'_>,
    p: &mut PolicyTables,
    permissive_at: usize,
) -> Result<()> {
    let sections = [
        Section::Commons,
        Section::Classes,
        Section::Roles,
        Section::Types,
        Section::Users,
        Section::Booleans,
        Section::Sensitivities,
        Section::Categories,
    ];
    let mut o = EntryOffsets {
        classes: Vec::new(),
        roles: Vec::new(),
        types: Vec::new(),
        users: Vec::new(),
        sens: Vec::new(),
        permissive: permissive_at,
    };
    let mut classes_at = 0;
    for section in sections {
        r.enter(section);
        if section == Section::Classes {
            classes_at = r.offset();
        }
        let nprim = r.u32()?;
        let nel = r.count("symbol", 8)?;
        match section {
            Section::Commons => {
                commons(r, p, nprim, nel)?;
            }
            Section::Classes => o.classes = classes(r, p, nprim, nel)?,
            Section::Roles => o.roles = roles(r, p, nprim, nel)?,
            Section::Types => o.types = types(r, p, nprim, nel)?,
            Section::Users => o.users = users(r, p, nprim, nel)?,
            Section::Booleans => {
                booleans(r, p, nprim, nel)?;
            }
            Section::Sensitivities => o.sens = sensitivities(r, p, nprim, nel)?,
            _ => {
                categories(r, p, nprim, nel)?;
            }
        }
    }
    let Some(process) = p.class_names.value("process") else {
        return Err(PolicyError::Invalid {
            section: Section::Classes,
            offset: classes_at,
            what: "the policy defines no process class".into(),
        });
    };
    // Linux 5.9+ refuses a policy whose process class lacks either permission: the kernel
    // relies on both to tell a process transition from an ordinary access.
    for perm in ["transition", "dyntransition"] {
        if p.perm_bit(process, perm).is_none() {
            let offset = o
                .classes
                .get(process as usize - 1)
                .copied()
                .unwrap_or(classes_at);
            let what = format!("class process has no {perm} permission; the kernel requires it");
            return Err(PolicyError::Invalid {
                section: Section::Classes,
                offset,
                what,
            });
        }
    }
    unname_hole_categories(p);
    // Checks that had to wait for later tables: constraint names, role types, user roles; then
    // the kernel's bounds sanity check (which it runs once the whole file is read: the answer
    // is the same, as bounds involve only these tables).
    check_symbol_refs(p, &o)?;
    check_bounds(p, &o)
}

/// The permissions of a common or class: `nel` records of (length, value, name), values in
/// `first..=nprim`, unique.
pub(super) fn perms(
    r: &mut Reader<'_>,
    owner: &str,
    first: u32,
    nprim: u32,
    nel: usize,
    into: &mut Names,
) -> Result<()> {
    if nprim > 32 {
        return Err(r.invalid(format!("{owner} has {nprim} permissions; at most 32")));
    }
    let mut slots: Vec<Option<Box<str>>> = vec![None; nprim as usize];
    for (v, n) in into.by_value.iter().enumerate() {
        if let Some(s) = slots.get_mut(v) {
            *s = Some(n.clone());
        }
    }
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let value = r.u32()?;
        let name = r.name(len, "permission")?;
        if value < first || value > nprim {
            return Err(r.invalid_at(
                at,
                format!("{owner} permission {name}: value {value} outside {first}..={nprim}"),
            ));
        }
        if into.by_name.contains_key(&name) || slots[value as usize - 1].is_some() {
            return Err(r.invalid_at(
                at,
                format!("{owner} permission {name} (value {value}) defined twice"),
            ));
        }
        slots[value as usize - 1] = Some(name.clone());
        into.by_name.insert(name, value);
    }
    into.by_value.clear();
    for (i, s) in slots.into_iter().enumerate() {
        match s {
            Some(n) => into.by_value.push(n),
            None => {
                return Err(r.invalid(format!("{owner} permission value {} has no name", i + 1)))
            }
        }
    }
    Ok(())
}

pub(super) fn commons(
    r: &mut Reader<'_>,
    p: &mut PolicyTables,
    nprim: u32,
    nel: usize,
) -> Result<Vec<usize>> {
    let mut t = Table::new(r, "common", nprim, nel, Some(Common::hole))?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let value = r.u32()?;
        let pn = r.u32()?;
        let pnel = r.count("permission", 8)?;
        let name = r.name(len, "common")?;
        let mut names = Names::default();
        perms(r, &format!("common {name}"), 1, pn, pnel, &mut names)?;
        t.insert(
            r,
            at,
            name.clone(),
            value,
            Some(Common { name, perms: names }),
        )?;
    }
    let (c, n, at) = t.finish(r, |c| c.name.clone())?;
    p.commons = c;
    p.common_names = n;
    Ok(at)
}

pub(super) fn classes(
    r: &mut Reader<'_>,
    p: &mut PolicyTables,
    nprim: u32,
    nel: usize,
) -> Result<Vec<usize>> {
    let mut t = Table::new(r, "class", nprim, nel, None)?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let clen = r.u32()?;
        let value = r.u32()?;
        let pn = r.u32()?;
        let pnel = r.count("permission", 8)?;
        let ncons = r.count("constraint", 8)?;
        let name = r.name(len, "class")?;
        let mut names = Names::default();
        let mut common = None;
        let mut first = 1;
        if clen != 0 {
            let cat = r.offset();
            let cname = r.name(clen, "common")?;
            let cv = p.common_names.value(&cname).ok_or_else(|| {
                r.invalid_at(cat, format!("class {name}: unknown common {cname}"))
            })?;
            let c = &p.commons[cv as usize - 1];
            names.by_value = c.perms.by_value.clone();
            names.by_name = c.perms.by_name.clone();
            first = c.perms.len() as u32 + 1;
            common = Some(cv);
        }
        perms(r, &format!("class {name}"), first, pn, pnel, &mut names)?;
        let cons = constraints(r, p, &name, ncons, false)?;
        let nv = r.count("validatetrans", 8)?;
        let validatetrans = constraints(r, p, &name, nv, true)?;
        let (mut du, mut dr, mut dg, mut dt) = (None, None, None, None);
        if p.version >= version::NEW_OBJECT_DEFAULTS {
            du = default_side(r.u32()?);
            dr = default_side(r.u32()?);
            dg = default_range(r.u32()?);
        }
        if p.version >= version::DEFAULT_TYPE {
            dt = default_side(r.u32()?);
        }
        let class = Class {
            name: name.clone(),
            common,
            perms: names,
            constraints: cons,
            validatetrans,
            default_user: du,
            default_role: dr,
            default_range: dg,
            default_type: dt,
        };
        t.insert(r, at, name, value, Some(class))?;
    }
    let (c, n, at) = t.finish(r, |c| c.name.clone())?;
    p.classes = c;
    p.class_names = n;
    Ok(at)
}

pub(super) fn roles(
    r: &mut Reader<'_>,
    p: &mut PolicyTables,
    nprim: u32,
    nel: usize,
) -> Result<Vec<usize>> {
    let mut t = Table::new(r, "role", nprim, nel, Some(Role::hole))?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let value = r.u32()?;
        let bounds = r.u32()?;
        let name = r.name(len, "role")?;
        if &*name == "object_r" && value != 1 {
            return Err(r.invalid_at(at, format!("role object_r has value {value}; it must be 1")));
        }
        let dominates = Ebitmap::read(r)?;
        let types = Ebitmap::read(r)?;
        t.insert(
            r,
            at,
            name.clone(),
            value,
            Some(Role {
                name,
                bounds,
                dominates,
                types,
            }),
        )?;
    }
    let (v, n, at) = t.finish(r, |x| x.name.clone())?;
    p.roles = v;
    p.role_names = n;
    Ok(at)
}

pub(super) fn types(
    r: &mut Reader<'_>,
    p: &mut PolicyTables,
    nprim: u32,
    nel: usize,
) -> Result<Vec<usize>> {
    let mut t = Table::new(r, "type", nprim, nel, Some(Type::hole))?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let value = r.u32()?;
        let props = r.u32()?;
        let bounds = r.u32()?;
        let name = r.name(len, "type")?;
        if props & !3 != 0 {
            return Err(r.invalid_at(at, format!("type {name}: unknown properties {props:#x}")));
        }
        let primary = props & 1 != 0;
        let attribute = props & 2 != 0;
        let item = primary.then(|| Type {
            name: Some(name.clone()),
            attribute,
            bounds,
        });
        t.insert(r, at, name, value, item)?;
    }
    let (v, n, at) = t.finish(r, |x| x.name.clone().unwrap_or_default())?;
    p.types = v;
    p.type_names = n;
    Ok(at)
}

pub(super) fn users(
    r: &mut Reader<'_>,
    p: &mut PolicyTables,
    nprim: u32,
    nel: usize,
) -> Result<Vec<usize>> {
    let mut t = Table::new(r, "user", nprim, nel, Some(User::hole))?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let value = r.u32()?;
        let bounds = r.u32()?;
        let name = r.name(len, "user")?;
        let roles = Ebitmap::read(r)?;
        let range = range(r)?;
        let default_level = level(r)?;
        t.insert(
            r,
            at,
            name.clone(),
            value,
            Some(User {
                name,
                bounds,
                roles,
                range,
                default_level,
            }),
        )?;
    }
    let (v, n, at) = t.finish(r, |x| x.name.clone())?;
    p.users = v;
    p.user_names = n;
    Ok(at)
}

pub(super) fn booleans(
    r: &mut Reader<'_>,
    p: &mut PolicyTables,
    nprim: u32,
    nel: usize,
) -> Result<Vec<usize>> {
    let mut t = Table::new(r, "boolean", nprim, nel, None)?;
    for _ in 0..nel {
        let at = r.offset();
        let value = r.u32()?;
        let state = r.u32()?;
        let len = r.u32()?;
        let name = r.name(len, "boolean")?;
        if state > 1 {
            return Err(r.invalid_at(
                at,
                format!("boolean {name}: state {state} is neither 0 nor 1"),
            ));
        }
        t.insert(
            r,
            at,
            name.clone(),
            value,
            Some(Bool {
                name,
                state: state == 1,
            }),
        )?;
    }
    let (v, n, at) = t.finish(r, |x| x.name.clone())?;
    p.bools = v;
    p.bool_names = n;
    Ok(at)
}

pub(super) fn sensitivities(
    r: &mut Reader<'_>,
    p: &mut PolicyTables,
    nprim: u32,
    nel: usize,
) -> Result<Vec<usize>> {
    let mut t = Table::new(r, "sensitivity", nprim, nel, Some(Sensitivity::hole))?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let alias = r.u32()?;
        let name = r.name(len, "sensitivity")?;
        let lvl = level(r)?;
        let item = (alias == 0).then(|| Sensitivity {
            name: name.clone(),
            cats: lvl.cats,
        });
        t.insert(r, at, name, lvl.sens, item)?;
    }
    let (v, n, at) = t.finish(r, |x| x.name.clone())?;
    p.sens = v;
    p.sens_names = n;
    Ok(at)
}

pub(super) fn categories(
    r: &mut Reader<'_>,
    p: &mut PolicyTables,
    nprim: u32,
    nel: usize,
) -> Result<Vec<usize>> {
    let mut t = Table::new(r, "category", nprim, nel, Some(|| Box::from("")))?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let value = r.u32()?;
        let alias = r.u32()?;
        let name = r.name(len, "category")?;
        let item = (alias == 0).then(|| name.clone());
        t.insert(r, at, name, value, item)?;
    }
    let (_, n, at) = t.finish(r, |x| x.clone())?;
    p.cat_names = n;
    Ok(at)
}

/// Takes category holes out of every sensitivity's category set, so that no valid level can
/// hold an unnamed category (the categories are read after the sensitivities).
fn unname_hole_categories(p: &mut PolicyTables) {
    let names = &p.cat_names;
    if (1..=names.len() as u32).all(|c| names.is_defined(c)) {
        return;
    }
    for s in &mut p.sens {
        if s.cats.iter().any(|c| !names.is_defined(c + 1)) {
            s.cats = Ebitmap::from_bits(s.cats.iter().filter(|c| names.is_defined(c + 1)));
        }
    }
}

// The kernel's class_read stores any default_* word, and security_compute_sid and
// mls_compute_sid act only on the values they name: any other word is no default rule, as 0 is.

fn default_side(raw: u32) -> Option<DefaultSide> {
    match raw {
        1 => Some(DefaultSide::Source),
        2 => Some(DefaultSide::Target),
        _ => None,
    }
}

fn default_range(raw: u32) -> Option<DefaultRange> {
    Some(match raw {
        1 => DefaultRange::SourceLow,
        2 => DefaultRange::SourceHigh,
        3 => DefaultRange::SourceLowHigh,
        4 => DefaultRange::TargetLow,
        5 => DefaultRange::TargetHigh,
        6 => DefaultRange::TargetLowHigh,
        7 => DefaultRange::Glblub,
        _ => return None,
    })
}
