//! `policydb_read`: the sections of the binary format in file order, each record checked as it is
//! read, then cross-checks that need the whole policy.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use crate::ebitmap::Ebitmap;
use crate::error::{PolicyError, Result, Section};
use crate::model::*;
use crate::reader::Reader;

pub const MAGIC: u32 = 0xf97c_ff8c;
const SIGNATURE: &[u8] = b"SE Linux";
pub const VERSION_MIN: u32 = 24;
pub const VERSION_MAX: u32 = 34;

/// Policy versions that changed the format, as the kernel names them.
pub mod version {
    pub const BOUNDARY: u32 = 24;
    pub const FILENAME_TRANS: u32 = 25;
    pub const ROLETRANS: u32 = 26;
    pub const NEW_OBJECT_DEFAULTS: u32 = 27;
    pub const DEFAULT_TYPE: u32 = 28;
    pub const CONSTRAINT_NAMES: u32 = 29;
    pub const XPERMS_IOCTL: u32 = 30;
    pub const INFINIBAND: u32 = 31;
    pub const GLBLUB: u32 = 32;
    pub const COMP_FTRANS: u32 = 33;
    pub const COND_XPERMS: u32 = 34;
}

const CONFIG_MLS: u32 = 1;
const CONFIG_REJECT_UNKNOWN: u32 = 2;
const CONFIG_ALLOW_UNKNOWN: u32 = 4;
const SYM_NUM: u32 = 8;
const BOUNDS_MAXDEPTH: usize = 4;
/// The highest initial SID number accepted.
pub const MAX_INITIAL_SID: u32 = 256;

/// What each supported version holds: the number of symbol tables and of object-context kinds.
fn ocon_num(version: u32) -> u32 {
    if version >= version::INFINIBAND {
        9
    } else {
        7
    }
}

/// Reads and validates a policy image.
pub fn read_policy(data: &[u8]) -> Result<Policy> {
    let mut r = Reader::new(data);
    let mut p = header(&mut r)?;
    symbols(&mut r, &mut p)?;
    r.section = Section::AccessVectorTable;
    let at = r.offset();
    let n = r.count("access vector rule", 12)?;
    if n == 0 {
        return Err(r.invalid_at(at, "the access vector table is empty"));
    }
    let mut avtab = Vec::with_capacity(n);
    let mut xperms = Vec::new();
    for _ in 0..n {
        avtab.push(avtab_item(&mut r, &p, false, &mut xperms)?);
    }
    sort_avtab(&mut avtab, p.types.len(), p.classes.len());
    check_avtab_unique(&r, &avtab)?;
    p.avtab = avtab;
    p.xperms = xperms;
    conditionals(&mut r, &mut p)?;
    role_rules(&mut r, &mut p)?;
    filename_transitions(&mut r, &mut p)?;
    object_contexts(&mut r, &mut p)?;
    genfs(&mut r, &mut p)?;
    range_transitions(&mut r, &mut p)?;
    type_attr_map(&mut r, &mut p)?;
    r.section = Section::Trailer;
    if r.remaining() != 0 {
        return Err(r.invalid(format!("{} bytes after the last section", r.remaining())));
    }
    bounds_check(&r, &p)?;
    Ok(p)
}

fn header(r: &mut Reader<'_>) -> Result<Policy> {
    let magic = r.u32()?;
    if magic != MAGIC {
        return Err(r.invalid_at(0, format!("not a binary SELinux policy: magic {magic:#x}, expected {MAGIC:#x}")));
    }
    let at = r.offset();
    let len = r.u32()?;
    if len as usize != SIGNATURE.len() {
        return Err(r.invalid_at(at, format!("signature length {len}, expected {}", SIGNATURE.len())));
    }
    if r.bytes(SIGNATURE.len())? != SIGNATURE {
        return Err(r.invalid_at(at + 4, "signature is not \"SE Linux\""));
    }
    let vat = r.offset();
    let version = r.u32()?;
    let config = r.u32()?;
    let sym_num = r.u32()?;
    let ocons = r.u32()?;
    if !(VERSION_MIN..=VERSION_MAX).contains(&version) {
        return Err(PolicyError::UnsupportedVersion { offset: vat, version, min: VERSION_MIN, max: VERSION_MAX });
    }
    if config & !(CONFIG_MLS | CONFIG_REJECT_UNKNOWN | CONFIG_ALLOW_UNKNOWN) != 0 {
        return Err(r.invalid_at(vat + 4, format!("unknown configuration flags {config:#x}")));
    }
    let handle_unknown = if config & CONFIG_ALLOW_UNKNOWN != 0 {
        HandleUnknown::Allow
    } else if config & CONFIG_REJECT_UNKNOWN != 0 {
        HandleUnknown::Reject
    } else {
        HandleUnknown::Deny
    };
    if sym_num != SYM_NUM || ocons != ocon_num(version) {
        return Err(r.invalid_at(
            vat + 8,
            format!(
                "version {version} has {SYM_NUM} symbol tables and {} object context kinds; the file says {sym_num} and {ocons}",
                ocon_num(version)
            ),
        ));
    }
    r.section = Section::PolicyCapabilities;
    let policycaps = Ebitmap::read(r)?;
    r.section = Section::PermissiveTypes;
    let permissive = Ebitmap::read(r)?;
    Ok(Policy {
        version,
        mls: config & CONFIG_MLS != 0,
        handle_unknown,
        policycaps,
        permissive,
        commons: Vec::new(),
        common_names: Names::default(),
        classes: Vec::new(),
        class_names: Names::default(),
        roles: Vec::new(),
        role_names: Names::default(),
        types: Vec::new(),
        type_names: Names::default(),
        users: Vec::new(),
        user_names: Names::default(),
        bools: Vec::new(),
        bool_names: Names::default(),
        sens: Vec::new(),
        sens_names: Names::default(),
        cat_names: Names::default(),
        avtab: Vec::new(),
        xperms: Vec::new(),
        conds: Vec::new(),
        role_trans: Vec::new(),
        role_allows: Vec::new(),
        filename_trans: Vec::new(),
        ocontexts: ObjectContexts::default(),
        genfs: Vec::new(),
        range_trans: Vec::new(),
        type_attr_map: Vec::new(),
    })
}

