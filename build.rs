// The `split` build (Cargo.toml's feature) links the app's wasm with wasm-ld's relocations
// (`--emit-relocs`): `wasm-split-cli` reads them to find which code only a split point reaches
// (scripts/post-build.mjs). A link argument of this one binary's final link, so no dependency is
// built again and the early module is linked as before.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let split = std::env::var_os("CARGO_FEATURE_SPLIT").is_some();
    let wasm = std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32");
    if split && wasm {
        println!("cargo:rustc-link-arg-bin=app=--emit-relocs");
    }
}
