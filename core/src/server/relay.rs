//! A server that forwards to one upstream as it is (a proxy: `Server::proxy`)
//! may hand a `tools/call` to a [`Relay`] before dispatching it: the
//! request's params and `_meta` go upstream as the client sent them and
//! the upstream's result comes back as it is, with none of the work the
//! server and the gateway's client would do and undo on the way (tool
//! lookup, argument validation, the handler, a new `_meta`, the result
//! decoded and encoded again). Only a request that nothing of this server
//! would change is relayed: no middleware, no visibility rule, tracing off,
//! no progress or log messages asked for (nothing to route back), no tasks
//! (a task would be the upstream's, unknown to this server's `tasks/get`).
//! Multi round-trip input still works: an `InputRequiredResult` is the
//! upstream's, and the client's retry, relayed too, brings it its own
//! `requestState`.
//!
//! The request goes upstream as bytes: its params as the client wrote them
//! (a relaying server's transports keep them, read in the same pass as the
//! rest of the request: `Prepared::call_params`), and the upstream's
//! result comes back as it wrote it (`ResultObject::Raw`), written out with
//! this server's identity in its `_meta`. Neither is built into a tree and
//! written again.

use serde_json::value::RawValue;

use super::Server;
use super::prepared::Prepared;
use super::reply::{Reply, ResultObject};
use crate::protocol::jsonrpc::RequestId;
use crate::protocol::{Method, tasks::declares_tasks};
use crate::{BoxFuture, McpError};

/// Where relayed requests go (the gateway's upstream).
pub(crate) trait Relay: Send + Sync {
    /// Whether the upstream takes a request of `protocol_version` as it is
    /// (it speaks that revision, over a transport that adds nothing), from
    /// a client that declared the tasks extension or not (an upstream
    /// offering tasks could answer such a client with a task).
    fn takes(&self, protocol_version: &str, wants_tasks: bool) -> bool;
    /// Sends `method` with `params` as the client wrote them (their `_meta`
    /// included) upstream; the result as the upstream wrote it (a JSON
    /// object), or the error to answer with.
    fn relay(
        &self,
        method: &'static str,
        params: Box<RawValue>,
    ) -> BoxFuture<Result<Box<RawValue>, McpError>>;
}

impl Server {
    /// Hands `tools/call` requests that nothing here would change to
    /// `relay` (see the module documentation). Set once.
    pub(crate) fn set_relay(&self, relay: std::sync::Arc<dyn Relay>) {
        let _ = self.shared.relay.set(relay);
    }

    /// Whether this server has a relay (its calls keep their params as
    /// written).
    pub(crate) fn has_relay(&self) -> bool {
        self.shared.relay.get().is_some()
    }

    /// The relay and the params as written (taken from `prepared`), when
    /// `prepared` may go through it (a call that kept its params).
    pub(super) fn relay_for(
        &self,
        prepared: &mut Prepared,
    ) -> Option<(std::sync::Arc<dyn Relay>, Box<RawValue>)> {
        let relay = self.shared.relay.get()?;
        let meta = &prepared.meta;
        let plain = prepared.method == Some(Method::ToolsCall)
            && meta.progress_token.is_none()
            && meta.log_level.is_none()
            && self.middleware_chain().is_none()
            && crate::telemetry::installed().is_none()
            && self.registry_read().visibility.is_none();
        let wants_tasks = declares_tasks(&meta.client_capabilities);
        if !(plain && relay.takes(&meta.protocol_version, wants_tasks)) {
            return None;
        }
        // Params are an object (admission read `_meta` from them).
        let params = prepared.call_params.take()?;
        Some((relay.clone(), params))
    }

    /// Relays request `id`'s `params` and answers with the upstream's result
    /// or error.
    pub(super) async fn execute_relayed(
        &self,
        relay: std::sync::Arc<dyn Relay>,
        id: RequestId,
        params: Box<RawValue>,
    ) -> Reply {
        let outcome = relay
            .relay(crate::protocol::methods::TOOLS_CALL, params)
            .await
            .map(ResultObject::Raw);
        self.modern_reply(id, outcome)
    }
}
