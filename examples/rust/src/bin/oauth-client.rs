//! The README's OAuth client: `oauth-client URL` logs in to a protected MCP
//! server (the user opens the printed URL; the browser comes back to a
//! listener on 127.0.0.1:8765) and lists its tools.

use ferromcp::client::auth::{LoopbackRedirect, OAuthOptions};
use ferromcp::client::{Client, ClientOptions};
use std::time::Duration;

#[tokio::main]
async fn main() -> Result<(), ferromcp::Error> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or("http://127.0.0.1:8000/mcp".into());
    let oauth = OAuthOptions::new(
        "http://127.0.0.1:8765/callback",
        |auth_url: String| async move {
            let listener = LoopbackRedirect::bind(8765, "/callback").await?;
            println!("Open this URL to authorize: {auth_url}");
            listener.wait(Duration::from_secs(300)).await
        },
    );
    let options = ClientOptions {
        // The login happens inside the first call; the user's time in the
        // browser does not count against the call's timeout.
        oauth: Some(oauth),
        ..ClientOptions::default()
    };
    let client = Client::connect_http_with(&url, options).await?;
    for tool in client.list_all_tools().await? {
        println!("{}", tool.name);
    }
    Ok(())
}
