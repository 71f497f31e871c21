//! `ferromcp proxy`: a gateway between transports and eras, a thin user of
//! `Server::proxy` and `Server::mount` (core `gateway/`).
//!
//! ```text
//! ferromcp proxy --stdio https://mcp.example.com/mcp          # stdio -> HTTP
//! ferromcp proxy --http 8000 -- npx -y @modelcontextprotocol/server-everything
//! ferromcp proxy --config servers.json --http 8000             # many, prefixed
//! ferromcp proxy --stdio --reload src -- python server.py      # restarted on edits
//! ```

use clap::Args;
use ferromcp::client::{Client, ClientOptions, StderrMode, StdioCommand};
use ferromcp::gateway::upstream_options;
use ferromcp::server::Server;
use ferromcp::transport::http::HttpOptions;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::{Failure, HttpArgs, TlsArgs, login};

#[derive(Args, Clone)]
pub(crate) struct ProxyArgs {
    /// Serve MCP on stdin/stdout; with a URL, forward to the Streamable
    /// HTTP server there (either era)
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "")]
    stdio: Option<String>,
    /// Serve Streamable HTTP (both eras) at http://HOST:PORT/mcp
    #[arg(long = "http", value_name = "PORT", conflicts_with = "stdio")]
    http_port: Option<u16>,
    /// Address the HTTP server listens on
    #[arg(
        long,
        value_name = "ADDR",
        default_value = "127.0.0.1",
        requires = "http_port"
    )]
    host: IpAddr,
    /// Servers to merge, in the `mcpServers` format desktop hosts use: each
    /// server's tools, prompts and resources appear under its name
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[command(flatten)]
    tls: TlsArgs,
    #[command(flatten)]
    http: HttpArgs,
    /// Do not log in interactively when the upstream asks (use only the
    /// tokens `ferromcp login` kept)
    #[arg(long)]
    no_login: bool,
    /// Port of the redirect listener of an interactive login on
    /// 127.0.0.1 (0 picks a free port)
    #[arg(long, value_name = "PORT", default_value_t = login::REDIRECT_PORT, conflicts_with = "no_login")]
    redirect_port: u16,
    /// Print an interactive login's URL without starting a browser
    #[arg(long, conflicts_with = "no_login")]
    no_browser: bool,
    /// Seconds an upstream may take to answer one request before the
    /// client that made it gets a timeout error (0: no limit)
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    timeout: u64,
    /// Restart the stdio server (after `--`) when a file under PATH
    /// changes (repeatable); clients stay connected and are told the lists
    /// changed
    #[arg(long, value_name = "PATH")]
    reload: Vec<PathBuf>,
    /// The stdio server to share among HTTP clients, or to serve on stdio
    /// (after `--`)
    #[arg(last = true, value_name = "COMMAND [ARGS]...")]
    command: Vec<String>,
}

impl ProxyArgs {
    /// What every upstream client starts from: the gateway's input
    /// forwarding and the `--timeout`.
    fn upstream_options(&self, options: ClientOptions) -> ClientOptions {
        upstream_options(ClientOptions {
            timeout: (self.timeout > 0).then(|| Duration::from_secs(self.timeout)),
            ..options
        })
    }
}

pub(crate) async fn proxy(args: ProxyArgs) -> Result<(), Failure> {
    let server = match (&args.config, args.stdio.as_deref(), args.command.is_empty()) {
        (Some(file), None | Some(""), true) => gateway_from_config(file, &args).await?,
        (Some(_), _, _) => {
            return Err("--config takes no URL and no command: the file names the servers".into());
        }
        (None, Some(url), true) if !url.is_empty() => {
            Server::proxy(http_upstream(url, &args, &BTreeMap::new()).await?).await?
        }
        (None, None, false) if args.http_port.is_some() => child_proxy(&args).await?,
        (None, Some(""), false) => child_proxy(&args).await?,
        _ => {
            return Err("give --stdio URL, --stdio -- COMMAND [ARGS...], \
                        --http PORT -- COMMAND [ARGS...], \
                        or --config FILE with --stdio or --http PORT"
                .into());
        }
    };
    match args.http_port {
        Some(port) => {
            let options = HttpOptions {
                bind: SocketAddr::new(args.host, port),
                ..HttpOptions::default()
            };
            eprintln!("ferromcp proxy: serving http://{}/mcp", options.bind);
            server.run_http(options).await?;
        }
        None => server.run_stdio().await?,
    }
    Ok(())
}