/// Collects one symbol table's entries by value, checking every value is in 1..=nprim, unique, and
/// that every value has a primary name.
struct Table<T> {
    what: &'static str,
    slots: Vec<Option<T>>,
    names: Names,
}

impl<T> Table<T> {
    fn new(r: &Reader<'_>, what: &'static str, nprim: u32, nel: usize) -> Result<Self> {
        // Each value needs a primary entry, so a table claiming more values than entries is bad;
        // checking this first also bounds the allocation by the file's size.
        if nprim as usize > nel {
            return Err(r.invalid(format!("{what} table declares {nprim} values but has {nel} entries")));
        }
        let mut slots = Vec::with_capacity(nprim as usize);
        slots.resize_with(nprim as usize, || None);
        Ok(Table { what, slots, names: Names::default() })
    }

    fn insert(&mut self, r: &Reader<'_>, at: usize, name: Box<str>, value: u32, item: Option<T>) -> Result<()> {
        let nprim = self.slots.len();
        if value == 0 || value as usize > nprim {
            return Err(r.invalid_at(at, format!("{} {name}: value {value} outside 1..={nprim}", self.what)));
        }
        if self.names.by_name.contains_key(&name) {
            return Err(r.invalid_at(at, format!("{} {name} defined twice", self.what)));
        }
        if let Some(item) = item {
            let slot = &mut self.slots[value as usize - 1];
            if slot.is_some() {
                return Err(r.invalid_at(at, format!("{} {name}: value {value} used twice", self.what)));
            }
            *slot = Some(item);
        }
        self.names.by_name.insert(name, value);
        Ok(())
    }

    fn finish(self, r: &Reader<'_>, name_of: impl Fn(&T) -> Box<str>) -> Result<(Vec<T>, Names)> {
        let mut items = Vec::with_capacity(self.slots.len());
        let mut names = self.names;
        for (i, s) in self.slots.into_iter().enumerate() {
            match s {
                Some(t) => {
                    names.by_value.push(name_of(&t));
                    items.push(t);
                }
                None => return Err(r.invalid(format!("{} value {} has no definition", self.what, i + 1))),
            }
        }
        Ok((items, names))
    }
}

fn symbols(r: &mut Reader<'_>, p: &mut Policy) -> Result<()> {
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
    for section in sections {
        r.section = section;
        let nprim = r.u32()?;
        let nel = r.count("symbol", 8)?;
        match section {
            Section::Commons => commons(r, p, nprim, nel)?,
            Section::Classes => classes(r, p, nprim, nel)?,
            Section::Roles => roles(r, p, nprim, nel)?,
            Section::Types => types(r, p, nprim, nel)?,
            Section::Users => users(r, p, nprim, nel)?,
            Section::Booleans => booleans(r, p, nprim, nel)?,
            Section::Sensitivities => sensitivities(r, p, nprim, nel)?,
            _ => categories(r, p, nprim, nel)?,
        }
    }
    r.section = Section::Classes;
    if p.class_names.value("process").is_none() {
        return Err(r.invalid("the policy defines no process class"));
    }
    // Checks that had to wait for later tables: constraint names, role types, user roles.
    check_symbol_refs(r, p)
}

