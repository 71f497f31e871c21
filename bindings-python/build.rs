//! Link settings of the extension module that depend on the target.
//!
//! On macOS an extension module must not link libpython: the interpreter
//! that imports it already holds every `Py*` symbol, and which libpython
//! (framework, Homebrew, python.org, conda) is not known at build time. The
//! Mach-O linker refuses undefined symbols unless told to leave them for
//! dyld to look up at load time. maturin passes the same two arguments; our
//! wheels are built by cargo (scripts/dist_wheel.py says why), so the
//! crate says it itself. Linux needs nothing (undefined symbols are allowed
//! in shared objects) and Windows links `python3.dll` through PyO3.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("macos") {
        println!("cargo:rustc-cdylib-link-arg=-undefined");
        println!("cargo:rustc-cdylib-link-arg=dynamic_lookup");
    }
}
