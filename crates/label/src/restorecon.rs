//! What restorecon writes on an object: the one rule the command line's `label --apply` and
//! the C library's selinux_restorecon share (selinux_restorecon.c's restorecon_sb and
//! compare_types).

/// The label to write on an object whose file_contexts label is `new` and whose current label
/// is `current` (None: it has none), or None when nothing is to change. With `force` (restorecon
/// -F, SELINUX_RESTORECON_SET_SPECFILE_CTX) the whole context is `new`; without it, an object
/// that already has a label keeps its user, role and level, and only a different type is
/// changed. A current label too short to have a type is replaced whole.
pub fn target(current: Option<&str>, new: &str, force: bool) -> Option<String> {
    let Some(cur) = current else {
        return Some(new.to_string());
    };
    if cur == new {
        return None;
    }
    if force {
        return Some(new.to_string());
    }
    let c: Vec<&str> = cur.splitn(4, ':').collect();
    let n: Vec<&str> = new.splitn(4, ':').collect();
    match (c.get(2), n.get(2)) {
        (Some(ct), Some(nt)) if ct == nt => None,
        (Some(_), Some(nt)) => {
            let mut v = c.clone();
            v[2] = nt;
            Some(v.join(":"))
        }
        _ => Some(new.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_type_changes_unless_forced() {
        let new = "system_u:object_r:etc_t:s0";
        assert_eq!(target(None, new, false).as_deref(), Some(new));
        assert_eq!(target(Some(new), new, true), None);
        assert_eq!(
            target(Some("u:r:tmp_t:s0:c1"), new, false).as_deref(),
            Some("u:r:etc_t:s0:c1")
        );
        assert_eq!(target(Some("u:r:etc_t:s1"), new, false), None);
        assert_eq!(
            target(Some("u:r:etc_t:s1"), new, true).as_deref(),
            Some(new)
        );
        assert_eq!(target(Some("junk"), new, false).as_deref(), Some(new));
        assert_eq!(target(Some("u:r:t"), "bad", false).as_deref(), Some("bad"));
    }
}
