//! Transports: newline-delimited stdio and Streamable HTTP, server and
//! client sides. They frame bytes and apply transport rules (headers,
//! Origin checks, SSE); protocol rules stay in [`crate::server`].

pub mod http;
#[cfg(unix)]
mod pipes;
/// Where stdin and stdout cannot be polled by the runtime (not Unix), they
/// are always read and written by threads (`stdin.rs`); these types only
/// fill the pipe side of its `Either`s and are never made.
#[cfg(not(unix))]
mod pipes {
    use std::io;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

    /// Never made (see the module doc).
    pub(crate) enum PipeReader {}
    /// Never made (see the module doc).
    pub(crate) enum PipeWriter {}

    impl AsyncRead for PipeReader {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &mut ReadBuf<'_>,
        ) -> Poll<io::Result<()>> {
            match *self {}
        }
    }

    impl AsyncWrite for PipeWriter {
        fn poll_write(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: &[u8],
        ) -> Poll<io::Result<usize>> {
            match *self {}
        }
        fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            match *self {}
        }
        fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
            match *self {}
        }
    }
}
mod run;
mod stdin;
pub mod stdio;

pub use run::shutdown_on_signals;

/// Default cap on one incoming message (stdio line or HTTP body): large
/// enough for big tool arguments, small enough that one client cannot
/// exhaust memory.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
