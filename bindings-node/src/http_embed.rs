//! The native `HttpEndpoint` and `Exchange` classes: core's
//! [`HttpEndpoint`] for a JS HTTP server that owns the sockets (node:http,
//! Express, Fastify, Hono, Bun). `embed.js` drives them; nothing here knows
//! MCP. An exchange takes the request head, is fed the body chunks the
//! host receives, and hands back the response head and chunks as promises
//! settled from ferromcp's runtime.

use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use ferromcp::transport::http::{
    BodySender, EndpointOptions, ExchangeInfo, HttpEndpoint, McpBody, RequestBody,
};
use napi::bindgen_prelude::{Buffer, Object, ToNapiValue};
use napi::{Env, Status};
use napi_derive::napi;
use tokio_util::sync::CancellationToken;

use crate::server::JsServer;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Plain slots, each written in one assignment: never half-written.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// What the endpoint checks, whoever owns the sockets.
#[napi(object, js_name = "EndpointOptions")]
pub struct JsEndpointOptions {
    /// Path of the MCP endpoint; `null`/absent accepts every path (the
    /// host routes to the handler).
    pub path: Option<String>,
    /// `Host` header values (without port) accepted; default: the loopback
    /// names only (protection against DNS rebinding).
    pub allowed_hosts: Option<Vec<String>>,
    /// `Origin` values accepted; default: loopback origins only.
    pub allowed_origins: Option<Vec<String>>,
    /// Largest accepted request body in bytes (default 16 MiB).
    pub max_body_bytes: Option<u32>,
}

/// The head of a response: status and headers as a flat
/// `[name, value, ...]` list (the shape `res.writeHead` accepts).
#[napi(object, js_name = "ResponseHead")]
pub struct JsResponseHead {
    pub status: u16,
    pub headers: Vec<String>,
}

/// A server's MCP endpoint for a host's own HTTP server.
///
/// @example
/// ```js
/// const endpoint = new native.HttpEndpoint(nativeServer, { allowedHosts: ['api.example'] });
/// const exchange = endpoint.start('POST', '/mcp', ['host', 'api.example'], '127.0.0.1');
/// ```
#[napi(js_name = "HttpEndpoint")]
pub struct JsHttpEndpoint {
    endpoint: HttpEndpoint,
}

#[napi]
impl JsHttpEndpoint {
    #[napi(
        constructor,
        ts_args_type = "server: Server, options?: EndpointOptions | undefined | null, auth?: Protection | undefined | null"
    )]
    pub fn new(
        server: &JsServer,
        options: Option<JsEndpointOptions>,
        auth: Option<&crate::auth::JsProtection>,
    ) -> napi::Result<Self> {
        let defaults = EndpointOptions {
            path: None,
            ..EndpointOptions::default()
        };
        let options = match options {
            None => defaults,
            Some(o) => {
                if o.path.as_deref().is_some_and(|p| !p.starts_with('/')) {
                    return Err(napi::Error::new(
                        Status::InvalidArg,
                        "path must start with '/'",
                    ));
                }
                EndpointOptions {
                    path: o.path,
                    allowed_hosts: o.allowed_hosts,
                    allowed_origins: o.allowed_origins,
                    max_body_bytes: o
                        .max_body_bytes
                        .map_or(defaults.max_body_bytes, |n| n as usize),
                    ..defaults
                }
            }
        };
        let options = EndpointOptions {
            auth: auth.map(|a| a.inner.clone()),
            ..options
        };
        Ok(JsHttpEndpoint {
            endpoint: HttpEndpoint::new(server.server.clone(), options),
        })
    }

    /// Starts one exchange: `url` is the path and query, `headers` a flat
    /// `[name, value, ...]` list (`req.rawHeaders`), `client` the peer's
    /// address when known.
    #[napi]
    pub fn start(
        &self,
        method: String,
        url: String,
        headers: Vec<String>,
        client: Option<String>,
    ) -> napi::Result<JsExchange> {
        let mut builder = http::Request::builder().method(method.as_str()).uri(url);
        for pair in headers.chunks_exact(2) {
            builder = builder.header(pair[0].as_str(), pair[1].as_str());
        }
        let (sender, body) = RequestBody::channel();
        let request = builder
            .body(body)
            .map_err(|e| napi::Error::new(Status::InvalidArg, format!("invalid request: {e}")))?;
        let cancel = CancellationToken::new();
        let info = ExchangeInfo {
            peer: client.and_then(|c| c.parse::<IpAddr>().ok()),
            client_gone: Some(cancel.clone()),
        };
        let endpoint = self.endpoint.clone();
        let task_cancel = cancel.clone();
        let (head_tx, head_rx) = tokio::sync::oneshot::channel();
        ferromcp::runtime::handle().spawn(async move {
            let response = tokio::select! {
                response = endpoint.handle_with(request, info) => Some(response),
                _ = task_cancel.cancelled() => None,
            };
            let _ = head_tx.send(response);
        });
        Ok(JsExchange {
            sender: Mutex::new(Some(sender)),
            head: Mutex::new(Some(head_rx)),
            body: Arc::new(tokio::sync::Mutex::new(None)),
            cancel,
        })
    }

    /// Ends every legacy session (the host is shutting down).
    #[napi]
    pub fn close(&self) {
        self.endpoint.close();
    }
}