/// The permissions of a common or class: `nel` records of (length, value, name), values in
/// `first..=nprim`, unique.
fn perms(r: &mut Reader<'_>, owner: &str, first: u32, nprim: u32, nel: usize, into: &mut Names) -> Result<()> {
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
            return Err(r.invalid_at(at, format!("{owner} permission {name}: value {value} outside {first}..={nprim}")));
        }
        if into.by_name.contains_key(&name) || slots[value as usize - 1].is_some() {
            return Err(r.invalid_at(at, format!("{owner} permission {name} (value {value}) defined twice")));
        }
        slots[value as usize - 1] = Some(name.clone());
        into.by_name.insert(name, value);
    }
    into.by_value.clear();
    for (i, s) in slots.into_iter().enumerate() {
        match s {
            Some(n) => into.by_value.push(n),
            None => return Err(r.invalid(format!("{owner} permission value {} has no name", i + 1))),
        }
    }
    Ok(())
}

fn commons(r: &mut Reader<'_>, p: &mut Policy, nprim: u32, nel: usize) -> Result<()> {
    let mut t = Table::new(r, "common", nprim, nel)?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let value = r.u32()?;
        let pn = r.u32()?;
        let pnel = r.count("permission", 8)?;
        let name = r.name(len, "common")?;
        let mut names = Names::default();
        perms(r, &format!("common {name}"), 1, pn, pnel, &mut names)?;
        t.insert(r, at, name.clone(), value, Some(Common { name, perms: names }))?;
    }
    let (c, n) = t.finish(r, |c| c.name.clone())?;
    p.commons = c;
    p.common_names = n;
    Ok(())
}

fn constraints(r: &mut Reader<'_>, p: &Policy, class: &str, n: usize, xtarget: bool) -> Result<Vec<Constraint>> {
    use crate::model::cexpr::*;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let perms = r.u32()?;
        let nexpr = r.count("constraint expression", 12)?;
        let at = r.offset();
        let mut expr = Vec::with_capacity(nexpr);
        let mut depth: i32 = -1;
        for _ in 0..nexpr {
            let eat = r.offset();
            let kind = r.u32()?;
            let attr = r.u32()?;
            let op = r.u32()?;
            let bad = |what: &str| r.invalid_at(eat, format!("class {class}: constraint {what}"));
            match kind {
                NOT => {
                    if depth < 0 {
                        return Err(bad("'not' with an empty stack"));
                    }
                    expr.push(ConstraintExpr::Not);
                }
                AND | OR => {
                    if depth < 1 {
                        return Err(bad("'and'/'or' with fewer than two operands"));
                    }
                    depth -= 1;
                    expr.push(if kind == AND { ConstraintExpr::And } else { ConstraintExpr::Or });
                }
                ATTR => {
                    if depth == MAXDEPTH as i32 - 1 {
                        return Err(bad("expression too deep"));
                    }
                    depth += 1;
                    let ok = match attr {
                        USER | TYPE => matches!(op, EQ | NEQ),
                        ROLE | L1L2 | L1H2 | H1L2 | H1H2 | L1H1 | L2H2 => (EQ..=INCOMP).contains(&op),
                        _ => false,
                    };
                    if !ok {
                        return Err(bad(&format!("attribute {attr:#x} with operator {op}")));
                    }
                    expr.push(ConstraintExpr::Attr { attr, op });
                }
                NAMES => {
                    if !xtarget && attr & XTARGET != 0 {
                        return Err(bad("refers to a third context outside validatetrans"));
                    }
                    if depth == MAXDEPTH as i32 - 1 {
                        return Err(bad("expression too deep"));
                    }
                    depth += 1;
                    let which = attr & !(TARGET | XTARGET);
                    if !matches!(which, USER | ROLE | TYPE) || attr & TARGET != 0 && attr & XTARGET != 0 {
                        return Err(bad(&format!("name test on attribute {attr:#x}")));
                    }
                    if !matches!(op, EQ | NEQ) {
                        return Err(bad(&format!("name test with operator {op}")));
                    }
                    let names = Ebitmap::read(r)?;
                    if p.version >= crate::read::version::CONSTRAINT_NAMES {
                        // The type set as written in the source, kept by the compiler only for
                        // diagnostics; `names` is already expanded.
                        Ebitmap::read(r)?;
                        Ebitmap::read(r)?;
                        r.u32()?;
                    }
                    expr.push(ConstraintExpr::Names { attr, op, names });
                }
                _ => return Err(bad(&format!("unknown expression kind {kind}"))),
            }
        }
        if depth != 0 {
            return Err(r.invalid_at(at, format!("class {class}: constraint expression does not reduce to one value")));
        }
        out.push(Constraint { perms, expr });
    }
    Ok(out)
}

