//! `policydb_read`: the sections of the binary format in file order, each record checked as it is
//! read, then cross-checks that need the whole policy. One submodule per part of the format.

mod avtab;
mod checks;
mod cond;
mod constraints;
mod filename;
mod mls;
mod ocontext;
mod roles;
mod symbols;

use crate::ebitmap::Ebitmap;
use crate::error::{PolicyError, Result, Section};
use crate::model::*;
use crate::reader::Reader;
use crate::rules::*;

use avtab::{avtab_item, check_avtab_unique};
use cond::conditionals;
use filename::filename_transitions;
use mls::range_transitions;
use ocontext::{genfs, object_contexts};
use roles::role_rules;
use symbols::symbols;

pub use avtab::{sort_avtab, sort_by_source_class_target};

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
pub(super) const BOUNDS_MAXDEPTH: usize = 4;
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
    read(data).map(|(p, _)| p)
}

/// Where each section of a valid policy image begins, in file order (the sections a version
/// lacks begin where the next one does): for tools that point into a file, and for tests that
/// check an error is reported in the section holding the damage.
pub fn section_starts(data: &[u8]) -> Result<Vec<(Section, usize)>> {
    read(data).map(|(_, s)| s)
}

fn read(data: &[u8]) -> Result<(Policy, Vec<(Section, usize)>)> {
    let mut r = Reader::new(data);
    let (mut p, permissive_at) = header(&mut r)?;
    symbols(&mut r, &mut p, permissive_at)?;
    r.enter(Section::AccessVectorTable);
    let at = r.offset();
    let n = r.count("access vector rule", 12)?;
    if n == 0 {
        return Err(r.invalid_at(at, "the access vector table is empty"));
    }
    let items_at = r.offset();
    let mut avtab = Vec::with_capacity(n);
    let mut xperms = Vec::new();
    for _ in 0..n {
        avtab.push(avtab_item(&mut r, &p, false, &mut xperms)?);
    }
    sort_avtab(&mut avtab, p.types.len(), p.classes.len());
    check_avtab_unique(&r, &p, &avtab, items_at)?;
    let conds = conditionals(&mut r, &p, &avtab, &mut xperms)?;
    let rules = RuleTables {
        avtab,
        xperms,
        conds,
    };
    role_rules(&mut r, &mut p)?;
    filename_transitions(&mut r, &mut p)?;
    object_contexts(&mut r, &mut p)?;
    genfs(&mut r, &mut p)?;
    range_transitions(&mut r, &mut p)?;
    type_attr_map(&mut r, &mut p)?;
    r.enter(Section::Trailer);
    if r.remaining() != 0 {
        return Err(r.invalid(format!("{} bytes after the last section", r.remaining())));
    }
    Ok((Policy { tables: p, rules }, r.section_starts()))
}

/// The header, policy capabilities and permissive types; also where the permissive bitmap starts.
fn header(r: &mut Reader<'_>) -> Result<(PolicyTables, usize)> {
    let magic = r.u32()?;
    if magic != MAGIC {
        return Err(r.invalid_at(
            0,
            format!("not a binary SELinux policy: magic {magic:#x}, expected {MAGIC:#x}"),
        ));
    }
    let at = r.offset();
    let len = r.u32()?;
    if len as usize != SIGNATURE.len() {
        return Err(r.invalid_at(
            at,
            format!("signature length {len}, expected {}", SIGNATURE.len()),
        ));
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
        return Err(PolicyError::UnsupportedVersion {
            offset: vat,
            version,
            min: VERSION_MIN,
            max: VERSION_MAX,
        });
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
    r.enter(Section::PolicyCapabilities);
    let policycaps = Ebitmap::read(r)?;
    r.enter(Section::PermissiveTypes);
    let permissive_at = r.offset();
    let permissive = Ebitmap::read(r)?;
    let p = PolicyTables {
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
        role_trans: Vec::new(),
        role_allows: Vec::new(),
        filename_trans: Vec::new(),
        ocontexts: ObjectContexts::default(),
        genfs: Vec::new(),
        range_trans: Vec::new(),
        type_attr_map: Vec::new(),
    };
    Ok((p, permissive_at))
}

fn bits_below(e: &Ebitmap, n: usize) -> bool {
    (e.end() as usize) <= n
}

fn type_ok(p: &PolicyTables, t: u32) -> bool {
    t != 0 && t as usize <= p.types.len()
}
fn class_ok(p: &PolicyTables, c: u32) -> bool {
    c != 0 && c as usize <= p.classes.len()
}
fn role_ok(p: &PolicyTables, ro: u32) -> bool {
    ro != 0 && ro as usize <= p.roles.len()
}

fn type_attr_map(r: &mut Reader<'_>, p: &mut PolicyTables) -> Result<()> {
    r.enter(Section::TypeAttributeMap);
    let nt = p.types.len();
    let mut map = Vec::with_capacity(nt);
    for i in 0..nt {
        let at = r.offset();
        let mut e = Ebitmap::read(r)?;
        if !bits_below(&e, nt) {
            return Err(r.invalid_at(
                at,
                format!("type {}: attribute beyond the type table", i + 1),
            ));
        }
        // Every type stands for itself.
        e.set(i as u32);
        map.push(e);
    }
    p.type_attr_map = map;
    Ok(())
}
