//! Path substitutions (`file_contexts.subs` and `.subs_dist`): label_file.c's
//! selabel_subs_init and selabel_sub. A lookup of `/srv/www/x` under `/srv/www /var/www` is
//! answered as `/var/www/x`.

use std::path::Path;

use crate::error::{LabelError, Result};
use crate::text::is_space;

/// One file's substitutions, in the order libselinux tries them: the last line first.
#[derive(Clone, Debug, Default)]
pub struct Subs {
    list: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Subs {
    /// Reads a substitution file; a missing one is empty, as in libselinux.
    pub fn read(path: &Path) -> Result<Subs> {
        match std::fs::read(path) {
            Ok(bytes) => Ok(Subs::parse(&bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Subs::default()),
            Err(source) => Err(LabelError::Io {
                path: path.to_path_buf(),
                source,
            }),
        }
    }

    pub fn parse(bytes: &[u8]) -> Subs {
        let mut list = Vec::new();
        for line in bytes.split(|&c| c == b'\n') {
            let line = line.split(|&c| c == 0).next().unwrap_or_default();
            let mut words = line.split(|&c| is_space(c)).filter(|w| !w.is_empty());
            let (Some(src), Some(dst)) = (words.next(), words.next()) else {
                continue;
            };
            if src.starts_with(b"#") {
                continue;
            }
            list.push((src.to_vec(), dst.to_vec()));
        }
        list.reverse();
        Subs { list }
    }

    /// The substitutions in the order they are tried.
    pub fn pairs(&self) -> &[(Vec<u8>, Vec<u8>)] {
        &self.list
    }

    /// Substitutions already in the order they are tried (from [`Subs::pairs`]).
    pub fn from_pairs(list: Vec<(Vec<u8>, Vec<u8>)>) -> Subs {
        Subs { list }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The substituted path, or `None` when no substitution's source is a whole-component
    /// prefix of it.
    pub fn apply(&self, key: &[u8]) -> Option<Vec<u8>> {
        for (src, dst) in &self.list {
            if key.starts_with(src) && matches!(key.get(src.len()), None | Some(b'/')) {
                // A substitution to "/" must not leave "//".
                let cut = if key.get(src.len()) == Some(&b'/') && dst == b"/" {
                    src.len() + 1
                } else {
                    src.len()
                };
                let mut out = dst.clone();
                out.extend_from_slice(&key[cut..]);
                return Some(out);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn later_lines_win_and_components_must_end() {
        let s = Subs::parse(b"# c\n/web /var/www\n/web /srv/www\n/r /\nbad\n");
        assert_eq!(s.apply(b"/web/x").as_deref(), Some(&b"/srv/www/x"[..]));
        assert_eq!(s.apply(b"/web").as_deref(), Some(&b"/srv/www"[..]));
        assert_eq!(s.apply(b"/webx"), None);
        assert_eq!(s.apply(b"/r/etc").as_deref(), Some(&b"/etc"[..]));
        assert_eq!(s.apply(b"/r").as_deref(), Some(&b"/"[..]));
    }
}