fn classes(r: &mut Reader<'_>, p: &mut Policy, nprim: u32, nel: usize) -> Result<()> {
    let mut t = Table::new(r, "class", nprim, nel)?;
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
            let cv = p
                .common_names
                .value(&cname)
                .ok_or_else(|| r.invalid_at(cat, format!("class {name}: unknown common {cname}")))?;
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
        let (mut du, mut dr, mut dg, mut dt) = (0, 0, 0, 0);
        if p.version >= version::NEW_OBJECT_DEFAULTS {
            let dat = r.offset();
            du = r.u32()?;
            dr = r.u32()?;
            dg = r.u32()?;
            if du > 2 || dr > 2 || dg > 7 {
                return Err(r.invalid_at(dat, format!("class {name}: invalid default user/role/range {du}/{dr}/{dg}")));
            }
        }
        if p.version >= version::DEFAULT_TYPE {
            let dat = r.offset();
            dt = r.u32()?;
            if dt > 2 {
                return Err(r.invalid_at(dat, format!("class {name}: invalid default type {dt}")));
            }
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
    let (c, n) = t.finish(r, |c| c.name.clone())?;
    p.classes = c;
    p.class_names = n;
    Ok(())
}

fn roles(r: &mut Reader<'_>, p: &mut Policy, nprim: u32, nel: usize) -> Result<()> {
    let mut t = Table::new(r, "role", nprim, nel)?;
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
        t.insert(r, at, name.clone(), value, Some(Role { name, bounds, dominates, types }))?;
    }
    let (v, n) = t.finish(r, |x| x.name.clone())?;
    p.roles = v;
    p.role_names = n;
    Ok(())
}

fn types(r: &mut Reader<'_>, p: &mut Policy, nprim: u32, nel: usize) -> Result<()> {
    let mut t = Table::new(r, "type", nprim, nel)?;
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
        let item = primary.then(|| Type { name: Some(name.clone()), attribute, bounds });
        t.insert(r, at, name, value, item)?;
    }
    let (v, n) = t.finish(r, |x| x.name.clone().unwrap_or_default())?;
    p.types = v;
    p.type_names = n;
    Ok(())
}

fn level(r: &mut Reader<'_>) -> Result<Level> {
    let sens = r.u32()?;
    let cats = Ebitmap::read(r)?;
    Ok(Level { sens, cats })
}

fn range(r: &mut Reader<'_>) -> Result<Range> {
    let at = r.offset();
    let items = r.u32()?;
    if items == 0 || items > 2 {
        return Err(r.invalid_at(at, format!("range with {items} sensitivities")));
    }
    let low_sens = r.u32()?;
    let high_sens = if items > 1 { r.u32()? } else { low_sens };
    let low_cats = Ebitmap::read(r)?;
    let high_cats = if items > 1 { Ebitmap::read(r)? } else { low_cats.clone() };
    Ok(Range { low: Level { sens: low_sens, cats: low_cats }, high: Level { sens: high_sens, cats: high_cats } })
}

fn users(r: &mut Reader<'_>, p: &mut Policy, nprim: u32, nel: usize) -> Result<()> {
    let mut t = Table::new(r, "user", nprim, nel)?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let value = r.u32()?;
        let bounds = r.u32()?;
        let name = r.name(len, "user")?;
        let roles = Ebitmap::read(r)?;
        let range = range(r)?;
        let default_level = level(r)?;
        t.insert(r, at, name.clone(), value, Some(User { name, bounds, roles, range, default_level }))?;
    }
    let (v, n) = t.finish(r, |x| x.name.clone())?;
    p.users = v;
    p.user_names = n;
    Ok(())
}

fn booleans(r: &mut Reader<'_>, p: &mut Policy, nprim: u32, nel: usize) -> Result<()> {
    let mut t = Table::new(r, "boolean", nprim, nel)?;
    for _ in 0..nel {
        let at = r.offset();
        let value = r.u32()?;
        let state = r.u32()?;
        let len = r.u32()?;
        let name = r.name(len, "boolean")?;
        if state > 1 {
            return Err(r.invalid_at(at, format!("boolean {name}: state {state} is neither 0 nor 1")));
        }
        t.insert(r, at, name.clone(), value, Some(Bool { name, state: state == 1 }))?;
    }
    let (v, n) = t.finish(r, |x| x.name.clone())?;
    p.bools = v;
    p.bool_names = n;
    Ok(())
}

fn sensitivities(r: &mut Reader<'_>, p: &mut Policy, nprim: u32, nel: usize) -> Result<()> {
    let mut t = Table::new(r, "sensitivity", nprim, nel)?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let alias = r.u32()?;
        let name = r.name(len, "sensitivity")?;
        let lvl = level(r)?;
        let item = (alias == 0).then(|| Sensitivity { name: name.clone(), cats: lvl.cats });
        t.insert(r, at, name, lvl.sens, item)?;
    }
    let (v, n) = t.finish(r, |x| x.name.clone())?;
    p.sens = v;
    p.sens_names = n;
    Ok(())
}

