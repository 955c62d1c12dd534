//! Rebuild when the course changes: `src/bundle.rs` compiles `lessons/` and
//! `datasets/` into the binary, and cargo must know to look at them.

fn main() {
    println!("cargo:rerun-if-changed=lessons");
    println!("cargo:rerun-if-changed=datasets");
    println!("cargo:rerun-if-changed=build.rs");
}