/// A server forwarding to the stdio server of `args.command`, restarted
/// when a file under `args.reload` changes.
async fn child_proxy(args: &ProxyArgs) -> Result<Server, Failure> {
    let mut argv = args.command.iter();
    let program = argv.next().map(String::as_str).unwrap_or_default();
    let options = args.upstream_options(ClientOptions {
        // The shared child's stderr is the proxy's.
        stderr: StderrMode::Inherit,
        ..ClientOptions::default()
    });
    let watched = Files::new(args.reload.clone());
    if !args.reload.is_empty() && watched.read().is_empty() {
        return Err(format!(
            "--reload: no files under {}",
            args.reload
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
        .into());
    }
    let child = Client::connect_stdio_with(StdioCommand::new(program, argv), options).await?;
    if !args.reload.is_empty() {
        tokio::spawn(reload_on_change(child.clone(), watched));
    }
    Ok(Server::proxy(child).await?)
}

/// How often watched files are looked at: quick enough that a save shows
/// by the time one switches windows, cheap for a source tree.
const RELOAD_POLL: Duration = Duration::from_millis(300);

/// Restarts `child`'s server whenever the watched files change. The proxy's
/// gateway follows the restart as it follows a crash: the server's listen
/// stream ends, is opened again on the new process, the lists are read
/// again, and the clients are told what changed.
async fn reload_on_change(child: Client, watched: Files) {
    let mut seen = watched.read();
    loop {
        tokio::time::sleep(RELOAD_POLL).await;
        let now = watched.read();
        if now == seen {
            continue;
        }
        // A save often writes several files: let the tree settle first.
        tokio::time::sleep(RELOAD_POLL).await;
        let before = std::mem::replace(&mut seen, watched.read());
        let changed = seen
            .iter()
            .find(|(path, stamp)| before.get(*path) != Some(*stamp))
            .or_else(|| before.iter().find(|(path, _)| !seen.contains_key(*path)))
            .map_or_else(
                || "a file".to_owned(),
                |(path, _)| path.display().to_string(),
            );
        eprintln!("ferromcp proxy: {changed} changed; restarting the server");
        child.restart_server().await;
    }
}

/// The files under some paths, each with its modification time and size.
struct Files {
    roots: Vec<PathBuf>,
}

/// At most this many files are watched: a path naming a whole disk must
/// not make every poll a full scan.
const MAX_WATCHED: usize = 20_000;

impl Files {
    fn new(roots: Vec<PathBuf>) -> Files {
        Files { roots }
    }

    /// What the files are now. Hidden directories, dependency folders and
    /// build output are left out: they change without the source changing.
    fn read(&self) -> BTreeMap<PathBuf, (std::time::SystemTime, u64)> {
        let mut found = BTreeMap::new();
        let mut pending: Vec<PathBuf> = self.roots.clone();
        while let Some(path) = pending.pop() {
            if found.len() >= MAX_WATCHED {
                break;
            }
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                let Ok(entries) = std::fs::read_dir(&path) else {
                    continue;
                };
                for entry in entries.flatten() {
                    let name = entry.file_name();
                    let name = name.to_string_lossy();
                    let skipped = name.starts_with('.')
                        || matches!(
                            name.as_ref(),
                            "node_modules" | "__pycache__" | "target" | "venv" | "dist" | "build"
                        );
                    if !skipped {
                        pending.push(entry.path());
                    }
                }
            } else if let Ok(modified) = meta.modified() {
                found.insert(path, (modified, meta.len()));
            }
        }
        found
    }
}