fn categories(r: &mut Reader<'_>, p: &mut Policy, nprim: u32, nel: usize) -> Result<()> {
    let mut t = Table::new(r, "category", nprim, nel)?;
    for _ in 0..nel {
        let at = r.offset();
        let len = r.u32()?;
        let value = r.u32()?;
        let alias = r.u32()?;
        let name = r.name(len, "category")?;
        let item = (alias == 0).then(|| name.clone());
        t.insert(r, at, name, value, item)?;
    }
    let (_, n) = t.finish(r, |x| x.clone())?;
    p.cat_names = n;
    Ok(())
}

fn bits_below(e: &Ebitmap, n: usize) -> bool {
    (e.end() as usize) <= n
}

fn check_symbol_refs(r: &Reader<'_>, p: &Policy) -> Result<()> {
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

fn type_ok(p: &Policy, t: u32) -> bool {
    t != 0 && t as usize <= p.types.len()
}
fn class_ok(p: &Policy, c: u32) -> bool {
    c != 0 && c as usize <= p.classes.len()
}
fn role_ok(p: &Policy, ro: u32) -> bool {
    ro != 0 && ro as usize <= p.roles.len()
}

fn avtab_item(r: &mut Reader<'_>, p: &Policy, conditional: bool, xperms: &mut Vec<Xperms>) -> Result<AvtabEntry> {
    use crate::model::avtab::*;
    let at = r.offset();
    let h = r.bytes(8)?;
    let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
    let (source_type, target_type, class, raw) = (u16_at(0), u16_at(2), u16_at(4), u16_at(6));
    if !type_ok(p, source_type.into()) || !type_ok(p, target_type.into()) || !class_ok(p, class.into()) {
        return Err(r.invalid_at(at, format!("rule names type {source_type}, {target_type} or class {class} not in the policy")));
    }
    let specified = raw & !ENABLED;
    if raw & ENABLED != 0 && !conditional {
        return Err(r.invalid_at(at, "unconditional rule marked enabled"));
    }
    let kinds = AV | TYPE | XPERMS;
    if specified & !kinds != 0 || specified.count_ones() != 1 {
        return Err(r.invalid_at(at, format!("rule kind {raw:#x} is not exactly one known kind")));
    }
    if specified & XPERMS != 0 {
        if p.version < version::XPERMS_IOCTL {
            return Err(r.invalid_at(at, format!("extended permissions need policy version 30, not {}", p.version)));
        }
        if conditional && p.version < version::COND_XPERMS {
            return Err(r.invalid_at(at, format!("conditional extended permissions need policy version 34, not {}", p.version)));
        }
        let xs = r.u8()?;
        let driver = r.u8()?;
        if !matches!(xs, XPERMS_IOCTLFUNCTION | XPERMS_IOCTLDRIVER | XPERMS_NLMSG) {
            return Err(r.invalid_at(at, format!("unknown extended permission kind {xs}")));
        }
        let mut perms = [0u32; 8];
        for w in &mut perms {
            *w = r.u32()?;
        }
        let data = xperms.len() as u32;
        xperms.push(Xperms { specified: xs, driver, perms });
        return Ok(AvtabEntry { source_type, target_type, class, specified, data });
    }
    let data = r.u32()?;
    if specified & TYPE != 0 && !type_ok(p, data) {
        return Err(r.invalid_at(at, format!("type rule's new type {data} is not in the policy")));
    }
    Ok(AvtabEntry { source_type, target_type, class, specified, data })
}

/// A stable counting sort on a small integer key: linear in the table and the key range.
pub fn counting_sort<T: Copy>(v: &[T], buckets: usize, key: impl Fn(&T) -> usize) -> Vec<T> {
    let mut start = vec![0usize; buckets + 1];
    for e in v {
        start[key(e).min(buckets - 1) + 1] += 1;
    }
    for i in 1..start.len() {
        start[i] += start[i - 1];
    }
    let mut out = Vec::with_capacity(v.len());
    // Every slot is written exactly once below; start from copies of the first element.
    if let Some(first) = v.first() {
        out.resize(v.len(), *first);
    }
    for e in v {
        let slot = &mut start[key(e).min(buckets - 1)];
        out[*slot] = *e;
        *slot += 1;
    }
    out
}

/// Sorts rules by source type, then class, then target type (three stable counting passes,
/// least significant first); rules equal in all three keep their file order.
pub fn sort_avtab(entries: &mut Vec<AvtabEntry>, ntypes: usize, nclasses: usize) {
    let by_target = counting_sort(entries, ntypes + 1, |e| usize::from(e.target_type));
    let by_class = counting_sort(&by_target, nclasses + 1, |e| usize::from(e.class));
    *entries = counting_sort(&by_class, ntypes + 1, |e| usize::from(e.source_type));
}

/// The kernel refuses a table with two rules of one kind for one key (extended permissions aside).
fn check_avtab_unique(r: &Reader<'_>, sorted: &[AvtabEntry]) -> Result<()> {
    let same_triple = |a: &AvtabEntry, b: &AvtabEntry| {
        a.source_type == b.source_type && a.class == b.class && a.target_type == b.target_type
    };
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i + 1;
        while j < sorted.len() && same_triple(&sorted[i], &sorted[j]) {
            j += 1;
        }
        // A handful of rules share a triple; compare their kinds pairwise.
        let group = &sorted[i..j];
        for (k, a) in group.iter().enumerate() {
            if a.specified & crate::model::avtab::XPERMS != 0 {
                continue;
            }
            if group[k + 1..].iter().any(|b| b.specified == a.specified) {
                return Err(r.invalid(format!(
                    "two rules of kind {:#x} for source type {}, target type {}, class {}",
                    a.specified, a.source_type, a.target_type, a.class
                )));
            }
        }
        i = j;
    }
    Ok(())
}

