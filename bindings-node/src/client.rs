//! The native `Client` class: core's [`ferromcp::client::Client`] for Node.
//! The facade's `Client` (`lib/client.js`) wraps it; see `index.d.ts` for
//! the public API.
//!
//! Everything protocol stays in core: era detection, `_meta`, MRTR rounds,
//! header mirroring, cache, pagination, cancellation. This file converts
//! arguments and results (typed core results travel back to JS as their
//! JSON form) and plugs JS functions in as the elicitation, sampling and
//! roots handlers through the binding's one host-call adapter
//! ([`host_call::call`]).
//!
//! Every method returns a promise settled from ferromcp's runtime (never
//! blocking the JS thread); nothing here holds the event loop once no
//! promise is pending, so an idle client does not keep the process alive.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ferromcp::Error;
use ferromcp::client::{
    CallOptions, CallbackRelay, Client, ClientOptions, ListKind, PageDemand, ProgressUpdate,
    StdioCommand,
};
use ferromcp::protocol::{
    CreateMessageResult, ElicitResult, InputKind, ListRootsResult, SubscriptionFilter,
};
use napi::bindgen_prelude::{ClassInstance, Function, Object};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status, Unknown};
use napi_derive::napi;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{Notify, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::client_skill::JsLoadedSkill;
use crate::client_task::{JsToolTask, tool_arguments};
use crate::host_call::{self, HostCallArgs, JsCallback};
use crate::runtime::spawn;
use crate::server::JsServer;
use crate::telemetry::{CallSlot, CallSpan};
use ferromcp::host::input::input_answer;
use ferromcp::host::listen::HostSubscription;
use ferromcp::host::settings::client_options;

/// [`spawn`] for a result sent to JS as its JSON form.
fn spawn_json<'env, T, F>(env: &'env Env, work: F) -> napi::Result<Object<'env>>
where
    T: Serialize + Send + 'static,
    F: Future<Output = Result<T, Error>> + Send + 'static,
{
    spawn(
        env,
        async move { Ok(serde_json::to_value(work.await?)?) },
        Ok::<Value, napi::Error>,
    )
}

/// A bad argument from JS: thrown at once, before anything is sent.
fn invalid(_env: &Env, message: String) -> napi::Error {
    napi::Error::new(Status::InvalidArg, message)
}

fn millis(env: &Env, what: &str, value: Option<f64>) -> napi::Result<Option<Duration>> {
    value
        .map(|ms| Duration::try_from_secs_f64(ms / 1000.0))
        .transpose()
        .map_err(|e| invalid(env, format!("invalid {what}: {e}")))
}

/// Runs the JS handler of `kind` through the host-call adapter, typed by
/// core's rule for that kind's result.
async fn answer_input(
    kind: InputKind,
    callback: Arc<JsCallback>,
    params: Value,
) -> Result<Value, Error> {
    match kind {
        InputKind::Elicitation => input_answer(
            kind,
            host_call::call::<ElicitResult>(&callback, None, params).await,
        ),
        InputKind::Sampling => input_answer(
            kind,
            host_call::call::<CreateMessageResult>(&callback, None, params).await,
        ),
        InputKind::Roots => input_answer(
            kind,
            host_call::call::<ListRootsResult>(&callback, None, params).await,
        ),
    }
}

/// What the connect calls share. The settings of the client are read by
/// core ([`client_options`]) from this object's JSON form; `headers`,
/// `env` and `cwd` are arguments of the connection.
#[napi(object, js_name = "ClientConnectOptions")]
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsClientOptions {
    /// `clientInfo.name` (default: core's).
    pub name: Option<String>,
    /// `clientInfo.version`.
    pub version: Option<String>,
    /// The revision requests declare (default: the latest).
    pub protocol_version: Option<String>,
    /// `"auto"` (default: detect the server's era), `"modern"` or `"legacy"`.
    pub era: Option<String>,
    /// Default timeout of every request, in milliseconds.
    #[serde(rename = "timeoutMs")]
    pub timeout: Option<f64>,
    /// HTTP only: extra headers sent with every request, as `[name, value]`.
    #[serde(skip)]
    pub headers: Option<Vec<Vec<String>>>,
    /// HTTPS only: `"native"` (default: the platform's store, which
    /// `SSL_CERT_FILE` / `SSL_CERT_DIR` replace), `"webpki"` or `"none"`.
    pub tls_roots: Option<String>,
    /// HTTPS only: extra trusted CA certificates, PEM texts.
    pub ca_certs: Option<Vec<String>>,
    /// HTTPS only: a client certificate chain (PEM) for mutual TLS.
    pub client_cert: Option<String>,
    /// HTTPS only: the private key (PEM) of `client_cert`.
    pub client_key: Option<String>,
    /// stdio only: extra environment variables of the server, as `[name, value]`.
    #[serde(skip)]
    pub env: Option<Vec<Vec<String>>>,
    /// stdio only: the server's working directory.
    #[serde(skip)]
    pub cwd: Option<String>,
    /// stdio only: `"capture"` (default), `"inherit"` or `"null"`.
    pub stderr: Option<String>,
    /// What the client accepts from the server (core's `ClientLimits`:
    /// `maxMessageBytes`, `maxQueuedNotifications`, ...).
    pub limits: Option<Value>,
    /// Further capabilities to declare, beside those the handlers declare.
    pub capabilities: Option<Value>,
    /// Whether `tools/call` follows a task to its result (default `true`).
    pub follow_tasks: Option<bool>,
}

