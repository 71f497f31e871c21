//! The send pipeline every call goes through ([`Client::send`]): per-request
//! `_meta`, the result cache, `x-mcp-header` mirroring, version
//! negotiation on `-32022`, and the MRTR loop (spec:
//! basic/patterns/mrtr.mdx) that answers `input_required` results with the
//! application's input handlers and retries.

use super::era::pick_version;
use super::middleware::Tasks;
use super::notes::{self, NoteSender, NotificationRoute};
use serde_json::{Map, Value, json};
use std::sync::atomic::Ordering;

use super::{CacheMode, CallOptions, Client, OutgoingRequest, RawRequest, cache, era::Era, tasks};
use crate::Error;
use crate::protocol::jsonrpc::RequestId;
use crate::protocol::methods::{self, Method};
use crate::protocol::{InputKind, codes, meta};
use crate::rpc::write_unpoisoned;

impl Client {
    /// Sends any request with default call options and returns the raw
    /// `result` object.
    pub async fn request(&self, method: &str, params: Map<String, Value>) -> Result<Value, Error> {
        self.send(method, params, &CallOptions::default()).await
    }

    /// Sends any request: adds `_meta`, serves from or fills the cache,
    /// mirrors `x-mcp-header` arguments, answers `input_required` rounds
    /// with the registered handlers, and switches protocol version when the
    /// server names the ones it supports.
    pub async fn send(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        self.send_through(method, params, options, Tasks::Follow)
            .await
    }

    /// A request of a task handle (its `tools/call`, `tasks/get`,
    /// `tasks/update`, `tasks/cancel`): through the middleware chain and in
    /// a span like any other, but a task it answers with is returned as it
    /// came, not followed.
    pub(super) async fn send_for_task(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        self.send_through(method, params, options, Tasks::Return)
            .await
    }

    async fn send_through(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
        tasks: Tasks,
    ) -> Result<Value, Error> {
        match self.middleware_chain() {
            None => self.send_unchained(method, params, options, tasks).await,
            // Boxed: a call without links keeps its future's size.
            Some(chain) => Box::pin(self.send_chained(chain, method, params, options, tasks)).await,
        }
    }

    /// [`Client::send`] after the middleware chain: in a span when tracing
    /// is on.
    pub(super) async fn send_unchained(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
        tasks: Tasks,
    ) -> Result<Value, Error> {
        match crate::telemetry::installed() {
            None => self.send_tasks(method, params, options, tasks).await,
            // Boxed: an untraced call's future keeps its size.
            Some(telemetry) => {
                Box::pin(self.send_traced(telemetry, method, params, options, tasks)).await
            }
        }
    }

    /// The request itself, following a task it is answered with or not.
    async fn send_tasks(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
        tasks: Tasks,
    ) -> Result<Value, Error> {
        match tasks {
            Tasks::Follow => self.send_followed(method, params, options).await,
            Tasks::Return => self.send_unfollowed(method, params, options).await,
        }
    }

    /// [`Client::send`] in a client span whose context goes out in the
    /// request's `_meta` (SEP-414).
    async fn send_traced(
        &self,
        telemetry: std::sync::Arc<dyn crate::telemetry::Telemetry>,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
        tasks: Tasks,
    ) -> Result<Value, Error> {
        // A trace context the caller put in the params' `_meta` (a binding
        // passing its host's) is the parent too, and this span's goes out
        // in its place.
        let mut params = params;
        let in_params = params
            .get_mut("_meta")
            .and_then(Value::as_object_mut)
            .and_then(|meta| {
                let found = crate::telemetry::TraceContext::from_meta(meta);
                meta.remove(crate::telemetry::TRACEPARENT);
                meta.remove(crate::telemetry::TRACESTATE);
                found
            });
        let parent = options
            .trace
            .clone()
            .or(in_params)
            .or_else(crate::telemetry::current);
        let span = crate::telemetry::ClientSpan::start(
            telemetry,
            method,
            &params,
            &self.protocol_version(),
            parent,
        );
        let mut traced = options.clone();
        span.context().inject(&mut traced.meta);
        let outcome = self.send_tasks(method, params, &traced, tasks).await;
        span.finish(outcome.as_ref());
        outcome
    }

