//! A server out of file descriptors (issue 11 item 2): the accept loop
//! survives EMFILE and keeps retrying, and a connection accepted with no
//! descriptor left for its hang-up watch is served without the watch rather
//! than dropped.
//!
//! Its own test binary: it lowers the process's descriptor limit, which
//! would break tests running beside it.

#![cfg(target_os = "linux")]

use ferromcp_testkit as common;

use common::{Http, headers_for, read_response, request};
use ferromcp::server::Server;
use serde_json::json;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

fn rlimit() -> libc::rlimit {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit to fill in.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    limit
}

fn set_rlimit(limit: &libc::rlimit) {
    // SAFETY: `limit` is a valid rlimit; lowering the soft limit is allowed.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, limit) }, 0);
}

/// Restores the descriptor limit and frees the fillers, even on failure.
struct Exhausted {
    original: libc::rlimit,
    fillers: Vec<File>,
}

impl Exhausted {
    /// Lowers the soft limit near current use, then opens files until none
    /// can be opened.
    fn new() -> Exhausted {
        let original = rlimit();
        let highest = File::open("/dev/null").unwrap().as_raw_fd() as libc::rlim_t;
        set_rlimit(&libc::rlimit {
            rlim_cur: (highest + 32).min(original.rlim_max),
            rlim_max: original.rlim_max,
        });
        let mut exhausted = Exhausted {
            original,
            fillers: Vec::new(),
        };
        loop {
            match File::open("/dev/null") {
                Ok(file) => exhausted.fillers.push(file),
                Err(e) => {
                    assert_eq!(e.raw_os_error(), Some(libc::EMFILE), "{e}");
                    return exhausted;
                }
            }
        }
    }

    /// Frees one descriptor.
    fn free_one(&mut self) {
        self.fillers.pop().expect("a filler to free");
    }
}

impl Drop for Exhausted {
    fn drop(&mut self) {
        self.fillers.clear();
        set_rlimit(&self.original);
    }
}

#[tokio::test]
async fn out_of_descriptors_the_server_keeps_accepting_and_serves_without_the_hangup_watch() {
    let http = Http::start(Server::new("fd-limit", "1.0.0")).await;
    // the listener is running (its hang-up watcher set up) before the limit
    let warm = http.post(&request(1, "server/discover", json!({}))).await;
    assert_eq!(warm.status, 200, "{}", warm.body);

    let mut exhausted = Exhausted::new();
    // one descriptor: the client's socket takes it, so the server's accept
    // fails with EMFILE and must retry rather than exit or spin
    exhausted.free_one();
    let mut client = TcpStream::connect(("127.0.0.1", http.port)).await.unwrap();
    let body = request(2, "server/discover", json!({})).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\nContent-Length: {}\r\n",
        http.port,
        body.len()
    );
    for (name, value) in headers_for(&request(2, "server/discover", json!({}))) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    client
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .await
        .unwrap();
    // Lets the accept loop meet EMFILE (not an assertion: the response
    // below must come whether or not it did).
    tokio::time::sleep(Duration::from_millis(200)).await;
    // one more: the accepted socket takes it, leaving none for the watch
    exhausted.free_one();
    let (status, body) = read_response(&mut client).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("\"result\""), "{body}");
    drop(exhausted);

    // and with descriptors back, connections are watched and served again
    let after = http.post(&request(3, "server/discover", json!({}))).await;
    assert_eq!(after.status, 200, "{}", after.body);
}
