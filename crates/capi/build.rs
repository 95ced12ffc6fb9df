//! Compiles the default callbacks (src/defaults.c): see that file for why they are C.
fn main() {
    println!("cargo:rerun-if-changed=src/defaults.c");
    cc::Build::new()
        .file("src/defaults.c")
        .warnings(true)
        .compile("seaccess_defaults");
}