    /// [`Client::send`], following a task to its result.
    async fn send_followed(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let result = self.send_unfollowed(method, params, options).await?;
        if !tasks::is_task(&result) {
            return Ok(result);
        }
        // Boxed: a rare path whose future is large.
        let follow = Box::pin(self.follow_task(result, options));
        match &options.cancel {
            Some(token) => tokio::select! {
                biased;
                _ = token.cancelled() => Err(Error::Cancelled),
                result = follow => result,
            },
            None => follow.await,
        }
    }

    /// [`Client::send`] without following a task: a `CreateTaskResult` is
    /// returned as it came (only `tools/call` may answer with one).
    pub(super) async fn send_unfollowed(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let limit = options.timeout.or(self.shared.options.timeout);
        let work = self.send_inner(method, params, options);
        let timed = async {
            match limit {
                Some(limit) => {
                    let clock = self.shared.transport.interaction_clock();
                    super::deadline::timeout_excluding(limit, clock, work).await?
                }
                None => work.await,
            }
        };
        let result = match &options.cancel {
            // Cancellation first: a token fired before the call cancels it
            // even when the answer would be ready on the first poll (an
            // unbiased select picks either at random).
            Some(token) => tokio::select! {
                biased;
                _ = token.cancelled() => Err(Error::Cancelled),
                result = timed => result,
            },
            None => timed.await,
        }?;
        // A task handle (SEP-2663): only `tools/call` may answer with one.
        if tasks::is_task(&result) && method != methods::TOOLS_CALL {
            return Err(Error::Protocol(format!(
                "{method} was answered with a task, which only tools/call may be"
            )));
        }
        Ok(result)
    }

    async fn send_inner(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        // One table lookup; the rest of the pipeline asks the entry.
        let known = Method::from_name(method);
        let cacheable = known.is_some_and(Method::is_cacheable);
        // Only a cacheable method needs its key (it costs a copy of the params as text).
        let key = cacheable.then(|| cache::cache_key(method, &params));
        if let Some(key) = &key
            && options.cache == CacheMode::Use
            && let Some(hit) = self.shared.cache.get(key)
        {
            return Ok(hit);
        }
        if known == Some(Method::ToolsCall) && self.shared.transport.mirrors_headers() {
            self.learn_tool_headers(&params).await?;
        }
        let mut result = self.run_rounds(method, &params, options).await?;
        if known == Some(Method::ToolsList) && self.shared.transport.mirrors_headers() {
            self.shared.tool_headers.filter_listing(&mut result);
        }
        if let Some(key) = key
            && options.cache != CacheMode::Bypass
        {
            self.shared.cache.put(key, &result);
        }
        Ok(result)
    }

