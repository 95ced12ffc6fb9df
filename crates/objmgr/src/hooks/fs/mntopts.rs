//! The SELinux mount options as the kernel handles them apart from labeling: read out of a
//! mount's option string or the new mount API's parameters, compared on a remount or a
//! superblock's reuse, handed to a submount, and shown in /proc/mounts. Labeling a
//! filesystem with them is [`ObjectManager::mount_as`]'s.
//!
//! The kernel keeps in the superblock which options it was mounted with (its *_MNT flags);
//! [`SuperSec`] keeps only the SIDs they gave, so the functions comparing or showing them take
//! the options the filesystem was mounted with ([`MntOpts`]) from the caller.

use std::sync::Arc;

use seaccess_types::Sid;

use crate::blobs::{InodeSec, SuperSec};
use crate::cred::Task;
use crate::error::{ObjmgrError, Result};
use crate::ObjectManager;

use super::MountOpts;

/// The SELinux mount options given, each as its context's SID (the kernel's
/// selinux_mnt_opts). All None: no option given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MntOpts {
    pub fscontext: Option<Sid>,
    pub context: Option<Sid>,
    pub rootcontext: Option<Sid>,
    pub defcontext: Option<Sid>,
}

/// One option's token (the kernel's Opt_*).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Opt {
    Context,
    Fscontext,
    Rootcontext,
    Defcontext,
    Seclabel,
}

/// The option names and whether each takes a context (the kernel's tokens[] table).
const TOKENS: [(&str, Opt, bool); 5] = [
    ("context", Opt::Context, true),
    ("fscontext", Opt::Fscontext, true),
    ("defcontext", Opt::Defcontext, true),
    ("rootcontext", Opt::Rootcontext, true),
    ("seclabel", Opt::Seclabel, false),
];

/// The kernel's match_opt_prefix: the token `s` is, with its argument.
fn match_opt(s: &str) -> Option<(Opt, Option<&str>)> {
    for (name, opt, has_arg) in TOKENS {
        let Some(rest) = s.strip_prefix(name) else {
            continue;
        };
        if has_arg {
            if let Some(arg) = rest.strip_prefix('=') {
                return Some((opt, Some(arg)));
            }
        } else if rest.is_empty() {
            return Some((opt, None));
        }
    }
    None
}

/// The kernel's opt_len: the length of the first option of `s`, up to a comma outside
/// double quotes.
fn opt_len(s: &str) -> usize {
    let mut quoted = false;
    for (i, c) in s.char_indices() {
        if c == '"' {
            quoted = !quoted;
        }
        if c == ',' && !quoted {
            return i;
        }
    }
    s.len()
}

/// The kernel's bad_option for a superblock already set up: the option is bad unless the
/// filesystem was mounted with it and the SID is the same.
fn bad_option(mounted: Option<Sid>, old: Sid, new: Option<Sid>) -> bool {
    new.is_some_and(|n| mounted.is_none() || old != n)
}

