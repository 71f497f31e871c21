//! [`HttpEndpoint`] as a tower [`Service`]: what an axum or hyper
//! application routes to, beside its own routes and under its own
//! middleware and TLS. Every exchange goes through
//! [`HttpEndpoint::handle_with`], so the endpoint's rules are the built-in
//! listener's.

use http::{Request, Response};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use tower_service::Service;

use super::body::McpBody;
use super::embed::{ExchangeInfo, HttpEndpoint};

/// Serves each request with [`HttpEndpoint::handle_with`]; never fails
/// (an HTTP error is a response) and is always ready. The client's address
/// and disconnect token come from an [`ExchangeInfo`] request extension
/// when a layer in front puts one there (without one, legacy sessions are
/// not capped per address).
///
/// ```
/// use ferromcp::server::Server;
/// use ferromcp::transport::http::{EndpointOptions, HttpEndpoint};
/// use tower_service::Service;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let mut endpoint = HttpEndpoint::new(Server::new("demo", "1.0.0"), EndpointOptions::default());
/// let request = http::Request::get("/mcp")
///     .header("host", "localhost")
///     .body(http_body_util::Empty::<bytes::Bytes>::new())
///     .unwrap();
/// let response = endpoint.call(request).await.unwrap();
/// assert_eq!(response.status(), 405); // this revision only takes POST
/// # }
/// ```
impl<B> Service<Request<B>> for HttpEndpoint
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<McpBody>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let endpoint = self.clone();
        let info = request
            .extensions()
            .get::<ExchangeInfo>()
            .cloned()
            .unwrap_or_default();
        Box::pin(async move { Ok(endpoint.handle_with(request, info).await) })
    }
}
