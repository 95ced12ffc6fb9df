//! `seaccess-lab bench label --open-only`, the side of `--sets` that runs in its own process:
//! it prints the open time, the handle's memory and the number of specifications of the set it
//! opened, which `--sets` puts in its table. The test is about the report, not the numbers.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

#[test]
fn open_only_reports_the_set_it_opened() {
    let dir = std::env::temp_dir().join(format!("seaccess-bench-label-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let fc = dir.join("file_contexts");
    // Three specifications, a comment and a blank line; the .homedirs beside it adds one.
    std::fs::write(
        &fc,
        "# a set\n/ u:object_r:root_t:s0\n/usr(/.*)? u:object_r:usr_t:s0\n\n/etc/.* -- u:object_r:etc_t:s0\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("file_contexts.homedirs"),
        "/home/[^/]+ -d u:object_r:home_t:s0\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_seaccess-lab"))
        .args(["bench", "label", "--open-only", "--rounds", "3", "-f"])
        .arg(&fc)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let value = |name: &str| -> f64 {
        out.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {out}"))
    };
    assert_eq!(value("specs"), 4.0, "{out}");
    assert!(value("open_us") > 0.0, "{out}");
    assert!(value("open_lookup_us") > 0.0, "{out}");
    assert!(value("open_rss_kib") >= 0.0, "{out}");
    // A handle of four specifications is some anonymous memory, but not megabytes.
    assert!(value("open_anon_kib") < 4096.0, "{out}");
    assert!(!Path::new(&dir).exists());
}
