//! The server's era (spec: versioning.mdx, "Backward Compatibility"):
//! detected on first use with a modern probe, or imposed by
//! [`EraPreference`]; a legacy server gets the `initialize` handshake, and
//! its requests travel without the per-request protocol fields.

use serde_json::{Map, Value};

use super::{CacheMode, CallOptions, Client, EraPreference, OutgoingRequest, cache};
use crate::Error;
use crate::McpError;
use crate::protocol::{LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS, codes, meta, methods};
use crate::rpc::{read_unpoisoned, write_unpoisoned};

/// The era detected for (or imposed on) a server.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Era {
    /// 2026-07-28: stateless, protocol fields in each request's `_meta`.
    Modern,
    Legacy {
        /// The negotiated legacy revision.
        version: String,
    },
}

impl Client {
    /// Whether the client speaks the legacy protocol to this server (known
    /// after the first request).
    pub fn is_legacy(&self) -> Option<bool> {
        read_unpoisoned(&self.shared.era)
            .as_ref()
            .map(|e| matches!(e, Era::Legacy { .. }))
    }

    /// The result of the `initialize` handshake with a legacy (2025-11-25)
    /// server: `protocolVersion`, `capabilities`, `serverInfo`, and
    /// `instructions` if it sent any. `None` for a modern server or before
    /// the first request.
    ///
    /// ```no_run
    /// # async fn show(client: ferromcp::client::Client) -> Result<(), ferromcp::Error> {
    /// client.discover().await?; // connects: the era is known after it
    /// if client.is_legacy() == Some(true) {
    ///     println!("{:?}", client.legacy_initialize_result());
    /// }
    /// # Ok(()) }
    /// ```
    pub fn legacy_initialize_result(&self) -> Option<Map<String, Value>> {
        read_unpoisoned(&self.shared.legacy_initialize).clone()
    }

    /// The server's era, detected on first use (spec: versioning.mdx,
    /// "Backward Compatibility"): a modern probe; a result or a recognised
    /// modern error means modern; anything else, or no answer in time on
    /// stdio, means legacy, and the client falls back to `initialize`.
    pub(super) async fn era(&self) -> Result<Era, Error> {
        // Read apart from the `if let`: its guard would live through the
        // block, which may write the lock.
        let known = read_unpoisoned(&self.shared.era).clone();
        if let Some(era) = known {
            if !self.legacy_session_lost(&era) {
                return Ok(era);
            }
            // The process holding the session ended: the next one needs
            // its own `initialize`.
            tracing::info!("the server was started again: a new legacy session");
            *write_unpoisoned(&self.shared.era) = None;
        }
        // Boxed: detecting holds a whole probe exchange, which inline would
        // be part of every request's future (and copied with it) long
        // after the era is known.
        Box::pin(self.detect_era()).await
    }

    async fn detect_era(&self) -> Result<Era, Error> {
        let _detecting = self.shared.detecting.lock().await;
        if let Some(era) = read_unpoisoned(&self.shared.era).clone()
            && !self.legacy_session_lost(&era)
        {
            return Ok(era);
        }
        let era = match self.shared.options.era {
            EraPreference::Modern => Era::Modern,
            EraPreference::Legacy => self.initialize_legacy().await?,
            EraPreference::Auto => {
                let mut probe = CallOptions::default().with_cache(CacheMode::Bypass);
                // The probe is a request like any other: a client span,
                // whose context the server's span takes as parent.
                let span = crate::telemetry::installed().map(|telemetry| {
                    let span = crate::telemetry::ClientSpan::start(
                        telemetry,
                        methods::SERVER_DISCOVER,
                        &Map::new(),
                        &self.protocol_version(),
                        crate::telemetry::current(),
                    );
                    span.context().inject(&mut probe.meta);
                    span
                });
                let outcome = self
                    .probe_after_start_up(self.send_modern(
                        methods::SERVER_DISCOVER,
                        &Map::new(),
                        &probe,
                    ))
                    .await;
                if let Some(span) = span {
                    span.finish(outcome.as_ref());
                }
                match outcome {
                    Ok(result) => {
                        self.shared.cache.put(
                            cache::cache_key(methods::SERVER_DISCOVER, &Map::new()),
                            &result,
                        );
                        Era::Modern
                    }
                    Err(Error::Mcp(e)) if is_modern_error(e.code) => Era::Modern,
                    Err(Error::Mcp(_)) | Err(Error::HttpStatus(..)) | Err(Error::Timeout) => {
                        self.fall_back_to_initialize().await?
                    }
                    Err(other) => return Err(other),
                }
            }
        };
        self.shared.era_generation.store(
            self.shared.transport.generation(),
            std::sync::atomic::Ordering::Release,
        );
        *write_unpoisoned(&self.shared.era) = Some(era.clone());
        Ok(era)
    }

