//! Admission: what a server checks of a request before running it, handed
//! over by a transport in one call.
//!
//! [`Server::admit_request`] (stdio) and [`Server::admit_http`] read the
//! request's `_meta` (every 2026-07-28 request carries its protocol version
//! and client capabilities), compare the HTTP headers that must mirror the
//! body ([`mirrored_headers`](super::mirrored_headers)), and check the
//! version and the method. The transport then hands the [`Prepared`] request
//! to [`Server::execute`](super::Server::execute); nothing goes back and
//! forth in between.

use http::HeaderMap;
use serde_json::{Value, json};
use std::sync::Arc;

use super::Server;
use super::auth::AuthInfo;
use super::context::{RequestMeta, parse_request_meta};
use super::dispatch::Route;
use super::mirrored_headers::{check_headers, check_param_headers};
use super::registry::ListKind;
use crate::McpError;
use crate::protocol::jsonrpc::{CallMembers, MetaMembers, Request, RequestId, error_value};
use crate::protocol::{MODERN_PROTOCOL_VERSIONS, Method, codes};

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
}

impl Prepared {
    /// Whether this is a long-lived `subscriptions/listen` request.
    pub(crate) fn is_listen(&self) -> bool {
        self.method == Some(Method::SubscriptionsListen)
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

impl Server {
    /// Reads and checks the per-request `_meta`.
    fn prepare(&self, mut request: Request) -> Result<Prepared, Rejection> {
        let meta = MetaMembers::take_from(request.params.as_mut());
        self.prepare_split(request, meta, CallMembers::default())
    }

    /// [`Server::prepare`] for a request whose `_meta` (and, for a
    /// `tools/call`, `name` and `arguments`) were read apart from its params
    /// while parsing (`Message::from_slice_split`).
    fn prepare_split(
        &self,
        request: Request,
        meta: MetaMembers,
        call: CallMembers,
    ) -> Result<Prepared, Rejection> {
        match parse_request_meta(meta) {
            Ok(meta) => Ok(Prepared {
                method: Method::from_name(&request.method),
                meta,
                request,
                call,
            }),
            Err(why) => Err(Rejection::new(
                Some(request.id),
                McpError::invalid_params(why),
                400,
            )),
        }
    }

    /// Whether this server answers `route` (a primitive it offers).
    pub(super) fn serves(&self, route: Route) -> bool {
        let registry = self.registry_read();
        let offered = registry.offered;
        match route {
            Route::Discover | Route::Listen => true,
            Route::List(ListKind::Tools) | Route::ToolsCall => offered.tools,
            Route::List(ListKind::Resources | ListKind::Templates) | Route::ResourcesRead => {
                offered.resources
            }
            Route::List(ListKind::Prompts) | Route::PromptsGet => offered.prompts,
            Route::Complete => registry.completion.is_some(),
        }
    }

    /// Checks the protocol version and that the method exists.
    fn admit(&self, prepared: &Prepared) -> Result<(), Rejection> {
        let requested = prepared.meta.protocol_version.as_str();
        if !MODERN_PROTOCOL_VERSIONS.contains(&requested) {
            let error = McpError::new(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!("Unsupported protocol version: {requested}"),
            )
            .with_data(json!({
                "supported": MODERN_PROTOCOL_VERSIONS,
                "requested": requested,
            }));
            return Err(Rejection::new(
                Some(prepared.request.id.clone()),
                error,
                400,
            ));
        }
        match prepared.method.and_then(Route::of) {
            Some(route) if self.serves(route) => Ok(()),
            _ => Err(Rejection::new(
                Some(prepared.request.id.clone()),
                McpError::method_not_found(&prepared.request.method),
                404,
            )),
        }
    }

    /// Admits a request that arrived without HTTP (stdio, the fuzzing entry
    /// point): its `_meta`, protocol version and method.
    pub(crate) fn admit_request(&self, request: Request) -> Result<Prepared, Rejection> {
        let prepared = self.prepare(request)?;
        self.admit(&prepared)?;
        Ok(prepared)
    }

    /// Admits a request that arrived over HTTP, whose `_meta` (and, for a
    /// `tools/call`, `name` and `arguments`) were read apart while parsing:
    /// its `_meta`, the headers that mirror the body, the protocol version
    /// and the method, in the order the spec's errors rank them. The
    /// admitted request keeps the headers and the caller's `auth` for its
    /// handler (`ctx.http_headers()`, `ctx.auth()`).
    pub(crate) fn admit_http(
        &self,
        request: Request,
        split: (MetaMembers, CallMembers),
        headers: HeaderMap,
        auth: Option<Arc<AuthInfo>>,
    ) -> Result<Prepared, Rejection> {
        let (meta, call) = split;
        let mut prepared = self.prepare_split(request, meta, call)?;
        check_headers(&headers, &prepared)?;
        check_param_headers(&headers, self, &prepared)?;
        self.admit(&prepared)?;
        prepared.meta.http_headers = Some(Arc::new(headers));
        prepared.meta.auth = auth;
        Ok(prepared)
    }
}
