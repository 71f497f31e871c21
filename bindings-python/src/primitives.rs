//! Python resources, resource templates, prompts and the completion
//! provider behind core's handler boundary.
//!
//! Like tools ([`crate::tools`]), each only says which callable runs with
//! which input; running it (sync or async, cancellation) is
//! [`crate::host_call`]'s job and turning what it returned into a result is
//! core's ([`ferromcp::server::FromHost`]). Definitions arrive as the dicts
//! the pure-Python layer built (`{"uri": ..., "name": ..., "title": ...}`)
//! and are read by core's serde types, so every field the schema defines
//! (title, icons, annotations, `_meta`) passes without glue here.

use std::sync::Arc;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use ferromcp::server::{
    BoxFuture, CompletionOutput, Handler, HandlerError, PromptOutput, RequestContext,
    ResourceOutput, ResourceRequest,
};

use crate::host_call::{HostCall, HostCtx};
use crate::refs::{HandlerKind, PyRefs};
use crate::values;

/// One registered Python callable of any kind but tools: the key it is
/// found under in [`PyRefs`], and whether it is `async def`.
pub(crate) struct PyHandler {
    pub(crate) kind: HandlerKind,
    pub(crate) name: Arc<str>,
    pub(crate) is_async: bool,
    pub(crate) refs: Arc<PyRefs>,
}

impl PyHandler {
    fn call(&self, ctx: RequestContext, input: Value) -> HostCall {
        HostCall {
            key: (self.kind, self.name.clone()),
            refs: self.refs.clone(),
            ctx: HostCtx::Request(ctx),
            input,
            is_async: self.is_async,
        }
    }
}

/// A resource or template read: the callable gets
/// `{"uri": ..., "variables": {...}}`.
impl Handler<ResourceRequest, ResourceOutput> for PyHandler {
    fn call(
        &self,
        ctx: RequestContext,
        request: ResourceRequest,
    ) -> BoxFuture<Result<ResourceOutput, HandlerError>> {
        let mut input = Map::new();
        input.insert("uri".into(), Value::String(request.uri));
        input.insert("variables".into(), Value::Object(request.variables));
        Box::pin(PyHandler::call(self, ctx, Value::Object(input)).run::<ResourceOutput>())
    }
}

/// A prompt: the callable gets the arguments (a dict of strings).
impl Handler<Map<String, Value>, PromptOutput> for PyHandler {
    fn call(
        &self,
        ctx: RequestContext,
        arguments: Map<String, Value>,
    ) -> BoxFuture<Result<PromptOutput, HandlerError>> {
        Box::pin(PyHandler::call(self, ctx, Value::Object(arguments)).run::<PromptOutput>())
    }
}

/// The completion provider: the callable gets the `completion/complete`
/// params (`ref`, `argument`, `context`).
impl Handler<Value, CompletionOutput> for PyHandler {
    fn call(
        &self,
        ctx: RequestContext,
        params: Value,
    ) -> BoxFuture<Result<CompletionOutput, HandlerError>> {
        Box::pin(PyHandler::call(self, ctx, params).run::<CompletionOutput>())
    }
}

/// Reads a definition dict as core's type for it (`Tool`, `Resource`, ...).
/// A dict that does not fit the schema raises `TypeError` naming the field.
pub(crate) fn definition<T: DeserializeOwned>(
    definition: &Bound<'_, PyDict>,
    what: &str,
) -> PyResult<T> {
    let map = values::from_python_object(definition, None, what)?;
    serde_json::from_value(Value::Object(map))
        .map_err(|e| PyTypeError::new_err(format!("invalid {what}: {e}")))
}

/// The caching hint of a resource's reads, when either half is given (the
/// other half is the server's `resource_read` hint).
pub(crate) fn cache_hint(
    server: &ferromcp::server::Server,
    ttl_ms: Option<u64>,
    cache_scope: Option<&str>,
) -> PyResult<Option<ferromcp::server::CacheHint>> {
    if ttl_ms.is_none() && cache_scope.is_none() {
        return Ok(None);
    }
    let mut hint = server.options().caching.resource_read;
    if let Some(ttl_ms) = ttl_ms {
        hint.ttl_ms = ttl_ms;
    }
    if let Some(scope) = cache_scope {
        hint.scope = cache_scope_of(scope)?;
    }
    Ok(Some(hint))
}

/// A whole caching hint from its two halves.
pub(crate) fn cache_hint_of(ttl_ms: u64, scope: &str) -> PyResult<ferromcp::server::CacheHint> {
    Ok(ferromcp::server::CacheHint {
        ttl_ms,
        scope: cache_scope_of(scope)?,
    })
}

fn cache_scope_of(scope: &str) -> PyResult<ferromcp::protocol::CacheScope> {
    serde_json::from_value(Value::from(scope)).map_err(|_| {
        pyo3::exceptions::PyValueError::new_err(format!(
            "cache_scope must be \"public\" or \"private\", not {scope:?}"
        ))
    })
}

/// Checks that `handler` can be called; the error names the argument.
pub(crate) fn callable(handler: &Bound<'_, PyAny>) -> PyResult<()> {
    if handler.is_callable() {
        Ok(())
    } else {
        Err(PyTypeError::new_err("handler must be callable"))
    }
}

/// The variable names of an RFC 6570 URI template, in order (core's
/// parser, so Python binds function parameters to exactly the variables
/// core will extract). Raises `ValueError` for an invalid template.
///
/// >>> _native.uri_template_variables("users://{id}/posts{?page}")
/// ['id', 'page']
#[pyfunction]
pub(crate) fn uri_template_variables(template: &str) -> PyResult<Vec<String>> {
    let parsed = ferromcp::server::uri_template::UriTemplate::parse(template)
        .map_err(pyo3::exceptions::PyValueError::new_err)?;
    Ok(parsed.variables().into_iter().map(str::to_owned).collect())
}