    /// Whether `era` is a 2025-11-25 session whose server process ended.
    fn legacy_session_lost(&self, era: &Era) -> bool {
        matches!(era, Era::Legacy { .. })
            && self.shared.transport.generation()
                != self
                    .shared
                    .era_generation
                    .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Waits for the probe's answer: as long as the server takes to start
    /// serving (at most `startup_timeout`), then `probe_timeout` more. A
    /// slow start is not silence; only silence after the server read the
    /// probe (or spoke) means legacy.
    async fn probe_after_start_up(
        &self,
        probe: impl Future<Output = Result<Value, Error>>,
    ) -> Result<Value, Error> {
        let options = &self.shared.options;
        let mut probe = std::pin::pin!(probe);
        let serving =
            tokio::time::timeout(options.startup_timeout, self.shared.transport.serving());
        tokio::select! {
            outcome = &mut probe => outcome,
            // A login the probe's 401 started does not count: the user
            // may take minutes.
            _ = serving => super::deadline::timeout_excluding(
                options.probe_timeout,
                self.shared.transport.interaction_clock(),
                probe,
            )
            .await
            .unwrap_or(Err(Error::Timeout)),
        }
    }

    /// The `initialize` fallback after a probe without a modern answer. A
    /// server that answers it with `-32022` listing a modern version this
    /// client speaks is modern after all (its answer to the probe was lost
    /// or late): that is the answer to the era question, not an error.
    async fn fall_back_to_initialize(&self) -> Result<Era, Error> {
        match self.initialize_legacy().await {
            Err(Error::Mcp(e)) if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION => {
                let Some(version) = pick_version(&e) else {
                    return Err(Error::Mcp(e));
                };
                tracing::debug!(%version, "initialize answered -32022: the server is modern");
                *write_unpoisoned(&self.shared.protocol_version) = version;
                Ok(Era::Modern)
            }
            other => other,
        }
    }

    /// The legacy handshake: `initialize`, then `notifications/initialized`.
    async fn initialize_legacy(&self) -> Result<Era, Error> {
        let mut params = Map::new();
        params.insert(
            "protocolVersion".into(),
            Value::from(LEGACY_PROTOCOL_VERSIONS[0]),
        );
        params.insert(
            "capabilities".into(),
            Value::Object(self.shared.options.capabilities()),
        );
        params.insert(
            "clientInfo".into(),
            serde_json::to_value(&self.shared.options.info).unwrap_or(Value::Null),
        );
        let result = self
            .shared
            .transport
            .send(OutgoingRequest {
                id: self.next_id(),
                method: methods::INITIALIZE.into(),
                params,
                headers: Vec::new(),
                notifications: None,
                version: String::new(),
                input: None,
            })
            .await?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if !LEGACY_PROTOCOL_VERSIONS.contains(&version.as_str()) {
            return Err(Error::Protocol(format!(
                "the server negotiated protocol version {version:?}, which this client does not speak"
            )));
        }
        self.shared
            .transport
            .notify(methods::NOTIFICATIONS_INITIALIZED, Map::new(), &version)
            .await?;
        if let Value::Object(result) = result {
            *write_unpoisoned(&self.shared.legacy_initialize) = Some(result);
        }
        // What `protocol_version()` reports from now on: the version this
        // connection speaks, not the modern one the client was built with.
        *write_unpoisoned(&self.shared.protocol_version) = version.clone();
        // Wait until the stream is open: a server may route its requests
        // there as soon as the next call starts.
        let _ = tokio::time::timeout(
            self.shared.options.probe_timeout,
            self.shared.transport.legacy_session_started(&version),
        )
        .await;
        Ok(Era::Legacy { version })
    }

    /// A request to a legacy server: no per-request protocol fields, the
    /// negotiated version in the header.
    pub(super) async fn send_legacy(
        &self,
        method: &str,
        params: &Map<String, Value>,
        options: &CallOptions,
        version: &str,
    ) -> Result<Value, Error> {
        let mut params = params.clone();
        legacy_meta(&mut params, &options.meta);
        let (notifications, route) = self.notification_router(options, &mut params);
        drop_empty_meta(&mut params);
        // The server's questions during the call may come apart from it.
        let _answering = options
            .input
            .clone()
            .map(|input| self.shared.out_of_call.calls.enter(input));
        let sent = self.shared.transport.send(OutgoingRequest {
            id: self.next_id(),
            method: method.to_owned(),
            params,
            headers: Vec::new(),
            notifications,
            version: version.to_owned(),
            input: options.input.clone(),
        });
        super::notes::NotificationRoute::deliver_while(route, sent).await
    }
}

/// Errors only a modern server sends (spec: basic/index.mdx, "Error Codes").
fn is_modern_error(code: i32) -> bool {
    matches!(
        code,
        codes::HEADER_MISMATCH
            | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
            | codes::UNSUPPORTED_PROTOCOL_VERSION
    )
}

/// The `_meta` a legacy request carries: the caller's entries (per-call
/// options, then the params' own), without the 2026-07-28 per-request
/// protocol fields, which a 2025-11-25 server does not know.
fn legacy_meta(params: &mut Map<String, Value>, call_meta: &Map<String, Value>) {
    let mut meta = call_meta.clone();
    if let Some(Value::Object(m)) = params.remove("_meta") {
        meta.extend(m);
    }
    for modern_only in [
        meta::PROTOCOL_VERSION,
        meta::CLIENT_INFO,
        meta::CLIENT_CAPABILITIES,
        meta::LOG_LEVEL,
    ] {
        meta.remove(modern_only);
    }
    params.insert("_meta".into(), Value::Object(meta));
}

/// An empty `_meta` is left out rather than sent.
fn drop_empty_meta(params: &mut Map<String, Value>) {
    if params
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(Map::is_empty)
    {
        params.remove("_meta");
    }
}

/// The version to retry with after `-32022`: the newest one both sides
/// speak, from the error's `data.supported`.
pub(super) fn pick_version(error: &McpError) -> Option<String> {
    let supported = error.data.as_ref()?.get("supported")?.as_array()?;
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .find(|v| supported.iter().any(|s| s.as_str() == Some(**v)))
        .map(|v| (*v).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::McpError;
    use crate::client::ClientOptions;
    use crate::client::testing::Scripted;
    use crate::protocol::LATEST_PROTOCOL_VERSION;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn legacy_meta_keeps_caller_entries_and_drops_modern_fields() {
        let mut params = obj(json!({"name": "t", "_meta": {
            "trace": "p",
            (meta::PROTOCOL_VERSION): "2026-07-28",
            (meta::CLIENT_INFO): {},
            (meta::CLIENT_CAPABILITIES): {},
            (meta::LOG_LEVEL): "debug"
        }}));
        legacy_meta(&mut params, &obj(json!({"trace": "call", "other": 1})));
        assert_eq!(
            Value::Object(params.clone()),
            json!({"name": "t", "_meta": {"trace": "p", "other": 1}})
        );
        drop_empty_meta(&mut params);
        assert!(params.contains_key("_meta"));
        let mut bare = obj(json!({"name": "t"}));
        legacy_meta(&mut bare, &Map::new());
        drop_empty_meta(&mut bare);
        assert_eq!(Value::Object(bare), json!({"name": "t"}));
    }

    #[test]
    fn only_modern_codes_count_as_a_modern_answer() {
        assert!(is_modern_error(codes::UNSUPPORTED_PROTOCOL_VERSION));
        assert!(is_modern_error(codes::HEADER_MISMATCH));
        assert!(is_modern_error(codes::MISSING_REQUIRED_CLIENT_CAPABILITY));
        assert!(!is_modern_error(codes::METHOD_NOT_FOUND));
        assert!(!is_modern_error(codes::INVALID_PARAMS));
    }

    #[tokio::test]
    async fn a_server_without_discover_gets_the_legacy_handshake() {
        let transport = Scripted::new([
            Err(Error::Mcp(McpError::method_not_found(
                methods::SERVER_DISCOVER,
            ))),
            Ok(json!({"protocolVersion": "2025-06-18", "capabilities": {}})),
            Ok(json!({"tools": []})),
        ]);
        let client = transport.client(ClientOptions::default());
        assert_eq!(client.is_legacy(), None);
        let mut call_meta = Map::new();
        call_meta.insert("trace".into(), json!("t1"));
        let options = CallOptions {
            meta: call_meta,
            ..CallOptions::default()
        };
        client
            .send(methods::TOOLS_LIST, Map::new(), &options)
            .await
            .unwrap();
        assert_eq!(client.is_legacy(), Some(true));
        let sent = transport.sent();
        let methods_sent: Vec<_> = sent.iter().map(|s| s.method.as_str()).collect();
        assert_eq!(
            methods_sent,
            [
                methods::SERVER_DISCOVER,
                methods::INITIALIZE,
                methods::TOOLS_LIST
            ]
        );
        assert_eq!(
            sent[1].params["protocolVersion"],
            LEGACY_PROTOCOL_VERSIONS[0]
        );
        assert_eq!(sent[1].version, "", "initialize carries no version header");
        assert_eq!(
            transport.notified(),
            [(
                methods::NOTIFICATIONS_INITIALIZED.to_owned(),
                "2025-06-18".to_owned()
            )]
        );
        assert_eq!(sent[2].version, "2025-06-18");
        assert_eq!(
            Value::Object(sent[2].params.clone()),
            json!({"_meta": {"trace": "t1"}})
        );
        assert_eq!(
            client.protocol_version(),
            "2025-06-18",
            "the negotiated version, not the modern default"
        );
    }

    #[tokio::test]
    async fn a_modern_error_to_the_probe_means_modern() {
        let transport = Scripted::new([
            Err(Error::Mcp(McpError::new(
                codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                "needs roots",
            ))),
            Ok(json!({"tools": []})),
        ]);
        let client = transport.client(ClientOptions::default());
        client
            .request(methods::TOOLS_LIST, Map::new())
            .await
            .unwrap();
        assert_eq!(client.is_legacy(), Some(false));
        let sent = transport.sent();
        assert_eq!(sent.len(), 2);
        assert_eq!(sent[1].version, LATEST_PROTOCOL_VERSION);
        assert_eq!(
            sent[1].params["_meta"][meta::PROTOCOL_VERSION],
            LATEST_PROTOCOL_VERSION
        );
    }

    // issue 11 item 6: the probe got no answer in time (a slow start), so the
    // client fell back to initialize; a modern server's -32022 listing
    // 2026-07-28 is the answer to the era question, not a fatal error.
    #[tokio::test]
    async fn initialize_answered_with_unsupported_version_listing_a_modern_one_means_modern() {
        let unsupported = McpError::new(
            codes::UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
        )
        .with_data(json!({"supported": [LATEST_PROTOCOL_VERSION], "requested": "2025-11-25"}));
        let transport = Scripted::new([
            Err(Error::Timeout),
            Err(Error::Mcp(unsupported)),
            Ok(json!({"tools": []})),
        ]);
        let client = transport.client(ClientOptions {
            protocol_version: "2026-01-01".into(),
            ..ClientOptions::default()
        });
        client
            .request(methods::TOOLS_LIST, Map::new())
            .await
            .unwrap();
        assert_eq!(client.is_legacy(), Some(false));
        assert_eq!(client.protocol_version(), LATEST_PROTOCOL_VERSION);
        let sent = transport.sent();
        let methods_sent: Vec<_> = sent.iter().map(|s| s.method.as_str()).collect();
        assert_eq!(
            methods_sent,
            [
                methods::SERVER_DISCOVER,
                methods::INITIALIZE,
                methods::TOOLS_LIST
            ]
        );
        assert!(
            transport.notified().is_empty(),
            "no notifications/initialized"
        );
        assert_eq!(sent[2].version, LATEST_PROTOCOL_VERSION);
        assert_eq!(
            sent[2].params["_meta"][meta::PROTOCOL_VERSION],
            LATEST_PROTOCOL_VERSION
        );

        // -32022 naming only versions this client does not speak stays an error
        let unsupported = McpError::new(codes::UNSUPPORTED_PROTOCOL_VERSION, "no")
            .with_data(json!({"supported": ["2099-01-01"]}));
        let transport = Scripted::new([Err(Error::Timeout), Err(Error::Mcp(unsupported))]);
        let client = transport.client(ClientOptions::default());
        let err = client
            .request(methods::TOOLS_LIST, Map::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Mcp(e) if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION),
            "{err:?}"
        );
    }

    #[tokio::test]
    async fn the_probe_result_fills_the_discover_cache() {
        let discovered = json!({"resultType": "complete", "ttlMs": 60000, "supportedVersions": []});
        let transport = Scripted::new([Ok(discovered.clone()), Ok(json!({"tools": []}))]);
        let client = transport.client(ClientOptions::default());
        client
            .request(methods::TOOLS_LIST, Map::new())
            .await
            .unwrap();
        let got = client
            .request(methods::SERVER_DISCOVER, Map::new())
            .await
            .unwrap();
        assert_eq!(got, discovered);
        assert_eq!(
            transport.sent().len(),
            2,
            "discover answered from the probe"
        );
    }

    #[tokio::test]
    async fn a_legacy_version_this_client_does_not_speak_is_refused() {
        let transport = Scripted::new([Ok(json!({"protocolVersion": "2023-01-01"}))]);
        let options = ClientOptions {
            era: EraPreference::Legacy,
            ..ClientOptions::default()
        };
        let client = transport.client(options);
        let err = client
            .request(methods::TOOLS_LIST, Map::new())
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Protocol(m) if m.contains("2023-01-01")),
            "{err:?}"
        );
        assert!(transport.notified().is_empty());
    }

    #[test]
    fn pick_version_takes_one_both_sides_speak() {
        let error = |supported: Value| {
            McpError::new(codes::UNSUPPORTED_PROTOCOL_VERSION, "no")
                .with_data(json!({"supported": supported}))
        };
        assert_eq!(
            pick_version(&error(json!(["1999-01-01", LATEST_PROTOCOL_VERSION]))).as_deref(),
            Some(LATEST_PROTOCOL_VERSION)
        );
        assert_eq!(pick_version(&error(json!(["1999-01-01"]))), None);
        assert_eq!(pick_version(&error(json!("2026-07-28"))), None);
        assert_eq!(
            pick_version(&McpError::new(codes::UNSUPPORTED_PROTOCOL_VERSION, "no")),
            None
        );
    }
}