    /// Makes sure the definition of the tool about to be called is known,
    /// so its `x-mcp-header` arguments can be mirrored.
    async fn learn_tool_headers(&self, params: &Map<String, Value>) -> Result<(), Error> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Ok(());
        };
        if !self.shared.tool_headers.knows(name) {
            // Boxed: listing is a whole paged exchange, made only for a
            // tool not seen yet; inline it would be part of every call's
            // future.
            Box::pin(self.list_all_tools_with(CacheMode::Use)).await?;
        }
        Ok(())
    }

    /// The MRTR loop: retries with `inputResponses` and the byte-identical
    /// `requestState` under a new id until the result is complete.
    async fn run_rounds(
        &self,
        method: &str,
        original: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        // The first round sends the caller's params; a retry sends them
        // with the answers and state of the round before.
        let mut retry: Option<Map<String, Value>> = None;
        let mut rounds = 0;
        let mut refreshed_headers = false;
        loop {
            let params = retry.as_ref().unwrap_or(original);
            let result = match self.send_once(method, params, options).await {
                Err(Error::Mcp(e))
                    if e.code == codes::HEADER_MISMATCH
                        && method == methods::TOOLS_CALL
                        && !refreshed_headers =>
                {
                    // The tool's annotations may have changed: re-list and retry once.
                    refreshed_headers = true;
                    self.shared.cache.invalidate_method(methods::TOOLS_LIST);
                    // Boxed, as the era's detection is: a rare path's large
                    // future would otherwise be part of every call's.
                    Box::pin(self.list_all_tools_with(CacheMode::Refresh)).await?;
                    continue;
                }
                other => other?,
            };
            if !is_input_required(&result) {
                return Ok(result);
            }
            rounds += 1;
            if rounds > self.shared.options.max_input_rounds {
                return Err(Error::Protocol(format!(
                    "{method}: the server still required input after {} rounds",
                    self.shared.options.max_input_rounds
                )));
            }
            let responses =
                Box::pin(self.answer_input_requests(result.get("inputRequests"), options)).await?;
            retry = Some(retry_params(original, &result, responses));
        }
    }

    /// Answers a round's `inputRequests` with the call's own input
    /// handler ([`CallOptions::input`]) or else the client's.
    pub(super) async fn answer_input_requests(
        &self,
        requests: Option<&Value>,
        options: &CallOptions,
    ) -> Result<Map<String, Value>, Error> {
        let mut responses = Map::new();
        let Some(Value::Object(requests)) = requests else {
            return Ok(responses);
        };
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let unanswerable = || {
                Error::Protocol(format!(
                    "the server asked for {method:?} (key {key:?}) but no handler for it is registered"
                ))
            };
            let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            let answer = match &options.input {
                Some(input) => {
                    let kind = InputKind::from_method(method).ok_or_else(unanswerable)?;
                    input(kind, params).await?
                }
                None => {
                    let handler = self
                        .shared
                        .options
                        .handler_for(method)
                        .ok_or_else(unanswerable)?;
                    handler(params).await?
                }
            };
            responses.insert(key.clone(), answer);
        }
        Ok(responses)
    }

    /// One request/response exchange, switching protocol version once if
    /// the server answers `-32022` with versions this client speaks.
    async fn send_once(
        &self,
        method: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        match self.era().await? {
            Era::Modern => self.send_modern(method, params, options).await,
            Era::Legacy { version } => self.send_legacy(method, params, options, &version).await,
        }
    }

    /// One 2026-07-28 exchange, switching protocol version once if the
    /// server answers `-32022` with versions this client speaks.
    pub(super) async fn send_modern(
        &self,
        method: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let mut switched = false;
        loop {
            let mut p = params.clone();
            let mut extra_meta = options.meta.clone();
            if let Some(Value::Object(m)) = p.remove("_meta") {
                extra_meta.extend(m);
            }
            p.insert(
                "_meta".into(),
                Value::Object(self.request_meta(&extra_meta, options.capabilities.as_ref())),
            );
            let headers =
                if method == methods::TOOLS_CALL && self.shared.transport.mirrors_headers() {
                    let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                    self.shared
                        .tool_headers
                        .headers_for(name, p.get("arguments"))
                } else {
                    Vec::new()
                };
            let (notifications, route) = self.notification_router(options, &mut p);
            let sent = self.shared.transport.send(OutgoingRequest {
                id: self.next_id(),
                method: method.to_owned(),
                params: p,
                headers,
                notifications,
                version: self.protocol_version(),
                input: options.input.clone(),
            });
            let outcome = NotificationRoute::deliver_while(route, sent).await;
            match outcome {
                Err(Error::Mcp(e))
                    if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION && !switched =>
                {
                    let Some(version) = pick_version(&e) else {
                        return Err(Error::Mcp(e));
                    };
                    switched = true;
                    *write_unpoisoned(&self.shared.protocol_version) = version;
                }
                other => return other,
            }
        }
    }

    pub(super) fn request_meta(
        &self,
        extra: &Map<String, Value>,
        capabilities: Option<&Map<String, Value>>,
    ) -> Map<String, Value> {
        let mut meta = extra.clone();
        meta.insert(
            meta::PROTOCOL_VERSION.into(),
            Value::from(self.protocol_version()),
        );
        meta.insert(meta::CLIENT_INFO.into(), self.shared.info_value.clone());
        meta.insert(
            meta::CLIENT_CAPABILITIES.into(),
            match capabilities {
                Some(declared) => Value::Object(declared.clone()),
                None => self.shared.capabilities_value.clone(),
            },
        );
        meta
    }

    /// Sends `method` with params another client wrote, as they are (their
    /// `_meta` included), and returns the result object as the server wrote
    /// it (transports that can: stdio; others through their usual path): no
    /// era detection, cache, input rounds, tasks or notifications — what a
    /// proxy's relay needs (`server/relay.rs`), and only once the era is
    /// known to be 2026-07-28 ([`Client::relays`]). The client's timeout
    /// applies (on the process's one timer thread); dropping the future
    /// cancels the request upstream.
    pub(crate) async fn send_raw_as_is(
        &self,
        method: &'static str,
        params: Box<serde_json::value::RawValue>,
    ) -> Result<Box<serde_json::value::RawValue>, Error> {
        let sent = self.shared.transport.send_raw(RawRequest {
            id: self.next_id(),
            method,
            params,
            version: self.protocol_version(),
        });
        match self.shared.options.timeout {
            Some(limit) => super::deadline::timeout_excluding(limit, None, sent)
                .await
                .unwrap_or(Err(Error::Timeout)),
            None => sent.await,
        }
    }

    /// Whether a request of `protocol_version` can go through
    /// [`Client::send_raw_as_is`]: this client speaks 2026-07-28 at that
    /// version already, over a transport that adds nothing per call.
    pub(crate) fn relays(&self, protocol_version: &str) -> bool {
        self.may_relay()
            && self.is_legacy() == Some(false)
            // Compared in place: this runs for every relayed call.
            && *crate::rpc::read_unpoisoned(&self.shared.protocol_version) == protocol_version
    }

    /// Whether requests can ever go through [`Client::send_raw_as_is`]
    /// unchanged: its transport adds nothing per call (HTTP mirrors
    /// members of the body in headers, so its calls are built here).
    pub(crate) fn may_relay(&self) -> bool {
        !self.shared.transport.mirrors_headers()
    }

    pub(super) fn next_id(&self) -> RequestId {
        RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// A channel for this call's notifications and the route that delivers
    /// them to its callbacks; asks for progress when a progress callback is
    /// set.
    pub(super) fn notification_router(
        &self,
        options: &CallOptions,
        params: &mut Map<String, Value>,
    ) -> (Option<NoteSender>, Option<NotificationRoute>) {
        if options.on_progress.is_none()
            && options.on_notification.is_none()
            && self.shared.options.on_notification.is_none()
        {
            return (None, None);
        }
        if options.on_progress.is_some()
            && let Some(Value::Object(meta)) = params.get_mut("_meta")
            && !meta.contains_key(meta::PROGRESS_TOKEN)
        {
            let token = format!(
                "progress-{}",
                self.shared.next_id.fetch_add(1, Ordering::Relaxed)
            );
            meta.insert(meta::PROGRESS_TOKEN.into(), Value::from(token));
        }
        let (tx, receiver) = notes::channel(self.shared.options.limits.max_queued_notifications);
        let route = NotificationRoute {
            receiver,
            chain: self.shared.out_of_call.chain.clone(),
            on_progress: options.on_progress.clone(),
            on_notification: options
                .on_notification
                .clone()
                .or_else(|| self.shared.options.on_notification.clone()),
        };
        (Some(tx), Some(route))
    }

    /// Forgets cached results a change notification makes stale.
    pub(crate) fn invalidate_for(&self, notification_method: &str, params: &Value) {
        let cache = &self.shared.cache;
        let Some(method) = Method::from_name(notification_method) else {
            return;
        };
        for list in method.invalidates() {
            cache.invalidate_method(list.as_str());
        }
        if method == Method::NotificationsResourcesUpdated
            && let Some(uri) = params.get("uri").and_then(Value::as_str)
        {
            cache.invalidate_resource(uri);
        }
    }
}