/// A client of the HTTP server at `url`, with the command line's TLS and
/// headers (and `headers` besides), and OAuth: the kept login, refreshed,
/// or an interactive one when the server asks for it.
async fn http_upstream(
    url: &str,
    args: &ProxyArgs,
    headers: &BTreeMap<String, String>,
) -> Result<Client, Failure> {
    let mut http_headers = args.http.headers()?;
    http_headers.extend(headers.iter().map(|(k, v)| (k.clone(), v.clone())));
    let mut options = args.upstream_options(ClientOptions {
        tls: args.tls.options()?,
        http_headers,
        ..ClientOptions::default()
    });
    // Bound first: the `Result` (its error is not `Send`) must not live
    // across the awaits below.
    let store = login::token_store(&args.http).ok();
    if let Some(store) = store {
        options.oauth = Some(if args.no_login {
            login::stored_logins(url, store)
        } else {
            match login::interactive(
                store.clone(),
                args.redirect_port,
                Duration::from_secs(300),
                !args.no_browser,
            )
            .await
            {
                Ok(oauth) => oauth,
                Err(error) => {
                    eprintln!("ferromcp proxy: {error}; using kept logins only");
                    login::stored_logins(url, store)
                }
            }
        });
    }
    Ok(Client::connect_http_with(url, options).await?)
}

/// One server of a config file.
#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct ServerEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// `stdio`, `http`, `streamable-http` or `sse` in some hosts' files;
    /// the fields say which already.
    #[serde(rename = "type")]
    _kind: Option<String>,
    #[serde(default)]
    disabled: bool,
    /// Hosts' own settings, which the proxy has no use for.
    #[serde(rename = "autoApprove", alias = "alwaysAllow", default)]
    _approved: Option<serde_json::Value>,
    #[serde(rename = "timeout", default)]
    _timeout: Option<serde_json::Value>,
    #[serde(rename = "description", default)]
    _description: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(rename = "mcpServers")]
    servers: BTreeMap<String, ServerEntry>,
}

/// Reads a config file; an error names the file, the line and the key.
fn read_config(file: &Path) -> Result<Vec<(String, ServerEntry)>, Failure> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("{}: cannot read: {e}", file.display()))?;
    let config: ConfigFile =
        serde_json::from_str(&text).map_err(|e| format!("{}:{}: {e}", file.display(), e.line()))?;
    let mut servers = Vec::new();
    for (name, entry) in config.servers {
        let at = |problem: String| -> Failure {
            format!(
                "{}:{}: mcpServers.{name}: {problem}",
                file.display(),
                line_of(&text, &name)
            )
            .into()
        };
        if let Err(problem) = ferromcp::gateway::check_prefix(&name) {
            return Err(at(problem));
        }
        match (&entry.command, &entry.url) {
            (Some(_), Some(_)) => return Err(at("give `command` or `url`, not both".into())),
            (None, None) => {
                return Err(at(
                    "needs `command` (a stdio server) or `url` (an HTTP server)".into(),
                ));
            }
            _ => {}
        }
        if !entry.disabled {
            servers.push((name, entry));
        }
    }
    Ok(servers)
}

/// The line of the first `"key":` in `text` (1-based), where the key of a
/// server is defined.
fn line_of(text: &str, key: &str) -> usize {
    let quoted = format!("\"{key}\"");
    text.find(&quoted)
        .map(|at| text[..at].matches('\n').count() + 1)
        .unwrap_or(1)
}

/// A server merging every server of the config file under its name. An
/// upstream that cannot be reached is reported and tried again in the
/// background (1 s, doubling to a minute); the others are served
/// meanwhile, and its items appear (announced as a list change) once it
/// answers.
async fn gateway_from_config(file: &Path, args: &ProxyArgs) -> Result<Server, Failure> {
    let servers = read_config(file)?;
    let gateway = Server::new("ferromcp-proxy", env!("CARGO_PKG_VERSION"));
    let args = Arc::new(args.clone());
    let mut mounted = 0;
    for (name, entry) in servers {
        match mount_entry(&gateway, &name, &entry, &args).await {
            Ok(()) => mounted += 1,
            Err(error) => {
                eprintln!("ferromcp proxy: {name}: left out for now: {error}");
                tokio::spawn(retry_mount(gateway.clone(), name, entry, args.clone()));
            }
        }
    }
    eprintln!("ferromcp proxy: {mounted} upstream server(s) mounted");
    Ok(gateway)
}

