//! The conformance fixture client: `everything-client URL`, with the
//! scenario named by `MCP_CONFORMANCE_SCENARIO`, the wire revision by
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` and scenario data in
//! `MCP_CONFORMANCE_CONTEXT` (JSON), as the official suite runs clients.

use ferromcp::client::auth::{EnterpriseIdp, OAuthOptions, headless_authorize};
use ferromcp::client::{Client, ClientOptions, EraPreference, SkillResources, TlsOptions};
use ferromcp::protocol::{LATEST_PROTOCOL_VERSION, Tool};
use serde_json::{Map, Value, json};
use std::process::ExitCode;

type Failure = Box<dyn std::error::Error>;

/// Fills a form from its schema: each field's default, else a plausible
/// value of its type (the suite checks that defaults are applied).
fn fill_from_schema(schema: &Value) -> Map<String, Value> {
    let mut content = Map::new();
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, prop) in properties {
            let value = prop
                .get("default")
                .cloned()
                .unwrap_or_else(|| placeholder(prop));
            content.insert(name.clone(), value);
        }
    }
    content
}

fn placeholder(prop: &Value) -> Value {
    if let Some(Value::Array(options)) = prop.get("enum")
        && let Some(first) = options.first()
    {
        return first.clone();
    }
    match prop.get("type").and_then(Value::as_str) {
        Some("integer") => json!(1),
        Some("number") => json!(1.0),
        Some("boolean") => json!(true),
        Some("array") => json!([]),
        Some("object") => json!({}),
        _ => json!("test"),
    }
}

/// Arguments for a tool call: every required property, from its default
/// or a placeholder of its type.
fn arguments_for(tool: &Tool) -> Value {
    let schema = Value::Object(tool.input_schema.clone());
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let filled = fill_from_schema(&schema);
    Value::Object(
        filled
            .into_iter()
            .filter(|(k, _)| required.contains(&k.as_str()))
            .collect(),
    )
}

fn options(version: &str) -> ClientOptions {
    // The suite names the wire: 2025-11-25 and earlier are the legacy
    // (initialize) era, anything newer is stateless.
    let legacy = ferromcp::protocol::LEGACY_PROTOCOL_VERSIONS.contains(&version);
    let mut options = ClientOptions {
        protocol_version: if legacy {
            LATEST_PROTOCOL_VERSION.to_owned()
        } else {
            version.to_owned()
        },
        era: if legacy {
            EraPreference::Legacy
        } else {
            EraPreference::Modern
        },
        ..ClientOptions::default()
    };
    options.info = ferromcp::protocol::Implementation::new(
        "ferromcp-everything-client",
        env!("CARGO_PKG_VERSION"),
    );
    options
        .on_elicitation(|params: Value| async move {
            let content = fill_from_schema(&params["requestedSchema"]);
            Ok(json!({"action": "accept", "content": content}))
        })
        .on_sampling(|params: Value| async move {
            let asked = params["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": format!("Answer to: {asked}")},
                "model": "ferromcp-conformance-model",
                "stopReason": "endTurn"
            }))
        })
        .on_roots(|_params: Value| async move {
            Ok(json!({"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}))
        })
}

/// The client ID metadata document URL the suite's authorization server
/// accepts as a `client_id` (it never fetches it).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// OAuth for the `auth/*` scenarios. The suite's mock authorization server
/// approves at once, so the "user interaction" requests the authorization
/// URL without following the redirect and hands back its `Location`, as a
/// headless client does; pre-registered credentials come from the
/// scenario's context.
fn oauth(context: &Value) -> OAuthOptions {
    let mut oauth = OAuthOptions::new("http://localhost:3000/callback", |url: String| async move {
        headless_authorize(&url, &TlsOptions::default()).await
    })
    .with_client_metadata_url(CLIENT_METADATA_URL);
    oauth.client_name = "ferromcp-everything-client".into();
    if let Some(client_id) = context["client_id"].as_str() {
        oauth = oauth.with_pre_registered(
            context["issuer"].as_str().map(str::to_owned),
            client_id,
            context["client_secret"].as_str().map(str::to_owned),
        );
    }
    oauth
}

async fn call_each_listed_tool(client: &Client) -> Result<(), Failure> {
    for tool in client.list_all_tools().await? {
        let result = client.call_tool(&tool.name, arguments_for(&tool)).await?;
        eprintln!("called {}: isError={:?}", tool.name, result.is_error);
    }
    Ok(())
}

async fn run(scenario: &str, url: &str, version: &str, context: &Value) -> Result<(), Failure> {
    let mut options = options(version);
    if scenario == "auth/client-credentials-basic" {
        let id = context["client_id"]
            .as_str()
            .ok_or("no client_id in the context")?;
        let secret = context["client_secret"].as_str().map(str::to_owned);
        options.oauth = Some(OAuthOptions::client_credentials(id, secret));
    } else if scenario == "auth/client-credentials-jwt" {
        let id = context["client_id"]
            .as_str()
            .ok_or("no client_id in the context")?;
        let pem = context["private_key_pem"]
            .as_str()
            .ok_or("no private_key_pem in the context")?;
        options.oauth = Some(OAuthOptions::client_credentials_jwt(id, pem));
    } else if scenario == "auth/wif-jwt-bearer" {
        let id = context["client_id"]
            .as_str()
            .ok_or("no client_id in the context")?;
        let jwt = context["valid_jwt"]
            .as_str()
            .ok_or("no valid_jwt in the context")?
            .to_owned();
        options.oauth = Some(OAuthOptions::jwt_bearer(id, None, move |_| {
            let jwt = jwt.clone();
            async move { Ok(jwt) }
        }));
    } else if scenario == "auth/enterprise-managed-authorization" {
        let text = |key: &str| -> Result<String, Failure> {
            Ok(context[key]
                .as_str()
                .ok_or(format!("no {key} in the context"))?
                .to_owned())
        };
        let idp = EnterpriseIdp {
            token_endpoint: text("idp_token_endpoint")?,
            client_id: text("idp_client_id")?,
            client_secret: None,
            id_token: text("idp_id_token")?,
        };
        options.oauth = Some(OAuthOptions::enterprise_managed(
            text("client_id")?,
            Some(text("client_secret")?),
            idp,
            TlsOptions::default(),
        ));
    } else if scenario.starts_with("auth/") {
        let mut oauth = oauth(context);
        // The DPoP extension scenarios: ask for key-bound tokens.
        oauth.dpop = scenario.starts_with("auth/dpop");
        options.oauth = Some(oauth);
    }
    let client = Client::connect_http_with(url, options).await?;
    match scenario {
        // Every authorization scenario ends the same way once logged in:
        // list the tools and call the first (`test-tool`).
        auth if auth.starts_with("auth/") => {
            let tools = client.list_all_tools().await?;
            let first = tools.first().ok_or("the server lists no tools")?;
            client.call_tool(&first.name, arguments_for(first)).await?;
        }
        "initialize" => {
            client.list_all_tools().await?;
        }
        "elicitation-sep1034-client-defaults" => {
            client.list_all_tools().await?;
            client
                .call_tool("test_client_elicitation_defaults", json!({}))
                .await?;
        }
        "sse-retry" => {
            client.list_all_tools().await?;
            client.call_tool("test_reconnection", json!({})).await?;
        }
        "tools_call" => {
            client.list_all_tools().await?;
            client
                .call_tool("add_numbers", json!({"a": 5, "b": 3}))
                .await?;
        }
        "request-metadata" => {
            client.discover().await?;
            call_each_listed_tool(&client).await?;
        }
        "sep-2322-client-request-state" => {
            client.list_all_tools().await?;
            for tool in [
                "test_mrtr_echo_state",
                "test_mrtr_no_state",
                "test_mrtr_unrelated",
                "test_mrtr_no_result_type",
            ] {
                client.call_tool(tool, json!({})).await?;
            }
        }
        "http-standard-headers" => {
            if let Some(tool) = client.list_all_tools().await?.first() {
                client.call_tool(&tool.name, arguments_for(tool)).await?;
            }
            if let Some(resource) = client.list_all_resources().await?.first() {
                client.read_resource(&resource.uri).await?;
            }
            if let Some(prompt) = client.list_all_prompts().await?.first() {
                let mut args = Map::new();
                for a in prompt.arguments.iter().flatten() {
                    args.insert(a.name.clone(), json!("test"));
                }
                client.get_prompt(&prompt.name, args).await?;
            }
        }
        "http-custom-headers" => {
            client.list_all_tools().await?;
            for call in context["toolCalls"].as_array().into_iter().flatten() {
                let name = call["name"]
                    .as_str()
                    .ok_or("toolCalls entry without name")?;
                client
                    .call_tool(name, call.get("arguments").cloned().unwrap_or(json!({})))
                    .await?;
            }
        }
        "http-invalid-tool-headers" => call_each_listed_tool(&client).await?,
        "json-schema-ref-no-deref" => {
            client.list_all_tools().await?;
        }
        "json-schema-2020-12-preservation" => {
            let tools = client.list_all_tools().await?;
            let focal = tools
                .iter()
                .find(|t| t.name == "json_schema_2020_12_tool")
                .ok_or("json_schema_2020_12_tool not listed")?;
            client
                .call_tool("json_schema_echo", json!({"schema": focal.input_schema}))
                .await?;
        }
        // The skills extension (SEP-2640): listing reads no file.
        "sep-2640-client-no-prefetch" => {
            client.list_skills().await?;
        }
        // Loading checks SKILL.md against the entry (digest, size,
        // frontmatter) and refuses it on a mismatch; only a verified skill's
        // other files are read, each checked too.
        "sep-2640-client-verify-digest"
        | "sep-2640-client-verify-size"
        | "sep-2640-client-verify-frontmatter" => {
            for skill in client.list_skills().await? {
                let loaded = client.load_skill(&skill).await?;
                if let SkillResources::Files(files) = &skill.resources {
                    for file in files.iter().filter(|f| f.uri != skill.uri) {
                        loaded.read(&file.uri).await?;
                    }
                }
            }
        }
        other => return Err(format!("unknown scenario {other:?}").into()),
    }
    client.close().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: everything-client URL (scenario in MCP_CONFORMANCE_SCENARIO)");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let version = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        .unwrap_or_else(|_| LATEST_PROTOCOL_VERSION.to_owned());
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    match run(&scenario, &url, &version, &context).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("everything-client: scenario {scenario:?} failed: {e}");
            ExitCode::FAILURE
        }
    }
}