/// Whether the sorted table has a rule of `e`'s kind for `e`'s triple.
fn has_rule(sorted: &[AvtabEntry], e: &AvtabEntry) -> bool {
    let triple = |x: &AvtabEntry| (x.source_type, x.class, x.target_type);
    let from = sorted.partition_point(|x| triple(x) < triple(e));
    sorted[from..].iter().take_while(|x| triple(x) == triple(e)).any(|x| x.specified == e.specified)
}

fn conditionals(r: &mut Reader<'_>, p: &mut Policy) -> Result<()> {
    use crate::model::cond::*;
    r.section = Section::Conditionals;
    let n = r.count("conditional", 12)?;
    let mut xperms = std::mem::take(&mut p.xperms);
    let mut conds = Vec::with_capacity(n);
    for _ in 0..n {
        let _cur_state = r.u32()?;
        let at = r.offset();
        let ne = r.count("boolean expression", 8)?;
        if ne == 0 {
            return Err(r.invalid_at(at, "empty boolean expression"));
        }
        let mut expr = Vec::with_capacity(ne);
        for _ in 0..ne {
            let eat = r.offset();
            let kind = r.u32()?;
            let boolean = r.u32()?;
            if !(BOOL..=NEQ).contains(&kind) {
                return Err(r.invalid_at(eat, format!("unknown boolean operator {kind}")));
            }
            if kind == BOOL && (boolean == 0 || boolean as usize > p.bools.len()) {
                return Err(r.invalid_at(eat, format!("expression names boolean {boolean}, not in the policy")));
            }
            expr.push(CondExpr { kind, boolean: if kind == BOOL { boolean } else { 0 } });
        }
        let mut lists = [Vec::new(), Vec::new()];
        for list in &mut lists {
            let len = r.count("conditional rule", 12)?;
            list.reserve_exact(len);
            for _ in 0..len {
                let eat = r.offset();
                let e = avtab_item(r, p, true, &mut xperms)?;
                if e.specified & crate::model::avtab::TYPE != 0 && has_rule(&p.avtab, &e) {
                    return Err(r.invalid_at(eat, "conditional type rule conflicts with an unconditional one"));
                }
                list.push(e);
            }
        }
        let [true_list, false_list] = lists;
        conds.push(CondNode { expr, true_list, false_list });
    }
    p.conds = conds;
    p.xperms = xperms;
    Ok(())
}

fn role_rules(r: &mut Reader<'_>, p: &mut Policy) -> Result<()> {
    r.section = Section::RoleTransitions;
    let with_class = p.version >= version::ROLETRANS;
    let n = r.count("role transition", if with_class { 16 } else { 12 })?;
    let process = p.class_names.value("process").unwrap_or(0);
    let mut seen = HashSet::default();
    for _ in 0..n {
        let at = r.offset();
        let role = r.u32()?;
        let ty = r.u32()?;
        let new_role = r.u32()?;
        let class = if with_class { r.u32()? } else { process };
        if !role_ok(p, role) || !role_ok(p, new_role) || !type_ok(p, ty) || !class_ok(p, class) {
            return Err(r.invalid_at(at, "role transition names a role, type or class not in the policy"));
        }
        if !seen.insert((role, ty, class)) {
            return Err(r.invalid_at(at, "two role transitions for one role, type and class"));
        }
        p.role_trans.push(RoleTrans { role, ty, new_role, class });
    }
    r.section = Section::RoleAllows;
    let n = r.count("role allow", 8)?;
    for _ in 0..n {
        let at = r.offset();
        let role = r.u32()?;
        let new_role = r.u32()?;
        if !role_ok(p, role) || !role_ok(p, new_role) {
            return Err(r.invalid_at(at, "role allow names a role not in the policy"));
        }
        p.role_allows.push(RoleAllow { role, new_role });
    }
    Ok(())
}

