//! Load-time breakdown: `cargo run --release --example loadtime -- POLICY`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
fn main() {
    let Some(path) = std::env::args().nth(1) else {
        return;
    };
    let Ok(d) = seaccess_policy::read_file(&path) else {
        return;
    };
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let Ok(p) = seaccess_policy::read_policy(&d) else {
            return;
        };
        let t1 = t.elapsed();
        let s = seaccess_security::SecurityServer::new(p);
        let t2 = t.elapsed();
        println!("parse {:?} total {:?}", t1, t2);
        drop(s);
    }
}
