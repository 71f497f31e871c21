//! `ferromcp login` against a protected server (core's OAuth mock: resource
//! metadata, dynamic registration, PKCE, tokens): the test plays the
//! browser, following the printed authorization URL back to the CLI's
//! loopback listener; the tokens land in the token file (0600), later
//! commands use them without a login, `logout` forgets them, and a command
//! that needs a login says which one to run (and registers nothing at the
//! authorization server: registering is `login`'s). A login on another redirect
//! port registers the client again (the kept registration holds the old
//! redirect URI, which the server would refuse).

use ferromcp_testkit::oauth_mock;

use ferromcp::client::TlsOptions;
use ferromcp::client::auth::headless_authorize;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn ferromcp(args: &[&str], token_file: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ferromcp"));
    command
        .args(args)
        .arg("--token-file")
        .arg(token_file)
        .env_remove("FERROMCP_TOKEN_FILE");
    command
}

fn output(mut command: Command) -> Output {
    command.stdin(Stdio::null()).output().expect("run ferromcp")
}

/// The browser's last step: a GET of the redirect URL, which the CLI's
/// listener answers.
fn visit(url: &str) -> String {
    let rest = url.strip_prefix("http://").expect("http redirect");
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut conn = std::net::TcpStream::connect(host).expect("connect to the redirect listener");
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut page = String::new();
    conn.read_to_string(&mut page).unwrap();
    page
}

/// `ferromcp login URL --redirect-port 0`, the test playing the browser:
/// returns what the CLI printed on stderr.
async fn log_in(url: &str, token_file: &Path) -> String {
    let mut login = ferromcp(
        &["login", url, "--no-browser", "--redirect-port", "0"],
        token_file,
    );
    let mut child = login
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ferromcp login");
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    let authorization_url = loop {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "no URL in: {seen}"
        );
        seen.push_str(&line);
        if let Some(found) = line.trim().strip_prefix("http") {
            break format!("http{found}");
        }
    };
    // The authorization server approves at once and redirects back.
    let redirect = headless_authorize(&authorization_url, &TlsOptions::default())
        .await
        .expect("the authorization endpoint redirects");
    let page = tokio::task::spawn_blocking(move || visit(&redirect))
        .await
        .unwrap();
    assert!(page.contains("Authorization complete"), "{page}");
    let status = tokio::task::spawn_blocking(move || child.wait())
        .await
        .unwrap()
        .unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    assert!(status.success(), "{seen}{rest}");
    rest
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_keeps_tokens_that_later_commands_use_until_logout() {
    let (mock, url) = oauth_mock::serve(|_| {}).await;
    let dir = std::env::temp_dir().join(format!("ferromcp-cli-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let token_file = dir.join("tokens.json");

    // Before any login: a clear instruction, no browser.
    let before = output(ferromcp(&["tools", "--url", &url], &token_file));
    let said = String::from_utf8_lossy(&before.stderr);
    assert!(!before.status.success());
    assert!(
        said.contains(&format!("run `ferromcp login {url}`")),
        "{said}"
    );
    // Nothing was registered for it: the registration is `login`'s.
    assert_eq!(mock.lock().unwrap().registrations.len(), 0);

    let rest = log_in(&url, &token_file).await;
    assert!(rest.contains("logged in to"), "{rest}");

    let saved: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&token_file).unwrap()).unwrap();
    assert_eq!(saved["tokens"][&url]["access_token"], "token-1");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    // Another run uses the kept token: no new grant; extra headers go too.
    let tools = output(ferromcp(
        &["tools", "--url", &url, "-H", "X-Api-Key: k1"],
        &token_file,
    ));
    assert!(
        tools.status.success(),
        "{}",
        String::from_utf8_lossy(&tools.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&tools.stdout).trim(), "echo");
    let registered = {
        let m = mock.lock().unwrap();
        assert_eq!(m.grants, ["authorization_code"]);
        assert_eq!(m.bearer_seen.last(), Some(&Some("token-1".into())));
        assert_eq!(m.api_keys_seen.last(), Some(&Some("k1".into())));
        m.registrations.len()
    };

    // Port 0 again: another free port, so another redirect URI. The kept
    // registration is not for it: the CLI registers again and keeps that.
    log_in(&url, &token_file).await;
    {
        let m = mock.lock().unwrap();
        assert_eq!(m.grants, ["authorization_code", "authorization_code"]);
        // (The system could hand out the same free port twice, rarely.)
        let [first, second] = m.authorize_redirects.as_slice() else {
            panic!("two authorizations: {:?}", m.authorize_redirects);
        };
        let again = usize::from(first != second);
        assert_eq!(
            m.registrations.len(),
            registered + again,
            "{:?}",
            m.registrations
        );
        let saved: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&token_file).unwrap()).unwrap();
        let client = &saved["clients"][&m.base];
        let last = m.registrations.last().unwrap();
        assert_eq!(client["client_id"], last.0.as_str(), "{saved}");
        assert_eq!(client["redirect_uris"], serde_json::json!([second]));
    }

    let registered = mock.lock().unwrap().registrations.len();
    let logout = output(ferromcp(&["logout", &url], &token_file));
    assert!(logout.status.success());
    let after = output(ferromcp(&["tools", "--url", &url], &token_file));
    assert!(!after.status.success());
    assert!(String::from_utf8_lossy(&after.stderr).contains("ferromcp login"));
    assert_eq!(mock.lock().unwrap().registrations.len(), registered);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_malformed_header_is_refused_with_a_clear_message() {
    let out = output(ferromcp(
        &["tools", "--url", "http://127.0.0.1:9/mcp", "-H", "no colon"],
        Path::new("unused.json"),
    ));
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("invalid --header"), "{said}");
}

