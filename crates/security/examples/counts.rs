//! Rule counts: `cargo run --release --example counts -- POLICY`.
fn main() {
    let Some(path) = std::env::args().nth(1) else { return };
    let Ok(d) = std::fs::read(&path) else { return };
    let Ok(p) = seaccess_policy::read_policy(&d) else { return };
    let c: usize = p.conds.iter().map(|c| c.true_list.len() + c.false_list.len()).sum();
    let t = p.avtab.iter().filter(|e| e.specified & seaccess_policy::avtab::TYPE != 0).count();
    let x = p.avtab.iter().filter(|e| e.xperms.is_some()).count();
    println!("avtab {} (type rules {t}, xperms {x}), cond rules {c}", p.avtab.len());
}
