//! `seaccess label`'s arguments and what they name: the file_contexts set opened (validated
//! against a policy when asked) and the paths read from the command line or standard input.
//! Both the lookup (`label`) and the tree walks (`label_apply`) use them, so they sit below both.

use std::ffi::OsString;
use std::io::BufRead;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use seaccess_label::{FileContexts, FileKind, OpenOptions};

use crate::output::{note, CliError};

#[derive(clap::Args)]
pub(crate) struct LabelArgs {
    /// The file_contexts to read (with its .homedirs, .local, .subs, .subs_dist and .bin beside
    /// it), or a file written by --compile. Default: the installed policy's.
    #[arg(long = "file-contexts", short = 'f', value_name = "FILE")]
    pub file_contexts: Option<PathBuf>,
    /// The file type of paths that do not exist (file, dir, lnk_file, chr_file, blk_file,
    /// sock_file, fifo_file); it also overrides the type of those that do, as matchpathcon -m.
    #[arg(long = "type", short = 'm', value_name = "T")]
    pub kind: Option<String>,
    /// One JSON object a path.
    #[arg(long)]
    pub json: bool,
    /// Validate every context against this compiled policy before answering.
    #[arg(long, short = 'p')]
    pub policy: Option<PathBuf>,
    /// Write each object's label as its security.selinux attribute (restorecon/setfiles).
    #[arg(long)]
    pub apply: bool,
    /// With --apply: change nothing, list what would change.
    #[arg(short = 'n')]
    pub dry_run: bool,
    /// With --apply: list each change, as restorecon -v.
    #[arg(short = 'v')]
    pub verbose: bool,
    /// Stay on each path's filesystem.
    #[arg(short = 'x')]
    pub one_fs: bool,
    /// With --apply: set the whole context, not just the type (restorecon -F).
    #[arg(short = 'F')]
    pub force: bool,
    /// With --apply and --check: the one attribute to write and read (security.selinux,
    /// user.selinux, or trusted.selinux: where `seaccess mount` keeps labels by default); by
    /// default security.selinux, falling back to user.selinux where refused.
    #[arg(long, value_name = "NAME")]
    pub xattr: Option<String>,
    /// Label a tree that will be mounted elsewhere: the path looked up is the path under DIR.
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Relabel with this many threads (default: the machine's cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// List the objects whose label differs from file_contexts; exit 1 when there are any.
    #[arg(long)]
    pub check: bool,
    /// List the objects whose label changes from --from's file_contexts to this one.
    #[arg(long)]
    pub plan: bool,
    /// With --plan: the old file_contexts.
    #[arg(long, value_name = "OLD_FILE_CONTEXTS")]
    pub from: Option<PathBuf>,
    /// With --plan: validate the old file_contexts against this old policy.
    #[arg(long = "from-policy", value_name = "OLD")]
    pub from_policy: Option<PathBuf>,
    /// Write the file_contexts set, validated and ordered, to FILE in seaccess's compiled form
    /// (loads in a millisecond; give it to --file-contexts).
    #[arg(long, value_name = "FILE")]
    pub compile: Option<PathBuf>,
    /// Paths; `-` reads them one a line from standard input.
    #[arg(value_name = "PATH")]
    pub paths: Vec<OsString>,
}

/// The installed policy's file_contexts: SELINUXTYPE in /etc/selinux/config, as libselinux
/// reads it ("targeted" when unset).
pub(crate) fn default_file_contexts() -> PathBuf {
    seaccess_policy::installed::file_contexts(Path::new(seaccess_policy::installed::SELINUX_DIR))
}

/// Opens a file_contexts set (or a compiled one), validating against `policy` when given.
pub(crate) fn open(
    file: Option<&Path>,
    policy: Option<&Path>,
    check_regexes: bool,
) -> Result<FileContexts, CliError> {
    let path = file
        .map(Path::to_path_buf)
        .unwrap_or_else(default_file_contexts);
    let mut head = [0u8; 8];
    let compiled = std::fs::File::open(&path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|_| seaccess_label::compiled::is_compiled(&head));
    if compiled {
        if policy.is_some() {
            return Err("--policy validates text file_contexts; a compiled file was validated when it was compiled".into());
        }
        return seaccess_label::compiled::load(&path).map_err(|e| e.to_string().into());
    }
    let fc = match policy {
        None => FileContexts::open_with(
            &path,
            &OpenOptions {
                check_regexes,
                ..Default::default()
            },
        ),
        Some(p) => {
            let g = crate::open_path(p)?.server().snapshot();
            let check = |c: &str| g.context_to_sid(c).map(|_| ()).map_err(|e| e.to_string());
            FileContexts::open_with(
                &path,
                &OpenOptions {
                    validate: Some(&check),
                    check_regexes,
                    ..Default::default()
                },
            )
        }
    };
    let fc = fc.map_err(|e| e.to_string())?;
    for n in fc.notes() {
        note(&format!("seaccess label: {n}"));
    }
    Ok(fc)
}

/// The file type `--type` names, if given.
pub(crate) fn parse_kind(s: Option<&str>) -> Result<Option<FileKind>, CliError> {
    match s {
        None => Ok(None),
        Some(s) => match FileKind::from_name(s).filter(|k| *k != FileKind::Any) {
            Some(k) => Ok(Some(k)),
            None => Err(format!("--type {s}: expected file, dir, lnk_file, chr_file, blk_file, sock_file or fifo_file").into()),
        },
    }
}

/// The paths named on the command line, `-` expanded from standard input.
pub(crate) fn arg_paths(args: &[OsString]) -> Result<Vec<Vec<u8>>, CliError> {
    let mut out = Vec::new();
    for a in args {
        if a.as_bytes() == b"-" {
            for line in std::io::stdin().lock().split(b'\n') {
                let line = line.map_err(|e| format!("reading standard input: {e}"))?;
                out.push(line);
            }
        } else {
            out.push(a.clone().into_vec());
        }
    }
    Ok(out)
}
