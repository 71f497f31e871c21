//! A link for notifications only, for either side: one host hook (a Python
//! function, a JS function, a C callback) serves a server's chain and a
//! client's, and requests pass straight on.

use serde_json::Value;

use crate::client::{CallNext, CallRequest, ClientMiddleware, ClientNotification};
use crate::protocol::jsonrpc::ReceivedNotification;
use crate::server::middleware::{Middleware, MiddlewareRequest, MiddlewareResult, Next};
use crate::{BoxFuture, Error};

/// Wraps `hook(notification) -> go on?` as a middleware link of a server
/// ([`crate::server::Server::add_middleware`]) or a client
/// ([`crate::client::Client::add_middleware`]).
///
/// ```
/// use ferromcp::host::notification_link::NotificationLink;
/// let server = ferromcp::server::Server::new("demo", "1.0.0");
/// // Cancellations are ignored: every request runs to its end.
/// server.add_middleware(NotificationLink(|note: &mut ferromcp::protocol::jsonrpc::ReceivedNotification| {
///     note.method != "notifications/cancelled"
/// }));
/// ```
pub struct NotificationLink<F>(pub F);

impl<F> Middleware for NotificationLink<F>
where
    F: Fn(&mut ReceivedNotification) -> bool + Send + Sync + 'static,
{
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        next.run(request)
    }

    fn notification(&self, notification: &mut ReceivedNotification) -> bool {
        (self.0)(notification)
    }
}

impl<F> ClientMiddleware for NotificationLink<F>
where
    F: Fn(&mut ReceivedNotification) -> bool + Send + Sync + 'static,
{
    fn handle(&self, call: CallRequest, next: CallNext) -> BoxFuture<Result<Value, Error>> {
        Box::pin(next.run(call))
    }

    fn notification(&self, notification: &mut ClientNotification) -> bool {
        (self.0)(notification)
    }
}