fn filename_transitions(r: &mut Reader<'_>, p: &mut Policy) -> Result<()> {
    r.section = Section::FilenameTransitions;
    if p.version < version::FILENAME_TRANS {
        return Ok(());
    }
    let compact = p.version >= version::COMP_FTRANS;
    let n = r.count("filename transition", if compact { 16 } else { 20 })?;
    // (name, ttype, class) -> index of its first entry, to refuse conflicting rules.
    let mut seen: HashMap<(Box<str>, u32, u32), Vec<usize>> = HashMap::default();
    for _ in 0..n {
        let at = r.offset();
        let name = r.len_name("filename transition object")?;
        let mut add = |r: &Reader<'_>, p: &mut Policy, stypes: Ebitmap, ttype: u32, class: u32, otype: u32| -> Result<()> {
            if !type_ok(p, ttype) || !type_ok(p, otype) || !class_ok(p, class) || !bits_below(&stypes, p.types.len()) {
                return Err(r.invalid_at(at, format!("filename transition for \"{name}\" names a type or class not in the policy")));
            }
            let idx = seen.entry((name.clone(), ttype, class)).or_default();
            for &i in idx.iter() {
                let other: &FilenameTrans = &p.filename_trans[i];
                if other.otype != otype && other.stypes.iter().any(|b| stypes.get(b)) {
                    return Err(r.invalid_at(at, format!("conflicting filename transitions for \"{name}\"")));
                }
            }
            idx.push(p.filename_trans.len());
            p.filename_trans.push(FilenameTrans { name: name.clone(), stypes, ttype, class, otype });
            Ok(())
        };
        if compact {
            let ttype = r.u32()?;
            let class = r.u32()?;
            let nd = r.count("filename transition datum", 16)?;
            for _ in 0..nd {
                let stypes = Ebitmap::read(r)?;
                let otype = r.u32()?;
                add(r, p, stypes, ttype, class, otype)?;
            }
        } else {
            let stype = r.u32()?;
            let ttype = r.u32()?;
            let class = r.u32()?;
            let otype = r.u32()?;
            if !type_ok(p, stype) {
                return Err(r.invalid_at(at, format!("filename transition source type {stype} not in the policy")));
            }
            add(r, p, Ebitmap::from_bits([stype - 1]), ttype, class, otype)?;
        }
    }
    Ok(())
}

fn context(r: &mut Reader<'_>, p: &Policy) -> Result<Context> {
    let at = r.offset();
    let user = r.u32()?;
    let role = r.u32()?;
    let ty = r.u32()?;
    let range = range(r)?;
    let c = Context { user, role, ty, range: p.mls.then_some(range) };
    if !p.context_is_valid(&c) {
        return Err(r.invalid_at(at, "invalid context"));
    }
    Ok(c)
}

fn object_contexts(r: &mut Reader<'_>, p: &mut Policy) -> Result<()> {
    r.section = Section::ObjectContexts;
    let mut o = ObjectContexts::default();
    for kind in 0..ocon_num(p.version) {
        let n = r.count("object context", 16)?;
        for _ in 0..n {
            let at = r.offset();
            match kind {
                0 => {
                    let sid = r.u32()?;
                    // The kernel knows 27 initial SIDs; a few hundred leaves room for any
                    // future ones and keeps SID tables indexed by number small.
                    if sid == 0 || sid > MAX_INITIAL_SID || o.initial_sids.iter().any(|s| s.sid == sid) {
                        return Err(r.invalid_at(at, format!("initial SID {sid} is zero, above {MAX_INITIAL_SID} or defined twice")));
                    }
                    let context = context(r, p)?;
                    o.initial_sids.push(InitialSid { sid, context });
                }
                1 | 3 => {
                    let name = r.len_name(if kind == 1 { "filesystem" } else { "network interface" })?;
                    let context = context(r, p)?;
                    let c2 = context_second(r, p)?;
                    let e = NamedContext { name, context, context2: Some(c2) };
                    if kind == 1 { o.fs.push(e) } else { o.netifs.push(e) }
                }
                2 => {
                    let protocol = r.u32()?;
                    let low = r.u32()?;
                    let high = r.u32()?;
                    if protocol > 255 || low > 0xffff || high > 0xffff || low > high {
                        return Err(r.invalid_at(at, format!("port context {protocol}:{low}-{high} out of range")));
                    }
                    let context = context(r, p)?;
                    o.ports.push(PortContext { protocol, low, high, context });
                }
                4 => {
                    let addr: [u8; 4] = four(r.bytes(4)?);
                    let mask: [u8; 4] = four(r.bytes(4)?);
                    let context = context(r, p)?;
                    o.nodes.push(NodeContext { addr, mask, context });
                }
                5 => {
                    let behavior = r.u32()?;
                    let fstype = r.len_name("filesystem")?;
                    if !(crate::model::fsuse::XATTR..=crate::model::fsuse::TASK).contains(&behavior) {
                        return Err(r.invalid_at(at, format!("fs_use for {fstype}: unknown behaviour {behavior}")));
                    }
                    let context = context(r, p)?;
                    o.fs_use.push(FsUse { behavior, fstype, context });
                }
                6 => {
                    let mut addr = [0u8; 16];
                    addr.copy_from_slice(r.bytes(16)?);
                    let mut mask = [0u8; 16];
                    mask.copy_from_slice(r.bytes(16)?);
                    let context = context(r, p)?;
                    o.nodes6.push(Node6Context { addr, mask, context });
                }
                7 => {
                    let subnet_prefix = r.u64()?;
                    let low = r.u32()?;
                    let high = r.u32()?;
                    if low > 0xffff || high > 0xffff || low > high {
                        return Err(r.invalid_at(at, format!("infiniband pkey range {low}-{high} out of range")));
                    }
                    let context = context(r, p)?;
                    o.ibpkeys.push(IbPkeyContext { subnet_prefix, low: low as u16, high: high as u16, context });
                }
                _ => {
                    let len = r.u32()?;
                    let port = r.u32()?;
                    let device = r.name(len, "infiniband device")?;
                    if port == 0 || port > 255 {
                        return Err(r.invalid_at(at, format!("infiniband end port {port} out of range")));
                    }
                    let context = context(r, p)?;
                    o.ibendports.push(IbEndportContext { device, port: port as u8, context });
                }
            }
        }
    }
    p.ocontexts = o;
    Ok(())
}

