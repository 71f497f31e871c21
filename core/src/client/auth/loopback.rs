//! The desktop redirect: a one-shot listener on the loopback interface that
//! receives the browser coming back from the authorization server (RFC 8252
//! §7.3), for the [`super::AuthorizeCallback`] of a desktop application.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::AuthError;
use crate::Error;

/// The longest request head the listener reads: a redirect is one line.
const MAX_HEAD: usize = 16 * 1024;

const DONE_PAGE: &str = "<!doctype html><title>Authorized</title>\
<p>Authorization complete. You can close this window.</p>";

/// Listens on `127.0.0.1` for the authorization redirect.
///
/// ```no_run
/// # async fn demo() -> Result<(), ferromcp::Error> {
/// use ferromcp::client::auth::{LoopbackRedirect, OAuthOptions};
/// use std::time::Duration;
/// let oauth = OAuthOptions::new("http://127.0.0.1:8765/callback", |url: String| async move {
///     let listener = LoopbackRedirect::bind(8765, "/callback").await?;
///     println!("Open {url} in your browser"); // or launch the browser
///     listener.wait(Duration::from_secs(300)).await
/// });
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct LoopbackRedirect {
    listener: TcpListener,
    path: String,
    redirect_uri: String,
}

impl LoopbackRedirect {
    /// Binds `127.0.0.1:port` (0: any free port) for redirects to `path`.
    pub async fn bind(port: u16, path: &str) -> Result<LoopbackRedirect, Error> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let port = listener.local_addr()?.port();
        let path = if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("/{path}")
        };
        Ok(LoopbackRedirect {
            redirect_uri: format!("http://127.0.0.1:{port}{path}"),
            listener,
            path,
        })
    }

    /// The redirect URI this listener answers (`http://127.0.0.1:PORT/path`).
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the browser's request to the redirect path, answers it with
    /// a short page, and returns the full redirect URL (with its query).
    /// Requests to other paths (a browser asking for `/favicon.ico`) get a
    /// 404 and the wait goes on.
    pub async fn wait(&self, timeout: Duration) -> Result<String, Error> {
        tokio::time::timeout(timeout, self.accept_redirect())
            .await
            .map_err(|_| {
                Error::from(AuthError::Interaction(format!(
                    "no redirect to {} within {timeout:?}",
                    self.redirect_uri
                )))
            })?
    }

    async fn accept_redirect(&self) -> Result<String, Error> {
        loop {
            let (mut stream, _) = self.listener.accept().await?;
            let mut head = Vec::new();
            let mut buf = [0u8; 2048];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
                let n = stream.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                head.extend_from_slice(&buf[..n]);
            }
            let text = String::from_utf8_lossy(&head);
            let target = text
                .lines()
                .next()
                .and_then(|line| {
                    let mut parts = line.split(' ');
                    (parts.next() == Some("GET"))
                        .then(|| parts.next())
                        .flatten()
                })
                .unwrap_or("")
                .to_owned();
            let path = target.split('?').next().unwrap_or("");
            if path == self.path {
                let response = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{DONE_PAGE}",
                    DONE_PAGE.len()
                );
                let _ = stream.write_all(response.as_bytes()).await;
                let origin = self
                    .redirect_uri
                    .strip_suffix(self.path.as_str())
                    .unwrap_or(&self.redirect_uri);
                return Ok(format!("{origin}{target}"));
            }
            let _ = stream
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(port: u16, target: &str) -> String {
        let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer).await;
        answer
    }

    #[tokio::test]
    async fn returns_the_redirect_and_ignores_other_paths() {
        let listener = LoopbackRedirect::bind(0, "callback").await.unwrap();
        let uri = listener.redirect_uri().to_owned();
        assert!(uri.starts_with("http://127.0.0.1:") && uri.ends_with("/callback"));
        let port: u16 = uri["http://127.0.0.1:".len()..uri.len() - "/callback".len()]
            .parse()
            .unwrap();
        let browser = tokio::spawn(async move {
            assert!(get(port, "/favicon.ico").await.starts_with("HTTP/1.1 404"));
            get(port, "/callback?code=c&state=s").await
        });
        let redirect = listener.wait(Duration::from_secs(5)).await.unwrap();
        assert_eq!(redirect, format!("{uri}?code=c&state=s"));
        assert!(browser.await.unwrap().contains("Authorization complete"));
    }

    #[tokio::test]
    async fn gives_up_after_the_timeout() {
        let listener = LoopbackRedirect::bind(0, "/cb").await.unwrap();
        let err = listener.wait(Duration::from_millis(50)).await.unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::Auth);
    }
}