/// Connects to one server of the config file and mounts it under `name`.
async fn mount_entry(
    gateway: &Server,
    name: &str,
    entry: &ServerEntry,
    args: &ProxyArgs,
) -> Result<(), Failure> {
    let client = match (&entry.command, &entry.url) {
        (Some(program), _) => {
            let mut command = StdioCommand::new(program, &entry.args);
            command.env = entry
                .env
                .iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect();
            command.cwd = entry.cwd.clone();
            let options = args.upstream_options(ClientOptions {
                stderr: StderrMode::Inherit,
                ..ClientOptions::default()
            });
            Client::connect_stdio_with(command, options).await?
        }
        (None, Some(url)) => http_upstream(url, args, &entry.headers).await?,
        // read_config refuses an entry with neither.
        (None, None) => return Err(format!("{name}: no command and no url").into()),
    };
    // The mount lives as long as the upstream listens; nothing unmounts it.
    gateway.mount(name, client).await?;
    Ok(())
}

/// Tries a server left out at start again until it is mounted.
async fn retry_mount(gateway: Server, name: String, entry: ServerEntry, args: Arc<ProxyArgs>) {
    let mut wait = Duration::from_secs(1);
    loop {
        tokio::time::sleep(wait).await;
        match mount_entry(&gateway, &name, &entry, &args).await {
            Ok(()) => {
                eprintln!("ferromcp proxy: {name}: mounted");
                return;
            }
            // Said once at start; each later failure would only repeat it.
            Err(_still_unreachable) => wait = (wait * 2).min(Duration::from_secs(60)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(text: &str) -> Result<Vec<(String, ServerEntry)>, String> {
        let dir = std::env::temp_dir().join(format!("ferromcp-proxy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(format!("{}.json", text.len()));
        std::fs::write(&file, text).unwrap();
        read_config(&file).map_err(|e| e.to_string().replace(&file.display().to_string(), "F"))
    }

    #[test]
    fn a_config_error_names_the_file_line_and_key() {
        let typo =
            "{\n  \"mcpServers\": {\n    \"files\": {\n      \"comand\": \"x\"\n    }\n  }\n}";
        let error = config(typo).err().unwrap();
        assert!(error.starts_with("F:4: unknown field `comand`"), "{error}");
        let neither = "{\"mcpServers\": {\n\"a\": {\"command\": \"x\"},\n\"b\": {\"args\": []}}}";
        assert_eq!(
            config(neither).err().unwrap(),
            "F:3: mcpServers.b: needs `command` (a stdio server) or `url` (an HTTP server)"
        );
        let bad_name = "{\"mcpServers\": {\"my server\": {\"url\": \"http://x\"}}}";
        assert!(
            config(bad_name)
                .err()
                .unwrap()
                .starts_with("F:1: mcpServers.my server: invalid mount prefix")
        );
        let not_json = "{\"mcpServers\": {\n\"a\": {\"command\": 1}}}";
        assert!(
            config(not_json)
                .err()
                .unwrap()
                .starts_with("F:2: invalid type")
        );
    }

    #[test]
    fn desktop_host_files_read_as_they_are() {
        let file = r#"{"mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server"], "env": {"A": "1"}, "type": "stdio"},
            "remote": {"url": "https://x/mcp", "headers": {"Authorization": "Bearer t"}},
            "off": {"command": "x", "disabled": true, "autoApprove": []}
        }}"#;
        let servers = config(file).unwrap();
        let names: Vec<_> = servers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["files", "remote"]);
    }
}
