//! Role transitions and role allow rules.

use rustc_hash::FxHashSet as HashSet;

use super::{class_ok, role_ok, type_ok, version};
use crate::error::{Result, Section};
use crate::model::*;
use crate::reader::Reader;

pub(super) fn role_rules(r: &mut Reader<'_>, p: &mut PolicyTables) -> Result<()> {
    r.enter(Section::RoleTransitions);
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
            return Err(r.invalid_at(
                at,
                "role transition names a role, type or class not in the policy",
            ));
        }
        if !seen.insert((role, ty, class)) {
            return Err(r.invalid_at(at, "two role transitions for one role, type and class"));
        }
        p.role_trans.push(RoleTrans {
            role,
            ty,
            new_role,
            class,
        });
    }
    r.enter(Section::RoleAllows);
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
