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
//! (the transports keep a relaying server's request bytes:
//! `Prepared::raw`), and the upstream's result comes back as it wrote it
//! (`ResultObject::Raw`), written out with this server's identity in its
//! `_meta`. Neither is built into a tree and written again.

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

/// The `params` of a JSON-RPC message, as written.
fn raw_params(message: &[u8]) -> Option<Box<RawValue>> {
    #[derive(serde::Deserialize)]
    struct Params<'a> {
        #[serde(borrow)]
        params: Option<&'a RawValue>,
    }
    let params = serde_json::from_slice::<Params<'_>>(message).ok()?.params?;
    // Params are an object (admission read `_meta` from them).
    params.get().starts_with('{').then(|| params.to_owned())
}

impl Server {
    /// Hands `tools/call` requests that nothing here would change to
    /// `relay` (see the module documentation). Set once.
    pub(crate) fn set_relay(&self, relay: std::sync::Arc<dyn Relay>) {
        let _ = self.shared.relay.set(relay);
    }

    /// Whether this server has a relay (its requests keep their bytes).
    pub(crate) fn has_relay(&self) -> bool {
        self.shared.relay.get().is_some()
    }

    /// The relay and the params as written, when `prepared` may go
    /// through it (a request that kept its bytes).
    pub(super) fn relay_for(
        &self,
        prepared: &Prepared,
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
        let params = raw_params(prepared.raw.as_deref()?)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_params_are_the_params_as_written() {
        let message = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"e", "_meta":{"x/y":1},"arguments":{"b":1,"a":2}}}"#;
        assert_eq!(
            raw_params(message).map(|p| p.get().to_owned()).as_deref(),
            Some(r#"{"name":"e", "_meta":{"x/y":1},"arguments":{"b":1,"a":2}}"#)
        );
        for refused in [
            &br#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#[..],
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
            br#"{"#,
        ] {
            assert!(raw_params(refused).is_none());
        }
    }
}
