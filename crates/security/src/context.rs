//! Security contexts: parsing `user:role:type[:range]` against a policy, validation, and the
//! kernel's canonical text form.

use seaccess_policy::{Context, Ebitmap, Level, PolicyTables, Range, OBJECT_R};

use crate::error::{Result, SecurityError};

fn invalid(ctx: &str, reason: impl Into<String>) -> SecurityError {
    SecurityError::InvalidContext {
        context: ctx.to_string(),
        reason: reason.into(),
    }
}

/// Parses and validates a context string, as the kernel's string_to_context_struct does: names
/// (aliases allowed for types, sensitivities and categories) must exist, the type must not be an
/// attribute, and the context must be valid (user may hold role, role may hold type, range valid
/// and, for subjects, within the user's clearance).
pub fn parse_context(p: &PolicyTables, s: &str) -> Result<Context> {
    let s_trim = s.strip_suffix('\0').unwrap_or(s);
    let mut parts = s_trim.splitn(4, ':');
    let (Some(u), Some(r), Some(t)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(invalid(s, "expected user:role:type[:range]"));
    };
    let mls = parts.next();
    let user = p.user_names.value(u).ok_or_else(|| {
        invalid(
            s,
            format!("unknown user {u}{}", p.user_names.did_you_mean(u)),
        )
    })?;
    let role = p.role_names.value(r).ok_or_else(|| {
        invalid(
            s,
            format!("unknown role {r}{}", p.role_names.did_you_mean(r)),
        )
    })?;
    let ty = p.type_names.value(t).ok_or_else(|| {
        invalid(
            s,
            format!("unknown type {t}{}", p.type_names.did_you_mean(t)),
        )
    })?;
    if !matches!(p.types.get((ty as usize).wrapping_sub(1)), Some(d) if !d.attribute) {
        return Err(invalid(s, format!("{t} is an attribute, not a type")));
    }
    let range = match (p.mls, mls) {
        (true, Some(m)) => Some(parse_range(p, s, m)?),
        (true, None) => return Err(invalid(s, "the policy is MLS and the context has no level")),
        (false, Some(_)) => {
            return Err(invalid(
                s,
                "the policy is not MLS and the context has a level",
            ))
        }
        (false, None) => None,
    };
    let c = Context {
        user,
        role,
        ty,
        range,
    };
    check_valid(p, s, &c)?;
    Ok(c)
}

/// Says why a context is invalid, in the order the kernel checks. `s` is the context as the
/// caller wrote it, quoted in the error. Any value may be out of the policy's tables (a context
/// built by hand or under another policy), so nothing here indexes them unchecked.
pub fn check_valid(p: &PolicyTables, s: &str, c: &Context) -> Result<()> {
    if c.range.is_some() != p.mls {
        let why = if p.mls {
            "the policy is MLS and the context has no level"
        } else {
            "the policy is not MLS and the context has a level"
        };
        return Err(invalid(s, why));
    }
    let Some(user) = p.users.get((c.user as usize).wrapping_sub(1)) else {
        return Err(invalid(
            s,
            format!("user value {} is not in the policy", c.user),
        ));
    };
    let Some(role) = p.roles.get((c.role as usize).wrapping_sub(1)) else {
        return Err(invalid(
            s,
            format!("role value {} is not in the policy", c.role),
        ));
    };
    match p.types.get((c.ty as usize).wrapping_sub(1)) {
        None => {
            return Err(invalid(
                s,
                format!("type value {} is not in the policy", c.ty),
            ))
        }
        Some(t) if t.attribute => {
            return Err(invalid(
                s,
                format!("type value {} is an attribute, not a type", c.ty),
            ))
        }
        Some(_) => {}
    }
    if p.context_is_valid(c) {
        return Ok(());
    }
    if c.role != OBJECT_R && !role.types.get(c.ty - 1) {
        return Err(invalid(
            s,
            format!(
                "role {} may not hold type {}",
                role.name,
                p.type_names.name(c.ty).unwrap_or("?")
            ),
        ));
    }
    if c.role != OBJECT_R && !user.roles.get(c.role - 1) {
        return Err(invalid(
            s,
            format!("user {} may not hold role {}", user.name, role.name),
        ));
    }
    if let Some(r) = &c.range {
        for l in [&r.low, &r.high] {
            if !p.level_is_valid(l) {
                return Err(invalid(s, "a level's sensitivity is not in the policy or does not allow one of its categories"));
            }
        }
        if !seaccess_policy::level_dom(&r.high, &r.low) {
            return Err(invalid(s, "the high level does not dominate the low level"));
        }
        return Err(invalid(
            s,
            format!("the range is outside user {}'s clearance", user.name),
        ));
    }
    Err(invalid(s, "not valid in this policy"))
}

