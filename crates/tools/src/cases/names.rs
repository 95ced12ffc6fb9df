//! A case's names resolved under one generation, each failure a problem with its line and the
//! nearest names the policy has: shared by the access and label cases (`run`) and by
//! `[[neverallow]]`.

use seaccess_security::Generation;
use seaccess_types::{ClassId, Sid};

use super::read::Spot;
use crate::suggest::did_you_mean;

/// Each problem found while resolving: its line and what is wrong.
pub(super) type Problems = Vec<(usize, String)>;

/// The SID of a context, or a problem naming the part the policy lacks and its nearest names.
pub(super) fn sid(g: &Generation, c: &Spot<String>, bad: &mut Problems) -> Option<Sid> {
    match g.context_to_sid(&c.value) {
        Ok(s) => Some(s),
        Err(e) => {
            bad.push((c.line, format!("{e}{}", context_hint(g, &c.value))));
            None
        }
    }
}

/// "; did you mean ..." for the first of a context's user, role and type the policy lacks.
fn context_hint(g: &Generation, context: &str) -> String {
    let p = g.policy();
    let mut parts = context.splitn(4, ':');
    for names in [&p.user_names, &p.role_names, &p.type_names] {
        let Some(part) = parts.next() else { break };
        if names.value(part).is_none() {
            return did_you_mean(part, names.by_value.iter().map(|n| &**n));
        }
    }
    String::new()
}

/// The number of a class, or a problem naming the policy's nearest classes.
pub(super) fn class_id(g: &Generation, c: &Spot<String>, bad: &mut Problems) -> Option<ClassId> {
    match g.class(&c.value) {
        Ok(k) => Some(k),
        Err(_) => {
            let known = g.policy().class_names.by_value.iter().map(|n| &**n);
            bad.push((
                c.line,
                format!(
                    "unknown class \"{}\"{}",
                    c.value,
                    did_you_mean(&c.value, known)
                ),
            ));
            None
        }
    }
}

/// The bit of a class's permission, or a problem naming the class's nearest permissions.
pub(super) fn perm_bit(
    g: &Generation,
    class: ClassId,
    cname: &str,
    p: &Spot<String>,
    bad: &mut Problems,
) -> Option<u32> {
    match g.perms(class, &[p.value.as_str()]) {
        Ok(v) => v.bits().next(),
        Err(_) => {
            let known = (0..32).filter_map(|b| g.perm_name(class, b));
            bad.push((
                p.line,
                format!(
                    "class {cname} has no permission \"{}\"{}",
                    p.value,
                    did_you_mean(&p.value, known)
                ),
            ));
            None
        }
    }
}
