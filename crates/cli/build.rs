//! Links the `seaccess` binary with packed relative relocations (DT_RELR) where the target is
//! Linux with glibc: a position-independent executable's ~15,000 relative relocations then take
//! a 5 KiB table instead of a 380 KiB one that the loader reads whole at every start (about
//! 400 KiB of the program's resident memory, measured with `/usr/bin/time -f %M seaccess
//! --version`). The binary then carries a GLIBC_ABI_DT_RELR version dependency: it needs glibc
//! 2.36's loader, and an older one refuses it by name at start rather than misrunning it. GNU ld
//! has the option since 2.38, lld since 15.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bin=seaccess=-Wl,-z,pack-relative-relocs");
    }
}