fn parse_range(p: &PolicyTables, whole: &str, m: &str) -> Result<Range> {
    let (lo, hi) = match m.split_once('-') {
        Some((a, b)) => (a, Some(b)),
        None => (m, None),
    };
    let low = parse_level(p, whole, lo)?;
    let high = match hi {
        Some(h) => parse_level(p, whole, h)?,
        None => low.clone(),
    };
    Ok(Range { low, high })
}

fn parse_level(p: &PolicyTables, whole: &str, l: &str) -> Result<Level> {
    let (sens_name, cats) = match l.split_once(':') {
        Some((a, b)) => (a, Some(b)),
        None => (l, None),
    };
    let sens = p
        .sens_names
        .value(sens_name)
        .ok_or_else(|| invalid(whole, format!("unknown sensitivity {sens_name}")))?;
    let mut set = Ebitmap::new();
    if let Some(cats) = cats {
        for item in cats.split(',') {
            let cat = |n: &str| {
                p.cat_names
                    .value(n)
                    .ok_or_else(|| invalid(whole, format!("unknown category {n}")))
            };
            match item.split_once('.') {
                Some((a, b)) => {
                    let (va, vb) = (cat(a)?, cat(b)?);
                    if va >= vb {
                        return Err(invalid(
                            whole,
                            format!("category range {item} is not increasing"),
                        ));
                    }
                    for v in va..=vb {
                        set.set(v - 1);
                    }
                }
                None => set.set(cat(item)? - 1),
            }
        }
    }
    Ok(Level { sens, cats: set })
}

/// The kernel's canonical form: categories in increasing order, runs of three or more written
/// `cA.cB`, a high level omitted when equal to the low one.
pub fn context_to_string(p: &PolicyTables, c: &Context) -> String {
    let mut out = String::with_capacity(64);
    out.push_str(p.user_names.name(c.user).unwrap_or("?"));
    out.push(':');
    out.push_str(p.role_names.name(c.role).unwrap_or("?"));
    out.push(':');
    out.push_str(p.type_names.name(c.ty).unwrap_or("?"));
    if let Some(r) = &c.range {
        out.push(':');
        push_range(p, r, &mut out);
    }
    out
}

pub fn range_to_string(p: &PolicyTables, r: &Range) -> String {
    let mut out = String::new();
    push_range(p, r, &mut out);
    out
}

pub fn level_to_string(p: &PolicyTables, l: &Level) -> String {
    let mut out = String::new();
    push_level(p, l, &mut out);
    out
}

fn push_range(p: &PolicyTables, r: &Range, out: &mut String) {
    push_level(p, &r.low, out);
    if r.high != r.low {
        out.push('-');
        push_level(p, &r.high, out);
    }
}

fn push_level(p: &PolicyTables, l: &Level, out: &mut String) {
    out.push_str(p.sens_names.name(l.sens).unwrap_or("?"));
    let cat = |b: u32| p.cat_names.name(b + 1).unwrap_or("?");
    let mut first = true;
    let mut bits = l.cats.iter().peekable();
    while let Some(start) = bits.next() {
        let mut end = start;
        while bits.peek() == Some(&(end + 1)) {
            end += 1;
            bits.next();
        }
        out.push(if first { ':' } else { ',' });
        first = false;
        out.push_str(cat(start));
        if end == start + 1 {
            out.push(',');
            out.push_str(cat(end));
        } else if end > start + 1 {
            out.push('.');
            out.push_str(cat(end));
        }
    }
}