/// The first option of `options` that only a socket or a process reads,
/// by its JS name: given to an in-memory client it would be ignored
/// silently, so it is refused instead.
fn transport_option(options: &JsClientOptions) -> Option<&'static str> {
    [
        ("headers", options.headers.is_some()),
        ("tlsRoots", options.tls_roots.is_some()),
        ("caCerts", options.ca_certs.is_some()),
        ("clientCert", options.client_cert.is_some()),
        ("clientKey", options.client_key.is_some()),
        ("env", options.env.is_some()),
        ("cwd", options.cwd.is_some()),
        ("stderr", options.stderr.is_some()),
    ]
    .into_iter()
    .find_map(|(name, given)| given.then_some(name))
}

/// A JS function as one input handler.
type JsHandler<'a> = Function<'a, HostCallArgs, Unknown<'static>>;

fn pairs(
    env: &Env,
    what: &str,
    list: Option<Vec<Vec<String>>>,
) -> napi::Result<Vec<(String, String)>> {
    list.unwrap_or_default()
        .into_iter()
        .map(|pair| match <[String; 2]>::try_from(pair) {
            Ok([k, v]) => Ok((k, v)),
            Err(_) => Err(invalid(
                env,
                format!("each of {what} must be a [name, value] pair"),
            )),
        })
        .collect()
}

