//! "Did you mean": the names a policy has nearest to one it does not, for every error that
//! names an unknown class, permission, type, role, user or boolean, whichever front end (the
//! command, the C library, the bindings, the tools) reports it.

/// Up to three of `known` nearest to `name` by edit distance, nearest first (ties in the order
/// given), among those close enough to be a plausible slip: at most a third of the name's
/// length, and at least one edit. Empty when nothing is that close.
pub fn nearest<'a, I>(name: &str, known: I) -> Vec<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (name.chars().count() / 3).max(1);
    let mut near: Vec<(usize, usize, &str)> = Vec::new();
    for (i, k) in known.into_iter().enumerate() {
        if let Some(d) = distance(name, k, limit) {
            near.push((d, i, k));
        }
    }
    near.sort();
    near.into_iter().take(3).map(|(_, _, k)| k).collect()
}

/// "; did you mean A?" or "; did you mean A, B or C?", or nothing: the tail of an error message.
pub fn did_you_mean<'a, I>(name: &str, known: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    let near = nearest(name, known);
    match near.split_last() {
        None => String::new(),
        Some((last, [])) => format!("; did you mean {last}?"),
        Some((last, rest)) => format!("; did you mean {} or {last}?", rest.join(", ")),
    }
}

/// The edit distance between `a` and `b` (insertions, deletions, substitutions and swaps of two
/// neighbours, the optimal string alignment distance: "fiel" is one swap from "file") if it is at
/// most `limit`.
fn distance(a: &str, b: &str, limit: usize) -> Option<usize> {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let width = b.len() + 1;
    // Three rows of the table: two back, one back, and the one being filled.
    let mut rows = vec![0usize; 3 * width];
    for (j, v) in rows[width..2 * width].iter_mut().enumerate() {
        *v = j;
    }
    for i in 1..=a.len() {
        let (done, cur) = rows.split_at_mut(2 * width);
        let (back2, back1) = done.split_at(width);
        cur[0] = i;
        let mut row_min = i;
        for j in 1..=b.len() {
            let same = a[i - 1] == b[j - 1];
            let mut d = (back1[j - 1] + usize::from(!same))
                .min(back1[j] + 1)
                .min(cur[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(back2[j - 2] + 1);
            }
            cur[j] = d;
            row_min = row_min.min(d);
        }
        if row_min > limit {
            return None;
        }
        rows.rotate_left(width);
    }
    let d = rows[2 * width - 1];
    (d <= limit).then_some(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_names_first() {
        let perms = [
            "read",
            "write",
            "ioctl",
            "getattr",
            "setattr",
            "relabelfrom",
        ];
        assert_eq!(did_you_mean("reed", perms), "; did you mean read?");
        assert_eq!(nearest("getatr", perms), vec!["getattr", "setattr"]);
        assert_eq!(
            did_you_mean("getatr", perms),
            "; did you mean getattr or setattr?"
        );
        assert_eq!(did_you_mean("xyzzy", perms), "");
        // A name the policy has is not a slip for itself, but an exact match still sorts first.
        assert_eq!(nearest("read", perms), vec!["read"]);
        assert_eq!(
            nearest("htpd_t", ["httpd_t", "sshd_t", "http_port_t"]),
            vec!["httpd_t"]
        );
        // A swap of neighbours is one slip.
        assert_eq!(
            did_you_mean("fiel", ["dir", "file", "fifo_file"]),
            "; did you mean file?"
        );
        assert_eq!(nearest("ab", ["ba", "abc", "xy"]), vec!["ba", "abc"]);
    }
}
