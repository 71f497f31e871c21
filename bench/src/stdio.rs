//! Driving a server over stdio: era detection, N calls in flight, and cold
//! start (spawn to the first `tools/list` answer).

use std::collections::HashMap;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::proc::{self, Launch};
use crate::stats::LoadResult;
use crate::wire::{self, AnyReply, CallTemplate, Verdict, Wire};

/// How long a server may take to answer its first request: interpreters
/// importing an SDK on a busy machine need seconds.
pub const FIRST_REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long any later reply may take before the phase is abandoned.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// When a load phase ends.
#[derive(Debug, Clone, Copy)]
pub enum Stop {
    /// No new call after this long.
    After(Duration),
    /// After this many calls.
    Calls(u64),
}

pub struct StdioServer {
    child: Child,
    stdin: BufWriter<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    log: Option<std::path::PathBuf>,
}

impl StdioServer {
    pub fn spawn(launch: &Launch) -> Result<StdioServer, String> {
        let mut cmd = proc::command(launch, Stdio::piped(), Stdio::piped())
            .map_err(|e| format!("cannot prepare {:?}: {e}", launch.argv))?;
        let mut child = cmd
            .spawn()
            .map_err(|e| format!("cannot start {:?}: {e}", launch.argv))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("child has no stdio pipes".into());
        };
        Ok(StdioServer {
            child,
            stdin: BufWriter::with_capacity(64 * 1024, stdin),
            stdout: BufReader::with_capacity(256 * 1024, stdout),
            line: Vec::with_capacity(64 * 1024),
            log: launch.log.clone(),
        })
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    async fn send(&mut self, message: &[u8]) -> Result<(), String> {
        let write = async {
            self.stdin.write_all(message).await?;
            self.stdin.write_all(b"\n").await?;
            self.stdin.flush().await
        };
        write
            .await
            .map_err(|e| self.died(format!("writing to the server failed: {e}")))
    }

    fn died(&self, why: String) -> String {
        let tail = proc::log_tail(self.log.as_deref());
        if tail.is_empty() {
            why
        } else {
            format!("{why}; server log:\n{tail}")
        }
    }

    /// The next line from the server, or an error after `timeout`.
    async fn next_line(&mut self, timeout: Duration) -> Result<(), String> {
        self.line.clear();
        match tokio::time::timeout(timeout, self.stdout.read_until(b'\n', &mut self.line)).await {
            Err(_) => Err(format!("no reply within {timeout:?}")),
            Ok(Err(e)) => Err(self.died(format!("reading from the server failed: {e}"))),
            Ok(Ok(0)) => Err(self.died("the server closed its output".into())),
            Ok(Ok(_)) => Ok(()),
        }
    }

