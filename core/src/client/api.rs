//! The typed API: one method per request the client sends, decoding each
//! result into its `protocol` type, and the list walkers.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::calls::{complete_params, decode};
use super::{CacheMode, CallOptions, Client, Pages, Subscription, listen};
use crate::Error;
use crate::protocol::{
    CallToolResult, CompleteResult, DiscoverResult, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, Prompt, ReadResourceResult,
    Resource, ResourceTemplate, SubscriptionFilter, Tool, methods,
};

impl Client {
    /// `server/discover`: supported versions, capabilities, identity. A
    /// 2025-11-25 server, which has no `server/discover`, is described by
    /// what it answered to `initialize` (its version as the one supported,
    /// its capabilities, instructions and `serverInfo`), so a caller reads
    /// either era the same way.
    pub async fn discover(&self) -> Result<DiscoverResult, Error> {
        if let super::era::Era::Legacy { version } = self.era().await?
            && let Some(initialized) = self.legacy_initialize_result()
        {
            return Ok(discovered_from_initialize(version, initialized));
        }
        decode(
            methods::SERVER_DISCOVER,
            self.request(methods::SERVER_DISCOVER, Map::new()).await?,
        )
    }

    pub(super) async fn list_page(
        &self,
        method: &str,
        cursor: Option<&str>,
        cache: CacheMode,
    ) -> Result<Value, Error> {
        let mut params = Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), Value::from(cursor));
        }
        self.send(method, params, &CallOptions::default().with_cache(cache))
            .await
    }

    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &'static str,
        field: &'static str,
        cache: CacheMode,
    ) -> Result<Vec<T>, Error> {
        let mut pages = Pages::new(self, method, field, cache);
        let mut items = Vec::new();
        while let Some(page) = pages.next_page().await {
            items.extend(page?);
        }
        Ok(items)
    }

    /// The tools, a page at a time: `while let Some(page) = pages.next_page().await`.
    pub fn tool_pages(&self) -> Pages<'_, Tool> {
        Pages::new(self, methods::TOOLS_LIST, "tools", CacheMode::Use)
    }

    /// The resources, a page at a time.
    pub fn resource_pages(&self) -> Pages<'_, Resource> {
        Pages::new(self, methods::RESOURCES_LIST, "resources", CacheMode::Use)
    }

    /// The resource templates, a page at a time.
    pub fn resource_template_pages(&self) -> Pages<'_, ResourceTemplate> {
        Pages::new(
            self,
            methods::RESOURCES_TEMPLATES_LIST,
            "resourceTemplates",
            CacheMode::Use,
        )
    }

    /// The prompts, a page at a time.
    pub fn prompt_pages(&self) -> Pages<'_, Prompt> {
        Pages::new(self, methods::PROMPTS_LIST, "prompts", CacheMode::Use)
    }

    /// One page of `tools/list` (tools with invalid `x-mcp-header`
    /// annotations are left out over HTTP).
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult, Error> {
        decode(
            methods::TOOLS_LIST,
            self.list_page(methods::TOOLS_LIST, cursor, CacheMode::Use)
                .await?,
        )
    }

    /// Every tool, following `nextCursor` to the last page.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_all_tools_with(CacheMode::Use).await
    }

    /// Boxed: `send` calls it (to learn tool annotations) and it calls
    /// `send`, so the future type would otherwise be infinite.
    pub(super) fn list_all_tools_with(
        &self,
        cache: CacheMode,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Vec<Tool>, Error>> + Send + '_>>
    {
        Box::pin(self.list_all(methods::TOOLS_LIST, "tools", cache))
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult, Error> {
        decode(
            methods::RESOURCES_LIST,
            self.list_page(methods::RESOURCES_LIST, cursor, CacheMode::Use)
                .await?,
        )
    }

    /// Every resource.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, Error> {
        self.list_all(methods::RESOURCES_LIST, "resources", CacheMode::Use)
            .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, Error> {
        decode(
            methods::RESOURCES_TEMPLATES_LIST,
            self.list_page(methods::RESOURCES_TEMPLATES_LIST, cursor, CacheMode::Use)
                .await?,
        )
    }

    /// Every resource template.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.list_all(
            methods::RESOURCES_TEMPLATES_LIST,
            "resourceTemplates",
            CacheMode::Use,
        )
        .await
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Result<ListPromptsResult, Error> {
        decode(
            methods::PROMPTS_LIST,
            self.list_page(methods::PROMPTS_LIST, cursor, CacheMode::Use)
                .await?,
        )
    }

    /// Every prompt.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.list_all(methods::PROMPTS_LIST, "prompts", CacheMode::Use)
            .await
    }

    /// `tools/call`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, &CallOptions::default())
            .await
    }

    /// `tools/call` with per-call options (progress, timeout, cancel).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let mut params = Map::new();
        params.insert("name".into(), Value::from(name));
        params.insert("arguments".into(), arguments);
        decode(
            methods::TOOLS_CALL,
            self.send(methods::TOOLS_CALL, params, options).await?,
        )
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri));
        decode(
            methods::RESOURCES_READ,
            self.request(methods::RESOURCES_READ, params).await?,
        )
    }

    /// `prompts/get`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<GetPromptResult, Error> {
        let mut params = Map::new();
        params.insert("name".into(), Value::from(name));
        params.insert("arguments".into(), Value::Object(arguments));
        decode(
            methods::PROMPTS_GET,
            self.request(methods::PROMPTS_GET, params).await?,
        )
    }

    /// `completion/complete` for an argument of a prompt or resource
    /// template (`reference` is a `PromptReference` or
    /// `ResourceTemplateReference` object).
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<CompleteResult, Error> {
        self.complete_with_context(reference, argument, value, Map::new())
            .await
    }

    /// [`Client::complete`] with the values of the arguments already
    /// resolved (`context.arguments`), for completions that depend on them
    /// (a template's `{repo}` completed once `{owner}` is known). An empty
    /// map sends no `context`.
    pub async fn complete_with_context(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
        resolved: Map<String, Value>,
    ) -> Result<CompleteResult, Error> {
        let params = complete_params(reference, argument, value, resolved);
        decode(
            methods::COMPLETION_COMPLETE,
            self.request(methods::COMPLETION_COMPLETE, params).await?,
        )
    }

    /// Opens a `subscriptions/listen` stream; waits for the server's
    /// acknowledgement. Dropping the subscription ends it.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, Error> {
        listen::open(self.clone(), filter).await
    }
}

