//! A request as admission leaves it ([`Prepared`]) or refuses it
//! ([`Rejection`]): what transports, admission and dispatch pass between
//! them.

use serde_json::Value;

use super::context::RequestMeta;
use crate::McpError;
use crate::protocol::Method;
use crate::protocol::jsonrpc::{CallMembers, Request, RequestId, error_value};

/// A request whose `_meta` has been read.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) request: Request,
    pub(crate) meta: RequestMeta,
    /// The method table's entry for `request.method`, looked up once
    /// (`None` for a method no revision defines).
    pub(crate) method: Option<Method>,
    /// A `tools/call`'s `name` and `arguments` when they were read apart
    /// from `request.params` (see [`CallMembers`]); empty otherwise.
    pub(crate) call: CallMembers,
    /// A `tools/call`'s params as they arrived, for a relay that forwards
    /// them as they are (`server/relay.rs`); read only where a relay may
    /// take the call, `None` elsewhere.
    pub(crate) call_params: Option<Box<serde_json::value::RawValue>>,
}

impl Prepared {
    /// Whether this is a long-lived `subscriptions/listen` request.
    pub(crate) fn is_listen(&self) -> bool {
        self.method == Some(Method::SubscriptionsListen)
    }

    /// Reads a call's `arguments` from its params as written, where parsing
    /// left them unread for a relay (`Message::from_slice_split`) and they
    /// are needed after all (the call is not relayed, or a header mirrors
    /// one of them). Not where they went back into the params whole
    /// (authorization, a legacy session: `Endpoint::post`).
    pub(crate) fn read_deferred_arguments(&mut self) {
        let restored = self
            .request
            .params
            .as_ref()
            .is_some_and(|params| params.contains_key("arguments"));
        if let (Some(params), false) = (&self.call_params, restored) {
            self.call.read_deferred_arguments(params);
        }
    }

    /// A member of the request's params, wherever it was read to.
    pub(crate) fn param(&self, name: &str) -> Option<&Value> {
        let split = match name {
            "name" => self.call.name.as_ref(),
            "arguments" => self.call.arguments.as_ref(),
            _ => None,
        };
        split.or_else(|| self.request.params.as_ref()?.get(name))
    }
}

/// A request refused before it ran, with the HTTP status it maps to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rejection {
    pub(crate) id: Option<RequestId>,
    pub(crate) error: McpError,
    pub(crate) http_status: u16,
}

impl Rejection {
    pub(crate) fn new(id: Option<RequestId>, error: McpError, http_status: u16) -> Self {
        Rejection {
            id,
            error,
            http_status,
        }
    }

    /// The JSON-RPC error response.
    pub(crate) fn to_message(&self) -> Value {
        error_value(self.id.as_ref(), &self.error)
    }
}
