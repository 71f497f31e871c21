//! Emits the linker arguments a Node addon needs (on macOS, leaving the
//! `napi_*` symbols to be resolved by the loading `node` process).

fn main() {
    napi_build::setup();
}