fn context_second(r: &mut Reader<'_>, p: &Policy) -> Result<Context> {
    context(r, p)
}

fn four(b: &[u8]) -> [u8; 4] {
    [b[0], b[1], b[2], b[3]]
}

fn genfs(r: &mut Reader<'_>, p: &mut Policy) -> Result<()> {
    r.section = Section::Genfs;
    let n = r.count("genfs filesystem", 8)?;
    for _ in 0..n {
        let at = r.offset();
        let fstype = r.len_name("filesystem")?;
        if p.genfs.iter().any(|g| g.fstype == fstype) {
            return Err(r.invalid_at(at, format!("genfs entries for {fstype} given twice")));
        }
        let ne = r.count("genfs entry", 12)?;
        let mut entries: Vec<GenfsEntry> = Vec::with_capacity(ne);
        for _ in 0..ne {
            let eat = r.offset();
            let path = r.len_name("genfs path")?;
            let class = r.u32()?;
            if class != 0 && !class_ok(p, class) {
                return Err(r.invalid_at(eat, format!("genfs {fstype} {path}: class {class} not in the policy")));
            }
            let context = context(r, p)?;
            // Kept longest path first (ties in file order), so the first prefix match is the
            // longest, as the kernel's insertion order makes it.
            let mut pos = entries.len();
            for (i, c) in entries.iter().enumerate() {
                if c.path == path && (c.class == 0 || class == 0 || c.class == class) {
                    return Err(r.invalid_at(eat, format!("genfs {fstype} {path} given twice")));
                }
                if path.len() > c.path.len() && pos == entries.len() {
                    pos = i;
                }
            }
            entries.insert(pos, GenfsEntry { path, class, context });
        }
        p.genfs.push(Genfs { fstype, entries });
    }
    Ok(())
}

fn range_transitions(r: &mut Reader<'_>, p: &mut Policy) -> Result<()> {
    r.section = Section::RangeTransitions;
    let n = r.count("range transition", 24)?;
    let mut seen = HashSet::default();
    for _ in 0..n {
        let at = r.offset();
        let source_type = r.u32()?;
        let target_type = r.u32()?;
        let class = r.u32()?;
        let range = range(r)?;
        if !type_ok(p, source_type) || !type_ok(p, target_type) || !class_ok(p, class) {
            return Err(r.invalid_at(at, "range transition names a type or class not in the policy"));
        }
        if p.mls && !p.range_is_valid(&range) {
            return Err(r.invalid_at(at, "range transition to an invalid range"));
        }
        if !seen.insert((source_type, target_type, class)) {
            return Err(r.invalid_at(at, "two range transitions for one source, target and class"));
        }
        p.range_trans.push(RangeTrans { source_type, target_type, class, range });
    }
    Ok(())
}

fn type_attr_map(r: &mut Reader<'_>, p: &mut Policy) -> Result<()> {
    r.section = Section::TypeAttributeMap;
    let nt = p.types.len();
    let mut map = Vec::with_capacity(nt);
    for i in 0..nt {
        let at = r.offset();
        let mut e = Ebitmap::read(r)?;
        if !bits_below(&e, nt) {
            return Err(r.invalid_at(at, format!("type {}: attribute beyond the type table", i + 1)));
        }
        // Every type stands for itself.
        e.set(i as u32);
        map.push(e);
    }
    p.type_attr_map = map;
    Ok(())
}

/// The kernel's policydb_bounds_sanity_check: a bounded user, role or type has no more than its
/// bound, chains are short, and a type is never bounded by an attribute.
fn bounds_check(r: &Reader<'_>, p: &Policy) -> Result<()> {
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