/// Builds the core options from the connect options, read by core's one
/// reading of client settings; each handler is registered through
/// `ClientOptions::on_input`, which also declares its capability.
fn core_options(
    env: &Env,
    options: &Option<JsClientOptions>,
    handlers: [(InputKind, Option<JsHandler<'_>>); 3],
) -> napi::Result<ClientOptions> {
    let mut core = match options {
        None => ClientOptions::default(),
        Some(options) => {
            let mut given = serde_json::to_value(options)
                .map_err(|e| invalid(env, format!("invalid client options: {e}")))?;
            // An options object without `timeout` waits indefinitely.
            if let Value::Object(given) = &mut given {
                given.entry("timeoutMs").or_insert(Value::Null);
            }
            client_options(&given).map_err(|e| invalid(env, e))?
        }
    };
    for (kind, handler) in handlers {
        let Some(handler) = handler else { continue };
        // Weak: a handler must not keep the process alive; a pending
        // request's promise does that while the server may ask.
        let callback: Arc<JsCallback> = Arc::new(JsCallback::new(&handler)?);
        core = core.on_input(kind, move |params| {
            answer_input(kind, callback.clone(), params)
        });
    }
    Ok(core)
}

/// An MCP client connected to one server. Use the facade's `Client`
/// (`Client.stdio`, `Client.http`, `Client.inMemory`), which gives
/// iterables and typings.
///
/// @example
/// ```js
/// const native = require("./native.js");
/// const client = await native.Client.connectHttp("http://127.0.0.1:8000/mcp");
/// console.log(await client.request("tools/call", { name: "echo", arguments: { text: "hi" } }));
/// await client.close();
/// ```
#[napi(js_name = "Client")]
pub struct JsClient {
    pub(crate) client: Client,
}

#[napi]
impl JsClient {
    /// Spawns `program args...` and connects over its stdin/stdout.
    #[napi(
        ts_args_type = "program: string, args: string[], options?: ClientConnectOptions | null, onElicitation?: ((params: any, ctx: null) => unknown) | null, onSampling?: ((params: any, ctx: null) => unknown) | null, onRoots?: ((params: any, ctx: null) => unknown) | null",
        ts_return_type = "Promise<Client>"
    )]
    pub fn connect_stdio<'env>(
        env: &'env Env,
        program: String,
        args: Vec<String>,
        options: Option<JsClientOptions>,
        on_elicitation: Option<JsHandler<'_>>,
        on_sampling: Option<JsHandler<'_>>,
        on_roots: Option<JsHandler<'_>>,
    ) -> napi::Result<Object<'env>> {
        let core = core_options(
            env,
            &options,
            [
                (InputKind::Elicitation, on_elicitation),
                (InputKind::Sampling, on_sampling),
                (InputKind::Roots, on_roots),
            ],
        )?;
        let mut command = StdioCommand::new(program, args);
        if let Some(options) = options {
            command.env = pairs(env, "env", options.env)?
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect();
            command.cwd = options.cwd.map(Into::into);
        }
        spawn(env, Client::connect_stdio_with(command, core), |client| {
            Ok(JsClient { client })
        })
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`).
    #[napi(
        ts_args_type = "url: string, options?: ClientConnectOptions | null, onElicitation?: ((params: any, ctx: null) => unknown) | null, onSampling?: ((params: any, ctx: null) => unknown) | null, onRoots?: ((params: any, ctx: null) => unknown) | null, oauth?: OAuth | null",
        ts_return_type = "Promise<Client>"
    )]
    pub fn connect_http<'env>(
        env: &'env Env,
        url: String,
        options: Option<JsClientOptions>,
        on_elicitation: Option<JsHandler<'_>>,
        on_sampling: Option<JsHandler<'_>>,
        on_roots: Option<JsHandler<'_>>,
        oauth: Option<ClassInstance<'_, crate::oauth::JsOAuth>>,
    ) -> napi::Result<Object<'env>> {
        let mut core = core_options(
            env,
            &options,
            [
                (InputKind::Elicitation, on_elicitation),
                (InputKind::Sampling, on_sampling),
                (InputKind::Roots, on_roots),
            ],
        )?;
        core.oauth = oauth
            .map(|oauth| oauth.core_options(&core.tls))
            .transpose()?;
        core.http_headers = pairs(env, "headers", options.and_then(|o| o.headers))?;
        spawn(
            env,
            async move { Client::connect_http_with(&url, core).await },
            |client| Ok(JsClient { client }),
        )
    }

    /// A client of `server`, a server object of this process, joined to it
    /// by an in-memory pipe and served as stdio is (core's
    /// `Client::in_memory_with`): no socket, no process. Options of a
    /// transport (`headers`, TLS, `env`, `cwd`, `stderr`) are refused, as
    /// nothing would read them.
    ///
    /// @example
    /// ```js
    /// const native = require("./native.js");
    /// const server = new native.Server({ name: "demo", version: "1.0.0" });
    /// server.add("tool", { name: "ping", inputSchema: { type: "object" } }, () => "pong");
    /// const client = await native.Client.connectInMemory(server);
    /// console.log(await client.request("tools/call", { name: "ping" }));
    /// await client.close();
    /// ```
    #[napi(
        ts_args_type = "server: Server, options?: ClientConnectOptions | null, onElicitation?: ((params: any, ctx: null) => unknown) | null, onSampling?: ((params: any, ctx: null) => unknown) | null, onRoots?: ((params: any, ctx: null) => unknown) | null",
        ts_return_type = "Promise<Client>"
    )]
    pub fn connect_in_memory<'env>(
        env: &'env Env,
        server: &JsServer,
        options: Option<JsClientOptions>,
        on_elicitation: Option<JsHandler<'_>>,
        on_sampling: Option<JsHandler<'_>>,
        on_roots: Option<JsHandler<'_>>,
    ) -> napi::Result<Object<'env>> {
        if let Some(name) = options.as_ref().and_then(transport_option) {
            return Err(invalid(
                env,
                format!("{name} is an option of a transport; an in-memory client has none"),
            ));
        }
        let core = core_options(
            env,
            &options,
            [
                (InputKind::Elicitation, on_elicitation),
                (InputKind::Sampling, on_sampling),
                (InputKind::Roots, on_roots),
            ],
        )?;
        let server = server.server.clone();
        // Inside the future: `in_memory_with` spawns the serving task and
        // the client's reader, so it must run on ferromcp's runtime, not on
        // the JS thread.
        spawn(
            env,
            async move { Ok(Client::in_memory_with(&server, core)) },
            |client| Ok(JsClient { client }),
        )
    }

    /// The protocol version requests currently declare.
    #[napi(getter)]
    pub fn protocol_version(&self) -> String {
        self.client.protocol_version()
    }

    /// Whether the server speaks a legacy revision (2025-11-25 or earlier);
    /// `null` until the first request detected it.
    #[napi(getter)]
    pub fn is_legacy(&self) -> Option<bool> {
        self.client.is_legacy()
    }

    /// Walks every page of `kind` with core's [`Pages`] (which follows
    /// `nextCursor` and stops at a cursor seen before), one page per `next()`.
    #[napi]
    pub fn pages(&self, env: &Env, kind: String) -> napi::Result<JsPages> {
        let kind = parse_list_kind(env, &kind)?;
        let (demand, demands) = mpsc::unbounded_channel();
        let client = self.client.clone();
        // Each page's request is the client span of its `next()` call.
        let call = CallSpan::slot(None);
        let pages = crate::telemetry::in_call_slot(call.clone(), async move {
            client.serve_pages(kind, demands).await
        });
        ferromcp::runtime::handle().spawn(pages);
        Ok(JsPages { demand, call })
    }

    /// Sends `method` (a row of core's `CLIENT_CALLS`: `"tools/call"`,
    /// `"resources/read"`...) with `params` as the wire has them: the one
    /// path of every client call. `onProgress({progress, total, message})`
    /// is called for each progress notification, in order and before the
    /// promise settles; `timeout` (ms) overrides the client's; `meta` joins
    /// the request's `_meta`; cancelling `cancel` abandons the call and
    /// tells the server.
    #[napi(
        ts_args_type = "method: string, params?: Record<string, any> | null, options?: CallNativeOptions | null, onProgress?: ((update: { progress: number; total?: number; message?: string }) => unknown) | null, cancel?: CancelToken | null",
        ts_return_type = "Promise<any>"
    )]
    pub fn request<'env>(
        &self,
        env: &'env Env,
        method: String,
        params: Option<Value>,
        options: Option<JsCallOptions>,
        on_progress: Option<Function<'_, Value, Unknown<'static>>>,
        cancel: Option<ClassInstance<'_, CancelToken>>,
    ) -> napi::Result<Object<'env>> {
        let params = object(env, "params", params)?;
        let mut call = call_options(env, options)?;
        call.cancel = cancel.map(|c| c.token.clone());
        let progress = match on_progress {
            Some(f) => Some(JsRelay::new(f)?),
            None => None,
        };
        if let Some(progress) = &progress {
            let progress = progress.clone();
            call.on_progress = Some(Arc::new(move |update| {
                progress.send(progress_value(update))
            }));
        }
        let client = self.client.clone();
        spawn_json(env, async move {
            let result = client.call(&method, params, &call).await;
            if let Some(progress) = progress {
                progress.delivered().await;
            }
            result
        })
    }

    /// Opens `subscriptions/listen` with `filter` (a `SubscriptionFilter`
    /// object) once the server acknowledged it.
    #[napi(ts_args_type = "filter: any", ts_return_type = "Promise<Subscription>")]
    pub fn listen<'env>(&self, env: &'env Env, filter: Value) -> napi::Result<Object<'env>> {
        let filter: SubscriptionFilter = serde_json::from_value(filter)
            .map_err(|e| invalid(env, format!("invalid subscription filter: {e}")))?;
        let client = self.client.clone();
        spawn(env, async move { client.listen(filter).await }, |open| {
            Ok(JsSubscription {
                open: HostSubscription::new(open),
            })
        })
    }

    /// `tools/call` without following a task: a handle on the task the
    /// server makes of it (or on the result it answered with at once).
    #[napi(
        ts_args_type = "name: string, args?: Record<string, any> | null, options?: CallNativeOptions | null",
        ts_return_type = "Promise<ToolTask>"
    )]
    pub fn start_tool_task<'env>(
        &self,
        env: &'env Env,
        name: String,
        args: Option<Value>,
        options: Option<JsCallOptions>,
    ) -> napi::Result<Object<'env>> {
        let arguments = tool_arguments(args).map_err(|e| invalid(env, e))?;
        let call = call_options(env, options)?;
        let client = self.client.clone();
        spawn(
            env,
            async move { client.start_tool_task(&name, arguments, &call).await },
            |task| Ok(JsToolTask { task }),
        )
    }

    /// A handle on a task started earlier (its id kept).
    #[napi]
    pub fn tool_task(&self, task_id: String) -> JsToolTask {
        JsToolTask {
            task: self.client.tool_task(&task_id),
        }
    }

    /// Loads a skill: its `SKILL.md` URI, or its entry as `skills/list`
    /// gave it. Core reads `SKILL.md` and checks it against the entry.
    #[napi(
        ts_args_type = "skill: string | Record<string, any>",
        ts_return_type = "Promise<LoadedSkill>"
    )]
    pub fn load_skill<'env>(&self, env: &'env Env, skill: Value) -> napi::Result<Object<'env>> {
        let client = self.client.clone();
        spawn(
            env,
            async move { client.load_skill_value(skill).await },
            |loaded| Ok(JsLoadedSkill { loaded }),
        )
    }

    /// Ends the connection (a spawned server is stopped).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        let client = self.client.clone();
        spawn(
            env,
            async move {
                client.close().await;
                Ok(())
            },
            Ok,
        )
    }
}

