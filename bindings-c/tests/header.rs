//! The committed `include/ferromcp.h` must be exactly what the pinned
//! cbindgen generates from the sources, so the header can never drift from
//! the library. Regenerate with `FERROMCP_BLESS=1 cargo test -p ferromcp-c
//! --test header` (or `make regen-header`).

use std::path::Path;

fn generate() -> String {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("bindings-c/cbindgen.toml is readable and valid");
    // `with_src` parses lib.rs and its modules directly; unlike `with_crate`
    // it does not run `cargo metadata` from inside a test.
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("cbindgen writes UTF-8")
}

#[test]
fn committed_header_matches_generated() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include/ferromcp.h");
    let generated = generate();
    if std::env::var_os("FERROMCP_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).expect("write include/ferromcp.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/ferromcp.h is out of date with the Rust sources; regenerate it with \
         `FERROMCP_BLESS=1 cargo test --workspace --test header` (or `make regen-header`) \
         and commit the result"
    );
}
