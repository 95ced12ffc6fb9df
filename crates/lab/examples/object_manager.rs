//! An object manager's view of seaccess: load a policy, put the access vector cache in front of
//! the security server, check access by SID, and read the audit records and statistics.
//!
//! cargo run --release -p seaccess-lab --example object_manager -- POLICY SCON TCON CLASS PERM...

use std::error::Error;

use seaccess_avc::AvcError;
use seaccess_engine::Engine;

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, scon, tcon, class, perms @ ..] = args.as_slice() else {
        return Err("usage: object_manager POLICY SCON TCON CLASS PERM...".into());
    };

    // The engine wires the cache in front of the security server: reloads and boolean commits
    // reach the cache as they reach the kernel's AVC, and the cache recomputes its decisions
    // under a new policy before the policy is published.
    let engine = Engine::builder()
        .audit(|record| println!("audit: {record}"))
        .open(path)?;
    let (server, avc) = (engine.server(), engine.avc());

    // Contexts become SIDs once, when the object is labelled; checks then use only numbers.
    let g = server.snapshot();
    let (s, t) = (g.context_to_sid(scon)?, g.context_to_sid(tcon)?);
    let c = g.class(class)?;
    let names: Vec<&str> = perms.iter().map(String::as_str).collect();
    let requested = g.perms(c, &names)?;

    for round in 1..=2 {
        match avc.has_perm(s, t, c, requested, Some("pid=42 comm=\"example\"")) {
            Ok(()) => println!("check {round}: allowed"),
            Err(AvcError::Denied { denied }) => {
                let mut d: Vec<&str> = denied.bits().filter_map(|b| g.perm_name(c, b)).collect();
                d.sort_unstable();
                println!("check {round}: denied {{ {} }}", d.join(" "));
            }
            Err(e) => return Err(e.into()),
        }
    }
    print!("{}", avc.cache_stats().to_text());
    print!("{}", avc.hash_stats().to_text());
    Ok(())
}
