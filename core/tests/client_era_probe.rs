//! The client's era probe against spawned stdio servers (spec 2026-07-28:
//! basic/transports/stdio.mdx, "Backward Compatibility"): the probe's
//! timeout measures the server's silence, not its start-up, and a `-32022`
//! to the `initialize` fallback that lists a modern version means modern.
//! The servers are small `sh` scripts, so each behaviour is exact.
#![cfg(unix)]

use ferromcp::client::{Client, ClientOptions, StderrMode, StdioCommand};
use std::time::Duration;

const DISCOVERED: &str = r#""result":{"resultType":"complete","supportedVersions":["2026-07-28","2025-11-25"],"capabilities":{"tools":{}},"serverInfo":{"name":"script","version":"1"}}"#;
const LEGACY_INITIALIZED: &str = r#""result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"script","version":"1"}}"#;
const UNSUPPORTED_VERSION: &str = r#""error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":"2025-11-25"}}"#;
const NO_TOOLS: &str = r#""result":{"resultType":"complete","tools":[]}"#;
/// No answer at all, as some legacy servers treat requests before
/// `initialize`.
const SILENT: &str = "";

/// A stdio server in `sh`: runs `before`, then answers each request with the
/// reply for its method (`server/discover`, `initialize`, anything else).
fn script_server(before: &str, discover: &str, initialize: &str, other: &str) -> StdioCommand {
    let script = r#"BEFORE
while IFS= read -r line; do
  id=$(printf '%s\n' "$line" | sed -n 's/^.*"id":\([0-9][0-9]*\).*$/\1/p')
  [ -n "$id" ] || continue
  case "$line" in
    *'"method":"server/discover"'*) reply='DISCOVER' ;;
    *'"method":"initialize"'*) reply='INITIALIZE' ;;
    *) reply='OTHER' ;;
  esac
  [ -n "$reply" ] && printf '{"jsonrpc":"2.0","id":%s,%s}\n' "$id" "$reply"
done
"#
    .replace("BEFORE", before)
    .replace("DISCOVER", discover)
    .replace("INITIALIZE", initialize)
    .replace("OTHER", other);
    StdioCommand::new("sh", ["-c", script.as_str()])
}

fn options(probe: Duration, startup: Duration) -> ClientOptions {
    ClientOptions {
        probe_timeout: probe,
        startup_timeout: startup,
        stderr: StderrMode::Null,
        ..ClientOptions::default()
    }
}

/// Connects and lists tools (which detects the era), with a guard far below
/// the start-up allowance the tests configure.
async fn connect_and_list(command: StdioCommand, options: ClientOptions) -> Client {
    let client = Client::connect_stdio_with(command, options).await.unwrap();
    tokio::time::timeout(Duration::from_secs(20), client.list_all_tools())
        .await
        .expect("no answer within 20 s")
        .unwrap();
    client
}

// A dual-era server that needs longer to start than the probe timeout: before, the probe
// expired during start-up, `initialize` followed, and the client silently ended up on
// 2025-11-25. The probe's clock now starts when the server reads its stdin.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_starting_modern_server_is_not_mistaken_for_a_legacy_one() {
    let command = script_server("sleep 1", DISCOVERED, LEGACY_INITIALIZED, NO_TOOLS);
    let client = connect_and_list(
        command,
        options(Duration::from_millis(200), Duration::from_secs(30)),
    )
    .await;
    assert_eq!(client.is_legacy(), Some(false));
    assert_eq!(client.protocol_version(), "2026-07-28");
    client.close().await;
}

// When the probe got no answer and `initialize` is answered with -32022 listing 2026-07-28,
// the server is modern: the client uses 2026-07-28 instead of failing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsupported_version_to_initialize_listing_2026_07_28_means_modern() {
    let command = script_server(":", SILENT, UNSUPPORTED_VERSION, NO_TOOLS);
    let client = connect_and_list(
        command,
        options(Duration::from_millis(200), Duration::from_secs(60)),
    )
    .await;
    assert_eq!(client.is_legacy(), Some(false));
    assert_eq!(client.protocol_version(), "2026-07-28");
    client.close().await;
}

// The counterpart: a legacy server that reads the probe and never answers it is still
// detected after the probe timeout, not after the (here 60 s) start-up allowance.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_server_silent_to_the_probe_falls_back_after_the_probe_timeout() {
    let command = script_server(":", SILENT, LEGACY_INITIALIZED, NO_TOOLS);
    let client = connect_and_list(
        command,
        options(Duration::from_millis(200), Duration::from_secs(60)),
    )
    .await;
    assert_eq!(client.is_legacy(), Some(true));
    client.close().await;
}
