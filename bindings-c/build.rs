//! Gives libferromcp.so a SONAME, so that programs linked against it record
//! `libferromcp.so.<abi>` (not the unversioned development symlink) and keep
//! loading the ABI they were built for after an incompatible upgrade is
//! installed beside it. Cargo's semver rule decides what is compatible: for
//! 0.x releases the minor number is the breaking one (`libferromcp.so.0.1`),
//! from 1.0 on the major (`libferromcp.so.1`). `make dist` / `make install`
//! name the file and its symlinks after the same rule. On macOS the same
//! job is done by the install name, `@rpath/libferromcp.<abi>.dylib`: a
//! program records it and finds the library through its own rpath (CMake
//! sets one), wherever the archive was unpacked.

fn main() {
    // Only this file decides the arguments; without the line cargo would rerun
    // the script (and relink) whenever any file of the crate changes.
    println!("cargo:rerun-if-changed=build.rs");
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
    let abi = if major == "0" {
        format!("0.{minor}")
    } else {
        major
    };
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    // Windows needs neither: programs name `ferromcp.dll` through its import library.
    if os == "linux" || os.ends_with("bsd") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libferromcp.so.{abi}");
    } else if os == "macos" {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-install_name,@rpath/libferromcp.{abi}.dylib");
    }
}