    /// Waits for the answer to request `id`, skipping notifications and
    /// anything that is not JSON (some servers log to stdout).
    async fn reply_to(&mut self, id: u64, timeout: Duration) -> Result<AnyReply, String> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            self.next_line(left).await?;
            if let Some(reply) = AnyReply::parse(self.line.trim_ascii())
                && reply.answers(id)
            {
                return Ok(reply);
            }
        }
    }

    /// Finds out which era the server speaks: `server/discover` first, then
    /// the `initialize` handshake on any error that is not a 2026-07-28 one
    /// (spec: stdio, "Backward Compatibility"). Ends with a checked
    /// `tools/list`.
    pub async fn detect(&mut self) -> Result<Wire, String> {
        self.send(&wire::discover(1)).await?;
        let wire = match self.reply_to(1, FIRST_REPLY_TIMEOUT).await {
            Ok(reply) => match reply.error {
                None => Wire::Modern,
                Some(e) if wire::MODERN_ERROR_CODES.contains(&e.code) => {
                    return Err(format!(
                        "the server speaks 2026-07-28 but rejected server/discover: error {}: {}",
                        e.code, e.message
                    ));
                }
                Some(_) => Wire::Legacy,
            },
            // Silence is one of the legacy answers to an unknown method.
            Err(why) if why.starts_with("no reply") => Wire::Legacy,
            Err(why) => return Err(why),
        };
        self.handshake(wire).await?;
        Ok(wire)
    }

    /// Makes a fresh process ready for calls on a known wire.
    pub async fn handshake(&mut self, wire: Wire) -> Result<(), String> {
        if wire == Wire::Legacy {
            self.send(&wire::initialize(2)).await?;
            let reply = self.reply_to(2, FIRST_REPLY_TIMEOUT).await?;
            if let Some(e) = reply.error {
                return Err(format!(
                    "initialize failed: error {}: {}",
                    e.code, e.message
                ));
            }
            self.send(&wire::initialized_notification()).await?;
        }
        self.send(&wire::tools_list(wire, 3)).await?;
        let reply = self.reply_to(3, FIRST_REPLY_TIMEOUT).await?;
        wire::check_tools_list(&reply)
    }

    /// Closed loop with `in_flight` calls outstanding until `stop`.
    ///
    /// One task both writes and reads: a reply frees a slot, the next request
    /// is written at once, and every burst of writes costs one flush. Nothing
    /// else could run in between anyway, and a second task would only add a
    /// channel hop per call to the generator's own cost.
    pub async fn load(
        &mut self,
        wire: Wire,
        in_flight: usize,
        stop: Stop,
        pad: usize,
    ) -> LoadResult {
        let mut template = CallTemplate::new(wire, pad);
        let mut expected = String::new();
        let mut pending: HashMap<u64, Instant> = HashMap::with_capacity(in_flight * 2);
        let mut result = LoadResult::default();
        let mut counter = wire::COUNTER_START;
        let start = Instant::now();
        let (deadline, limit) = match stop {
            Stop::After(d) => (Some(start + d), u64::MAX),
            Stop::Calls(n) => (None, wire::COUNTER_START + n),
        };
        loop {
            let mut wrote = false;
            while pending.len() < in_flight.max(1)
                && counter < limit
                && deadline.is_none_or(|d| Instant::now() < d)
            {
                template.patch(counter);
                let written = async {
                    self.stdin.write_all(&template.bytes).await?;
                    self.stdin.write_all(b"\n").await
                };
                if let Err(e) = written.await {
                    result.record_error(self.died(format!("writing to the server failed: {e}")));
                    result.elapsed = start.elapsed();
                    return result;
                }
                pending.insert(counter, Instant::now());
                counter += 1;
                wrote = true;
            }
            if wrote && let Err(e) = self.stdin.flush().await {
                result.record_error(self.died(format!("writing to the server failed: {e}")));
                break;
            }
            if pending.is_empty() {
                break;
            }
            if let Err(why) = self.next_line(REPLY_TIMEOUT).await {
                result.record_error(why);
                break;
            }
            let message = self.line.trim_ascii();
            let Some(id) = wire::message_id(message) else {
                // A notification or a stray log line: not an answer.
                continue;
            };
            let Some(sent) = pending.remove(&id) else {
                result.record_error(format!("reply to an unknown id {id}"));
                continue;
            };
            let took = sent.elapsed();
            template.expected_text_for(id, &mut expected);
            match wire::check_call(message, id, &expected) {
                Verdict::Ok => result.record_ok(took),
                Verdict::Bad(why) => result.record_error(why),
                Verdict::Unrelated => result.record_error("reply with a mismatched id".into()),
            }
        }
        result.elapsed = start.elapsed();
        result
    }

    /// Ends the server: closes its input, then kills what is left.
    pub async fn stop(mut self) {
        let _ = self.stdin.shutdown().await;
        drop(self.stdin);
        proc::kill(&mut self.child).await;
    }
}

/// Spawn to first `tools/list` answer, on a wire detected earlier (the era
/// of a server configuration may be cached across restarts, per the spec).
pub async fn cold_start(launch: &Launch, wire: Wire) -> Result<Duration, String> {
    let t0 = Instant::now();
    let mut server = StdioServer::spawn(launch)?;
    let outcome = async {
        if wire == Wire::Legacy {
            server.send(&wire::initialize(1)).await?;
            let reply = server.reply_to(1, FIRST_REPLY_TIMEOUT).await?;
            if let Some(e) = reply.error {
                return Err(format!(
                    "initialize failed: error {}: {}",
                    e.code, e.message
                ));
            }
            server.send(&wire::initialized_notification()).await?;
        }
        server.send(&wire::tools_list(wire, 2)).await?;
        let reply = server.reply_to(2, FIRST_REPLY_TIMEOUT).await?;
        let took = t0.elapsed();
        wire::check_tools_list(&reply)?;
        Ok(took)
    }
    .await;
    server.stop().await;
    outcome
}
