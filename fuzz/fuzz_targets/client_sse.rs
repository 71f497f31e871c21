//! SSE parsing in the client: a stand-in server answers every POST with the
//! input as the response body (`text/event-stream`, or `application/json`
//! when the input starts with `{`), and the real client calls a tool over
//! it. Events may carry results, errors, notifications, server requests or
//! junk; the call must end (result or error), never panic or hang past its
//! timeout.
#![no_main]

use bytes::Bytes;
use ferromcp::client::{Client, ClientOptions, EraPreference};
use ferromcp_fuzz::runtime;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use libfuzzer_sys::fuzz_target;
use serde_json::json;
use std::convert::Infallible;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;
use tokio::net::TcpListener;

/// The body the stand-in server answers with.
static BODY: Mutex<Bytes> = Mutex::new(Bytes::new());

fn current_body() -> Bytes {
    BODY.lock().map(|b| b.clone()).unwrap_or_default()
}

/// Starts the stand-in server and a client pointed at it.
fn client() -> &'static Client {
    static CLIENT: OnceLock<Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        let rt = runtime();
        let listener = rt
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("a loopback port");
        let addr = listener.local_addr().expect("a bound address");
        rt.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let service = service_fn(|_req| async {
                        let body = current_body();
                        let kind = if body.starts_with(b"{") {
                            "application/json"
                        } else {
                            "text/event-stream"
                        };
                        let response = hyper::Response::builder()
                            .header("content-type", kind)
                            .body(Full::new(body))
                            .expect("a valid response");
                        Ok::<_, Infallible>(response)
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        let options = ClientOptions {
            era: EraPreference::Modern,
            // Short: a stream that ends with an event id is resumed until the
            // call times out, and the stand-in server always ends it.
            timeout: Some(Duration::from_millis(50)),
            max_input_rounds: 2,
            ..ClientOptions::default()
        }
        .on_elicitation(|_params| async { Ok(json!({"action": "decline"})) });
        rt.block_on(Client::connect_http_with(
            &format!("http://{addr}/mcp"),
            options,
        ))
        .expect("a client")
    })
}

fuzz_target!(|data: &[u8]| {
    let client = client();
    if let Ok(mut body) = BODY.lock() {
        *body = Bytes::copy_from_slice(data);
    }
    runtime().block_on(async {
        let _ = client.call_tool("echo", json!({"text": "x"})).await;
    });
});
