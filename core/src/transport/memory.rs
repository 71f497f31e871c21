//! A client and a server of the same process joined by an in-memory pipe:
//! the server serves it as it serves stdio (the same framing, every
//! feature of the protocol: multi round-trip questions, listen streams,
//! tasks), with no socket and no process. What tests of a server use, and
//! what a gateway mounts another server of its process through.

use crate::client::{Client, ClientOptions};
use crate::server::Server;

/// Large enough that a big listing is one write, small enough to bound what
/// a stalled side holds.
const PIPE_BYTES: usize = 1 << 20;

impl Client {
    /// A client of `server` in this process, over an in-memory pipe, on the
    /// 2026-07-28 era unless `ClientOptions::era` says otherwise: the way
    /// to test a server without a socket. The server serves it on a task of
    /// its own until the client (every clone) is dropped, or closed: `close`
    /// returns once that task has ended. Call it inside a
    /// tokio runtime.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ferromcp::Error> {
    /// use ferromcp::client::Client;
    /// use ferromcp::protocol::Tool;
    /// use ferromcp::server::{Server, ToolOutput};
    /// let server = Server::new("demo", "1.0.0");
    /// server.add_tool(Tool::new("hello", serde_json::json!({"type": "object"})), |_ctx, _args| async {
    ///     Ok(ToolOutput::text("hi"))
    /// })?;
    /// let client = Client::in_memory(&server);
    /// let result = client.call_tool("hello", serde_json::json!({})).await?;
    /// assert!(!result.is_error.unwrap_or(false));
    /// # Ok(()) }
    /// ```
    pub fn in_memory(server: &Server) -> Client {
        Client::in_memory_with(server, ClientOptions::default())
    }

    /// [`Client::in_memory`] with options (input handlers, the era, limits).
    pub fn in_memory_with(server: &Server, options: ClientOptions) -> Client {
        let (client_side, server_side) = tokio::io::duplex(PIPE_BYTES);
        let (server_reader, server_writer) = tokio::io::split(server_side);
        let serving = tokio::spawn({
            let server = server.clone();
            async move {
                if let Err(error) = super::stdio::serve(server, server_reader, server_writer).await
                {
                    tracing::debug!(%error, "in-memory server ended");
                }
            }
        });
        let (client_reader, client_writer) = tokio::io::split(client_side);
        Client::connect_stream_served_by(client_reader, client_writer, options, Some(serving))
    }
}
