//! Answering the requests a server sends the client (`ping`, and in a
//! 2025-11-25 session `elicitation/create`, `sampling/createMessage`,
//! `roots/list`), with a bound on how many are answered at once.
//!
//! A server may send thousands of requests in a second. Each answer is a
//! task (and over HTTP a POST on a connection of its own), so without a
//! bound a flood of pings makes the client open a socket per ping. Here at
//! most `ClientLimits::max_pending_server_requests` are being answered.
//! Where the requests come on a stream of their own (a 2025-11-25 HTTP
//! session's GET stream), a request beyond that waits: the stream is not
//! read meanwhile, so the server feels the back-pressure and nothing is
//! lost. Where they share the stream with responses (stdio, a POST's SSE
//! answer), waiting could hold back the very response a handler waits for,
//! so one beyond the bound is refused at once, and the transport says how
//! (see [`Refused`]). HTTP further bounds the POSTs in flight.

use serde_json::Value;
use std::future::Future;
use std::sync::Arc;
use tokio::sync::Semaphore;

use super::{CallInput, ClientLimits, ServerRequestHandler};
use crate::McpError;
use crate::protocol::jsonrpc::{Request, error_value, result_value};
use crate::rpc::lock_unpoisoned;

/// Runs the client's handler for server requests, a bounded number at once.
#[derive(Clone)]
pub(crate) struct Answerer {
    handler: Option<ServerRequestHandler>,
    pending: Arc<Semaphore>,
    max_pending: usize,
}

/// A request refused because too many are being answered: the error
/// message to send back, when the transport can send it cheaply.
pub(crate) struct Refused(pub(crate) Value);

impl Answerer {
    pub(crate) fn new(handler: Option<ServerRequestHandler>, limits: &ClientLimits) -> Answerer {
        let max_pending = limits.max_pending_server_requests.max(1);
        Answerer {
            handler,
            pending: Arc::new(Semaphore::new(max_pending)),
            max_pending,
        }
    }

    /// Starts answering `request`: runs the handler on a task, then
    /// `deliver`s the JSON-RPC answer. `Err` when it was refused (too many
    /// in progress), with the error answer to send if the transport can.
    pub(crate) fn answer<D, Fut>(&self, request: Request, deliver: D) -> Result<(), Refused>
    where
        D: FnOnce(Value) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.answer_with(request, None, deliver)
    }

    /// [`Answerer::answer`] with `handler` in place of the client's (the
    /// call's own input handler, for requests on the call's stream).
    pub(crate) fn answer_with<D, Fut>(
        &self,
        request: Request,
        handler: Option<ServerRequestHandler>,
        deliver: D,
    ) -> Result<(), Refused>
    where
        D: FnOnce(Value) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let Some(handler) = handler.or_else(|| self.handler.clone()) else {
            tracing::warn!(method = %request.method, "server request ignored: no handler");
            return Ok(());
        };
        let Ok(slot) = self.pending.clone().try_acquire_owned() else {
            tracing::warn!(
                method = %request.method,
                max_pending_server_requests = self.max_pending,
                "refused a server request: too many are being answered"
            );
            let error = McpError::internal(format!(
                "the client is already answering {} requests from this server \
                 (max_pending_server_requests = {})",
                self.max_pending, self.max_pending
            ));
            return Err(Refused(error_value(Some(&request.id), &error)));
        };
        spawn_answer(handler, request, deliver, slot);
        Ok(())
    }

    /// [`Answerer::answer`], waiting for room instead of refusing: for a
    /// stream that carries nothing but the server's own messages.
    pub(crate) async fn answer_in_turn<D, Fut>(&self, request: Request, deliver: D)
    where
        D: FnOnce(Value) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let Some(handler) = self.handler.clone() else {
            tracing::warn!(method = %request.method, "server request ignored: no handler");
            return;
        };
        let Ok(slot) = self.pending.clone().acquire_owned().await else {
            return;
        };
        spawn_answer(handler, request, deliver, slot);
    }
}

/// Runs the handler and delivers its answer on a task of its own, holding
/// `slot` until the answer is delivered.
fn spawn_answer<D, Fut>(
    handler: ServerRequestHandler,
    request: Request,
    deliver: D,
    slot: tokio::sync::OwnedSemaphorePermit,
) where
    D: FnOnce(Value) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    tokio::spawn(async move {
        let params = request.params.map(Value::Object).unwrap_or(Value::Null);
        let message = match handler(request.method, params).await {
            Ok(result) => result_value(Some(&request.id), result),
            Err(e) => error_value(Some(&request.id), &e),
        };
        deliver(message).await;
        drop(slot);
    });
}

/// The calls in flight that answer their server's questions themselves
/// ([`CallOptions::input`](super::CallOptions::input)), for the questions a
/// 2025-11-25 server sends apart from any call (on stdio, or on an HTTP
/// session's GET stream): such a question can only be the question of a
/// call in flight, so while exactly one call may be asked it goes to that
/// call. With several, nothing says whose it is, and giving it to the
/// wrong one would show one user's question to another: it is refused.
#[derive(Default)]
pub(crate) struct CallInputs {
    next: std::sync::atomic::AtomicU64,
    waiting: std::sync::Mutex<Vec<(u64, CallInput)>>,
}

/// Who may answer a question sent apart from any call.
pub(crate) enum Asked {
    /// No call answers for itself: the client's handlers do.
    Client,
    /// The one call that answers for itself.
    Call(CallInput),
    /// This many calls answer for themselves: nobody can be asked.
    Ambiguous(usize),
}

impl CallInputs {
    /// Marks a call as answering for itself until the guard drops.
    pub(crate) fn enter(self: &Arc<Self>, input: CallInput) -> CallInputGuard {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        lock_unpoisoned(&self.waiting).push((id, input));
        CallInputGuard {
            inputs: self.clone(),
            id,
        }
    }

    pub(crate) fn asked(&self) -> Asked {
        let waiting = lock_unpoisoned(&self.waiting);
        match waiting.as_slice() {
            [] => Asked::Client,
            [(_, input)] => Asked::Call(input.clone()),
            several => Asked::Ambiguous(several.len()),
        }
    }
}

/// A call registered with [`CallInputs::enter`].
pub(crate) struct CallInputGuard {
    inputs: Arc<CallInputs>,
    id: u64,
}

impl Drop for CallInputGuard {
    fn drop(&mut self) {
        lock_unpoisoned(&self.inputs.waiting).retain(|(id, _)| *id != self.id);
    }
}

#[cfg(test)]
mod call_input_tests {
    use super::*;
    use serde_json::json;

    fn input() -> CallInput {
        Arc::new(|_kind, _params| Box::pin(async { Ok(json!({})) }))
    }

    #[test]
    fn a_question_apart_from_calls_goes_to_the_only_call_that_may_be_asked() {
        let inputs = Arc::new(CallInputs::default());
        assert!(matches!(inputs.asked(), Asked::Client));
        let first = inputs.enter(input());
        assert!(matches!(inputs.asked(), Asked::Call(_)));
        let second = inputs.enter(input());
        assert!(matches!(inputs.asked(), Asked::Ambiguous(2)));
        drop(first);
        assert!(matches!(inputs.asked(), Asked::Call(_)));
        drop(second);
        assert!(matches!(inputs.asked(), Asked::Client));
    }
}
