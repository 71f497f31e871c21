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
use serde_json::json;
use serde_json::value::RawValue;
use std::sync::Arc;

use super::Server;
use super::auth::AuthInfo;
use super::context::parse_request_meta;
use super::dispatch::Route;
use super::mirrored_headers::{check_headers, check_param_headers};
use super::prepared::{Prepared, Rejection};
use super::registry::ListKind;
use crate::McpError;
use crate::protocol::jsonrpc::{CallMembers, MetaMembers, Request};
use crate::protocol::{MODERN_PROTOCOL_VERSIONS, Method, codes};

/// What parsing read apart from a request's params
/// (`Message::from_slice_split`): its `_meta`, a `tools/call`'s `name` and
/// `arguments`, and that call's params as written.
pub(crate) type Split = (MetaMembers, CallMembers, Option<Box<RawValue>>);

impl Server {
    /// Reads and checks the per-request `_meta`.
    fn prepare(&self, mut request: Request) -> Result<Prepared, Rejection> {
        let meta = MetaMembers::take_from(request.params.as_mut());
        self.prepare_split(request, (meta, CallMembers::default(), None))
    }

    /// [`Server::prepare`] for a request whose `_meta` (and, for a
    /// `tools/call`, `name` and `arguments`, and its params as written when
    /// a relay may take it) were read apart from its params while parsing
    /// (`Message::from_slice_split`).
    fn prepare_split(&self, request: Request, split: Split) -> Result<Prepared, Rejection> {
        let (meta, call, call_params) = split;
        match parse_request_meta(meta) {
            Ok(meta) => Ok(Prepared {
                method: Method::from_name(&request.method),
                meta,
                request,
                call,
                call_params,
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
            Route::Complete => registry.completion.is_some() || offered.completions,
            Route::Tasks(_) => offered.tasks,
            Route::Skills(_) => offered.skills,
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

    /// Admits a request that arrived without HTTP (stdio) read as the HTTP
    /// endpoint reads it: its `_meta`, and a `tools/call`'s `name` and
    /// `arguments`, apart ([`Message::from_slice_split`]).
    ///
    /// [`Message::from_slice_split`]: crate::protocol::jsonrpc::Message
    pub(crate) fn admit_split(
        &self,
        request: Request,
        split: Split,
    ) -> Result<Prepared, Rejection> {
        let prepared = self.prepare_split(request, split)?;
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
        split: Split,
        headers: HeaderMap,
        auth: Option<Arc<AuthInfo>>,
    ) -> Result<Prepared, Rejection> {
        let mut prepared = self.prepare_split(request, split)?;
        check_headers(&headers, &prepared)?;
        check_param_headers(&headers, self, &mut prepared)?;
        self.admit(&prepared)?;
        prepared.meta.http_headers = Some(Arc::new(headers));
        prepared.meta.auth = auth;
        Ok(prepared)
    }
}