type HeadReceiver = tokio::sync::oneshot::Receiver<Option<http::Response<McpBody>>>;

/// One request/response exchange in progress.
#[napi(js_name = "Exchange")]
pub struct JsExchange {
    sender: Mutex<Option<BodySender>>,
    head: Mutex<Option<HeadReceiver>>,
    /// The response body once the head is out; dropped on cancel.
    body: Arc<tokio::sync::Mutex<Option<McpBody>>>,
    cancel: CancellationToken,
}

#[napi]
impl JsExchange {
    /// Feeds a chunk of the request body; false once core stopped reading
    /// it (it answered already).
    #[napi]
    pub fn feed(&self, chunk: Buffer) -> bool {
        match &*lock(&self.sender) {
            Some(sender) => chunk.is_empty() || sender.send(chunk.to_vec().into()),
            None => false,
        }
    }

    /// The request body is complete.
    #[napi]
    pub fn end_body(&self) {
        lock(&self.sender).take();
    }

    /// The request body was cut short (the client left mid-body).
    #[napi]
    pub fn abort_body(&self) {
        if let Some(sender) = lock(&self.sender).take() {
            sender.abort();
        }
    }

    /// The response head; `null` if the exchange was cancelled first. Once.
    #[napi(ts_return_type = "Promise<ResponseHead | null>")]
    pub fn head<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        let receiver = lock(&self.head).take();
        let slot = self.body.clone();
        settle(env, async move {
            let response = receiver?.await.ok().flatten()?;
            let (parts, body) = response.into_parts();
            *slot.lock().await = Some(body);
            let mut headers = Vec::with_capacity(parts.headers.len() * 2);
            for (name, value) in &parts.headers {
                headers.push(name.as_str().to_owned());
                headers.push(String::from_utf8_lossy(value.as_bytes()).into_owned());
            }
            Some(JsResponseHead {
                status: parts.status.as_u16(),
                headers,
            })
        })
    }

    /// The next response chunk; `null` at the end or once cancelled. One
    /// call at a time.
    #[napi(ts_return_type = "Promise<Buffer | null>")]
    pub fn next_chunk<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        let slot = self.body.clone();
        let cancel = self.cancel.clone();
        settle(env, async move {
            let chunk = ferromcp::host::http_body::next_chunk(&slot, &cancel).await;
            chunk.map(|c| Buffer::from(c.to_vec()))
        })
    }

    /// Cancels the exchange (the client went away): the request behind it
    /// is cancelled and pending promises resolve `null`.
    #[napi]
    pub fn cancel(&self) {
        self.cancel.cancel();
        lock(&self.sender).take();
        if let Ok(mut body) = self.body.try_lock() {
            body.take();
        }
    }
}

impl Drop for JsExchange {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Runs `work` on the ferromcp runtime; the promise resolves with its value.
fn settle<'env, T, F>(env: &'env Env, work: F) -> napi::Result<Object<'env>>
where
    T: ToNapiValue + Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let (deferred, promise) = env.create_deferred()?;
    let runtime = ferromcp::runtime::handle();
    let worker = runtime.clone();
    runtime.spawn(async move {
        // A separate task: a panic rejects instead of leaving the promise
        // pending forever.
        let outcome = worker.spawn(work).await;
        deferred.resolve(move |_env| {
            outcome.map_err(|join| {
                napi::Error::new(
                    Status::GenericFailure,
                    format!("ferromcp internal error: {join}"),
                )
            })
        });
    });
    Ok(promise)
}
