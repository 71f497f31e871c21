//! The one tokio runtime ferromcp runs on.
//!
//! Bindings never create their own: Python, Node and C hosts call into this
//! runtime, started lazily on first use, so every language shares one pool of
//! worker threads and one timer wheel.

use std::sync::OnceLock;
use tokio::runtime::{Builder, Handle, Runtime};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The shared multi-thread runtime, started on first call.
///
/// # Panics
/// Only if the operating system refuses to create threads, in which case no
/// part of the library could work.
pub fn get() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        Builder::new_multi_thread()
            .enable_all()
            .thread_name("ferromcp-worker")
            .build()
            .expect("failed to start the ferromcp tokio runtime")
    })
}

/// A handle to the shared runtime, for spawning from foreign threads.
pub fn handle() -> Handle {
    get().handle().clone()
}
