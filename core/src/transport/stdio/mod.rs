//! stdio transport (spec: basic/transports/stdio.mdx): one JSON-RPC message
//! per line, nothing but MCP on the output stream.
//!
//! - `server`: serving a [`Server`](crate::server::Server) on this
//!   process's stdin/stdout (`Server::serve_stdio`) or any byte stream
//!   ([`serve`]), with its back-pressure ([`StdioOptions`]).
//! - `client`: the client's side, spawning and supervising the server
//!   process (`Client::connect_stdio`) or speaking over a stream handed in
//!   (`Client::connect_stream`); `program` finds the program on Windows.
//! - `lines`: the framing both read with, a bounded line of either ending.
//! - `stdin`, `pipes`: the process's own stdin and stdout, polled by the
//!   runtime where it can, else by threads.

mod client;
mod lines;
mod outgoing;
mod output;
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
mod program;
mod server;
mod stdin;

pub use server::{StdioOptions, serve, serve_until, serve_with};