/// `ferromcp proxy --stdio URL` in front of a protected server with no
/// login kept: the first connection prints the authorization URL (on
/// stderr: stdout is the protocol) and waits for the browser; the proxy
/// then serves, and a later proxy uses the kept login without asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_stdio_logs_in_on_first_use_and_keeps_the_login() {
    use ferromcp::client::{Client, ClientOptions};

    let (mock, url) = oauth_mock::serve(|_| {}).await;
    let dir = std::env::temp_dir().join(format!("ferromcp-cli-proxy-login-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let token_file = dir.join("tokens.json");

    let mut proxy = ferromcp(
        &[
            "proxy",
            "--stdio",
            &url,
            "--no-browser",
            "--redirect-port",
            "0",
        ],
        &token_file,
    )
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn ferromcp proxy");
    let mut stderr = BufReader::new(proxy.stderr.take().unwrap());
    let authorization_url = tokio::task::spawn_blocking(move || {
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "no URL in: {seen}"
            );
            seen.push_str(&line);
            if let Some(found) = line.trim().strip_prefix("http") {
                break format!("http{found}");
            }
        }
    })
    .await
    .unwrap();
    let redirect = headless_authorize(&authorization_url, &TlsOptions::default())
        .await
        .expect("the authorization endpoint redirects");
    let page = tokio::task::spawn_blocking(move || visit(&redirect))
        .await
        .unwrap();
    assert!(page.contains("Authorization complete"), "{page}");

    let tools = |proxy: &mut std::process::Child| {
        let stdout = tokio::process::ChildStdout::from_std(proxy.stdout.take().unwrap()).unwrap();
        let stdin = tokio::process::ChildStdin::from_std(proxy.stdin.take().unwrap()).unwrap();
        let client = Client::connect_stream(stdout, stdin, ClientOptions::default());
        async move {
            let tools = client
                .list_all_tools()
                .await
                .expect("tools through the proxy");
            tools.into_iter().map(|t| t.name).collect::<Vec<_>>()
        }
    };
    assert_eq!(tools(&mut proxy).await, ["echo"]);
    assert_eq!(mock.lock().unwrap().grants, ["authorization_code"]);
    let _ = proxy.kill();
    let _ = proxy.wait();

    // A later proxy: the kept login, no URL, no new grant.
    let mut again = ferromcp(&["proxy", "--stdio", &url, "--no-login"], &token_file)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn ferromcp proxy");
    assert_eq!(tools(&mut again).await, ["echo"]);
    {
        let m = mock.lock().unwrap();
        assert_eq!(m.grants, ["authorization_code"]);
        assert_eq!(m.bearer_seen.last(), Some(&Some("token-1".into())));
    }
    let _ = again.kill();
    let _ = again.wait();
    std::fs::remove_dir_all(&dir).unwrap();
}