/// A call's own timeout and `_meta`.
fn call_options(env: &Env, options: Option<JsCallOptions>) -> napi::Result<CallOptions> {
    let mut call = CallOptions::default();
    if let Some(options) = options {
        call.timeout = millis(env, "timeout", options.timeout)?;
        match options.meta {
            None | Some(Value::Null) => {}
            Some(Value::Object(meta)) => call.meta = meta,
            Some(_) => return Err(invalid(env, "meta must be an object".into())),
        }
    }
    Ok(call)
}

fn object(env: &Env, what: &str, value: Option<Value>) -> napi::Result<Map<String, Value>> {
    match value {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(map)) => Ok(map),
        Some(_) => Err(invalid(env, format!("{what} must be an object"))),
    }
}

/// Per-call settings of `request`.
#[napi(object, js_name = "CallNativeOptions")]
pub struct JsCallOptions {
    /// Milliseconds; overrides the client's timeout.
    pub timeout: Option<f64>,
    /// Extra `_meta` entries for the request.
    pub meta: Option<Value>,
}

/// A handle that abandons a pending call: the facade cancels it when the
/// call's `AbortSignal` aborts.
///
/// @example
/// ```js
/// const token = new native.CancelToken();
/// const pending = client.request("tools/call", { name: "slow" }, null, null, token);
/// token.cancel(); // pending rejects with kind "cancelled"
/// ```
#[napi]
pub struct CancelToken {
    pub(crate) token: CancellationToken,
}

