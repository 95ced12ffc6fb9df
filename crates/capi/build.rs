//! Compiles the default callbacks (src/defaults.c) and the front's thread-local
//! (src/front_tls.c): see those files for why they are C.
fn main() {
    println!("cargo:rerun-if-changed=src/defaults.c");
    println!("cargo:rerun-if-changed=src/front_tls.c");
    cc::Build::new()
        .file("src/defaults.c")
        .file("src/front_tls.c")
        .warnings(true)
        .compile("seaccess_defaults");
}
