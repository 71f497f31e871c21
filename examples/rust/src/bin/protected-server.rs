//! A protected MCP server (README "Protecting a server (Rust)"):
//! `protected-server ISSUER [--port PORT] [--resource URL] [--ca FILE]`
//! serves http://127.0.0.1:PORT/mcp (port 8000 by default) to clients
//! holding a JWT access token from ISSUER meant for this server (the
//! resource URL), checked with the issuer's published keys. `whoami`
//! answers with the caller's identity; `add_note` needs the `notes:write`
//! scope. `--ca` trusts an extra CA for an `https://` issuer.

use ferromcp::client::TlsOptions;
use ferromcp::protocol::Tool;
use ferromcp::server::auth::ScopeTarget;
use ferromcp::server::{HandlerError, RequestContext, Server, ToolOutput};
use ferromcp::transport::http::{HttpOptions, ProtectedResource};
use ferromcp::verifier::JwtVerifier;
use serde_json::{Value, json};

fn build_server() -> Result<Server, ferromcp::Error> {
    let server = Server::new("ferromcp-protected", "1.0.0");
    server.add_tool(
        Tool::new("whoami", json!({"type": "object"}))
            .with_description("Says who the access token belongs to."),
        |ctx: RequestContext, _args: Value| async move {
            // Always set on a protected server: the request got this far.
            let auth = ctx
                .auth()
                .ok_or_else(|| HandlerError::tool("no verified token"))?;
            Ok(ToolOutput::Value(json!({
                "subject": auth.subject,
                "client_id": auth.client_id,
                "scopes": auth.scopes,
            })))
        },
    )?;
    server.add_tool(
        Tool::new(
            "add_note",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        )
        .with_description("Stores a note (needs the notes:write scope)."),
        |ctx: RequestContext, args: Value| async move {
            let who = ctx.auth().and_then(|a| a.subject.clone()).unwrap_or_default();
            Ok(ToolOutput::text(format!(
                "noted for {who}: {}",
                args["text"].as_str().unwrap_or_default()
            )))
        },
    )?;
    // A token without this scope gets 403 insufficient_scope, and a
    // client that supports step-up asks the user for it.
    server.require_scopes(ScopeTarget::Tool, "add_note", ["notes:write"]);
    Ok(server)
}

struct Args {
    issuer: String,
    port: u16,
    resource: Option<String>,
    ca: Option<String>,
}

fn parse_args() -> Result<Args, String> {
    let usage = "usage: protected-server ISSUER [--port PORT] [--resource URL] [--ca FILE]";
    let mut args = std::env::args().skip(1);
    let mut parsed = Args {
        issuer: String::new(),
        port: 8000,
        resource: None,
        ca: None,
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| usage.to_owned());
        match arg.as_str() {
            "--port" => {
                let port = value()?;
                parsed.port = port.parse().map_err(|_| format!("invalid port {port:?}"))?;
            }
            "--resource" => parsed.resource = Some(value()?),
            "--ca" => parsed.ca = Some(value()?),
            _ if parsed.issuer.is_empty() && !arg.starts_with('-') => parsed.issuer = arg,
            _ => return Err(usage.to_owned()),
        }
    }
    if parsed.issuer.is_empty() {
        return Err(usage.to_owned());
    }
    Ok(parsed)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = parse_args()?;
    // The canonical URL clients use: tokens must name it as their audience.
    let resource = args
        .resource
        .unwrap_or_else(|| format!("http://127.0.0.1:{}/mcp", args.port));
    let mut tls = TlsOptions::default();
    if let Some(ca) = &args.ca {
        tls = tls.with_ca_file(ca)?;
    }
    let verifier = JwtVerifier::new(&args.issuer, &resource).with_tls(tls);
    let auth = ProtectedResource::new(&resource, [&args.issuer], verifier)
        .with_scopes_supported(["notes:read", "notes:write"])
        .with_resource_name("ferromcp protected example");
    let options = HttpOptions {
        auth: Some(auth),
        ..HttpOptions::localhost(args.port)
    };
    eprintln!("protected-server: {resource}, tokens from {}", args.issuer);
    build_server()?.run_http(options).await?;
    Ok(())
}
