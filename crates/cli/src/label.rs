//! `seaccess label`: the file_contexts answer for paths, printed as matchpathcon prints it
//! (`PATH<TAB>CONTEXT`, `<<none>>` where the files say so); with `--apply`, `--check` and
//! `--plan` it walks trees (label_apply.rs).

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use seaccess_label::FileKind;

use crate::output::{note, CliError, Out};

pub(crate) mod args;

pub(crate) use args::LabelArgs;
use args::{arg_paths, open, parse_kind};

pub(crate) fn run(out: &mut Out, a: &LabelArgs) -> Result<bool, CliError> {
    let modes = [a.apply, a.check, a.plan, a.compile.is_some()]
        .iter()
        .filter(|m| **m)
        .count();
    if modes > 1 {
        return Err("--apply, --check, --plan and --compile are separate modes: give one".into());
    }
    if a.plan {
        return crate::label_apply::plan(out, a);
    }
    // Whatever writes labels or compiles refuses a file with a broken expression up front.
    let fc = open(
        a.file_contexts.as_deref(),
        a.policy.as_deref(),
        a.apply || a.check || a.compile.is_some(),
    )?;
    if let Some(dest) = &a.compile {
        seaccess_label::compiled::write(&fc, dest).map_err(|e| e.to_string())?;
        let st = fc.stats();
        note(&format!(
            "seaccess label: wrote {} ({} specifications)",
            dest.display(),
            st.specs
        ));
        return Ok(true);
    }
    if a.apply || a.check {
        return crate::label_apply::apply(out, a, &fc);
    }
    if a.paths.is_empty() {
        return Err("give paths to look up (or - to read them from standard input)".into());
    }
    let forced = parse_kind(a.kind.as_deref())?;
    let mut ok = true;
    for mut path in arg_paths(&a.paths)? {
        // matchpathcon drops one final slash, then asks with the lstat type.
        if path.len() > 1 && path.last() == Some(&b'/') {
            path.pop();
        }
        let kind = forced.unwrap_or_else(|| {
            std::fs::symlink_metadata(Path::new(std::ffi::OsStr::from_bytes(&path)))
                .map(|m| FileKind::from_mode(std::os::unix::fs::MetadataExt::mode(&m)))
                .unwrap_or(FileKind::Any)
        });
        let found = match fc.lookup(&path, kind) {
            Ok(f) => f,
            Err(e) => {
                note(&format!(
                    "seaccess label: {}: {e}",
                    String::from_utf8_lossy(&path)
                ));
                ok = false;
                continue;
            }
        };
        if a.json {
            let spec = found.map(|s| {
                serde_json::json!({
                    "regex": &*s.regex,
                    "file": fc.files().get(s.origin.file as usize).map(|p| p.display().to_string()),
                    "line": s.origin.line,
                })
            });
            let v = serde_json::json!({
                "path": String::from_utf8_lossy(&path),
                "type": kind.name(),
                "context": found.map(|s| &*s.context),
                "spec": spec,
            });
            writeln!(out, "{v}")?;
        } else {
            out.bytes(&path)?;
            writeln!(out, "\t{}", found.map_or("<<none>>", |s| &*s.context))?;
        }
    }
    Ok(ok)
}
