//! `ferromcp`: a command-line MCP client for poking at any MCP server, over
//! Streamable HTTP (`--url`) or stdio (`--stdio 'CMD ARGS'`).
//!
//! ```text
//! ferromcp tools --url http://127.0.0.1:8000/mcp
//! ferromcp call --stdio 'target/bin/echo-server' echo '{"text":"hi"}'
//! ferromcp tools --url https://mcp.internal/mcp --ca-cert corp-ca.pem
//! ferromcp login https://mcp.example.com/mcp   # OAuth; later commands reuse the tokens
//! ```
//!
//! A library too ([`main_with_args`]): the Python and npm packages link it
//! to give their users the same `ferromcp` command.

mod login;
mod proxy;

use clap::{Args, Parser, Subcommand};
use ferromcp::client::{Client, ClientOptions, StderrMode, StdioCommand, TlsOptions, TlsRoots};
use serde_json::{Map, Value};

#[derive(Parser)]
#[command(name = "ferromcp", version, about = "Talk to any MCP server from the command line", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Which server to talk to, and how.
#[derive(Args)]
struct Target {
    #[command(flatten)]
    endpoint: Endpoint,
    #[command(flatten)]
    tls: TlsArgs,
    #[command(flatten)]
    http: HttpArgs,
}

/// The server: one of `--url` or `--stdio`.
#[derive(Args)]
#[group(required = true, multiple = false)]
struct Endpoint {
    /// Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp or
    /// https://mcp.example.com/mcp
    #[arg(long, value_name = "URL")]
    url: Option<String>,
    /// Server command to spawn and talk to over stdio, e.g. 'python server.py'
    /// (split on whitespace; no shell quoting)
    #[arg(long, value_name = "'CMD ARGS'")]
    stdio: Option<String>,
}

/// TLS settings for an https:// URL. The platform's trust store is used by
/// default (SSL_CERT_FILE / SSL_CERT_DIR replace it, as for OpenSSL tools).
#[derive(Args, Clone)]
struct TlsArgs {
    /// Also trust the CA certificate(s) in this PEM file (repeatable)
    #[arg(long, value_name = "FILE")]
    ca_cert: Vec<std::path::PathBuf>,
    /// Trust Mozilla's root set built into ferromcp instead of the
    /// platform's store
    #[arg(long)]
    webpki_roots: bool,
    /// Client certificate chain (PEM) for mutual TLS; needs --client-key
    #[arg(long, value_name = "FILE", requires = "client_key")]
    client_cert: Option<std::path::PathBuf>,
    /// Private key (PEM) of --client-cert
    #[arg(long, value_name = "FILE", requires = "client_cert")]
    client_key: Option<std::path::PathBuf>,
}

/// HTTP settings beyond TLS: headers and where logins are kept.
#[derive(Args, Clone)]
struct HttpArgs {
    /// Extra HTTP header sent with every request, as 'Name: value'
    /// (repeatable), e.g. an API key
    #[arg(long = "header", short = 'H', value_name = "'NAME: VALUE'")]
    headers: Vec<String>,
    /// The file keeping `ferromcp login` tokens [default:
    /// $FERROMCP_TOKEN_FILE, else ~/.config/ferromcp/tokens.json]
    #[arg(long, value_name = "FILE")]
    token_file: Option<std::path::PathBuf>,
}

impl HttpArgs {
    fn headers(&self) -> Result<Vec<(String, String)>, Failure> {
        self.headers
            .iter()
            .map(|h| match h.split_once(':') {
                Some((name, value)) if !name.trim().is_empty() => {
                    Ok((name.trim().to_owned(), value.trim().to_owned()))
                }
                _ => Err(format!("invalid --header {h:?}: expected 'Name: value'").into()),
            })
            .collect()
    }
}

impl TlsArgs {
    fn options(&self) -> Result<TlsOptions, Failure> {
        let mut tls = TlsOptions {
            roots: if self.webpki_roots {
                TlsRoots::WebPki
            } else {
                TlsRoots::Native
            },
            ..TlsOptions::default()
        };
        for file in &self.ca_cert {
            tls = tls.with_ca_file(file)?;
        }
        if let (Some(cert), Some(key)) = (&self.client_cert, &self.client_key) {
            tls = tls.with_client_cert_files(cert, key)?;
        }
        Ok(tls)
    }
}

