//! `ferromcp login` / `logout`, and the stored logins every `--url` command
//! uses: tokens live in a [`FileTokenStore`] (0600 JSON, one entry per
//! server URL), so a login lasts across runs and refresh tokens renew it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use ferromcp::client::auth::{FileTokenStore, LoopbackRedirect, OAuthOptions, TokenStore};
use ferromcp::client::{Client, ClientOptions};

use crate::{Failure, HttpArgs, TlsArgs};

/// The redirect listener's port unless `--redirect-port` says otherwise.
/// Fixed, because a dynamically registered client is registered with its
/// exact redirect URI and the registration is kept for the next login.
const DEFAULT_REDIRECT_PORT: u16 = 33418;

/// Where the browser comes back to on the listener.
const REDIRECT_PATH: &str = "/callback";

#[derive(Args)]
pub(crate) struct LoginArgs {
    /// The MCP server's URL, e.g. https://mcp.example.com/mcp
    url: String,
    #[command(flatten)]
    tls: TlsArgs,
    #[command(flatten)]
    http: HttpArgs,
    /// A client ID registered with the authorization server in advance
    /// (without it, ferromcp registers itself where the server allows)
    #[arg(long, value_name = "ID")]
    client_id: Option<String>,
    /// The secret of --client-id, for a confidential client
    #[arg(long, value_name = "SECRET", requires = "client_id")]
    client_secret: Option<String>,
    /// Port of the redirect listener on 127.0.0.1 (the redirect URI is
    /// http://127.0.0.1:PORT/callback; 0 picks a free port)
    #[arg(long, value_name = "PORT", default_value_t = DEFAULT_REDIRECT_PORT)]
    redirect_port: u16,
    /// Print the authorization URL without starting a browser
    #[arg(long)]
    no_browser: bool,
    /// Seconds to wait for the browser to come back
    #[arg(long, value_name = "SECONDS", default_value_t = 300)]
    wait: u64,
}

/// The token file: `--token-file`, else `$FERROMCP_TOKEN_FILE`, else the
/// user's default.
pub(crate) fn token_store(http: &HttpArgs) -> Result<Arc<FileTokenStore>, Failure> {
    let path = http
        .token_file
        .clone()
        .or_else(|| {
            std::env::var_os("FERROMCP_TOKEN_FILE")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        })
        .or_else(FileTokenStore::default_path)
        .ok_or("no home directory to keep logins in: give --token-file FILE")?;
    Ok(Arc::new(FileTokenStore::new(path)))
}

/// OAuth for the ordinary commands: the stored tokens (refreshed when they
/// expire), and a clear instruction instead of a browser when the server
/// wants a new login.
pub(crate) fn stored_logins(url: &str, store: Arc<FileTokenStore>) -> OAuthOptions {
    // Stored tokens and their refresh only: a server that wants a new
    // login gets the hint at once, before any client is registered with
    // it (registering belongs to `ferromcp login`, for its own redirect).
    let mut oauth =
        OAuthOptions::stored_only(format!("{url} needs a login: run `ferromcp login {url}`"))
            .with_store(store);
    oauth.client_name = CLIENT_NAME.into();
    // One attempt: a refreshed token that is refused too ends the call.
    oauth.max_authorizations = 1;
    oauth
}

/// OAuth that logs in when the server asks: the authorization URL on
/// stderr (and in a browser when `browser`), the redirect back to a
/// listener on 127.0.0.1, the tokens kept in `store` and refreshed.
pub(crate) async fn interactive(
    store: Arc<FileTokenStore>,
    redirect_port: u16,
    wait: Duration,
    browser: bool,
) -> Result<OAuthOptions, Failure> {
    let listener = LoopbackRedirect::bind(redirect_port, REDIRECT_PATH)
        .await
        .map_err(|e| {
            format!(
                "cannot listen for the redirect on 127.0.0.1:{redirect_port}: {e} (try --redirect-port)"
            )
        })?;
    let listener = Arc::new(listener);
    let redirect = listener.redirect_uri().to_owned();
    let mut oauth = OAuthOptions::new(redirect, move |url: String| {
        let listener = listener.clone();
        async move {
            eprintln!("ferromcp: open this URL to log in:\n  {url}");
            if browser {
                open_in_browser(&url);
            }
            listener.wait(wait).await
        }
    })
    .with_store(store);
    oauth.client_name = CLIENT_NAME.into();
    Ok(oauth)
}

/// The redirect listener's port of an interactive login.
pub(crate) const REDIRECT_PORT: u16 = DEFAULT_REDIRECT_PORT;

/// `client_name` in dynamic registrations.
const CLIENT_NAME: &str = "ferromcp CLI";

pub(crate) async fn login(args: LoginArgs) -> Result<(), Failure> {
    let store = token_store(&args.http)?;
    let mut oauth = interactive(
        store.clone(),
        args.redirect_port,
        Duration::from_secs(args.wait),
        !args.no_browser,
    )
    .await?;
    if let Some(id) = args.client_id {
        oauth = oauth.with_pre_registered(None, id, args.client_secret);
    }
    // A login replaces the tokens kept (the client registration stays).
    store.clear_tokens(&args.url);
    let options = ClientOptions {
        tls: args.tls.options()?,
        http_headers: args.http.headers()?,
        oauth: Some(oauth),
        ..ClientOptions::default()
    };
    let client = Client::connect_http_with(&args.url, options).await?;
    // Any request the server protects starts the login; discovery is the
    // lightest one (a 2025-11-25 server refuses it after logging in, which
    // does not matter here).
    let outcome = client.discover().await;
    client.close().await;
    match (store.load_tokens(&args.url), outcome) {
        (Some(_), _) => {
            eprintln!(
                "ferromcp: logged in to {}; tokens kept in {}",
                args.url,
                store.path().display()
            );
            Ok(())
        }
        (None, Err(e)) => Err(e.into()),
        (None, Ok(_)) => {
            eprintln!(
                "ferromcp: {} did not ask for a login; nothing kept",
                args.url
            );
            Ok(())
        }
    }
}

pub(crate) fn logout(url: &str, http: &HttpArgs) -> Result<(), Failure> {
    let store = token_store(http)?;
    if store.load_tokens(url).is_some() {
        store.clear_tokens(url);
        eprintln!("ferromcp: forgot the login to {url}");
    } else {
        eprintln!("ferromcp: no login to {url} was kept");
    }
    Ok(())
}

/// Starts the platform's URL opener; the URL is printed either way, so a
/// machine without one (a server over SSH) still works.
fn open_in_browser(url: &str) {
    let program = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    let started = std::process::Command::new(program)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    if started.is_err() {
        eprintln!("ferromcp: could not start a browser ({program}); open the URL yourself");
    }
}