/// seq_escape(m, s, "\"\n\\"): those three characters as octal escapes.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '"' | '\n' | '\\') {
            out.push_str(&format!("\\{:03o}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}

impl MntOpts {
    /// Whether no option was given (the kernel's NULL mnt_opts).
    pub fn is_empty(&self) -> bool {
        *self == MntOpts::default()
    }
}

impl ObjectManager {
    /// A copy of `opts` for a duplicated filesystem context (selinux_fs_context_dup).
    pub fn fs_context_dup(&self, opts: &MntOpts) -> MntOpts {
        *opts
    }

    /// The options a submount of `reference` (mounted with `mounted`) inherits, an
    /// automounted NFS or afs directory for one (selinux_fs_context_submount): its
    /// fscontext=, context= and defcontext= with the SIDs it has, never rootcontext=; none if
    /// it was mounted with none of those three.
    pub fn fs_context_submount(&self, reference: &SuperSec, mounted: &MntOpts) -> MntOpts {
        MntOpts {
            fscontext: mounted.fscontext.map(|_| reference.sid),
            context: mounted.context.map(|_| reference.mntpoint_sid),
            rootcontext: None,
            defcontext: mounted.defcontext.map(|_| reference.def_sid),
        }
    }
}

impl ObjectManager {
    /// One option with its argument into `opts` (the kernel's selinux_add_opt): seclabel is
    /// ignored; context= excludes defcontext= and either given twice is refused, as is any
    /// option given twice; the context must be valid.
    fn add_opt(&self, opts: &mut MntOpts, opt: Opt, arg: Option<&str>) -> Result<()> {
        let dup = |what: &str| {
            Err(ObjmgrError::Invalid(format!(
                "{what}= given twice, or context= with defcontext="
            )))
        };
        let slot = match opt {
            Opt::Seclabel => return Ok(()),
            Opt::Context if opts.context.is_some() || opts.defcontext.is_some() => {
                return dup("context")
            }
            Opt::Defcontext if opts.context.is_some() || opts.defcontext.is_some() => {
                return dup("defcontext")
            }
            Opt::Fscontext if opts.fscontext.is_some() => return dup("fscontext"),
            Opt::Rootcontext if opts.rootcontext.is_some() => return dup("rootcontext"),
            Opt::Context => &mut opts.context,
            Opt::Defcontext => &mut opts.defcontext,
            Opt::Fscontext => &mut opts.fscontext,
            Opt::Rootcontext => &mut opts.rootcontext,
        };
        let Some(ctx) = arg else {
            return Err(ObjmgrError::Invalid(
                "a context option without its context".into(),
            ));
        };
        let sid = self
            .server()
            .context_to_sid(ctx)
            .map_err(|e| ObjmgrError::InvalidContext {
                context: ctx.to_string(),
                why: e.to_string(),
            })?;
        *slot = Some(sid);
        Ok(())
    }

    /// Takes the SELinux options out of mount(2)'s option string `options`
    /// (selinux_sb_eat_lsm_opts): each comma-separated option (a comma inside double quotes
    /// does not separate; the quotes are dropped from a context) that is context=,
    /// fscontext=, defcontext=, rootcontext= or seclabel is parsed into the result, the others
    /// are left, in order, in the string returned for the filesystem. An invalid context or a
    /// repeated option is refused (EINVAL).
    pub fn sb_eat_lsm_opts(&self, options: &str) -> Result<(String, MntOpts)> {
        let mut opts = MntOpts::default();
        // The kernel moves each kept option down over the eaten ones, with the comma before
        // it unless it is the first kept: the kept ones joined by commas.
        let mut kept: Vec<&str> = Vec::new();
        let mut from = options;
        loop {
            let len = opt_len(from);
            let (this, tail) = (from.get(..len).unwrap_or(from), from.get(len + 1..));
            match match_opt(this) {
                Some((opt, arg)) => {
                    let arg = arg.map(|a| a.replace('"', ""));
                    self.add_opt(&mut opts, opt, arg.as_deref())?;
                }
                None => kept.push(this),
            }
            match tail {
                Some(t) => from = t,
                None => break,
            }
        }
        let rest = kept.join(",");
        Ok((rest, opts))
    }

    /// One parameter of the new mount API (fsconfig(2)) (selinux_fs_context_parse_param):
    /// context, fscontext, defcontext and rootcontext take a context, seclabel takes none;
    /// each goes into `opts` as [`ObjectManager::sb_eat_lsm_opts`] takes it. Ok(false) for a
    /// parameter of the filesystem's own (the kernel's -ENOPARAM), to hand on to it.
    pub fn fs_context_parse_param(
        &self,
        opts: &mut MntOpts,
        key: &str,
        value: Option<&str>,
    ) -> Result<bool> {
        let Some(&(_, opt, has_arg)) = TOKENS.iter().find(|(name, _, _)| *name == key) else {
            return Ok(false);
        };
        if has_arg != value.is_some() {
            return Err(ObjmgrError::Invalid(if has_arg {
                format!("{key} needs a context")
            } else {
                format!("{key} takes no value")
            }));
        }
        self.add_opt(opts, opt, value)?;
        Ok(true)
    }

    /// Labels a filesystem with parsed options (selinux_set_mnt_opts): what
    /// [`ObjectManager::mount_as`] does with the options' contexts, the relabel checks by
    /// `task` included.
    pub fn sb_set_mnt_opts(
        &self,
        task: &Task,
        dev: &str,
        fstype: &str,
        opts: &MntOpts,
    ) -> Result<Arc<SuperSec>> {
        let names = self.server().names();
        let ctx = |s: Option<Sid>| -> Result<Option<String>> {
            s.map(|s| crate::context_in(&*names, s)).transpose()
        };
        let (fs, c, root, def) = (
            ctx(opts.fscontext)?,
            ctx(opts.context)?,
            ctx(opts.rootcontext)?,
            ctx(opts.defcontext)?,
        );
        // Native labeling is a filesystem's flag (SECURITY_LSM_NATIVE_LABELS), never a parsed option.
        let m = MountOpts {
            context: c.as_deref(),
            defcontext: def.as_deref(),
            rootcontext: root.as_deref(),
            fscontext: fs.as_deref(),
            native_labels: false,
        };
        self.mount_as(task, dev, fstype, &m)
    }

    /// Whether a new mount with options `opts` may reuse `sb` (root inode `root`), mounted
    /// with `mounted` (selinux_sb_mnt_opts_compat): with no option, only if it was mounted
    /// with none; else each option given must have been given at the mount with the same
    /// context.
    pub fn sb_mnt_opts_compat(
        &self,
        sb: &SuperSec,
        root: &InodeSec,
        mounted: &MntOpts,
        opts: &MntOpts,
    ) -> bool {
        if opts.is_empty() {
            return mounted.is_empty();
        }
        !self.options_differ(sb, root, mounted, opts)
    }

    /// A remount of `sb` (root inode `root`, mounted with `mounted`) with options `opts`
    /// (selinux_sb_remount): each SELinux option given must have been given at the mount with
    /// the same context, since a remount cannot relabel (EINVAL); none given is fine.
    pub fn sb_remount(
        &self,
        sb: &SuperSec,
        root: &InodeSec,
        mounted: &MntOpts,
        opts: &MntOpts,
    ) -> Result<()> {
        if self.options_differ(sb, root, mounted, opts) {
            return Err(ObjmgrError::Invalid(format!(
                "unable to change security options during remount (dev {}, type={})",
                sb.dev, sb.fstype
            )));
        }
        Ok(())
    }

    fn options_differ(
        &self,
        sb: &SuperSec,
        root: &InodeSec,
        mounted: &MntOpts,
        opts: &MntOpts,
    ) -> bool {
        bad_option(mounted.fscontext, sb.sid, opts.fscontext)
            || bad_option(mounted.context, sb.mntpoint_sid, opts.context)
            || bad_option(mounted.rootcontext, root.sid(), opts.rootcontext)
            || bad_option(mounted.defcontext, sb.def_sid, opts.defcontext)
    }

    /// The SELinux part of the filesystem's options in /proc/mounts (selinux_sb_show_options):
    /// `,fscontext=`, `,context=`, `,defcontext=`, `,rootcontext=` for those it was mounted
    /// with (`mounted`), each with the context it has now (a context holding a comma in
    /// double quotes; `"`, newline and backslash as octal escapes), then `,seclabel` where
    /// inodes carry their own labels.
    pub fn sb_show_options(
        &self,
        sb: &SuperSec,
        root: &InodeSec,
        mounted: &MntOpts,
    ) -> Result<String> {
        let names = self.server().names();
        let mut out = String::new();
        let shown = [
            ("fscontext", mounted.fscontext.map(|_| sb.sid)),
            ("context", mounted.context.map(|_| sb.mntpoint_sid)),
            ("defcontext", mounted.defcontext.map(|_| sb.def_sid)),
            ("rootcontext", mounted.rootcontext.map(|_| root.sid())),
        ];
        for (name, sid) in shown {
            let Some(sid) = sid else { continue };
            let ctx = crate::context_in(&*names, sid)?;
            let q = if ctx.contains(',') { "\"" } else { "" };
            out.push_str(&format!(",{name}={q}{}{q}", escape(&ctx)));
        }
        if sb.sblabel {
            out.push_str(",seclabel");
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_split_and_escape_as_the_kernel_does() {
        assert_eq!(opt_len(r#"context="a,b",ro"#), 13);
        assert_eq!(opt_len("ro"), 2);
        assert_eq!(match_opt("context=x"), Some((Opt::Context, Some("x"))));
        assert_eq!(match_opt("seclabel"), Some((Opt::Seclabel, None)));
        assert_eq!(
            (
                match_opt("context"),
                match_opt("seclabel=1"),
                match_opt("rootcontexts=x")
            ),
            (None, None, None)
        );
        // seq_escape with "\"\n\\": octal escapes.
        assert_eq!(escape("u:r:t:s0-s0:c0,c1"), "u:r:t:s0-s0:c0,c1");
        assert_eq!(escape("a\"b\nc\\d"), "a\\042b\\012c\\134d");
    }
}