/// A 2025-11-25 server's `initialize` result read as a `DiscoverResult`.
fn discovered_from_initialize(version: String, initialized: Map<String, Value>) -> DiscoverResult {
    let read = |key: &str| initialized.get(key).cloned();
    DiscoverResult {
        result_type: Default::default(),
        supported_versions: vec![version],
        capabilities: read("capabilities")
            .and_then(|caps| serde_json::from_value(caps).ok())
            .unwrap_or_default(),
        instructions: read("instructions").and_then(|i| i.as_str().map(str::to_owned)),
        // What `initialize` said holds for the session.
        ttl_ms: 0,
        cache_scope: Default::default(),
        meta: read("serverInfo")
            .and_then(|info| serde_json::from_value(info).ok())
            .map(|info| crate::protocol::ResultMetaObject {
                server_info: Some(info),
                extra: Map::new(),
            }),
    }
}

#[cfg(test)]
mod tests {
    use crate::client::testing::{Scripted, modern};
    use serde_json::{Map, json};

    #[tokio::test]
    async fn completion_sends_resolved_arguments_as_context_only_when_there_are_some() {
        let answer = || Ok(json!({"completion": {"values": ["ferromcp"]}}));
        let transport = Scripted::new([answer(), answer()]);
        let client = transport.client(modern());
        let reference = json!({"type": "ref/resource", "uri": "github://{owner}/{repo}"});
        let mut resolved = Map::new();
        resolved.insert("owner".into(), json!("ferro"));
        let done = client
            .complete_with_context(reference.clone(), "repo", "fe", resolved)
            .await
            .unwrap();
        assert_eq!(done.completion.values, ["ferromcp"]);
        client.complete(reference, "repo", "f").await.unwrap();
        let sent = transport.sent();
        assert_eq!(
            sent[0].params.get("context"),
            Some(&json!({"arguments": {"owner": "ferro"}}))
        );
        assert_eq!(
            sent[0].params["argument"],
            json!({"name": "repo", "value": "fe"})
        );
        assert_eq!(sent[1].params.get("context"), None);
    }
}