#[napi]
impl CancelToken {
    #[napi(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Self {
        CancelToken {
            token: CancellationToken::new(),
        }
    }

    /// Abandons the call (idempotent).
    #[napi]
    pub fn cancel(&self) {
        self.token.cancel();
    }
}

/// A JS callback of one call (`onProgress`, a task's `onState`),
/// reachable from any thread. At most [`PROGRESS_IN_FLIGHT`] values are
/// queued to JS at once; past that only the newest waits
/// (`CallbackRelay`), so a server flooding updates cannot grow the JS
/// queue, and the result waits until the last one ran.
#[derive(Clone)]
pub(crate) struct JsRelay {
    relay: Arc<CallbackRelay<Value>>,
    drained: Arc<Notify>,
}

/// `{progress, total?, message?}`, as `onProgress` receives it.
fn progress_value(update: ProgressUpdate) -> Value {
    let mut value = Map::new();
    value.insert("progress".into(), Value::from(update.progress));
    if let Some(total) = update.total {
        value.insert("total".into(), Value::from(total));
    }
    if let Some(message) = update.message {
        value.insert("message".into(), Value::from(message));
    }
    Value::Object(value)
}

/// Updates queued to JS and not yet run, at most.
const PROGRESS_IN_FLIGHT: usize = 16;

impl JsRelay {
    pub(crate) fn new(f: Function<'_, Value, Unknown<'static>>) -> napi::Result<JsRelay> {
        let callback: Arc<ThreadsafeFunction<Value, Unknown<'static>, Value, Status, false, true>> =
            Arc::new(f.build_threadsafe_function().weak::<true>().build()?);
        let drained = Arc::new(Notify::new());
        let notify = drained.clone();
        let relay = Arc::new_cyclic(|relay: &std::sync::Weak<CallbackRelay<Value>>| {
            let relay = relay.clone();
            CallbackRelay::new(PROGRESS_IN_FLIGHT, move |value: Value| {
                let done = Done {
                    relay: relay.clone(),
                    drained: notify.clone(),
                };
                let ran = done.clone();
                let status = callback.call_with_return_value(
                    value,
                    ThreadsafeFunctionCallMode::NonBlocking,
                    // What the callback returned or threw is of no interest
                    // (the facade reports a throw as a warning).
                    move |_returned, _env| {
                        ran.one();
                        Ok(())
                    },
                );
                if status != Status::Ok {
                    done.one();
                }
            })
        });
        Ok(JsRelay { relay, drained })
    }

