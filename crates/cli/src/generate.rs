//! Man pages and shell completions, generated from the command's own definition (clap), so that
//! they say what `--help` says and cannot drift from it: the hidden `seaccess generate` (and
//! `seaccess-lab generate`, which includes this file), which `make install` runs into the
//! staging tree.
//!
//! One page per command: `seaccess(1)` and `seaccess-SUBCOMMAND(N)` (nested ones too, such as
//! `seaccess-enforce-run(8)`), as git and cargo name theirs; likewise `seaccess-lab(1)`. The
//! commands an administrator runs on the system's files or mounts are in section 8, beside
//! restorecon(8) and mount(8); the rest in section 1. A command's examples (its `after_help`,
//! which starts with "Example") become the page's EXAMPLES section, kept as written.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Command, ValueEnum};
use clap_complete::Shell;
use clap_mangen::roff::{roman, Roff};
use clap_mangen::Man;

use crate::output::CliError;

#[derive(clap::Args, Debug)]
pub(crate) struct GenerateArgs {
    /// What to write: the man pages, or one shell's completions.
    what: What,
    /// The directory to write into (created if missing).
    #[arg(long, default_value = ".")]
    out: PathBuf,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum What {
    Man,
    Bash,
    Zsh,
    Fish,
}

/// The commands whose pages go in section 8 (system administration), with their subcommands.
const ADMIN: &[&str] = &["seaccess-label", "seaccess-mount", "seaccess-enforce"];

/// The peer tools a page points to, by page: what an SELinux user already knows it as.
const PEERS: &[(&str, &str)] = &[
    ("seaccess-check", "selinux_check_access(3), compute_av(8)"),
    (
        "seaccess-compute-av",
        "compute_av(8), security_compute_av(3)",
    ),
    ("seaccess-compute-create", "compute_create(8)"),
    ("seaccess-compute-relabel", "compute_relabel(8)"),
    ("seaccess-compute-member", "compute_member(8)"),
    ("seaccess-info", "seinfo(1)"),
    ("seaccess-search", "sesearch(1)"),
    ("seaccess-diff", "sediff(1)"),
    ("seaccess-explain", "audit2why(1), ausearch(8)"),
    ("seaccess-allow", "audit2allow(1), semodule(8)"),
    (
        "seaccess-label",
        "matchpathcon(8), restorecon(8), setfiles(8), file_contexts(5)",
    ),
    (
        "seaccess-mount",
        "mount.fuse.seaccess(8), fusermount3(1), fstab(5)",
    ),
    ("seaccess-enforce", "runcon(1)"),
    ("seaccess-run", "getsebool(8), setsebool(8), runcon(1)"),
    ("seaccess-lab", "seaccess(1), valgrind(1)"),
];

/// Writes what `a` asks for of the program whose definition is `root` (its name names the
/// files: `seaccess`, `_seaccess`, `seaccess.fish`, as each shell looks them up).
pub(crate) fn run(root: Command, a: &GenerateArgs) -> Result<bool, CliError> {
    std::fs::create_dir_all(&a.out)
        .map_err(|e| CliError::from(format!("{}: {e}", a.out.display())))?;
    let bin = root.get_name().to_string();
    match a.what {
        What::Man => man_pages(root, &a.out)?,
        What::Bash => completions(root, &bin, Shell::Bash, &a.out.join(&bin))?,
        What::Zsh => completions(root, &bin, Shell::Zsh, &a.out.join(format!("_{bin}")))?,
        What::Fish => completions(root, &bin, Shell::Fish, &a.out.join(format!("{bin}.fish")))?,
    }
    Ok(true)
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    std::fs::write(path, bytes).map_err(|e| CliError::from(format!("{}: {e}", path.display())))
}

/// `shell`'s completions of program `bin` (`root`'s name), written to `path`.
fn completions(mut root: Command, bin: &str, shell: Shell, path: &Path) -> Result<(), CliError> {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut root, bin, &mut buf);
    if shell == Shell::Bash && bin.contains('-') {
        // clap_complete's bash script spells a hyphenated program's state two ways: the loop
        // that reads the words arrives at `seaccess__lab__subcmd__bench`, the case arms wait
        // for `seaccess__subcmd__lab__subcmd__bench`, so no subcommand of `seaccess-lab` ever
        // completed (clap-rs/clap#6421, open). The arms are given the loop's spelling.
        let text = String::from_utf8_lossy(&buf)
            .replace(&bin.replace('-', "__subcmd__"), &bin.replace('-', "__"));
        buf = text.into_bytes();
    }
    write(path, &buf)
}

