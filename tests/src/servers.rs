//! Starting example servers for tests and the demo.

use ferromcp::client::{Client, ClientOptions, StdioCommand};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::manifest::{Manifest, Transport, repo_root};

/// A client connected to a running example, and the process behind an
/// HTTP server (stdio processes belong to the client).
pub struct Running {
    /// The connected client.
    pub client: Client,
    http_process: Option<Child>,
}

impl Running {
    /// Closes the client and stops the server process.
    pub async fn stop(mut self) {
        self.client.close().await;
        if let Some(mut child) = self.http_process.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(child) = self.http_process.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A port that was free a moment ago.
pub fn free_port() -> Result<u16, String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| e.to_string())
}

fn check_program(argv: &[String]) -> Result<(), String> {
    let program = argv.first().ok_or("empty command")?;
    if program.contains('/') && !repo_root().join(program).exists() && !Path::new(program).exists()
    {
        return Err(format!("{program} does not exist: run `make build` first"));
    }
    Ok(())
}

/// Starts `fixture` in `language` on `transport` and connects a client.
pub async fn start(
    manifest: &Manifest,
    fixture: &str,
    language: &str,
    transport: Transport,
) -> Result<Running, String> {
    start_with(
        manifest,
        fixture,
        language,
        transport,
        ClientOptions::default(),
    )
    .await
}

/// [`start`] with explicit client options (e.g. a legacy-era client).
pub async fn start_with(
    manifest: &Manifest,
    fixture: &str,
    language: &str,
    transport: Transport,
    options: ClientOptions,
) -> Result<Running, String> {
    match transport {
        Transport::Stdio => {
            let argv = manifest.command(fixture, language, transport, None)?;
            check_program(&argv)?;
            let mut command = StdioCommand::new(&argv[0], &argv[1..]);
            command.cwd = Some(repo_root());
            let client = Client::connect_stdio_with(command, options)
                .await
                .map_err(|e| format!("{language}: {e}"))?;
            Ok(Running {
                client,
                http_process: None,
            })
        }
        Transport::Http => {
            let port = free_port()?;
            let argv = manifest.command(fixture, language, transport, Some(port))?;
            check_program(&argv)?;
            let child = Command::new(&argv[0])
                .args(&argv[1..])
                .current_dir(repo_root())
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|e| format!("starting {argv:?}: {e}"))?;
            let mut running = Running {
                client: Client::connect_http_with(&format!("http://127.0.0.1:{port}/mcp"), options)
                    .await
                    .map_err(|e| e.to_string())?,
                http_process: Some(child),
            };
            wait_for_port(port, Duration::from_secs(20), running.http_process.as_mut())?;
            Ok(running)
        }
    }
}

/// An example server's HTTP process, without a client (for tests that
/// speak raw HTTP to it); killed on drop.
pub struct HttpProcess {
    /// The port it serves on (`http://127.0.0.1:{port}/mcp`).
    pub port: u16,
    child: Child,
}

impl HttpProcess {
    /// Starts `fixture` in `language` serving HTTP on a free port and waits
    /// until it listens. `configure` adjusts the command first (e.g. a
    /// `pre_exec` that lowers a resource limit).
    pub fn spawn(
        manifest: &Manifest,
        fixture: &str,
        language: &str,
        configure: impl FnOnce(&mut Command),
    ) -> Result<HttpProcess, String> {
        let port = free_port()?;
        let argv = manifest.command(fixture, language, Transport::Http, Some(port))?;
        check_program(&argv)?;
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .current_dir(repo_root())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        configure(&mut command);
        let child = command
            .spawn()
            .map_err(|e| format!("starting {argv:?}: {e}"))?;
        let mut process = HttpProcess { port, child };
        wait_for_port(port, Duration::from_secs(20), Some(&mut process.child))?;
        Ok(process)
    }
}

impl Drop for HttpProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn wait_for_port(port: u16, limit: Duration, child: Option<&mut Child>) -> Result<(), String> {
    let started = Instant::now();
    let mut child = child;
    while started.elapsed() < limit {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok(());
        }
        if let Some(c) = child.as_deref_mut()
            && let Ok(Some(status)) = c.try_wait()
        {
            return Err(format!("server exited early with {status}"));
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    Err(format!(
        "server did not listen on port {port} within {limit:?}"
    ))
}
