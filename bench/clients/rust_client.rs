//! The Rust reference row of the client benchmark: the `ferromcp` client
//! calling `echo` over Streamable HTTP, driven by mcp-bench through the line
//! protocol of `ferromcp_bench::clients` (`ready`, `run N SECS`, `done`).
//!
//! ```text
//! ferromcp-bench-client http://127.0.0.1:PORT/mcp
//! ```

use ferromcp::client::Client;
use ferromcp::protocol::ContentBlock;
use serde_json::json;
use std::io::{BufRead, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// One call with its own text; the reply must echo it.
async fn echo_once(client: &Client, text: String) -> Result<(), String> {
    let result = client
        .call_tool("echo", json!({ "text": text }))
        .await
        .map_err(|e| e.to_string())?;
    match result.content.first() {
        Some(ContentBlock::Text(t)) if t.text == text => Ok(()),
        other => Err(format!("wrong reply for {text:?}: {other:?}")),
    }
}

#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    errors: AtomicU64,
    first_error: std::sync::Mutex<Option<String>>,
}

async fn phase(client: &Client, in_flight: usize, secs: f64) -> (Arc<Tally>, f64) {
    let tally = Arc::new(Tally::default());
    let next = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(secs);
    let mut workers = tokio::task::JoinSet::new();
    for _ in 0..in_flight.max(1) {
        // Client is a cheap handle onto one shared connection.
        let (client, tally, next) = (client.clone(), tally.clone(), next.clone());
        workers.spawn(async move {
            while Instant::now() < deadline {
                let n = next.fetch_add(1, Ordering::Relaxed);
                match echo_once(&client, format!("hello-{n}")).await {
                    Ok(()) => tally.ok.fetch_add(1, Ordering::Relaxed),
                    Err(why) => {
                        let mut first = tally
                            .first_error
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner);
                        first.get_or_insert(why);
                        tally.errors.fetch_add(1, Ordering::Relaxed)
                    }
                };
            }
        });
    }
    while workers.join_next().await.is_some() {}
    (tally, started.elapsed().as_secs_f64())
}

fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .ok_or("usage: ferromcp-bench-client URL")?;
    let client = Client::connect_http(&url).await?;
    if let Err(why) = echo_once(&client, "ready?".into()).await {
        say(&format!("error {why}"));
        return Err(why.into());
    }
    say(&format!("ready {}", client.protocol_version()));
    // stdin is read between phases only, so a blocking read costs nothing
    // that is measured.
    for line in std::io::stdin().lock().lines() {
        let line = line?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let ["run", n, secs] = words.as_slice() else {
            continue;
        };
        let (n, secs): (usize, f64) = (n.parse()?, secs.parse()?);
        let (tally, elapsed) = phase(&client, n, secs).await;
        let first = tally
            .first_error
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(why) = first {
            say(&format!("error {}", why.replace('\n', " ")));
        }
        say(&format!(
            "done {} {} {elapsed:.6}",
            tally.ok.load(Ordering::Relaxed),
            tally.errors.load(Ordering::Relaxed)
        ));
    }
    client.close().await;
    Ok(())
}
