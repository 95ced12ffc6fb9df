//! Every exported function runs its body inside `ffi::guard` (which catches panics), or only
//! calls another export, or does nothing: read from the source, so that a new export without
//! the guard fails here rather than in review.

use std::path::Path;

/// Bodies that cannot panic: an empty body or a constant.
const TRIVIAL: &[&str] = &["}", "0"];

#[test]
fn every_export_is_guarded() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut exports = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&src)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if !l.starts_with("pub extern \"C\" fn ") {
                continue;
            }
            let name = l["pub extern \"C\" fn ".len()..]
                .split('(')
                .next()
                .unwrap_or("")
                .to_string();
            // The body starts after the line that ends the signature with `{`.
            let open = lines[i..]
                .iter()
                .position(|x| x.trim_end().ends_with('{') || x.trim_end().ends_with("{}"))
                .map(|k| i + k);
            let first = match open {
                Some(o) if lines[o].trim_end().ends_with("{}") => "}",
                Some(o) => lines.get(o + 1).map(|x| x.trim()).unwrap_or(""),
                None => "",
            };
            exports.push((name, first.to_string(), path.display().to_string()));
        }
    }
    assert!(exports.len() >= 60, "found only {} exports", exports.len());
    let names: Vec<String> = exports.iter().map(|e| e.0.clone()).collect();
    for (name, first, file) in &exports {
        let guarded = first.starts_with("ffi::guard(");
        let delegates = names
            .iter()
            .any(|n| n != name && first.starts_with(&format!("{n}(")));
        let trivial = TRIVIAL.contains(&first.as_str());
        assert!(
            guarded || delegates || trivial,
            "{file}: export {name} does not run inside ffi::guard: `{first}`"
        );
    }
}