    pub(crate) fn send(&self, value: Value) {
        self.relay.push(value);
    }

    /// Resolves once every value reached JS.
    pub(crate) async fn delivered(&self) {
        loop {
            // Registered before the check: a `notify_waiters` in between
            // still wakes it.
            let drained = self.drained.notified();
            if self.relay.is_idle() {
                return;
            }
            drained.await;
        }
    }
}

/// One update handled by JS (or not queued at all): the relay hands over
/// the next, and a waiting result learns when none is left.
#[derive(Clone)]
struct Done {
    relay: std::sync::Weak<CallbackRelay<Value>>,
    drained: Arc<Notify>,
}

impl Done {
    fn one(&self) {
        if let Some(relay) = self.relay.upgrade() {
            relay.delivered();
            if relay.is_idle() {
                self.drained.notify_waiters();
            }
        }
    }
}

/// The list a host names (`"tools"`, `"resources"`, ...).
fn parse_list_kind(env: &Env, kind: &str) -> napi::Result<ListKind> {
    Ok(match kind {
        "tools" => ListKind::Tools,
        "resources" => ListKind::Resources,
        "resourceTemplates" => ListKind::ResourceTemplates,
        "prompts" => ListKind::Prompts,
        "skills" => ListKind::Skills,
        other => return Err(invalid(env, format!("unknown list {other:?}"))),
    })
}

/// Every page of a list, one `next()` at a time.
#[napi(js_name = "Pages")]
pub struct JsPages {
    demand: mpsc::UnboundedSender<PageDemand>,
    /// The span of the page being fetched (telemetry.rs).
    call: CallSlot,
}

#[napi]
impl JsPages {
    /// The next page as `{ items, nextCursor? }`, or `null` after the last.
    #[napi(ts_return_type = "Promise<{ items: any[]; nextCursor?: string } | null>")]
    pub fn next<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        let (reply, replied) = oneshot::channel();
        CallSpan::set(&self.call, crate::telemetry::take_next_call());
        let sent = self.demand.send(reply).is_ok();
        spawn(
            env,
            async move {
                if !sent {
                    return Ok(None);
                }
                replied.await.unwrap_or(None).transpose()
            },
            Ok::<Option<Value>, napi::Error>,
        )
    }
}

/// An open `subscriptions/listen` stream (core's [`HostSubscription`]).
#[napi(js_name = "Subscription")]
pub struct JsSubscription {
    open: HostSubscription,
}

#[napi]
impl JsSubscription {
    /// The notification types the server agreed to send.
    #[napi(getter, ts_return_type = "any")]
    pub fn acknowledged(&self) -> Value {
        self.open.acknowledged().clone()
    }

    /// The next notification as `{ method, params }`; `null` once the
    /// subscription ended gracefully or was closed (rejects with the error
    /// that ended it otherwise).
    #[napi(ts_return_type = "Promise<{ method: string; params: any } | null>")]
    pub fn next<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        spawn(env, self.open.next(), Ok::<Option<Value>, napi::Error>)
    }

    /// Ends the subscription (the listen request is cancelled); a waiting
    /// `next()` resolves with `null`.
    #[napi]
    pub fn close(&self) {
        self.open.close();
    }
}

/// The protocol revisions core knows: `{ latest, modern, legacy }` (the
/// legacy ones speak the `initialize` handshake).
///
/// @internal Used by the `ferromcp` package itself (exported as
/// `PROTOCOL_VERSION` and `LEGACY_PROTOCOL_VERSIONS`).
#[cfg_attr(test, allow(dead_code))]
#[napi(ts_return_type = "{ latest: string; modern: string[]; legacy: string[] }")]
pub fn protocol_versions() -> Value {
    use ferromcp::protocol::{
        LATEST_PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS,
    };
    serde_json::json!({
        "latest": LATEST_PROTOCOL_VERSION,
        "modern": MODERN_PROTOCOL_VERSIONS,
        "legacy": LEGACY_PROTOCOL_VERSIONS,
    })
}