#[derive(Subcommand)]
enum Command {
    /// Log in to an OAuth-protected server (a browser opens; the redirect
    /// comes back to a listener on 127.0.0.1) and keep its tokens for the
    /// other commands
    Login(login::LoginArgs),
    /// Bridge transports and eras: serve on stdio or HTTP what another
    /// server (or several, merged under their names) serves
    Proxy(proxy::ProxyArgs),
    /// Forget the tokens kept for a server
    Logout {
        /// The MCP server's URL, as given to `login`
        url: String,
        #[command(flatten)]
        http: HttpArgs,
    },
    /// Show the server's supported versions, capabilities and identity
    /// (server/discover; for a 2025-11-25-only server, its initialize result)
    Discover {
        #[command(flatten)]
        target: Target,
    },
    /// List the server's tools (every page)
    Tools {
        #[command(flatten)]
        target: Target,
        /// Print the full tool definitions as JSON
        #[arg(long)]
        json: bool,
    },
    /// Call a tool and print the result as JSON
    Call {
        #[command(flatten)]
        target: Target,
        /// Tool name
        tool: String,
        /// Arguments as a JSON object, e.g. '{"text":"hi"}'
        #[arg(default_value = "{}")]
        arguments: String,
    },
    /// List the server's resources and resource templates
    Resources {
        #[command(flatten)]
        target: Target,
        /// Print the full definitions as JSON
        #[arg(long)]
        json: bool,
    },
    /// Read a resource and print the result as JSON
    Read {
        #[command(flatten)]
        target: Target,
        /// Resource URI
        uri: String,
    },
    /// List the server's prompts
    Prompts {
        #[command(flatten)]
        target: Target,
        /// Print the full definitions as JSON
        #[arg(long)]
        json: bool,
    },
    /// Get a prompt and print the result as JSON
    GetPrompt {
        #[command(flatten)]
        target: Target,
        /// Prompt name
        name: String,
        /// Arguments as a JSON object of strings, e.g. '{"topic":"rust"}'
        #[arg(default_value = "{}")]
        arguments: String,
    },
}

type Failure = Box<dyn std::error::Error>;

async fn connect(target: &Target) -> Result<Client, Failure> {
    let mut options = ClientOptions {
        // A CLI user wants to see why a server failed to start.
        stderr: StderrMode::Inherit,
        tls: target.tls.options()?,
        http_headers: target.http.headers()?,
        ..ClientOptions::default()
    };
    Ok(match (&target.endpoint.url, &target.endpoint.stdio) {
        (Some(url), _) => {
            // Tokens from `ferromcp login`, refreshed as needed; a server
            // that wants a new login says so instead of opening a browser
            // in the middle of a script.
            // (Without a home directory there are no kept logins.)
            if let Ok(store) = login::token_store(&target.http) {
                options.oauth = Some(login::stored_logins(url, store));
            }
            Client::connect_http_with(url, options).await?
        }
        (None, Some(command)) => {
            Client::connect_stdio_with(StdioCommand::parse(command)?, options).await?
        }
        (None, None) => return Err("give --url URL or --stdio 'CMD ARGS'".into()),
    })
}

fn json_object(text: &str, what: &str) -> Result<Map<String, Value>, Failure> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(format!("invalid {what}: expected a JSON object, got {text}").into()),
        Err(e) => Err(format!("invalid {what}: {e}: {text}").into()),
    }
}

fn print_json(value: &impl serde::Serialize) -> Result<(), Failure> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

fn print_line(name: &str, detail: Option<&str>) {
    match detail {
        Some(d) if !d.is_empty() => println!("{name}\t{}", d.lines().next().unwrap_or("")),
        _ => println!("{name}"),
    }
}

async fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Login(args) => login::login(args).await?,
        Command::Proxy(args) => proxy::proxy(args).await?,
        Command::Logout { url, http } => login::logout(&url, &http)?,
        Command::Discover { target } => {
            let client = connect(&target).await?;
            let discovered = client.discover().await;
            match (discovered, client.legacy_initialize_result()) {
                // A legacy-only server has no `server/discover`: say so, and
                // show what it described itself with.
                (Ok(_), Some(initialized)) if client.is_legacy() == Some(true) => {
                    let version = initialized
                        .get("protocolVersion")
                        .and_then(Value::as_str)
                        .unwrap_or("2025-11-25");
                    eprintln!(
                        "ferromcp: the server speaks only {version} (no server/discover); \
                         showing its initialize result"
                    );
                    print_json(&initialized)?;
                }
                (Ok(result), _) => print_json(&result)?,
                (Err(e), _) => {
                    client.close().await;
                    return Err(e.into());
                }
            }
            client.close().await;
        }
        Command::Tools { target, json } => {
            let client = connect(&target).await?;
            let tools = client.list_all_tools().await?;
            if json {
                print_json(&tools)?;
            } else {
                for tool in &tools {
                    print_line(&tool.name, tool.description.as_deref());
                }
            }
            client.close().await;
        }
        Command::Call {
            target,
            tool,
            arguments,
        } => {
            let arguments = json_object(&arguments, "tool arguments")?;
            let client = connect(&target).await?;
            let mut params = Map::new();
            params.insert("name".into(), Value::from(tool));
            params.insert("arguments".into(), Value::Object(arguments));
            print_json(&client.request("tools/call", params).await?)?;
            client.close().await;
        }
        Command::Resources { target, json } => {
            let client = connect(&target).await?;
            let resources = client.list_all_resources().await?;
            let templates = client
                .list_all_resource_templates()
                .await
                .unwrap_or_default();
            if json {
                print_json(
                    &serde_json::json!({"resources": resources, "resourceTemplates": templates}),
                )?;
            } else {
                for r in &resources {
                    print_line(&r.uri, Some(&r.name));
                }
                for t in &templates {
                    print_line(&t.uri_template, Some(&t.name));
                }
            }
            client.close().await;
        }
        Command::Read { target, uri } => {
            let client = connect(&target).await?;
            let mut params = Map::new();
            params.insert("uri".into(), Value::from(uri));
            print_json(&client.request("resources/read", params).await?)?;
            client.close().await;
        }
        Command::Prompts { target, json } => {
            let client = connect(&target).await?;
            let prompts = client.list_all_prompts().await?;
            if json {
                print_json(&prompts)?;
            } else {
                for p in &prompts {
                    print_line(&p.name, p.description.as_deref());
                }
            }
            client.close().await;
        }
        Command::GetPrompt {
            target,
            name,
            arguments,
        } => {
            let arguments = json_object(&arguments, "prompt arguments")?;
            let client = connect(&target).await?;
            let mut params = Map::new();
            params.insert("name".into(), Value::from(name));
            params.insert("arguments".into(), Value::Object(arguments));
            print_json(&client.request("prompts/get", params).await?)?;
            client.close().await;
        }
    }
    Ok(())
}

/// Runs the `ferromcp` command with `args` (the program's name first, as
/// `std::env::args()` gives them) and returns its exit status: what the
/// `ferromcp` binary does, and what the Python and npm packages' `ferromcp`
/// commands call, so all three are the same command. Blocks the calling
/// thread until the command is done; logs go to stderr (`RUST_LOG`), unless
/// the process has a `tracing` subscriber already.
///
/// ```no_run
/// let status = ferromcp_cli::main_with_args(["ferromcp", "tools", "--stdio", "target/bin/echo-server"]);
/// std::process::exit(status);
/// ```
pub fn main_with_args<I, S>(args: I) -> i32
where
    I: IntoIterator<Item = S>,
    S: Into<std::ffi::OsString> + Clone,
{
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "error".into()),
        )
        .try_init();
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        // --help and --version are "errors" that print to stdout and
        // succeed; the rest print the usage problem to stderr.
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("ferromcp: cannot start: {e}");
            return 1;
        }
    };
    let outcome = runtime.block_on(async {
        let outcome = run(cli.command).await;
        // With OTEL_* set, the command's spans go out before it exits.
        ferromcp::telemetry::flush_async(std::time::Duration::from_secs(5)).await;
        outcome
    });
    match outcome {
        Ok(()) => 0,
        Err(e) => {
            // one clear line: the first line of the error
            let message = e.to_string();
            eprintln!("ferromcp: {}", message.lines().next().unwrap_or("failed"));
            1
        }
    }
}
