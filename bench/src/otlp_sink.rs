//! A stand-in OpenTelemetry collector for the tracing rows: takes every
//! OTLP/HTTP export and answers 200 at once, in the bench's own process, so
//! what the measured server spends on its spans (recording, encoding,
//! sending) is all that lands in its CPU figure. `{otlp}` in a server's
//! command is its URL.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::OnceLock;

/// The sink's base URL (`http://127.0.0.1:PORT`), started on first use.
pub fn url() -> String {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| match TcpListener::bind("127.0.0.1:0") {
        Ok(listener) => {
            let url = listener
                .local_addr()
                .map(|a| format!("http://{a}"))
                .unwrap_or_default();
            std::thread::spawn(move || {
                for socket in listener.incoming().flatten() {
                    std::thread::spawn(move || {
                        let _ = serve(socket);
                    });
                }
            });
            url
        }
        // No collector: the server's exports fail and its spans are
        // dropped, which the row's figures would show as cheaper than
        // they are; the report says the sink failed instead.
        Err(e) => {
            eprintln!("mcp-bench: no OTLP sink: {e}");
            "http://127.0.0.1:9".into()
        }
    })
    .clone()
}

/// Answers each request on one keep-alive connection with an empty 200.
fn serve(socket: std::net::TcpStream) -> std::io::Result<()> {
    let mut writer = socket.try_clone()?;
    let mut reader = BufReader::new(socket);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        std::io::copy(&mut (&mut reader).take(length as u64), &mut std::io::sink())?;
        writer.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")?;
    }
}