/// Whether a result asks for another round (`resultType: input_required`).
fn is_input_required(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some("input_required")
}

/// The params of the next round: the original request, plus the answers
/// (when there are any) and the server's `requestState` byte for byte.
fn retry_params(
    original: &Map<String, Value>,
    result: &Value,
    responses: Map<String, Value>,
) -> Map<String, Value> {
    let mut params = original.clone();
    if !responses.is_empty() {
        params.insert("inputResponses".into(), Value::Object(responses));
    }
    if let Some(state) = result.get("requestState") {
        params.insert("requestState".into(), state.clone());
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::McpError;
    use crate::client::ClientOptions;
    use crate::client::testing::{Scripted, modern};
    use crate::protocol::LATEST_PROTOCOL_VERSION;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    fn input_required(requests: Value, state: &str) -> Result<Value, Error> {
        Ok(json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": state
        }))
    }

    #[tokio::test]
    async fn a_fired_cancel_token_cancels_a_call_whose_answer_is_ready_at_once() {
        // The scripted answers are ready on the first poll, so only the
        // order of the checks decides; an unbiased select lost about half.
        let transport = Scripted::new((0..32).map(|_| Ok(json!({"content": []}))));
        let client = transport.client(modern());
        let cancel = tokio_util::sync::CancellationToken::new();
        cancel.cancel();
        let options = CallOptions::default().with_cancel(cancel);
        for _ in 0..32 {
            let outcome = client.call_tool_with("fast", json!({}), &options).await;
            assert!(matches!(outcome, Err(Error::Cancelled)), "{outcome:?}");
        }
    }

    #[tokio::test]
    async fn a_calls_notifications_have_reached_its_callbacks_when_it_returns() {
        let progress = |n: u32| {
            json!({"method": methods::NOTIFICATIONS_PROGRESS,
                   "params": {"progressToken": "t", "progress": n, "total": 3}})
        };
        let log =
            json!({"method": "notifications/message", "params": {"level": "info", "data": "x"}});
        let transport = Scripted::new([Ok(json!({"content": []}))]).notifying([
            progress(1),
            progress(2),
            log,
            progress(3),
        ]);
        let client = transport.client(modern());
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (on_progress, on_notification) = (seen.clone(), seen.clone());
        let options = CallOptions {
            on_notification: Some(std::sync::Arc::new(move |method: &str, _: &Value| {
                on_notification.lock().unwrap().push(method.to_owned());
            })),
            ..CallOptions::default()
        }
        .with_progress(move |update| {
            on_progress
                .lock()
                .unwrap()
                .push(format!("{}/{:?}", update.progress, update.total));
        });
        client
            .call_tool_with("slow", json!({}), &options)
            .await
            .unwrap();
        // Nothing yielded to another task: delivered by the call itself, in order.
        assert_eq!(
            *seen.lock().unwrap(),
            [
                "1/Some(3.0)",
                methods::NOTIFICATIONS_PROGRESS,
                "2/Some(3.0)",
                methods::NOTIFICATIONS_PROGRESS,
                methods::NOTIFICATIONS_MESSAGE,
                "3/Some(3.0)",
                methods::NOTIFICATIONS_PROGRESS,
            ]
        );
        let sent = transport.sent();
        assert!(sent[0].params["_meta"][meta::PROGRESS_TOKEN].is_string());
    }

    #[test]
    fn retry_params_carry_answers_and_state_verbatim() {
        let original = obj(json!({"name": "t", "arguments": {"a": 1}}));
        let result = json!({"resultType": "input_required", "requestState": "s-1"});
        assert!(is_input_required(&result));
        assert!(!is_input_required(&json!({"resultType": "complete"})));
        assert!(!is_input_required(&json!({})));
        let mut responses = Map::new();
        responses.insert("k".into(), json!({"action": "accept"}));
        assert_eq!(
            Value::Object(retry_params(&original, &result, responses)),
            json!({"name": "t", "arguments": {"a": 1},
                   "inputResponses": {"k": {"action": "accept"}}, "requestState": "s-1"})
        );
        assert_eq!(
            Value::Object(retry_params(&original, &json!({}), Map::new())),
            Value::Object(original)
        );
    }

    #[tokio::test]
    async fn input_rounds_are_answered_by_the_registered_handlers() {
        let transport = Scripted::new([
            input_required(
                json!({"who": {"method": methods::ELICITATION_CREATE, "params": {"message": "name?"}}}),
                "state-1",
            ),
            Ok(json!({"resultType": "complete", "content": []})),
        ]);
        let options = modern().on_elicitation(|params: Value| async move {
            Ok(json!({"action": "accept", "content": {"echo": params["message"]}}))
        });
        let client = transport.client(options);
        let mut params = Map::new();
        params.insert("name".into(), json!("greet"));
        let result = client.request(methods::TOOLS_CALL, params).await.unwrap();
        assert_eq!(result["resultType"], "complete");
        let sent = transport.sent();
        assert_eq!(sent.len(), 2);
        assert_ne!(sent[0].id, sent[1].id, "each round is a new request");
        assert!(!sent[0].params.contains_key("inputResponses"));
        assert_eq!(
            sent[1].params["inputResponses"],
            json!({"who": {"action": "accept", "content": {"echo": "name?"}}})
        );
        assert_eq!(sent[1].params["requestState"], "state-1");
        assert_eq!(sent[1].params["name"], "greet");
    }

    #[tokio::test]
    async fn an_input_kind_without_a_handler_fails_the_call() {
        let transport = Scripted::new([input_required(
            json!({"r": {"method": methods::ROOTS_LIST}}),
            "s",
        )]);
        let client = transport.client(modern());
        let err = client
            .request(methods::TOOLS_CALL, Map::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Protocol(m) if m.contains("roots/list")),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn rounds_are_capped() {
        let asks = || input_required(json!({}), "again");
        let transport = Scripted::new([asks(), asks(), asks()]);
        let options = ClientOptions {
            max_input_rounds: 2,
            ..modern()
        };
        let client = transport.client(options);
        let err = client
            .request(methods::PROMPTS_GET, Map::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Protocol(m) if m.contains("after 2 rounds")),
            "{err:?}"
        );
        assert_eq!(transport.sent().len(), 3);
    }

    #[tokio::test]
    async fn unsupported_version_switches_once_to_a_shared_one() {
        let unsupported = || {
            Err(Error::Mcp(
                McpError::new(codes::UNSUPPORTED_PROTOCOL_VERSION, "no")
                    .with_data(json!({"supported": [LATEST_PROTOCOL_VERSION]})),
            ))
        };
        let transport = Scripted::new([unsupported(), Ok(json!({"tools": []})), unsupported()]);
        let options = ClientOptions {
            protocol_version: "2099-01-01".into(),
            ..modern()
        };
        let client = transport.client(options);
        client
            .send(
                methods::TOOLS_LIST,
                Map::new(),
                &CallOptions::default().with_cache(CacheMode::Bypass),
            )
            .await
            .unwrap();
        assert_eq!(client.protocol_version(), LATEST_PROTOCOL_VERSION);
        let sent = transport.sent();
        assert_eq!(sent[0].version, "2099-01-01");
        assert_eq!(sent[1].version, LATEST_PROTOCOL_VERSION);
        assert_eq!(
            sent[1].params["_meta"][meta::PROTOCOL_VERSION],
            LATEST_PROTOCOL_VERSION
        );
    }

    #[tokio::test]
    async fn cacheable_results_are_served_until_a_change_notification() {
        let listing = json!({"resultType": "complete", "ttlMs": 60000, "prompts": []});
        let transport = Scripted::new([Ok(listing.clone()), Ok(listing.clone())]);
        let client = transport.client(modern());
        for _ in 0..2 {
            client
                .request(methods::PROMPTS_LIST, Map::new())
                .await
                .unwrap();
        }
        assert_eq!(transport.sent().len(), 1, "second served from the cache");
        client.invalidate_for(methods::NOTIFICATIONS_TOOLS_LIST_CHANGED, &Value::Null);
        client
            .request(methods::PROMPTS_LIST, Map::new())
            .await
            .unwrap();
        assert_eq!(
            transport.sent().len(),
            1,
            "another list's change is ignored"
        );
        client.invalidate_for(methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED, &Value::Null);
        client
            .request(methods::PROMPTS_LIST, Map::new())
            .await
            .unwrap();
        assert_eq!(transport.sent().len(), 2);
    }

    #[tokio::test]
    async fn resource_updates_invalidate_that_resource_only() {
        let read = |text: &str| {
            Ok(
                json!({"resultType": "complete", "ttlMs": 60000, "contents": [{"uri": "u", "text": text}]}),
            )
        };
        let transport = Scripted::new([read("a1"), read("b1"), read("a2")]);
        let client = transport.client(modern());
        let read_uri = |uri: &str| {
            let mut p = Map::new();
            p.insert("uri".into(), json!(uri));
            client.request(methods::RESOURCES_READ, p)
        };
        read_uri("file:///a").await.unwrap();
        read_uri("file:///b").await.unwrap();
        client.invalidate_for(
            methods::NOTIFICATIONS_RESOURCES_UPDATED,
            &json!({"uri": "file:///a"}),
        );
        assert_eq!(
            read_uri("file:///a").await.unwrap()["contents"][0]["text"],
            "a2"
        );
        assert_eq!(
            read_uri("file:///b").await.unwrap()["contents"][0]["text"],
            "b1"
        );
        assert_eq!(transport.sent().len(), 3);
    }

    #[tokio::test]
    async fn tool_calls_mirror_annotated_arguments_after_learning_the_tool() {
        let transport = Scripted::new([
            Ok(
                json!({"tools": [{"name": "t", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}}}}]}),
            ),
            Ok(json!({"content": []})),
        ])
        .mirroring();
        let client = transport.client(modern());
        let mut params = Map::new();
        params.insert("name".into(), json!("t"));
        params.insert("arguments".into(), json!({"region": "eu"}));
        client.request(methods::TOOLS_CALL, params).await.unwrap();
        let sent = transport.sent();
        assert_eq!(sent[0].method, methods::TOOLS_LIST);
        assert_eq!(
            sent[1].headers,
            [("Mcp-Param-Region".to_owned(), "eu".to_owned())]
        );
    }
}
