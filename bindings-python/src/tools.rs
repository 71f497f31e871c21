//! Python tools behind core's handler boundary
//! (`ferromcp::server::Handler<Value, ToolOutput>`, i.e. a `ToolHandler`).
//!
//! Running a callable (sync on worker threads, async on the serving asyncio
//! loop, cancellation on drop) is [`crate::host_call`]'s job, for every kind
//! of handler; this file only says which callable a tool runs.

use std::sync::Arc;

use serde_json::Value;

use ferromcp::server::{BoxFuture, Handler, HandlerResult, RequestContext, ToolOutput};

use crate::host_call::{HostCall, HostCtx};
use crate::primitives::PyHandler;
use crate::refs::{HandlerKind, PyRefs};

/// One registered Python tool: runs its callable through [`HostCall`].
pub(crate) struct PyToolHandler {
    /// Shared with every call, so a call does not copy it.
    pub(crate) name: Arc<str>,
    pub(crate) is_async: bool,
    pub(crate) refs: Arc<PyRefs>,
}

/// The tool that `handler`, registered under [`HandlerKind::Tool`], is.
impl From<PyHandler> for PyToolHandler {
    fn from(handler: PyHandler) -> Self {
        debug_assert!(handler.kind == HandlerKind::Tool);
        PyToolHandler {
            name: handler.name,
            is_async: handler.is_async,
            refs: handler.refs,
        }
    }
}

impl Handler<Value, ToolOutput> for PyToolHandler {
    fn call(&self, ctx: RequestContext, arguments: Value) -> BoxFuture<HandlerResult> {
        let call = HostCall {
            key: (HandlerKind::Tool, self.name.clone()),
            refs: self.refs.clone(),
            ctx: HostCtx::Request(ctx),
            input: arguments,
            is_async: self.is_async,
        };
        Box::pin(call.run::<ToolOutput>())
    }
}
