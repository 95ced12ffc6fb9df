//! include/seaccess.h is what cbindgen writes from src/load.rs today (`make capi-header`).
//! cbindgen missing fails the test: a stale header cannot be told from a fresh one without it.

#![allow(clippy::panic)]

use std::path::Path;
use std::process::Command;

#[test]
fn checked_in_header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::temp_dir().join(format!("seaccess-header-{}.h", std::process::id()));
    let status = Command::new("cbindgen")
        .current_dir(dir)
        .args(["--quiet", "--config", "cbindgen.toml", "--output"])
        .arg(&out)
        .arg("src/load.rs")
        .status();
    let status = match status {
        Ok(s) => s,
        Err(e) => panic!("cannot run cbindgen ({e}); install it with `make deps`"),
    };
    assert!(status.success(), "cbindgen failed");
    let fresh = std::fs::read_to_string(&out).unwrap_or_default();
    let _ = std::fs::remove_file(&out);
    let checked_in = std::fs::read_to_string(dir.join("include/seaccess.h")).unwrap_or_default();
    assert!(!fresh.is_empty(), "cbindgen wrote nothing");
    assert_eq!(
        checked_in, fresh,
        "crates/capi/include/seaccess.h is stale: run `make capi-header`"
    );
}