/// Every visible command's page, named NAME.SECTION in `dir`.
fn man_pages(mut root: Command, dir: &Path) -> Result<(), CliError> {
    // Building sets each subcommand's display name (seaccess-check) and usage (seaccess check).
    root.build();
    let mut pages = Vec::new();
    collect(&root, &mut pages);
    let names: Vec<String> = pages
        .iter()
        .map(|c| format!("{}({})", name(c), section(name(c))))
        .collect();
    let top = name(&root);
    for cmd in &pages {
        let n = name(cmd);
        let page = render(cmd, top, &names).map_err(|e| CliError::from(format!("{n}: {e}")))?;
        write(&dir.join(format!("{n}.{}", section(n))), &page)?;
    }
    Ok(())
}

fn collect<'a>(cmd: &'a Command, pages: &mut Vec<&'a Command>) {
    pages.push(cmd);
    for sub in cmd.get_subcommands() {
        if !sub.is_hide_set() && sub.get_name() != "help" {
            collect(sub, pages);
        }
    }
}

fn name(cmd: &Command) -> &str {
    cmd.get_display_name().unwrap_or_else(|| cmd.get_name())
}

fn section(name: &str) -> &'static str {
    let admin = ADMIN
        .iter()
        .any(|a| name == *a || name.strip_prefix(a).is_some_and(|r| r.starts_with('-')));
    if admin {
        "8"
    } else {
        "1"
    }
}

/// Page of `cmd`, a command of program `top`; `all` names every page of the program.
fn render(cmd: &Command, top: &str, all: &[String]) -> std::io::Result<Vec<u8>> {
    let n = name(cmd);
    let man = Man::new(cmd.clone())
        .section(section(n))
        .source(format!("seaccess {}", env!("CARGO_PKG_VERSION")))
        .manual("seaccess");
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    if cmd.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if cmd.get_subcommands().any(|s| !s.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }
    let mut roff = Roff::default();
    if let Some(help) = cmd.get_after_long_help().or_else(|| cmd.get_after_help()) {
        let help = help.to_string();
        let title = if help.starts_with("Example") {
            "EXAMPLES"
        } else {
            "NOTES"
        };
        roff.control("SH", [title]);
        // As written: the examples are aligned in columns.
        roff.control("nf", []);
        for line in help.lines().skip(usize::from(title == "EXAMPLES")) {
            roff.text([roman(line)]);
        }
        roff.control("fi", []);
    }
    roff.control("SH", ["SEE ALSO"]);
    let mut see: Vec<String> = all
        .iter()
        .filter(|p| {
            // The parent and the children of this page, and the top page.
            let base = p.split('(').next().unwrap_or_default();
            base != n
                && (base == top
                    || n.starts_with(&format!("{base}-"))
                    || base.starts_with(&format!("{n}-")))
        })
        .cloned()
        .collect();
    if let Some((_, peers)) = PEERS.iter().find(|(p, _)| *p == n) {
        see.push((*peers).to_string());
    }
    see.push("selinux(8)".to_string());
    roff.text([roman(see.join(", "))]);
    // clap_mangen's own VERSION section needs the command's version, which only the top
    // command has (a subcommand given one would grow a --version option).
    roff.control("SH", ["VERSION"]);
    roff.text([roman(format!("seaccess {}", env!("CARGO_PKG_VERSION")))]);
    roff.to_writer(&mut out)?;
    out.flush()?;
    Ok(out)
}
