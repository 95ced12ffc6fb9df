//! Prints a summary of a compiled policy: `cargo run --example stat -- FILE`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
fn main() {
    for path in std::env::args().skip(1) {
        let data = match seaccess_policy::read_file(&path) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("{e}");
                continue;
            }
        };
        let t = std::time::Instant::now();
        match seaccess_policy::read_policy(&data) {
            Ok(p) => println!(
                "{path}: version {} mls {} classes {} types {} roles {} users {} bools {} avtab {} conds {} ftrans {} in {:?}",
                p.version,
                p.mls,
                p.classes.len(),
                p.types.len(),
                p.roles.len(),
                p.users.len(),
                p.bools.len(),
                p.rules().avtab().len(),
                p.rules().conds().len(),
                p.filename_trans.len(),
                t.elapsed()
            ),
            Err(e) => println!("{path}: error: {e}"),
        }
    }
}
